# Board entry point: start the firmware (sotto_fw.app builds the peripherals and tasks).
#
# The firmware's big buffers (speaker and TX rings, frame buffers) each need one piece
# of contiguous heap, and on an RP2040 the heap is about 160 KB. Loading the modules
# leaves small objects all over it, and the heap hands out the lowest free piece first.
# So, while the modules load, a quarter of the heap is held at its top (a filler keeps
# the bottom for the modules); it is handed back just before the buffers are made, and
# they land there in one piece. Measured with the simulated board on MicroPython in an
# RP2040's heap: without this the 16 KB speaker ring finds no piece to fit in.
import gc

reserve = []
try:
    free = gc.mem_free()
    filler = bytearray(free - free // 4 - 4096)
    reserve.append(bytearray(free // 4 - 4096))
    filler = None
except MemoryError:  # a heap too fragmented already: go on without
    filler = None
gc.collect()

from sotto_fw import app  # noqa: E402

app.main(reserve)
