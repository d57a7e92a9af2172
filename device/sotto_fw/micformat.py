# Microphone sample formats: what an I2S microphone delivers, turned into the firmware's
# PCM16 on the board.
#
# Most I2S MEMS microphones send 32-bit slots, not 16-bit samples: the INMP441 puts 24
# data bits at the top of each slot, the SPH0645 18 bits. Read as 16-bit words, such a
# stream is garbage (half the words are the slot's low bits). The profile's mic entry
# says "bits": 32 and "shift": how far the slot is shifted right to make an int16
# (16 takes the top 16 bits; less is gain, clipped). MicroPython's I2S with bits=32
# hands over little-endian 32-bit words.

from sotto_fw.compat import loop_source, native_or_bytecode

# The conversion reads only the top 24 bits of each slot (bytes 1..3): those values stay
# small ints on a 32-bit board, where a full 32-bit sample would be a heap object.
_slots32_to_pcm16 = native_or_bytecode(loop_source("SLOTS32_TO_PCM16"), "_slots32_to_pcm16")


def check_mic_format(bits, shift):
    """A ValueError for a mic format the conversion cannot do."""
    if bits not in (16, 32):
        raise ValueError("mic bits must be 16 or 32")
    if bits == 32 and not 8 <= shift <= 24:
        raise ValueError("mic shift must be 8..24 for 32-bit slots")


def slot_bytes(bits):
    """Bytes one sample takes in the microphone's stream."""
    return 4 if bits == 32 else 2


def slots32_to_pcm16(src, soff, count, dst, doff, shift):
    """count 32-bit slots at src[soff:] -> int16 LE at dst[doff:]; returns bytes written.

    `shift` counts from the 32-bit slot (16: its top 16 bits); below 16 adds gain."""
    return _slots32_to_pcm16(src, soff, count, dst, doff, shift - 8)
