"""Command line: `serve` (the protocol server), `grade` (one evaluation, verdict JSON), `probe` (device peaks),
`defaults` (every grading default as JSON)."""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
from typing import Optional

from mkbgrader.parent import child_task, settings as grading_settings
from mkbgrader.parent.grade import grade
from mkbgrader.parent.server import Server, serve


def _load_descriptor(dsl: str, path: Optional[str]) -> dict:
    candidates = [path] if path else []
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.realpath(os.path.join(here, "..", "..", "..", ".."))  # the source tree, four folders up
    candidates += [os.path.join(root, "resources", "dsls", f"{dsl}.json"),
                   os.path.join(root, "tests", "fixtures", "dsls", f"{dsl}.json")]
    for candidate in candidates:
        if candidate and os.path.isfile(candidate):
            with open(candidate, encoding="utf-8") as handle:
                return json.load(handle)
    return {"id": dsl, "compliance": {"adapter": dsl}}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m mkbgrader")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("serve", help="speak the JSON-lines protocol on stdin/stdout")
    grade_parser = sub.add_parser("grade", help="grade one kernel.py and print the verdict JSON")
    grade_parser.add_argument("--problem", required=True)
    grade_parser.add_argument("--kernel", required=True)
    grade_parser.add_argument("--dsl", required=True)
    grade_parser.add_argument("--descriptor", help="DSL descriptor JSON (default: resources/dsls/<dsl>.json)")
    grade_parser.add_argument("--device", default="cuda:0")
    grade_parser.add_argument("--settings", default="{}", help="settings overrides as a JSON object")
    grade_parser.add_argument("--json", action="store_true", help="print the verdict as one JSON line")
    probe_parser = sub.add_parser("probe", help="measure the device's copy bandwidth and matmul rates")
    probe_parser.add_argument("--device", default="cuda:0")
    sub.add_parser("defaults", help="print every grading default as one JSON object (parent/settings.py)")
    args = parser.parse_args(argv)

    if args.command == "serve":
        child_task.preload_for_server()
        return serve()
    if args.command == "grade":
        try:
            settings = grading_settings.parse_settings(json.loads(args.settings))
        except ValueError as error:
            print(f"mkbgrader: {error}", file=sys.stderr)
            return 2
        request = {"problem": os.path.abspath(args.problem), "kernel": os.path.abspath(args.kernel),
                   "dsl": args.dsl, "dsl_descriptor": _load_descriptor(args.dsl, args.descriptor),
                   "device": args.device}
        result = grade(request, settings)
        print(json.dumps(result, indent=None if args.json else 2, allow_nan=False))
        return 0 if result.get("passed") else 1
    if args.command == "probe":
        buffer = io.StringIO()
        Server(buffer).probe({"id": "cli", "device": args.device})
        print(buffer.getvalue().strip())
        return 0 if '"probe_result"' in buffer.getvalue() else 1
    if args.command == "defaults":
        print(json.dumps(grading_settings.defaults(), sort_keys=True))
        return 0
    return 2
