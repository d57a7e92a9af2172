# CPython stand-in for MicroPython's `micropython` module (used through sotto_fw.compat).


def native(f):
    return f


def viper(f):
    return f


def const(x):
    return x


def kbd_intr(chr):
    pass
