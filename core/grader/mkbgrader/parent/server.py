"""The JSON-lines server (docs/grader-protocol.md): requests on stdin, replies on a private copy of stdout.

fd 1 is pointed at stderr right after start-up, so nothing but protocol replies can reach the real stdout.
As each grading starts, the server forks the next evaluation child ahead of time (`WarmChild`), for the device and
the DSL of the request's "next" (or its own), so the next grading finds its CUDA context and DSL ready. That child
warms up beside this grading's untimed stages, holding the device's timing lock, which every timed stage holds too
(child/timing_lock.py); the server itself never touches CUDA.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from typing import Any, Callable, Optional, Sequence, TextIO

from mkbgrader import PROTOCOL_VERSION
from mkbgrader.parent import child_task, pool, retime, retime_request, sandbox, verdict
from mkbgrader.parent.child_task import ChildTask
from mkbgrader.fingerprint import grader_fingerprint
from mkbgrader.parent.grade import grade, requested_slowdown
from mkbgrader.parent.settings import EAGER_TARGET_MS, parse_settings
from mkbgrader.parent.validate import validate


# Added to a grading that found no room while a child pre-started for the next grading ran beside it: on a GPU that
# child holds its CUDA context and libraries (up to about 1 GiB) from its warm-up on.
NO_ROOM_BESIDE = ("; a child pre-started for the next grading was running beside this one (on a GPU it holds up to "
                  "about 1 GiB): MKB_GRADER_PRESTART=0 leaves the whole device to each grading")


def next_grading(request: dict) -> Optional[list[tuple[str, dict]]]:
    """The request's optional "next": the DSL (and descriptor) of the client's next grading on this device, which the
    child pre-started beside this grading prepares. None when absent; ValueError naming the field when malformed."""
    if "next" not in request:
        return None
    hint = request["next"]
    if not isinstance(hint, dict) or not isinstance(hint.get("dsl"), str) or not hint["dsl"]:
        raise ValueError('next must be an object with a non-empty string "dsl" (and an optional "dsl_descriptor")')
    descriptor = hint.get("dsl_descriptor", {})
    if not isinstance(descriptor, dict):
        raise ValueError("next.dsl_descriptor must be a JSON object")
    return [(hint["dsl"], descriptor)]


def device_lock_of(request: dict) -> str:
    """The request's "device_lock" path, "" when it has none (a value that is not a string counts as absent)."""
    lock_path = request.get("device_lock")
    return lock_path if isinstance(lock_path, str) else ""


def _reply_channel() -> TextIO:
    sys.stdout.flush()
    private = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(private, "w", buffering=1)


def _prestart_settings() -> tuple[bool, float]:
    """MKB_GRADER_PRESTART=0 turns pre-starting off (the bench's "as before" side); MKB_GRADER_PRESTART_MAX_WAIT_S
    bounds how long a pre-started child may wait before the next grading discards it (default 900 s)."""
    enabled = os.environ.get("MKB_GRADER_PRESTART", "1").strip() not in ("0", "off", "no", "false")
    try:
        max_wait = float(os.environ.get("MKB_GRADER_PRESTART_MAX_WAIT_S", "900"))
    except ValueError:
        max_wait = 900.0
    return enabled, max_wait


class WarmChild:
    """The one evaluation child forked ahead of time, keyed by the device and the (DSL, descriptor) pairs it prepared:
    a grading's one, or a re-timing's kernels'. A child that does not match, has waited too long or has died is
    discarded (killed and reaped)."""

    def __init__(self, enabled: bool, max_wait_s: float) -> None:
        self.enabled = enabled
        self.max_wait_s = max_wait_s
        self.child: Optional[sandbox.Prestarted] = None
        self.discarded = 0

    @staticmethod
    def key(device: str, dsls: Sequence[tuple[str, dict]]) -> tuple:
        return device, json.dumps([[dsl, descriptor] for dsl, descriptor in dsls], sort_keys=True, default=str)

    def take(self, device: str, dsls: Sequence[tuple[str, dict]]) -> Optional[sandbox.Prestarted]:
        child, self.child = self.child, None
        if child is None:
            return None
        if child.key != self.key(device, dsls) or child.age() > self.max_wait_s or not child.alive():
            child.discard()
            self.discarded += 1
            return None
        return child

    def keep(self, child: Optional[sandbox.Prestarted]) -> None:
        """Takes back a child that was offered but not used (the grading stopped before its child ran)."""
        if child is not None and not child.handed_over:
            if self.child is None:
                self.child = child
            else:
                child.discard()

    def prestart(self, device: str, dsls: Sequence[tuple[str, dict]], lock_path: str = "") -> bool:
        """Forks the next child, which prepares `dsls`; its warm-up waits for the timing lock of `lock_path`, the
        device lock mkb holds around each grading (the request's "device_lock"), so it never runs beside a timed
        kernel (child/timing_lock.py)."""
        if not self.enabled or self.child is not None:
            return False
        self.child = sandbox.Prestarted(self.key(device, dsls),
                                        ChildTask("warmup", "warm_up_under_lock", (device, list(dsls), lock_path)))
        return True

    def reap(self) -> None:
        if self.child is not None:
            self.child.reap_if_exited()

    def close(self) -> None:
        child, self.child = self.child, None
        if child is not None:
            child.discard()


class Server:
    def __init__(self, replies: TextIO) -> None:
        self.replies = replies
        self.warm = WarmChild(*_prestart_settings())

    def reply(self, message: dict) -> None:
        self.replies.write(json.dumps(message, allow_nan=False) + "\n")
        self.replies.flush()

    def stage_replies(self, request_id: Any) -> Callable[[str], None]:
        """What tells the client each stage of its request as the child enters it."""
        return lambda stage: self.reply({"type": "stage", "id": request_id, "stage": stage})

    def error(self, request_id: Any, message: str) -> None:
        self.reply({"type": "error", "id": request_id, "message": message})

    def ready(self) -> None:
        self.reply({"type": "ready", "protocol": PROTOCOL_VERSION, "grader_fingerprint": grader_fingerprint(),
                    "torch": child_task.torch_version()})

    def handle(self, line: str) -> bool:
        """Handles one request line; returns False when the server should stop."""
        try:
            request = json.loads(line)
        except ValueError:
            self.error(None, "request is not valid JSON; send one JSON object per line")
            return True
        if not isinstance(request, dict):
            self.error(None, "request is not a JSON object")
            return True
        kind, request_id = request.get("type"), request.get("id")
        if kind == "shutdown":
            return False
        if kind == "grade":
            self.grade(request)
        elif kind == "probe":
            self.probe(request)
        elif kind == "validate":
            self.validate(request)
        elif kind == "retime":
            self.retime(request)
        elif kind == "pool":
            self.pool(request)
        else:
            self.error(request_id, f"unknown request type {kind!r}; expected grade, retime, pool, validate, probe "
                       "or shutdown")
        return True

    def grade(self, request: dict) -> None:
        request_id = request.get("id")
        problems = [k for k in ("problem", "kernel", "dsl") if not isinstance(request.get(k), str) or not request[k]]
        if problems:
            self.error(request_id, f"grade request lacks {', '.join(problems)}")
            return
        device = request.get("device", "cpu")
        if not isinstance(device, str) or not (device == "cpu" or device.startswith("cuda")):
            self.error(request_id, f"device must be \"cpu\" or \"cuda[:N]\", not {device!r}")
            return
        if "dsl_descriptor" in request and not isinstance(request["dsl_descriptor"], dict):
            self.error(request_id, "dsl_descriptor must be a JSON object")
            return
        try:
            settings = parse_settings(request.get("settings"))
            requested_slowdown(request)
        except ValueError as error:
            self.error(request_id, str(error))
            return

        on_stage = self.stage_replies(request_id)
        dsls = [(request["dsl"], request.get("dsl_descriptor") or {})]
        try:
            next_dsls = next_grading(request) or dsls
        except ValueError as error:
            self.error(request_id, str(error))
            return
        offer = sandbox.offering(self.warm.take(device, dsls))
        beside = self.prestart_beside(request, device, next_dsls)
        try:
            with offer:
                result = grade(request, settings, on_stage)
        except Exception as error:  # a grader bug must become an infrastructure verdict, not a dead server
            result = verdict.fail(verdict.empty_verdict(), "load", f"grader error: {type(error).__name__}: {error}",
                                  True)
        if beside and result.get("infrastructure_error") and str(result.get("error", "")).startswith("cannot grade:"):
            result["error"] += NO_ROOM_BESIDE
        self.warm.keep(offer.child)
        self.reply({"type": "verdict", "id": request_id, "verdict": result, "prestarted": offer.used})

    def prestart_beside(self, request: dict, device: str, dsls: Sequence[tuple[str, dict]]) -> bool:
        """Forks the next child as this request starts, for `dsls` (the request's "next" or its own): it warms up
        beside this request's untimed stages, holding the device's timing lock, which every timed stage holds too
        (child/timing_lock.py). True when it forked one."""
        return self.warm.prestart(device, dsls, device_lock_of(request))

    def retime(self, request: dict) -> None:
        """Paired re-timing (docs/grader-protocol.md): 2 to 4 kernels and eager, interleaved in one sandboxed child."""
        request_id = request.get("id")
        try:
            retime_request.parse_request(request)
        except ValueError as error:
            self.error(request_id, str(error))
            return

        on_stage = self.stage_replies(request_id)
        # A re-timing's child is pre-started like a grading's, for the device and all of its kernels' DSLs.
        device = str(request.get("device") or "cpu")
        dsls = retime_request.request_dsls(request)
        offer = sandbox.offering(self.warm.take(device, dsls))
        self.prestart_beside(request, device, dsls)
        try:
            with offer:
                result = retime.retime(request, on_stage)
        except Exception as error:  # a grader bug must become an infrastructure result, not a dead server
            result = {"ok": False, "error": f"grader error while re-timing: {type(error).__name__}: {error}",
                      "failed_label": "", "infrastructure_error": True, "device": str(request.get("device", "")),
                      "device_name": "", "grader_fingerprint": grader_fingerprint(), "rounds": 0, "stop": "",
                      "eager_median_s": None, "kernels": [], "pairs": [], "seconds": 0.0}
        self.warm.keep(offer.child)
        self.reply({"type": "retime", "id": request_id, "retime": result, "prestarted": offer.used})

    def pool(self, request: dict) -> None:
        """Pooled correctness draws (docs/grader-protocol.md): 1 to 8 kernels of one problem on shared draws, each
        draw's reference and anchor computed once. It takes no pre-started child and leaves the one waiting alone:
        that child is for the next grading."""
        request_id = request.get("id")
        try:
            pool.parse_request(request)
        except ValueError as error:
            self.error(request_id, str(error))
            return

        on_stage = self.stage_replies(request_id)
        try:
            result = pool.pool(request, on_stage)
        except Exception as error:  # a grader bug must become an error reply, not a dead server
            self.error(request_id, f"grader error while pooling draws: {type(error).__name__}: {error}")
            return
        self.reply({"type": "pool", "id": request_id, "pool": result})

    def validate(self, request: dict) -> None:
        """Problem validation (docs/grader-protocol.md): determinism, sensitivity, eager time; the problem's code
        runs only in the sandboxed child, as in grading."""
        request_id = request.get("id")
        if not isinstance(request.get("problem"), str) or not request["problem"]:
            self.error(request_id, "validate request lacks problem")
            return
        device = request.get("device", "cpu")
        if not isinstance(device, str) or not (device == "cpu" or device.startswith("cuda")):
            self.error(request_id, f"device must be \"cpu\" or \"cuda[:N]\", not {device!r}")
            return
        target = request.get("eager_target_ms", EAGER_TARGET_MS)
        if isinstance(target, bool) or not isinstance(target, (int, float)) or target < 0:
            self.error(request_id, "eager_target_ms must be a non-negative number")
            return
        if "problem_meta" in request and not isinstance(request["problem_meta"], dict):
            self.error(request_id, "problem_meta must be a JSON object")
            return
        raw_settings = request.get("settings")
        if isinstance(raw_settings, dict):
            raw_settings = {"recheck_draws": 0, **raw_settings}  # validation has no re-checks to bound
        try:
            settings = parse_settings(raw_settings)
        except ValueError as error:
            self.error(request_id, str(error))
            return

        on_stage = self.stage_replies(request_id)
        try:
            report = validate(request, settings, on_stage)
        except Exception as error:  # a grader bug must become an error reply, not a dead server
            self.error(request_id, f"grader error while validating: {type(error).__name__}: {error}")
            return
        self.reply({"type": "validation", "id": request_id, "validation": verdict.finite_or_none(report)})

    def probe(self, request: dict, timeout_s: float = 300.0) -> None:
        request_id = request.get("id")
        device = request.get("device", "cuda:0")
        if not isinstance(device, str) or not device.startswith("cuda"):
            self.error(request_id, "probe needs a CUDA device such as \"cuda:0\"")
            return

        outcome = sandbox.run_in_child(ChildTask("probe", "probe_work", (device, device_lock_of(request))), timeout_s)
        result: Optional[dict] = next((m["device"] for m in outcome.messages if m.get("t") == "probe"), None)
        if result is None:
            failure = next((m.get("message") for m in outcome.messages if m.get("t") == "error"), None)
            self.error(request_id, "probe failed: " + (failure or ("timed out" if outcome.timed_out else
                                                                   "the probe process died without a result")))
            return
        self.reply({"type": "probe_result", "id": request_id, "device": result})


def serve(stdin: TextIO = sys.stdin) -> int:
    server = Server(_reply_channel())
    # A pre-started child that dies while waiting is reaped at once, and so is an evaluation child whose exit was not
    # waited for (the handler waits on those pids only, without blocking).
    previous = signal.signal(signal.SIGCHLD, lambda *_: (server.warm.reap(), sandbox.reap_exiting()))
    sandbox.freeze_heap()  # children forked per request inherit a heap the collector no longer walks
    try:
        server.ready()
        for line in stdin:
            if not line.strip():
                continue
            if not server.handle(line):
                break
    finally:
        signal.signal(signal.SIGCHLD, previous)
        server.warm.close()
    return 0
