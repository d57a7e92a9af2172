"""Who may connect: loopback by default; any other bind requires a token."""

from __future__ import annotations

import hmac
import ipaddress
from urllib.parse import parse_qs, urlsplit

from sotto.errors import ServeNeedsToken

MIN_TOKEN_CHARS = 16


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and `localhost`; a name or wildcard (0.0.0.0, ::, "") is not."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None) -> None:
    """Refuse to listen beyond loopback without a token (docs/DESIGN.md, Scale and trust)."""
    if is_loopback(host):
        return
    if not token:
        raise ServeNeedsToken(
            f"refusing to listen on {host or 'all addresses'} without an access token",
            hint="pass --token T (at least 16 characters; or SOTTO_SERVE_TOKEN) or bind to 127.0.0.1",
        )
    if len(token) < MIN_TOKEN_CHARS:
        raise ServeNeedsToken(f"the access token is too short ({len(token)} characters; at least {MIN_TOKEN_CHARS})")


def presented_token(path: str, authorization: str | None) -> str | None:
    """The token from `Authorization: Bearer T` or `?token=T`."""
    if authorization:
        scheme, _, value = authorization.partition(" ")
        if scheme.lower() == "bearer" and value.strip():
            return value.strip()
    query = parse_qs(urlsplit(path).query)
    values = query.get("token")
    return values[0] if values else None


def token_ok(expected: str | None, presented: str | None) -> bool:
    if expected is None:
        return True
    if presented is None:
        return False
    return hmac.compare_digest(expected.encode(), presented.encode())
