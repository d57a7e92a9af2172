"""Byte transport to a board: a pyserial port behind an asyncio interface.

pyserial is blocking and has no asyncio support, so a reader thread pulls whatever the
port has and hands it to the event loop through a queue, and writes run one at a time
in a dedicated writer thread. Anything pyserial can open works: a device path
(`/dev/ttyACM0`), a pty, or a URL (`loop://`, `socket://host:port`, `rfc2217://...`).

The transport knows nothing about frames; `sotto.link.board_link` speaks the protocol.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol, Union

import serial

from sotto.errors import LinkClosed, LinkError, PortNotFound, PortOpenFailed, PortPermissionDenied

log = logging.getLogger(__name__)

READ_TIMEOUT_S = 0.05  # the reader thread wakes this often to notice close()
READ_CHUNK = 4096


class ByteTransport(Protocol):
    """What the protocol layer needs from a transport (tests substitute their own)."""

    url: str

    def start(self, loop: asyncio.AbstractEventLoop) -> None: ...

    async def read(self) -> bytes: ...

    async def write(self, data: bytes) -> None: ...

    def close(self) -> None: ...


def _errno_of(exc: BaseException) -> int | None:
    """pyserial wraps OSError in SerialException(errno, text); dig the errno out."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        code = getattr(cur, "errno", None)
        if isinstance(code, int):
            return code
        cur = cur.__cause__ or cur.__context__
    return None


def open_serial(url: str, baud: int) -> serial.SerialBase:
    """Open a device path or pyserial URL; raise a clear LinkError subclass on failure."""
    try:
        port = serial.serial_for_url(url, baudrate=baud, timeout=READ_TIMEOUT_S, write_timeout=None)
    except ValueError as exc:
        # pyserial raises ValueError for an unknown URL scheme or a baud it cannot set.
        raise PortOpenFailed(f"cannot open {url!r}: {exc}",
                             hint="use a device path such as /dev/ttyACM0 or a pyserial URL (loop://, socket://HOST:PORT, rfc2217://HOST:PORT)") from exc
    except (serial.SerialException, OSError) as exc:
        code = _errno_of(exc)
        if code in (errno.ENOENT, errno.ENODEV, errno.ENXIO):
            raise PortNotFound(f"no serial port at {url!r}",
                               hint="is the board plugged in? list ports with `python -m serial.tools.list_ports`") from exc
        if code in (errno.EACCES, errno.EPERM):
            raise PortPermissionDenied(f"permission denied opening {url!r}",
                                       hint="add yourself to the 'dialout' group (sudo usermod -aG dialout $USER) and log in again") from exc
        if code == errno.EBUSY:
            raise PortOpenFailed(f"{url!r} is busy", hint="another program has the port open") from exc
        raise PortOpenFailed(f"cannot open {url!r}: {exc}") from exc
    return port


_ReadItem = Union[bytes, BaseException]


class SerialTransport:
    """A pyserial port with an asyncio reader and writer. Use `SerialTransport.open(url, baud)`."""

    def __init__(self, port: serial.SerialBase, url: str) -> None:
        self.url = url
        self._port = port
        self._queue: asyncio.Queue[_ReadItem] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._reader: threading.Thread | None = None
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sotto-serial-write")
        self._closing = threading.Event()
        self._failure: BaseException | None = None
        self.bytes_read = 0
        self.bytes_written = 0

    @classmethod
    def open(cls, url: str, baud: int) -> "SerialTransport":
        return cls(open_serial(url, baud), url)

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """Start the reader thread; bytes arrive through `read()` on `loop`."""
        self._loop = loop
        self._queue = asyncio.Queue()
        self._reader = threading.Thread(target=self._read_forever, name=f"sotto-serial-read {self.url}", daemon=True)
        self._reader.start()

    def _post(self, item: _ReadItem) -> None:
        loop, queue = self._loop, self._queue
        if loop is None or queue is None:
            return
        try:
            loop.call_soon_threadsafe(queue.put_nowait, item)
        except RuntimeError:  # the loop is closed: nobody is listening any more
            pass

    def _read_forever(self) -> None:
        port = self._port
        while not self._closing.is_set():
            try:
                waiting = port.in_waiting
                data = port.read(min(max(waiting, 1), READ_CHUNK))
            except Exception as exc:  # noqa: BLE001 - any failure of the port ends this transport
                if not self._closing.is_set():
                    self._post(LinkClosed(f"{self.url}: port failed while reading: {exc}"))
                return
            if data:
                self.bytes_read += len(data)
                self._post(bytes(data))

    async def read(self) -> bytes:
        """The next bytes from the port; raises LinkClosed when the port has gone."""
        if self._queue is None:
            raise LinkError("transport not started")
        if self._failure is not None:
            raise self._failure
        item = await self._queue.get()
        if isinstance(item, BaseException):
            self._failure = item
            raise item
        return item

    def _write_all(self, data: bytes) -> None:
        if self._closing.is_set():
            raise LinkClosed(f"{self.url}: closed")
        try:
            self._port.write(data)
        except Exception as exc:  # noqa: BLE001 - a failed write means the port is gone
            raise LinkClosed(f"{self.url}: port failed while writing: {exc}") from exc
        self.bytes_written += len(data)

    async def write(self, data: bytes) -> None:
        """Write all of data (in the writer thread); raises LinkClosed when the port has gone."""
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(self._writer, self._write_all, data)
        except RuntimeError as exc:  # executor shut down by close()
            raise LinkClosed(f"{self.url}: closed") from exc

    def close(self) -> None:
        if self._closing.is_set():
            return
        self._closing.set()
        self._post(LinkClosed(f"{self.url}: closed"))  # wakes a reader waiting in read()
        try:
            cancel = getattr(self._port, "cancel_read", None)
            if cancel is not None:
                cancel()
        except Exception:  # noqa: BLE001 - closing a dead port may fail; it is closed either way
            pass
        if self._reader is not None and self._reader is not threading.current_thread():
            self._reader.join(timeout=1.0)
        try:
            self._port.close()
        except Exception:  # noqa: BLE001
            pass
        self._writer.shutdown(wait=False, cancel_futures=True)
