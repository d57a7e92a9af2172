# Tiny check harness for scripts run by real MicroPython (no unittest there).
# Prints "FAIL <name>: <detail>" per failure and a closing "SUMMARY checks=N failures=M";
# tests/test_device_micropython.py fails on any FAIL line or a missing SUMMARY.

import sys

_checks = [0, 0]


def check(cond, name, detail=""):
    _checks[0] += 1
    if not cond:
        _checks[1] += 1
        print("FAIL " + name + ": " + str(detail))
    return cond


def equal(got, want, name):
    return check(got == want, name, "got %r want %r" % (got, want))


def run(fn):
    """Run one check function; an exception is a failure, not a crash of the script."""
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - report and go on with the other checks
        _checks[0] += 1
        _checks[1] += 1
        print("FAIL " + fn.__name__ + ": exception " + repr(exc))
        sys.print_exception(exc) if hasattr(sys, "print_exception") else None


def summary():
    print("SUMMARY checks=%d failures=%d" % (_checks[0], _checks[1]))
    return _checks[1]


def unhex(s):
    import binascii

    return binascii.unhexlify(s)


def hexs(b):
    import binascii

    return binascii.hexlify(bytes(b)).decode()
