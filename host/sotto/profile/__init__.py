"""Long-term profiles: stable preferences and facts of a user (or a board) across sessions."""

from sotto.profile.model import Profile, profile_key, promote, seed_state

__all__ = ["Profile", "profile_key", "promote", "seed_state"]
