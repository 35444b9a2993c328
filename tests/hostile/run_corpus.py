"""Runs the hostile kernel corpus through the real grader and checks every verdict against expected.json.

For each manifest entry it grades the kernel (through `mkb grade`, or `python -m mkbgrader grade` with --direct),
compares the verdict with the expectation under the chosen implementation boundary (--boundary mkb|strict; an
entry's "under" object overrides its expectation per boundary), and then grades the good kernel again to prove the
hostile one left grading healthy. It prints one table row per kernel and exits non-zero on any mismatch. With
--device cpu it runs the CPU corpus instead: the cpusim entries against problem_cpu/, a small copy of the suite.

Standard library and the grader's torch-free settings (mkbgrader/parent/settings.py: the boundary names and the size
limit) only: it runs on any Python 3.8+ (the grader's own interpreter is chosen by mkb, or by --python).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.realpath(os.path.join(HERE, "..", ".."))
GPU_SUITE = os.path.join(HERE, "problem")
CPU_SUITE = os.path.join(HERE, "problem_cpu")  # the same problems at CPU sizes, for the cpusim entries
PROBLEM_NUMBER = "01"
PROBLEM_FILE = os.path.join(GPU_SUITE, "mlp_norm", "01_silu_mul.py")
KERNELS = os.path.join(HERE, "kernels")
GOOD = os.path.join(HERE, "good")
CPUSIM_DSL_DIR = os.path.join(REPO, "tests", "fixtures", "dsls")
CPUSIM_LIB = os.path.join(REPO, "tests", "fixtures", "cpusim_lib")
sys.path.insert(0, os.path.join(REPO, "core", "grader"))
from mkbgrader.parent.settings import BOUNDARIES, DEFAULT_BOUNDARY, Settings  # noqa: E402 (after its path)

MANIFEST = os.path.join(HERE, "expected.json")
OVERSIZE_BYTES = Settings().max_kernel_bytes + 10_000  # a kernel.py just over the size limit
GRACE_S = 300  # on top of the evaluation bound: interpreter start, imports, compiles, mkb's own margin
REDUCED_DRAWS = {"correctness_draws": 2, "warmup_draws": 2, "timing_draws": 5, "recheck_draws": 1}

Verdict = Dict[str, Any]


# ----- grading ------------------------------------------------------------------------------------------------------
class Grader:
    """Grades one kernel file and returns (verdict or None, diagnostic line, wall seconds)."""

    def __init__(self, options: argparse.Namespace, work_dir: str, env: Dict[str, str]) -> None:
        self.options = options
        self.work_dir = work_dir
        self.env = env
        self.cli_flags = ""
        if not options.direct:
            self.cli_flags = self._cli_help()

    def _cli_help(self) -> str:
        try:
            done = subprocess.run([self.options.cli, "grade", "--help"], capture_output=True, text=True,
                                  timeout=60, cwd=self.work_dir, env=self.env)
            return done.stdout + done.stderr
        except (OSError, subprocess.SubprocessError):
            return ""

    def bound_s(self) -> int:
        """How long one grading command may take: its own evaluation and start-up, plus (with --jobs N, through mkb)
        the wait for the GPU lock behind up to N - 1 other gradings, each bounded by mkb at the timeout + 30 s."""
        waiting = 0 if self.options.direct else (max(1, self.options.jobs) - 1) * (self.options.timeout + 30)
        return self.options.timeout + GRACE_S + waiting

    def command(self, kernel: str, dsl: str, reduced: bool, number: str = PROBLEM_NUMBER) -> List[str]:
        options = self.options
        suite = suite_dir(options)
        if options.direct:
            settings: Dict[str, Any] = {"timeout_s": options.timeout, "boundary": options.boundary}
            if reduced:
                settings.update(REDUCED_DRAWS)
            return [options.python, "-m", "mkbgrader", "grade", "--problem", problem_file(suite, number),
                    "--kernel", kernel, "--dsl", dsl, "--device", options.device or "cuda:0", "--settings",
                    json.dumps(settings), "--json"]  # the grader finds cpusim.json in tests/fixtures/dsls
        command = [options.cli, "grade", kernel, "--problem", number, "--suite", suite, "--dsl", dsl,
                   "--json", "--timeout", str(options.timeout)]
        if options.boundary != DEFAULT_BOUNDARY or re.search(r"--boundary\b", self.cli_flags):
            command += ["--boundary", options.boundary]  # an mkb without the option grades under mkb, its default
        if options.device:
            command += ["--device", options.device]
        if dsl == "cpusim":
            command += ["--dsl-dir", CPUSIM_DSL_DIR]
        if reduced:
            command += self._reduced_draw_flags()
        return command

    def _reduced_draw_flags(self) -> List[str]:
        """Fewer draws for the good re-check, in whatever form `mkb grade --help` advertises (else none)."""
        if self.options.good_args is not None:
            return shlex.split(self.options.good_args)
        flags: List[str] = []
        for key, value in REDUCED_DRAWS.items():
            flag = "--" + key.replace("_", "-")
            if re.search(re.escape(flag) + r"\b", self.cli_flags):
                flags += [flag, str(value)]
        if not flags and re.search(r"--settings\b", self.cli_flags):
            flags = ["--settings", json.dumps(REDUCED_DRAWS)]
        return flags

    def grade(self, kernel: str, dsl: str, reduced: bool = False, marks_dir: Optional[str] = None,
              number: str = PROBLEM_NUMBER) -> Tuple[Optional[Verdict], str, float]:
        command = self.command(kernel, dsl, reduced, number)
        env = dict(self.env)
        if marks_dir is not None:
            env["MKB_HOSTILE_MARKS"] = marks_dir
        started = time.monotonic()
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=self.work_dir,
                                   env=env, start_new_session=True)
        bound = self.bound_s()
        try:
            stdout, stderr = process.communicate(timeout=bound)
        except subprocess.TimeoutExpired:
            _kill_group(process.pid)
            stdout, stderr = process.communicate()
            return None, f"the grading command ran past {bound} s and was killed", time.monotonic() - started
        finally:
            _kill_group(process.pid)  # nothing a kernel left behind may outlive its grading
        seconds = time.monotonic() - started
        verdict = parse_verdict(stdout.decode("utf-8", "replace"))
        if verdict is None:
            tail = stderr.decode("utf-8", "replace").strip().splitlines()
            return None, (f"no verdict JSON on stdout (exit {process.returncode}, {len(stdout)} bytes); stderr: "
                          f"{tail[-1] if tail else '(empty)'}"), seconds
        return verdict, "", seconds


def cpu_mode(options: argparse.Namespace) -> bool:
    return options.device == "cpu"


def suite_dir(options: argparse.Namespace) -> str:
    return CPU_SUITE if cpu_mode(options) else GPU_SUITE


def problem_file(suite: str, number: str) -> str:
    """The file of problem `number` ("01") in a fixture suite (family/NN_slug.py)."""
    for family in sorted(os.listdir(suite)):
        folder = os.path.join(suite, family)
        if os.path.isdir(folder):
            for name in sorted(os.listdir(folder)):
                if name.startswith(number + "_") and name.endswith(".py"):
                    return os.path.join(folder, name)
    raise ValueError(f"{suite} holds no problem {number}")


def expectation(entry: Dict[str, Any], boundary: str) -> Dict[str, Any]:
    """The entry's expectation under a boundary: its own keys, overridden by entry["under"][boundary]."""
    merged = {key: value for key, value in entry.items() if key != "under"}
    merged.update((entry.get("under") or {}).get(boundary) or {})
    return merged


def _kill_group(pid: int) -> None:
    if pid <= 1:  # killpg(0) would signal our own group, killpg(1) init's
        return
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def parse_verdict(stdout: str) -> Optional[Verdict]:
    """The verdict object in the command's stdout: the whole text, else the last line that is a JSON object."""
    candidates = [stdout.strip()] + [line.strip() for line in reversed(stdout.splitlines())]
    for text in candidates:
        if not text.startswith("{"):
            continue
        try:
            value = json.loads(text)
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("verdict"), dict):
            value = value["verdict"]
        if isinstance(value, dict) and "passed" in value:
            return value
    return None


# ----- judging ------------------------------------------------------------------------------------------------------
def reason_text(verdict: Verdict) -> str:
    parts = [verdict.get("error"), verdict.get("mismatch"), verdict.get("compliance_rule")]
    return " | ".join(str(part) for part in parts if part)


def engaged(marks_dir: str, kernel_name: str) -> bool:
    stem = os.path.splitext(kernel_name)[0]
    return os.path.exists(os.path.join(marks_dir, stem + ".engaged"))


def judge(entry: Dict[str, Any], verdict: Optional[Verdict], diagnostic: str, marks_dir: str,
          boundary: str = DEFAULT_BOUNDARY) -> List[str]:
    """Every way the verdict differs from the entry's expectation under `boundary` (empty when it matches)."""
    if verdict is None:
        return [diagnostic]
    entry = expectation(entry, boundary)
    problems: List[str] = []
    if verdict.get("boundary", boundary) != boundary:
        problems.append(f"graded under boundary {verdict.get('boundary')!r}, expected {boundary!r}")
    expected = entry.get("passed")
    got = bool(verdict.get("passed"))
    if bool(verdict.get("infrastructure_error")) != bool(entry.get("infrastructure_error", False)):
        problems.append(f"infrastructure_error is {verdict.get('infrastructure_error')}")
    if got:
        if expected is False:
            if entry.get("may_pass_if_idle") and not engaged(marks_dir, entry["kernel"]):
                pass  # the trick never engaged, so every call did honest work
            else:
                problems.append("passed, but it must fail")
        minimum = entry.get("min_kernel_ms")
        median = verdict.get("kernel_median_ms")
        if minimum is not None and not (isinstance(median, (int, float)) and median >= minimum):
            problems.append(f"kernel median {median} ms is under {minimum} ms: the work was not all timed")
        speedup = verdict.get("speedup_vs_eager")
        if not (isinstance(speedup, (int, float)) and speedup > 0):
            problems.append(f"passed with speedup_vs_eager {speedup}")
    else:
        if expected is True:
            problems.append(f"failed, but it must pass: {reason_text(verdict)}")
        else:
            stage = entry.get("stage")
            if stage is not None and verdict.get("stage") != stage:
                problems.append(f"stage is {verdict.get('stage')!r}, expected {stage!r}")
            pattern = entry.get("reason") or ""
            if pattern and not re.search(pattern, reason_text(verdict), re.IGNORECASE):
                problems.append(f"reason /{pattern}/ not found in: {reason_text(verdict)}")
            if "timed_out" in entry and bool(verdict.get("timed_out")) != bool(entry["timed_out"]):
                problems.append(f"timed_out is {verdict.get('timed_out')}, expected {entry['timed_out']}")
            if verdict.get("speedup_vs_eager") not in (0, 0.0, None):
                problems.append(f"failed but speedup_vs_eager is {verdict.get('speedup_vs_eager')}")
    return problems


def describe_expected(entry: Dict[str, Any]) -> str:
    if entry.get("passed") is True:
        text = "pass"
    elif entry.get("passed") is None:
        text = "pass or fail"
    else:
        text = "fail" + (" (pass if idle)" if entry.get("may_pass_if_idle") else "")
    if entry.get("passed") is not True and entry.get("stage"):
        text += f" @{entry['stage']}"
    if entry.get("min_kernel_ms") is not None:
        text += f", >= {entry['min_kernel_ms']} ms"
    return text


def describe_got(verdict: Optional[Verdict]) -> str:
    if verdict is None:
        return "no verdict"
    if verdict.get("passed"):
        median = verdict.get("kernel_median_ms")
        speedup = verdict.get("speedup_vs_eager")
        median_text = f"{median:.3f} ms" if isinstance(median, (int, float)) else "? ms"
        speedup_text = f"{speedup:.2f}x" if isinstance(speedup, (int, float)) else "?x"
        return f"pass {speedup_text} {median_text}"
    rule = verdict.get("compliance_rule") or ""
    return f"fail @{verdict.get('stage')}" + (f" [{rule}]" if rule else "") + \
        (" timeout" if verdict.get("timed_out") else "")


# ----- the corpus ---------------------------------------------------------------------------------------------------
def write_oversize(work_dir: str) -> str:
    """The good Triton kernel padded with comment lines past the size limit."""
    with open(os.path.join(GOOD, "good_triton.py"), encoding="utf-8") as handle:
        source = handle.read()
    filler = "# padding line to push the file past the kernel size limit " + "." * 60 + "\n"
    count = (OVERSIZE_BYTES - len(source.encode("utf-8"))) // len(filler) + 1
    path = os.path.join(work_dir, "oversize.py")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(source + filler * count)
    return path


def kernel_path(entry: Dict[str, Any], work_dir: str) -> str:
    if entry.get("generate") == "oversize":
        return write_oversize(work_dir)
    return os.path.join(KERNELS, entry["kernel"])


def load_manifest() -> List[Dict[str, Any]]:
    with open(MANIFEST, encoding="utf-8") as handle:
        entries = json.load(handle)
    for entry in entries:
        for key in ("kernel", "dsl", "passed", "stage", "reason"):
            if key not in entry:
                raise ValueError(f"{MANIFEST}: entry {entry.get('kernel', '?')} lacks '{key}'")
        for boundary in entry.get("under") or {}:
            if boundary not in BOUNDARIES:
                raise ValueError(f"{MANIFEST}: entry {entry['kernel']} has expectations under unknown boundary "
                                 f"'{boundary}' (known: {', '.join(BOUNDARIES)})")
        if entry.get("generate") is None and not os.path.isfile(os.path.join(KERNELS, entry["kernel"])):
            raise ValueError(f"{MANIFEST}: kernel file kernels/{entry['kernel']} does not exist")
    return entries


class Table:
    COLUMNS = (("kernel", 26), ("dsl", 6), ("expected", 38), ("got", 40), ("good after", 12), ("", 4))

    def __init__(self) -> None:
        self.failures: List[Tuple[str, List[str]]] = []
        self.rows = 0

    def header(self) -> None:
        print(" ".join(name.ljust(width) for name, width in self.COLUMNS).rstrip(), flush=True)
        print(" ".join("-" * width for _, width in self.COLUMNS), flush=True)

    def row(self, kernel: str, dsl: str, expected: str, got: str, good_after: str, problems: List[str]) -> None:
        self.rows += 1
        status = "OK" if not problems else "FAIL"
        cells = (kernel, dsl, expected, got, good_after, status)
        print(" ".join(str(cell)[:width].ljust(width) for cell, (_, width) in zip(cells, self.COLUMNS)).rstrip(),
              flush=True)
        if problems:
            self.failures.append((kernel, problems))


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--direct", action="store_true",
                        help="grade with `python -m mkbgrader grade` instead of `mkb grade` (for debugging)")
    parser.add_argument("--cli", default=os.environ.get("MKB_CLI", ""), help="the mkb binary (default: $MKB_CLI)")
    parser.add_argument("--python", default=os.environ.get("MKB_PYTHON") or sys.executable,
                        help="interpreter for --direct (default: $MKB_PYTHON, else this one)")
    parser.add_argument("--timeout", type=int, default=60, help="evaluation bound per kernel, seconds")
    parser.add_argument("--device", default=os.environ.get("MKB_HOSTILE_DEVICE", ""),
                        help="e.g. cuda:0; cpu runs the CPU corpus (the cpusim entries)")
    parser.add_argument("--boundary", default=DEFAULT_BOUNDARY, choices=BOUNDARIES,
                        help="the implementation boundary to grade under and judge by (default mkb)")
    parser.add_argument("--only", action="append", default=[], help="run only these kernels (repeatable)")
    parser.add_argument("--dsl", action="append", default=[], help="run only kernels of this DSL (repeatable)")
    parser.add_argument("--no-good-check", action="store_true", help="skip the good kernel after each hostile one")
    parser.add_argument("--good-args", default=None,
                        help="extra `mkb grade` flags for the good re-check (default: fewer draws when offered)")
    parser.add_argument("--report", help="also write the verdicts and findings as JSON here")
    parser.add_argument("--jobs", type=int, default=1,
                        help="kernels graded side by side (mkb's GPU lock still serialises their timing)")
    options = parser.parse_args(argv)

    if not options.direct and not (options.cli and os.access(options.cli, os.X_OK)):
        print(f"run_corpus: mkb binary '{options.cli}' is not executable; set MKB_CLI or pass --cli "
              "(or use --direct)", file=sys.stderr)
        return 2
    try:
        entries = load_manifest()
    except (OSError, ValueError) as error:
        print(f"run_corpus: {error}", file=sys.stderr)
        return 2
    if options.only:
        wanted = {name if name.endswith(".py") else name + ".py" for name in options.only}
        entries = [entry for entry in entries if entry["kernel"] in wanted]
    if options.dsl:
        entries = [entry for entry in entries if entry["dsl"] in options.dsl]
    # The CPU corpus is the cpusim entries; a GPU runs every other one.
    entries = [entry for entry in entries if (entry["dsl"] == "cpusim") == cpu_mode(options)]

    work_dir = tempfile.mkdtemp(prefix="mkb-hostile-")
    marks_dir = os.path.join(work_dir, "marks")
    os.makedirs(marks_dir)
    env = dict(os.environ)
    env["MKB_HOSTILE_MARKS"] = marks_dir
    env["MKB_HOSTILE_PROBLEM"] = PROBLEM_FILE
    env.setdefault("PYTHONUNBUFFERED", "1")
    env.setdefault("MKB_CPUSIM_PATH", CPUSIM_LIB)
    if options.direct:
        grader_path = os.path.join(REPO, "core", "grader")
        env["PYTHONPATH"] = grader_path + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    grader = Grader(options, work_dir, env)
    good_name, good_dsl = ("good_cpusim.py", "cpusim") if cpu_mode(options) else ("good_triton.py", "triton")
    good_kernel = os.path.join(GOOD, good_name)
    report: List[Dict[str, Any]] = []
    table = Table()
    mode = "python -m mkbgrader (direct)" if options.direct else options.cli
    print(f"hostile corpus: {len(entries)} kernels, grader {mode}, boundary {options.boundary}, timeout "
          f"{options.timeout} s", flush=True)
    table.header()
    started = time.monotonic()
    try:
        goods = (("good_cpusim.py", "cpusim"),) if cpu_mode(options) else (
            ("good_triton.py", "triton"), ("good_cuda.py", "cuda"), ("good_numba.py", "numba"),
            ("good_pallas.py", "pallas"))
        for name, dsl in goods:
            if options.only and name not in options.only and name[:-3] not in options.only:
                continue
            if options.dsl and dsl not in options.dsl:
                continue
            verdict, diagnostic, seconds = grader.grade(os.path.join(GOOD, name), dsl)
            baseline = {"kernel": name, "dsl": dsl, "passed": True, "stage": None, "reason": ""}
            problems = judge(baseline, verdict, diagnostic, marks_dir, options.boundary)
            table.row("good/" + name, dsl, "pass", describe_got(verdict), "-", problems)
            report.append({"kernel": "good/" + name, "verdict": verdict, "problems": problems, "seconds": seconds})

        def run_entry(index: int, entry: Dict[str, Any]) -> Dict[str, Any]:
            """One hostile kernel, then the good kernel, with marks of its own (entries may run side by side)."""
            own_marks = os.path.join(marks_dir, f"entry{index}")
            os.makedirs(own_marks, exist_ok=True)
            path = kernel_path(entry, work_dir)
            verdict, diagnostic, seconds = grader.grade(path, entry["dsl"], marks_dir=own_marks,
                                                        number=entry.get("problem", PROBLEM_NUMBER))
            problems = judge(entry, verdict, diagnostic, own_marks, options.boundary)
            good_verdict: Optional[Verdict] = None
            good_after = "-"
            if not options.no_good_check:
                good_verdict, good_diagnostic, _ = grader.grade(good_kernel, good_dsl, reduced=True,
                                                                marks_dir=own_marks)
                if good_verdict is not None and good_verdict.get("passed"):
                    good_after = "pass"
                else:
                    good_after = "BROKEN"
                    why = good_diagnostic or reason_text(good_verdict or {})
                    problems.append(f"the good kernel graded right after it did not pass: {why}")
            return {"entry": entry, "verdict": verdict, "problems": problems, "seconds": seconds,
                    "good_after": good_after, "good_verdict": good_verdict}

        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, options.jobs)) as pool:
            futures = [pool.submit(run_entry, index, entry) for index, entry in enumerate(entries)]
            for future in concurrent.futures.as_completed(futures):  # rows as they finish: a slow one holds none back
                done = future.result()
                entry, verdict = done["entry"], done["verdict"]
                note = " idle" if entry.get("may_pass_if_idle") and verdict and verdict.get("passed") else ""
                table.row(entry["kernel"], entry["dsl"], describe_expected(expectation(entry, options.boundary)),
                          describe_got(verdict) + note,
                          done["good_after"], done["problems"])
                report.append({"kernel": entry["kernel"], "verdict": verdict, "problems": done["problems"],
                               "seconds": done["seconds"], "good_after": done["good_verdict"]})
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)

    minutes = (time.monotonic() - started) / 60
    print(f"\n{table.rows - len(table.failures)} of {table.rows} as expected ({minutes:.1f} min)", flush=True)
    for kernel, problems in table.failures:
        for problem in problems:
            print(f"FAIL {kernel}: {problem}", flush=True)
    if options.report:
        with open(options.report, "w", encoding="utf-8") as handle:
            json.dump(report, handle, indent=1)
    return 1 if table.failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
