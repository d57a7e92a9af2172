# Board entry point: start the firmware (sotto_fw.app builds the peripherals and tasks).
#
# The modules are loaded one at a time, with a collection after each. Loaded in one go
# they leave garbage between the objects they keep, and on an RP2040 (a heap of about
# 160 KB) that left no piece big enough for the 16 KB speaker ring; collected as they
# go, they pack together and the buffers get the rest of the heap in one piece
# (measured with the simulated board on MicroPython).
import gc

for name in ("compat", "loopsrc", "wire", "audiocodec", "micformat", "ring", "serialport", "credits", "protocol",
             "capture", "speaker", "vad", "button", "led", "loopstats", "config", "app"):
    __import__("sotto_fw." + name)
    gc.collect()

from sotto_fw import app  # noqa: E402

app.main()
