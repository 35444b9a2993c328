"""Shared paths and helpers for the grader's Python tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys

REPO = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
GRADER = os.path.join(REPO, "core", "grader")
FIXTURES = os.path.join(REPO, "tests", "fixtures")
if GRADER not in sys.path:
    sys.path.insert(0, GRADER)

FAST = {"correctness_draws": 2, "warmup_draws": 1, "timing_draws": 3, "recheck_draws": 1, "outlier_draws": 1,
        "timeout_s": 60.0}


def problem(name: str) -> str:
    return os.path.join(FIXTURES, "problems", "basic", name)


def solution(name: str) -> str:
    return os.path.join(FIXTURES, "solutions", name)


def hostile(name: str) -> str:
    return os.path.join(FIXTURES, "hostile", name + ".cpusim.py")


def descriptor(dsl: str) -> dict:
    for folder in (os.path.join(REPO, "resources", "dsls"), os.path.join(FIXTURES, "dsls")):
        path = os.path.join(folder, dsl + ".json")
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as handle:
                return json.load(handle)
    return {"id": dsl, "compliance": {"adapter": dsl}}


def grade(problem_path: str, kernel_path: str, dsl: str = "cpusim", device: str = "cpu", **overrides: object) -> dict:
    from mkbgrader.parent.grade import grade as run_grade
    from mkbgrader.parent.settings import parse_settings

    request = {"problem": problem_path, "kernel": kernel_path, "dsl": dsl, "dsl_descriptor": descriptor(dsl),
               "device": device}
    return run_grade(request, parse_settings({**FAST, **overrides}))


def start_server(extra_env: dict | None = None) -> tuple[subprocess.Popen, dict]:
    """A real grader server (`python -m mkbgrader serve`) on pipes, and its ready line once it said it."""
    env = {**os.environ, "PYTHONPATH": GRADER, "PYTHONDONTWRITEBYTECODE": "1", **(extra_env or {})}
    server = subprocess.Popen([sys.executable, "-m", "mkbgrader", "serve"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    ready = json.loads(server.stdout.readline())
    assert ready["type"] == "ready", ready
    return server, ready


def stop_server(server: subprocess.Popen) -> None:
    """Asks the server to shut down and waits for it."""
    server.stdin.write('{"type":"shutdown"}\n')
    server.stdin.close()
    server.wait(timeout=30)
    server.stdout.close()
