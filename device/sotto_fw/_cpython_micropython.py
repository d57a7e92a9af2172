# CPython stand-in for MicroPython's `micropython` module (used through sotto_fw.compat).


def const(x):
    return x


def kbd_intr(chr):
    pass
