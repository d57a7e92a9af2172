"""A blocking Wyoming-protocol connection (the protocol Home Assistant's voice services speak).

Wyoming is JSON-line headers plus optional binary payloads over TCP; the `wyoming`
package's synchronous `read_event`/`write_event` do the framing, this module adds the
socket, timeouts and clear errors. Engines call it from worker threads (the voice
harness and `sotto serve` run synthesis and recognition off the event loop).
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from typing import BinaryIO

from sotto.errors import ConfigError, RemoteEngineUnavailable
from sotto.untrusted import ascii_int


@dataclass(frozen=True)
class WyomingAddress:
    host: str
    port: int

    @property
    def label(self) -> str:
        return f"tcp://{self.host}:{self.port}"


def parse_address(text: str) -> WyomingAddress:
    """`HOST:PORT` or `tcp://HOST:PORT`."""
    value = text.strip()
    if value.startswith("tcp://"):
        value = value[len("tcp://"):]
    host, sep, port_text = value.rpartition(":")
    port = ascii_int(port_text, max_digits=5)
    if not sep or not host or port is None or not 0 < port < 65536:
        raise ConfigError(f"Wyoming address {text!r} is not HOST:PORT", hint="e.g. --tts-wyoming 127.0.0.1:10200")
    return WyomingAddress(host.strip("[]"), port)


class WyomingConnection:
    """One TCP connection; `with WyomingConnection(addr, ...) as conn: conn.write(ev); conn.read()`."""

    def __init__(self, address: WyomingAddress, *, connect_timeout_s: float, read_timeout_s: float, what: str) -> None:
        self.address = address
        self.what = what
        try:
            self._sock = socket.create_connection((address.host, address.port), timeout=connect_timeout_s)
        except OSError as exc:
            raise RemoteEngineUnavailable(
                f"{what} at {address.label} unreachable: {exc}", hint="is the Wyoming server running?"
            ) from exc
        self._sock.settimeout(read_timeout_s)
        self._file: BinaryIO = self._sock.makefile("rwb")  # type: ignore[assignment]  # a buffered socket file

    def __enter__(self) -> "WyomingConnection":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def write(self, event: object) -> None:
        from wyoming.event import Event, write_event

        assert isinstance(event, Event)
        try:
            write_event(event, self._file)
            self._file.flush()
        except OSError as exc:
            raise RemoteEngineUnavailable(f"{self.what} at {self.address.label}: write failed: {exc}") from exc

    def read(self) -> object:
        """The next event; RemoteEngineUnavailable when the server closes, stalls or sends garbage."""
        from wyoming.event import read_event

        try:
            event = read_event(self._file)
        except (OSError, ValueError) as exc:  # timeout, reset, or a header that is not JSON
            raise RemoteEngineUnavailable(f"{self.what} at {self.address.label}: read failed: {exc}") from exc
        if event is None:
            raise RemoteEngineUnavailable(f"{self.what} at {self.address.label} closed the connection mid-request")
        return event

    def close(self) -> None:
        for closer in (self._file.close, self._sock.close):
            try:
                closer()
            except OSError:
                pass


def probe(address: WyomingAddress, timeout_s: float = 1.0) -> bool:
    """True when something accepts a TCP connection at the address (used to wait for a server)."""
    try:
        with socket.create_connection((address.host, address.port), timeout=timeout_s):
            return True
    except OSError:
        return False
