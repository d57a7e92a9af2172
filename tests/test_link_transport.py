"""SerialTransport over pyserial's loop:// and over a real pty pair."""

from __future__ import annotations

import asyncio
import errno
import os
import tty

import pytest
import serial

from sotto.errors import LinkClosed, PortNotFound, PortOpenFailed, PortPermissionDenied
from sotto.link import transport as transport_mod
from sotto.link.transport import SerialTransport


async def read_exactly(t: SerialTransport, n: int) -> bytes:
    got = bytearray()
    while len(got) < n:
        got += await asyncio.wait_for(t.read(), 5)
    return bytes(got)


def test_loop_url_round_trip() -> None:
    async def go() -> None:
        t = SerialTransport.open("loop://", 921600)
        t.start(asyncio.get_running_loop())
        try:
            data = bytes(range(256)) * 20
            await t.write(data)
            assert await read_exactly(t, len(data)) == data
        finally:
            t.close()

    asyncio.run(go())


def test_pty_round_trip_and_hangup_is_link_closed() -> None:
    async def go() -> None:
        master, slave = os.openpty()
        tty.setraw(slave)
        path = os.ttyname(slave)
        t = SerialTransport.open(path, 921600)
        t.start(asyncio.get_running_loop())
        try:
            await t.write(b"host->board")
            got = b""
            while len(got) < 11:
                got += os.read(master, 100)
            assert got == b"host->board"
            os.write(master, b"board->host")
            assert await read_exactly(t, 11) == b"board->host"
            os.close(slave)
            os.close(master)  # the "cable" is pulled
            with pytest.raises(LinkClosed):
                while True:
                    await asyncio.wait_for(t.read(), 5)
        finally:
            t.close()

    asyncio.run(go())


def test_missing_port_is_port_not_found() -> None:
    with pytest.raises(PortNotFound) as info:
        SerialTransport.open("/dev/does-not-exist-sotto", 115200)
    assert info.value.hint and "plugged" in info.value.hint


def test_unknown_url_scheme_is_a_clear_open_failure() -> None:
    with pytest.raises(PortOpenFailed) as info:
        SerialTransport.open("bogus://x", 115200)
    assert "bogus://x" in str(info.value)


def test_permission_denied_is_reported_with_a_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    def deny(url: str, **kw: object) -> serial.SerialBase:
        raise serial.SerialException(errno.EACCES, f"could not open port {url}: [Errno 13] Permission denied")

    monkeypatch.setattr(transport_mod.serial, "serial_for_url", deny)
    with pytest.raises(PortPermissionDenied) as info:
        SerialTransport.open("/dev/ttyACM0", 115200)
    assert info.value.hint and "dialout" in info.value.hint


def test_refused_socket_is_an_open_failure() -> None:
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    with pytest.raises((PortOpenFailed, PortNotFound)):
        SerialTransport.open(f"socket://127.0.0.1:{port}", 115200)


def test_write_after_close_is_link_closed() -> None:
    async def go() -> None:
        t = SerialTransport.open("loop://", 115200)
        t.start(asyncio.get_running_loop())
        t.close()
        with pytest.raises(LinkClosed):
            await t.write(b"x")

    asyncio.run(go())
