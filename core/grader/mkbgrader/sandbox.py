"""Running work in a forked child: own process group, capped log of fd 1/2, results over a dedicated pipe, timeout.

The parent has imported torch but never touched CUDA, so forking is safe; the child initialises CUDA itself.
"""

from __future__ import annotations

import json
import os
import resource
import select
import signal
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

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


def _die_with_parent(parent_pid: int) -> None:
    """Linux PR_SET_PDEATHSIG: the child is killed when the grader server dies, even by SIGKILL (its own session
    puts it out of reach of a signal to the server's group). The server forks from its only thread, so the
    "parent thread" the kernel watches is the server itself."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent_pid:  # the server died before prctl took effect
        os._exit(70)


def _child_main(work: Work, result_fd: int, log_fd: int, memory_limit_bytes: Optional[int], parent_pid: int) -> None:
    exit_now = os._exit
    try:
        os.setsid()
        _die_with_parent(parent_pid)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(log_fd, 1)
        os.dup2(log_fd, 2)
        keep = sorted({0, 1, 2, result_fd})
        for low, high in zip(keep, keep[1:] + [65536]):
            if high > low + 1:
                os.closerange(low + 1, high)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if memory_limit_bytes:
            resource.setrlimit(resource.RLIMIT_AS, (memory_limit_bytes, memory_limit_bytes))
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        writer = os.fdopen(result_fd, "w", buffering=1)

        def send(message: dict) -> None:
            writer.write(json.dumps(message, allow_nan=True, default=str) + "\n")
            writer.flush()

        work(send)
        writer.flush()
        exit_now(0)
    except BaseException:
        exit_now(70)


def run_in_child(work: Work, timeout_s: float, log_cap: int = 65536,
                 on_message: Optional[Callable[[dict], None]] = None,
                 memory_limit_bytes: Optional[int] = None) -> ChildOutcome:
    """Forks, runs `work(send)` in the child, collects its messages until it exits or the timeout kills its group."""
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
    outcome = ChildOutcome()
    deadline = started + timeout_s
    pending = b""
    log_parts: list[bytes] = []
    open_fds = {result_r, log_r}
    status: Optional[int] = None
    exited_at: Optional[float] = None
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
        now = time.monotonic()
        if status is not None and exited_at is not None and now - exited_at > 2.0:
            break  # something outside the group still holds a pipe: stop listening
        if status is None and now >= deadline:
            outcome.timed_out = True
            _kill_group(pid)
            _, status = os.waitpid(pid, 0)
            break
        wait = min(0.05 if status is not None else 0.25, max(0.0, deadline - now))
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
