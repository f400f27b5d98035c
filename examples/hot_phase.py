#!/usr/bin/env python3
"""Mark a program's hot phase through /dev/exitscope.

    exitscope run -o out -- python3 examples/hot_phase.py

The start-up (interpreter, imports) lands in window 0, which the first
"reset" closes silently; the hot phase is the window closed by
"dump hot-phase". Without exitscope the file does not exist and the marks
are skipped.
"""
import os
import sys


def mark(command):
    try:
        with open("/dev/exitscope", "w") as f:
            f.write(command + "\n")
        return True
    except OSError:
        return False


def hot_phase(path, rounds):
    with open(path, "wb") as f:
        for _ in range(rounds):
            f.write(os.urandom(512))
    size = 0
    with open(path, "rb") as f:
        while chunk := f.read(512):
            size += len(chunk)
    os.unlink(path)
    return size


def main():
    observed = mark("reset")  # the start-up ends here
    size = hot_phase("/tmp/exitscope-hot-phase.%d" % os.getpid(), 1000)
    mark("dump hot-phase")
    print("hot phase wrote and read %d bytes%s" % (size, "" if observed else " (not under exitscope)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
