"""Text processing for speech: sentence splitting."""
