"""`sotto serve`: WebSocket sessions on shared models (see sotto.server.app)."""
