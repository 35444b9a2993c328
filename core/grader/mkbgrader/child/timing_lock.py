"""The device's timing lock (docs/design.md §5.4): a child holds it around every stage that times on the device (an
evaluation's warm-up, timing and re-check, a validation's eager timing, a re-timing, the peak probe), and a
pre-started child holds it around its warm-up. So the next grading's child can warm up beside this grading's
untimed stages (correctness draws, compiling), and never beside a timed kernel.

Its file is the device lock's path (the request's "device_lock", which mkb holds around each whole grading and so
keeps other gradings away) with ".timing" appended. Without a device lock there is nothing to coordinate with, and
the stage runs without one.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from typing import Callable, Iterator, Optional

SUFFIX = ".timing"

# How long a timed stage waits for a warm-up to let go before it times anyway (a warm-up takes a few seconds; a
# holder that never lets go is a bug, and waiting for ever would turn it into a timeout).
MAX_WAIT_S = 120.0


def path_for(device_lock: Optional[str]) -> str:
    """The timing lock's file for a device lock's path ("" when there is no device lock)."""
    return device_lock + SUFFIX if isinstance(device_lock, str) and device_lock else ""


def _open(path: str) -> Optional[int]:
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    except OSError:
        return None


@contextlib.contextmanager
def _holding(device_lock: Optional[str], keep_waiting: Callable[[], bool]) -> Iterator[bool]:
    """Holds the timing lock for the block once it is free, trying again while keep_waiting() says so (it does the
    waiting between tries); yields whether it is held."""
    path = path_for(device_lock)
    handle = _open(path) if path else None
    if handle is None:
        yield False
        return
    try:
        locked = False
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                locked = True
                break
            except BlockingIOError:
                if not keep_waiting():
                    break
        try:
            yield locked
        finally:
            if locked:
                fcntl.flock(handle, fcntl.LOCK_UN)
    finally:
        os.close(handle)


def held(device_lock: Optional[str], max_wait_s: float = MAX_WAIT_S) -> contextlib.AbstractContextManager[bool]:
    """Holds the timing lock for the block; yields whether it is held (False: no device lock, a lock file that cannot
    be opened, or a holder that did not let go within max_wait_s)."""
    deadline = time.monotonic() + max_wait_s

    def keep_waiting() -> bool:
        time.sleep(0.01)
        return time.monotonic() < deadline

    return _holding(device_lock, keep_waiting)


def held_unless_waited_for(device_lock: Optional[str],
                           task_waiting: Callable[[float], bool]) -> contextlib.AbstractContextManager[bool]:
    """For a pre-started child's warm-up: waits for the timing lock while polling whether the child's own work has
    arrived; yields True holding it, or False (not held) once the work is there or no lock can be had, and the
    warm-up then leaves the child cold rather than make its own grading wait."""
    return _holding(device_lock, lambda: not task_waiting(0.02))
