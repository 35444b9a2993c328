"""Running work in a forked child: own process group, capped log of fd 1/2, results over a dedicated pipe, timeout.

The server process has loaded torch (child_task.preload_for_server) but never touched CUDA, so forking is safe; the
child initialises CUDA itself.
A child may also be forked ahead of time (`Prestarted`): it isolates itself at once, warms up (CUDA context, DSL)
and then waits for its work, which the parent sends pickled over a private pipe; it runs one piece of work only.
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import pickle
import resource
import select
import signal
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

Work = Callable[[Callable[[dict], None]], None]


@dataclass
class ChildOutcome:
    messages: list[dict] = field(default_factory=list)
    timed_out: bool = False
    exit_code: Optional[int] = None      # exit status when the child exited
    exit_signal: Optional[int] = None    # the signal that killed it
    last_stage: str = ""
    log: str = ""                        # the first log_cap bytes of the child's stdout/stderr
    log_bytes: int = 0                   # how many bytes it wrote in all
    garbage: int = 0                     # result-pipe lines that were not JSON objects
    seconds: float = 0.0
    prestarted: bool = False             # the work ran in a child forked ahead of time
    exit_deferred: bool = False          # its result was complete before its exit: its group was killed and it is
    #                                      reaped later (reap_exiting), so exit_code/exit_signal stay None


# Children whose results were complete while their exit was still under way (a CUDA context's teardown takes a
# tenth of a second or more): killed with their group, reaped without waiting by the next run or reap_exiting().
_exiting: list[int] = []
EXIT_GRACE_S = 0.005  # how long a finished child's exit is waited for before its reaping is deferred


def reap_exiting() -> list[tuple[int, int]]:
    """Reaps the deferred children that have exited, without blocking; returns their (pid, raw status)."""
    reaped = []
    for pid in list(_exiting):
        try:
            waited, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            waited, status = pid, 0
        if waited == pid:
            _exiting.remove(pid)
            reaped.append((pid, status))
    return reaped


def cpu_memory_limit() -> Optional[int]:
    """On CPU evaluations the address space is capped at 3/4 of RAM (CUDA needs unlimited address space)."""
    try:
        pages, page_size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
        return int(pages * page_size * 3 // 4)
    except (ValueError, OSError):
        return None


def freeze_heap() -> None:
    """Collects once, then moves every object alive now (torch's, the DSL's, the grader's) out of the collector's
    sight: the gc.collect of each memory release in a child then walks only what the evaluation made (it walked all
    of torch, about 80 ms a call). The server calls it before it forks a child; a child calls it again once the
    candidate's first call has compiled, since numba-cuda and JAX leave hundreds of thousands of long-lived compiler
    objects that every later release would walk (about 0.2 s a draw). Frozen objects are still freed when their last
    reference goes; only their reference cycles are left alone."""
    gc.collect()
    gc.freeze()


def _die_with_parent(parent_pid: int) -> None:
    """Linux PR_SET_PDEATHSIG: the child is killed when the grader server dies, even by SIGKILL (its own session
    puts it out of reach of a signal to the server's group). The server forks from its only thread, so the
    "parent thread" the kernel watches is the server itself."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent_pid:  # the server died before prctl took effect
        os._exit(70)


def _isolate(keep_fds: set[int], parent_pid: int) -> None:
    """The sandbox rules every child obeys before any other code runs: its own session and process group, death
    with the server, no stdin, no inherited descriptor but the ones it needs, no core dumps, default signals."""
    os.setsid()
    _die_with_parent(parent_pid)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    keep = sorted({0, 1, 2} | keep_fds)
    for low, high in zip(keep, keep[1:] + [65536]):
        if high > low + 1:
            os.closerange(low + 1, high)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD):
        signal.signal(number, signal.SIG_DFL)


def _run_work(work: Work, result_fd: int, log_fd: int, memory_limit_bytes: Optional[int]) -> None:
    """Points fd 1/2 at the capped log, applies the memory cap, runs the work and exits; never returns."""
    exit_now = os._exit
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(log_fd, 1)
        os.dup2(log_fd, 2)
        if log_fd > 2:
            os.close(log_fd)
        if memory_limit_bytes:
            resource.setrlimit(resource.RLIMIT_AS, (memory_limit_bytes, memory_limit_bytes))
        writer = os.fdopen(result_fd, "w", buffering=1)

        def send(message: dict) -> None:
            writer.write(json.dumps(message, allow_nan=True, default=str) + "\n")
            writer.flush()

        work(send)
        writer.flush()
        exit_now(0)
    except BaseException:
        exit_now(70)


def _child_main(work: Work, result_fd: int, log_fd: int, memory_limit_bytes: Optional[int], parent_pid: int) -> None:
    try:
        _isolate({result_fd, log_fd}, parent_pid)
    except BaseException:
        os._exit(70)
    _run_work(work, result_fd, log_fd, memory_limit_bytes)


def run_in_child(work: Work, timeout_s: float, log_cap: int = 65536,
                 on_message: Optional[Callable[[dict], None]] = None,
                 memory_limit_bytes: Optional[int] = None) -> ChildOutcome:
    """Runs `work(send)` in a child and collects its messages until it exits or the timeout kills its group.

    The child is the one `offering` holds when there is one and the work can be pickled (a module-level function or
    a functools.partial of one); otherwise a fresh fork, as always."""
    reap_exiting()
    offered = _offer.child
    if offered is not None:
        _offer.child = None
        started = time.monotonic()
        handed = offered.hand_over(work, memory_limit_bytes)
        if handed is not None:
            outcome = _collect(*handed, started, timeout_s, log_cap, on_message)
            outcome.prestarted = True
            return outcome
        _offer.child = offered  # not handed over: the caller still owns it
    result_r, result_w = os.pipe()
    log_r, log_w = os.pipe()
    started = time.monotonic()
    parent_pid = os.getpid()
    pid = os.fork()
    if pid == 0:
        os.close(result_r)
        os.close(log_r)
        _child_main(work, result_w, log_w, memory_limit_bytes, parent_pid)
    os.close(result_w)
    os.close(log_w)
    return _collect(pid, result_r, log_r, started, timeout_s, log_cap, on_message)


def _collect(pid: int, result_r: int, log_r: int, started: float, timeout_s: float, log_cap: int,
             on_message: Optional[Callable[[dict], None]]) -> ChildOutcome:
    outcome = ChildOutcome()
    deadline = started + timeout_s
    pending = b""
    log_parts: list[bytes] = []
    open_fds = {result_r, log_r}
    status: Optional[int] = None
    exited_at: Optional[float] = None
    eof_at: Optional[float] = None
    while True:
        if status is None:
            waited, raw_status = os.waitpid(pid, os.WNOHANG)
            if waited == pid:
                status = raw_status
                exited_at = time.monotonic()
                _kill_group(pid)  # leftovers (a grandchild) die with the group
        if not open_fds:
            if status is not None:
                break
            if eof_at is None:
                eof_at = time.monotonic()
            if _finished(outcome) and time.monotonic() - eof_at >= EXIT_GRACE_S:
                # Its last word said the work is done and it closed its pipes: what is left is its exit. Nothing of
                # it may run on (its group is killed now), but the result need not wait for the teardown.
                _kill_group(pid)
                _exiting.append(pid)
                outcome.exit_deferred = True
                break
        now = time.monotonic()
        if status is not None and exited_at is not None and now - exited_at > 2.0:
            break  # something outside the group still holds a pipe: stop listening
        if status is None and now >= deadline:
            outcome.timed_out = True
            _kill_group(pid)
            _, status = os.waitpid(pid, 0)
            break
        # Both pipes at EOF while the child is not yet reaped: it is exiting, so poll its status closely (a quarter
        # of a second here was paid by every evaluation).
        poll = 0.25 if open_fds else 0.002
        wait = min(0.05 if status is not None else poll, max(0.0, deadline - now))
        ready, _, _ = select.select(list(open_fds), [], [], wait) if open_fds else ([], [], time.sleep(wait))
        for fd in ready:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                open_fds.discard(fd)
                continue
            if fd == log_r:
                outcome.log_bytes += len(chunk)
                kept = sum(len(p) for p in log_parts)
                if kept < log_cap:
                    log_parts.append(chunk[: log_cap - kept])
                continue
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                _accept(line, outcome, on_message)
    for fd in (result_r, log_r):
        try:
            os.close(fd)
        except OSError:
            pass
    if pending.strip():
        _accept(pending, outcome, on_message)
    if status is not None:
        if os.WIFSIGNALED(status):
            outcome.exit_signal = os.WTERMSIG(status)
        elif os.WIFEXITED(status):
            outcome.exit_code = os.WEXITSTATUS(status)
    outcome.log = b"".join(log_parts).decode("utf-8", "replace")
    outcome.seconds = time.monotonic() - started
    return outcome


def _finished(outcome: ChildOutcome) -> bool:
    """True when the child's last message is its "final" one (every piece of work ends with it)."""
    return bool(outcome.messages) and outcome.messages[-1].get("t") == "final"


def _accept(line: bytes, outcome: ChildOutcome, on_message: Optional[Callable[[dict], None]]) -> None:
    try:
        message = json.loads(line)
    except ValueError:
        outcome.garbage += 1
        return
    if not isinstance(message, dict):
        outcome.garbage += 1
        return
    if message.get("t") == "stage" and isinstance(message.get("stage"), str):
        outcome.last_stage = message["stage"]
    outcome.messages.append(message)
    if on_message is not None:
        on_message(message)


def _kill_group(pid: int) -> None:
    if pid <= 1:  # killpg(0) would signal our own group, killpg(1) init's
        return
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class Prestarted:
    """One child forked ahead of time for `key` (device and DSL, say). It isolates itself, runs
    `warm_up(task_waiting)` (task_waiting(seconds) says whether its work has arrived, waiting at most that long),
    then blocks on its task pipe. The parent either hands it one piece of work (`hand_over`) or discards it (`discard`),
    which kills its group and reaps it; a child that died while waiting is reaped by `alive()`."""

    MAX_TASK_BYTES = 60000  # below a pipe's capacity, so handing over never blocks on a child still warming up

    def __init__(self, key: tuple, warm_up: Callable[[Callable[[float], bool]], None]) -> None:
        self.key = key
        self.started = time.monotonic()
        self.handed_over = False
        self.status: Optional[int] = None
        task_r, self.task_w = os.pipe()
        self.result_r, result_w = os.pipe()
        self.log_r, log_w = os.pipe()
        parent_pid = os.getpid()
        self.pid = os.fork()
        if self.pid == 0:
            for fd in (self.task_w, self.result_r, self.log_r):
                os.close(fd)
            _prestarted_main(task_r, result_w, log_w, parent_pid, warm_up)
        for fd in (task_r, result_w, log_w):
            os.close(fd)

    def age(self) -> float:
        return time.monotonic() - self.started

    def reap_if_exited(self) -> None:
        """Reaps the child if it has exited while waiting (safe from a SIGCHLD handler: it only waits on this pid,
        never on one already handed over, and closes nothing)."""
        if self.status is not None or self.handed_over:
            return
        try:
            waited, status = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            waited, status = self.pid, 0
        if waited == self.pid:
            self.status = status

    def alive(self) -> bool:
        """False once the child has exited (then it is reaped and its pipes closed)."""
        self.reap_if_exited()
        if self.status is not None:
            _kill_group(self.pid)  # a grandchild it left, if any
            self._close_all()
            return False
        return True

    def hand_over(self, work: Work, memory_limit_bytes: Optional[int]) -> Optional[tuple[int, int, int]]:
        """Sends the work and returns (pid, result fd, log fd), which from then on belong to the caller, who collects
        and reaps the child. None (and the child untouched) when the work cannot be pickled, is too big, or the
        child is gone."""
        if self.handed_over or not self.alive():
            return None
        try:
            payload = pickle.dumps((work, memory_limit_bytes), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:
            return None
        if len(payload) > self.MAX_TASK_BYTES:
            return None
        self.handed_over = True  # from here on a SIGCHLD handler leaves the pid to the caller's collector
        try:
            os.write(self.task_w, len(payload).to_bytes(8, "little") + payload)
        except OSError:  # the child died between alive() and now
            self.handed_over = False
            return None
        handed = (self.pid, self.result_r, self.log_r)
        os.close(self.task_w)
        self.task_w = self.result_r = self.log_r = -1
        return handed

    def discard(self) -> None:
        """Kills the child's group and reaps it; safe to call twice, and a no-op once handed over."""
        if self.handed_over:
            return
        if self.status is None:
            try:  # the pid itself too: a child forked a moment ago may not lead its own group yet
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            _kill_group(self.pid)
            try:
                _, self.status = os.waitpid(self.pid, 0)
            except ChildProcessError:
                self.status = 0
        self._close_all()

    def _close_all(self) -> None:
        for name in ("task_w", "result_r", "log_r"):
            fd = getattr(self, name)
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
                setattr(self, name, -1)


def _prestarted_main(task_r: int, result_fd: int, log_fd: int, parent_pid: int,
                     warm_up: Callable[[Callable[[float], bool]], None]) -> None:
    try:
        _isolate({task_r, result_fd, log_fd}, parent_pid)

        def task_waiting(seconds: float) -> bool:
            return bool(select.select([task_r], [], [], seconds)[0])

        try:
            warm_up(task_waiting)  # the grader's own code, before any candidate's; a failure only leaves it cold
        except Exception:
            pass
        data = b""
        while True:
            chunk = os.read(task_r, 1 << 16)
            if not chunk:
                break
            data += chunk
        os.close(task_r)
        if len(data) < 8 or len(data) - 8 != int.from_bytes(data[:8], "little"):
            os._exit(0)  # discarded, or the server went away: nothing to run
        work, memory_limit_bytes = pickle.loads(data[8:])
    except BaseException:
        os._exit(70)
    _run_work(work, result_fd, log_fd, memory_limit_bytes)


class _Offer:
    child: Optional[Prestarted] = None


_offer = _Offer()


class offering:  # noqa: N801 (used as a context manager, like contextlib's helpers)
    """Within the block, the next run_in_child call may use `child` instead of forking; afterwards `used` says
    whether it did (then the child is spent) or not (then it is still the caller's)."""

    def __init__(self, child: Optional[Prestarted]) -> None:
        self.child = child
        self.used = False

    def __enter__(self) -> "offering":
        _offer.child = self.child
        return self

    def __exit__(self, *exc: object) -> None:
        self.used = self.child is not None and self.child.handed_over
        _offer.child = None
