"""Privacy: write-time redaction of traces, forgetting sessions and profiles, retention expiry."""

from sotto.privacy.forget import apply_retention, expire, forget_profile, forget_session
from sotto.text.redact import redact_event, redact_text, redaction_enabled

__all__ = ["apply_retention", "expire", "forget_profile", "forget_session", "redact_event", "redact_text",
           "redaction_enabled"]
