"""sotto's error hierarchy. Every error carries a stable code for traces and scripts.

The command line prints `error[CODE]: message` and exits non-zero; nothing below
this hierarchy should escape as a traceback for bad input.
"""


class SottoError(Exception):
    """Base of every error sotto reports to a user."""

    code = "sotto_error"
    exit_status = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message} ({self.hint})"
        return self.message


class ConfigError(SottoError):
    code = "config"
    exit_status = 2


class LinkError(SottoError):
    """The serial link: port, permissions, handshake."""

    code = "link"


class PortNotFound(LinkError):
    code = "link_port_not_found"


class PortPermissionDenied(LinkError):
    code = "link_permission_denied"


class HandshakeTimeout(LinkError):
    code = "link_no_hello"


class ProtocolVersionMismatch(LinkError):
    code = "link_protocol_version"


class LinkClosed(LinkError):
    code = "link_closed"


class ModelError(SottoError):
    """A model is missing, unreadable or cannot meet its budget."""

    code = "model"


class ModelNotFound(ModelError):
    code = "model_not_found"


class ModelLoadFailed(ModelError):
    code = "model_load_failed"


class DownloadError(ModelError):
    code = "model_download"


class ChecksumMismatch(DownloadError):
    code = "model_checksum"


class AudioFormatError(SottoError):
    """A WAV or raw audio stream sotto cannot read."""

    code = "audio_format"


class StateUpdateError(SottoError):
    """The model's working-memory update was invalid (kept out of the state)."""

    code = "state_update_invalid"


class StoreError(SottoError):
    code = "store"


class SessionNotFound(StoreError):
    code = "session_not_found"


class PortOpenFailed(LinkError):
    """The port exists (or the URL parses) but could not be opened: busy, refused, bad URL."""

    code = "link_open_failed"


class ContextOverflow(ModelError):
    """A prompt plus its output would not fit the model's context window."""

    code = "model_context_overflow"


class FlashError(SottoError):
    """Copying the firmware to a board failed (mpremote missing or failing, bad profile)."""

    code = "flash"


class FlashVerifyFailed(FlashError):
    """The files read back from the board do not match what was sent."""

    code = "flash_verify"


class RemoteEngineUnavailable(ModelError):
    """A remote engine (OpenAI-compatible LLM server, Wyoming ASR or TTS) is down, too slow or answered badly."""

    code = "remote_engine_unavailable"


class ServeError(SottoError):
    """`sotto serve`: a listener that cannot or must not start."""

    code = "serve"


class ServeNeedsToken(ServeError):
    """Binding to a non-loopback address without an access token is refused."""

    code = "serve_needs_token"
    exit_status = 2


class InvalidSessionId(StoreError):
    """A session id outside the one alphabet every surface accepts (see sotto.ids). A StoreError,
    as the two checks it replaces were: the id names stored rows and files."""

    code = "session_id_invalid"
    exit_status = 2


class InputRefused(SottoError):
    """Untrusted input (a file, a message, an argument) that sotto will not read: too large,
    too deeply nested, not text, or of the wrong shape."""

    code = "input_refused"
    exit_status = 2


class StoreDamaged(StoreError):
    """The SQLite file is not a readable database (damaged page, truncated, another format)."""

    code = "store_damaged"
    exit_status = 3


class BoardGone(LinkError):
    """The board stopped answering for longer than the session's grace period."""

    code = "link_board_gone"
    exit_status = 3
