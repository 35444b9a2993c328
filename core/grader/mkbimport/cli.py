"""`python -m mkbimport kernelbenchx CHECKOUT --out DIR`: converts every task, writes the files idempotently, and
prints one line per task and a summary. Exit codes follow mkb's: 0 ok, 1 a file differs (not overwritten) or is stale,
2 usage, 3 bad input (a missing checkout, a malformed task file)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from mkbimport.convert import convert_task
from mkbimport.errors import TaskFileError, Unconvertible
from mkbimport.kbx_checkout import CheckoutError, list_tasks, read_prompts

EXIT_OK, EXIT_DIFFERS, EXIT_USAGE, EXIT_BAD_INPUT = 0, 1, 2, 3
ORIGIN_MARK = '"origin": "kernelbenchx:'  # how a file this importer wrote can be told from a user's own


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, mkb's usage exit code
        print(f"mkb suite import: {message} (mkb suite --help)", file=sys.stderr)
        sys.exit(EXIT_USAGE)


def _write(path: Path, text: str, force: bool) -> str:
    """'written', 'unchanged', 'rewritten' or 'differs' (an existing different file, left as it is)."""
    data = text.encode("utf-8")
    if path.exists():
        if path.read_bytes() == data:
            return "unchanged"
        if not force:
            return "differs"
    path.parent.mkdir(parents=True, exist_ok=True)
    existed = path.exists()
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise
    return "rewritten" if existed else "written"


def _stale(out: Path, kept: set[Path]) -> list[Path]:
    """Files an earlier import wrote that this one did not: their task was renamed, removed, renumbered (numbers
    follow the checkout's sorted task list) or is now skipped."""
    if not out.is_dir():
        return []
    found = []
    for path in sorted(out.glob("*/*.py")):
        if path not in kept and ORIGIN_MARK in path.read_text(encoding="utf-8", errors="replace"):
            found.append(path)
    return found


def _relative(error: TaskFileError, checkout: Path) -> str:
    """The error with its file named from the checkout's root (data/kernelbenchx/Loss/x.py:12: ...)."""
    try:
        where = error.path.relative_to(checkout)
    except ValueError:
        where = error.path
    return f"{where}:{error.line}: {error.message}"


def main(argv: list[str]) -> int:
    parser = _Parser(prog="mkb suite import", add_help=False)
    parser.add_argument("suite", choices=["kernelbenchx"])
    parser.add_argument("checkout")
    parser.add_argument("--out", required=True)
    parser.add_argument("--force", action="store_true")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    started = time.monotonic()
    checkout, out = Path(args.checkout), Path(args.out)
    if out.exists() and not out.is_dir():
        print(f"mkb suite import: --out {out}: exists and is not a folder", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        tasks = list_tasks(checkout)
    except CheckoutError as error:
        print(f"mkb suite import: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    records: list[dict] = []
    errors: list[str] = []
    try:
        prompts = read_prompts(checkout)
    except TaskFileError as error:
        errors.append(_relative(error, checkout))
        print(f"error    {errors[-1]}")
        prompts = {}
    for task in tasks:
        record: dict = {"task": task.label, "number": task.number}
        try:
            converted = convert_task(task, prompts)
        except TaskFileError as error:
            shown = _relative(error, checkout)
            record.update(outcome="error", reason=shown)
            errors.append(shown)
            print(f"error    {task.label}: {shown}")
        except Unconvertible as why:
            record.update(outcome="skipped", reason=str(why))
            print(f"skipped  {task.label}: {why}")
        else:
            target = out / task.family / task.file_name
            try:
                written = _write(target, converted.text, args.force)
            except OSError as error:
                record.update(outcome="error", reason=f"{target}: cannot be written ({error.strerror})")
                errors.append(record["reason"])
                print(f"error    {task.label}: {record['reason']}")
                records.append(record)
                continue
            record.update(outcome="imported", file=f"{task.family}/{task.file_name}", write=written,
                          scale_factor=converted.scaling.factor, sizes=converted.scaling.note,
                          input_bytes=converted.scaling.input_bytes)
            shown = (f"{written}; an existing different file is kept, use --force to replace it"
                     if written == "differs" else written)
            print(f"imported {task.label} -> {task.family}/{task.file_name} ({shown}; x{converted.scaling.factor})")
        records.append(record)
    kept = {out / t.family / t.file_name for t, r in zip(tasks, records) if r["outcome"] in ("imported", "error")}
    stale = _stale(out, kept)
    for path in stale:
        shown = path.relative_to(out)
        if args.force:
            path.unlink()
            print(f"removed  {shown}: an earlier import wrote it and this one did not")
        else:
            print(f"stale    {shown}: an earlier import wrote it and this one did not (its task was renamed, removed, "
                  f"renumbered or is now skipped); --force deletes it")
    outcomes = Counter(r["outcome"] for r in records)
    writes = Counter(r.get("write") for r in records if r["outcome"] == "imported")
    seconds = time.monotonic() - started
    print(f"kernelbenchx: {len(records)} tasks: {outcomes['imported']} imported ({writes['written']} written, "
          f"{writes['rewritten']} rewritten, {writes['unchanged']} unchanged, {writes['differs']} differ), "
          f"{outcomes['skipped']} skipped, {len(errors)} errors, {len(stale)} {'removed' if args.force else 'stale'} "
          f"in {seconds:.2f} s")
    if args.json:
        summary = {"suite": "kernelbenchx", "tasks": records, "errors": errors,
                   "stale": [str(p.relative_to(out)) for p in stale], "seconds": round(seconds, 3)}
        try:
            Path(args.json).write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
        except OSError as error:
            print(f"mkb suite import: --json {args.json}: cannot be written ({error.strerror})", file=sys.stderr)
            return EXIT_BAD_INPUT
    if errors:
        return EXIT_BAD_INPUT
    return EXIT_DIFFERS if writes["differs"] or (stale and not args.force) else EXIT_OK
