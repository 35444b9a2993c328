"""One warm grader server (`python -m mkbgrader serve`, docs/grader-protocol.md) for bench scripts such as
gradeability.py that grade many kernels where only the verdict matters, not mkb's store or GPU lock: grade requests
in, verdicts out."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Optional

REPO = Path(__file__).resolve().parent.parent


def dsl_descriptor(dsl: str) -> dict:
    for folder in (REPO / "resources" / "dsls", REPO / "tests" / "fixtures" / "dsls"):
        path = folder / f"{dsl}.json"
        if path.is_file():
            return json.loads(path.read_text())
    raise SystemExit(f"no DSL descriptor for '{dsl}' in resources/dsls or tests/fixtures/dsls")


class WarmServer:
    """A grader server process; grade() sends one request and waits for its verdict."""

    def __init__(self, python: str, device: str, env: Optional[dict] = None) -> None:
        environment = dict(os.environ if env is None else env, PYTHONPATH=str(REPO / "core" / "grader"))
        self.device = device
        self.process = subprocess.Popen([python, "-m", "mkbgrader", "serve"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, env=environment)
        ready = json.loads(self.process.stdout.readline() or "{}")
        if ready.get("type") != "ready":
            raise SystemExit(f"the grader server did not start (its first line was {ready!r})")
        self.fingerprint = ready.get("grader_fingerprint", "")
        self.count = 0

    def grade(self, problem: Path, kernel: Path, dsl: str, settings: dict) -> dict:
        self.count += 1
        request_id = f"bench-{os.getpid()}-{self.count}"
        request = {"type": "grade", "id": request_id, "problem": str(problem.resolve()),
                   "kernel": str(kernel.resolve()), "dsl": dsl, "dsl_descriptor": dsl_descriptor(dsl),
                   "device": self.device, "settings": settings}
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        while True:
            line = self.process.stdout.readline()
            if not line:
                return {"stage": "no verdict", "error": "the grader server exited", "infrastructure_error": True}
            reply = json.loads(line)
            if reply.get("id") != request_id or reply.get("type") == "stage":
                continue
            if reply.get("type") == "verdict":
                return reply["verdict"]
            return {"stage": "no verdict", "error": str(reply.get("message", reply)), "infrastructure_error": True}

    def close(self) -> None:
        try:
            self.process.stdin.write(json.dumps({"type": "shutdown"}) + "\n")
            self.process.stdin.flush()
            self.process.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
