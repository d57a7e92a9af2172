"""The serial link to a board: wire messages, transport, and the host side of the protocol."""
