"""PCM16 <-> wire audio formats for the host, using the board's own codec module.

`sotto_fw.audiocodec` is the code the firmware runs, so host and board can never
disagree about mu-law tables or the IMA-ADPCM frame layout. These wrappers give it a
bytes-in, bytes-out face.
"""

from __future__ import annotations

from sotto_fw import audiocodec, wire

HOST_FORMATS = wire.FMT_PCM16 | wire.FMT_MULAW | wire.FMT_ADPCM


class WireAudioEncoder:
    """PCM16 frames -> one wire format; ADPCM state carries across the frames of a stream."""

    def __init__(self, fmt: int) -> None:
        self.fmt = fmt
        self._encoder = audiocodec.AudioEncoder(fmt)

    def reset(self) -> None:
        self._encoder.reset()

    def encode(self, pcm: bytes) -> bytes:
        n = len(pcm) & ~1
        out = bytearray(audiocodec.encoded_size(self.fmt, n // 2))
        k = self._encoder.encode_into(pcm, n, out, 0)
        return bytes(out[:k])


class WireAudioDecoder:
    """One wire format -> PCM16; returns b"" for a frame that does not decode."""

    def __init__(self, fmt: int) -> None:
        self.fmt = fmt
        self._decoder = audiocodec.AudioDecoder(fmt)
        self.bad_frames = 0

    def decode(self, data: bytes) -> bytes:
        n = len(data)
        out = bytearray(audiocodec.decoded_bytes(self.fmt, n))
        if not out:
            return b""
        k = self._decoder.decode_into(data, 0, n, out)
        if k == 0:
            self.bad_frames += 1
        return bytes(out[:k])
