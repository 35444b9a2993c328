"""A soak of `mkb run` under faults (issue 33 item 2): a reference-driver run on the CPU test devices, restarted after
every fault, must end with the same store and report as a fault-free run of the same command.

The run grades the CPU fixture problems (tests/fixtures/problems, cpusim and its copy cpusimb) on cpu:0,cpu:1 with
the reference driver: problems x 4 arms x replicates trials. First a fault-free run of the command fills a store of
its own. Then the same command runs against a store on a small tmpfs while a chaos loop, seeded, injects faults at
random moments:
  kill_server  SIGKILL one or both grader servers of the running mkb (found by MKB_POOL_DEVICE in their environment)
  kill_mkb     SIGKILL the mkb process itself (its orphans must go too: this script is their subreaper)
  disk_full    fill the tmpfs that holds the store and the attempts for a few seconds, then free it
  write_lock   a separate process holds the store's write lock (BEGIN IMMEDIATE) for 1-9 s
  sigterm      SIGTERM to mkb, which must stop within a grace period (exit 130)
Whenever mkb exits the same command runs again, until one run completes with every fault injected. A last run of
the command must then reuse every trial. The checks: `mkb db check`; every planned trial live exactly once, finished,
with its final verdict; every verdict a run reported (trial_finished, submission and retimed events) still in the
store; each trial's verdict, submissions and cell re-timing as in the fault-free run; and `mkb report --metrics all`
equal to the fault-free run's with its timing columns masked. Exit 0 when all hold, 1 when any fails, 2 on a bad
command line or a set-up that cannot run.

Usage: python3 bench/soak_faults.py [--quick] [--seed N] [--replicates N] [--faults N] [--mkb PATH] [--python PATH]
                                    [--workdir DIR] [--keep]
Standard library only. The tmpfs needs root; without it the disk_full fault is skipped with a line saying so.
"""

from __future__ import annotations

import argparse
import collections
import ctypes
import errno
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PROBLEMS = ("01_vector_add", "02_row_softmax", "03_argmax_rows", "04_quantize_rows")
KINDS = ("kill_server", "kill_mkb", "disk_full", "write_lock", "sigterm")
SIGTERM_GRACE_S = 60.0
ORPHAN_GRACE_S = 10.0
PR_SET_CHILD_SUBREAPER = 36

# Report columns whose values come from measured times (speedups, their CIs, the outcome bands they decide, agent
# seconds): masked before the fault-free and the soaked reports are compared.
TIMING_COLUMNS = re.compile(r"^(R@(?!0$).*|S|(reverse )?(helped|neutral|harmed)|T|H|neutral share|ΔGM.*|mean agent s|fast_.*|"
                            r"GM speedup.*|slower than eager|IOU median|MFU median|max/min|fastest|slowest)$")
# Tables whose rows are split by a timing outcome: compared by their column sums per group instead of row by row.
SPLIT_BY_TIMING = {"standing": "source standing", "reverse": "forward outcome"}


@dataclass
class Invocation:
    """One start of the command: its process, its progress events and how it ended."""
    number: int
    process: subprocess.Popen
    events: list = field(default_factory=list)
    reader: threading.Thread | None = None
    exit_code: int | None = None
    cause: str = ""  # the fault that ended it, or "" when it ended by itself

    def of_kind(self, kind: str) -> list:
        return [event for event in self.events if event.get("event") == kind]


class Soak:
    """The work folder, the processes this script started and the faults it injected."""

    def __init__(self, options: argparse.Namespace) -> None:
        self.options = options
        self.rng = random.Random(options.seed)
        self.work = Path(options.workdir or tempfile.mkdtemp(prefix="mkb-soak-")).resolve()
        self.mount = self.work / "chaos"
        self.data = self.work / "data"
        self.mounted = False
        self.invocations: list[Invocation] = []
        self.helpers: list[subprocess.Popen] = []  # lock holders
        self.faults: collections.Counter = collections.Counter()
        self.skipped: list[str] = []
        self.findings: list[str] = []
        self.orphans_outliving = 0
        self.filler: Path | None = None

    # ----- set-up -----

    def environment(self) -> dict:
        env = dict(os.environ)
        env["MKB_DATA_DIR"] = str(self.data)
        env["MKB_STORE"] = str(self.work / "never-used.sqlite")
        env["XDG_RUNTIME_DIR"] = str(self.work)  # the device locks of this soak's own
        return env

    def write_fixtures(self) -> None:
        # A snapshot of the grader, resources and fixtures: an edit to the tree during the soak (a changed grader
        # fingerprint makes every trial stale) must not reach the runs it compares.
        for part in ("core/grader", "resources", "problems", "tests/fixtures"):
            shutil.copytree(REPO / part, self.data / part, ignore=shutil.ignore_patterns("__pycache__"),
                            dirs_exist_ok=True)
        # The same for mkb itself, which a build may replace while the soak runs.
        shutil.copy2(self.options.mkb, self.work / "mkb")
        self.options.mkb = str(self.work / "mkb")
        fixtures = self.data / "tests" / "fixtures"
        (self.work / "dsls").mkdir(parents=True, exist_ok=True)
        (self.work / "solutions").mkdir(exist_ok=True)
        descriptor = (fixtures / "dsls" / "cpusim.json").read_text()
        (self.work / "dsls" / "cpusim.json").write_text(descriptor)
        second = descriptor.replace('"id": "cpusim"', '"id": "cpusimb"').replace("cpusim (CPU test DSL)", "cpusim B")
        (self.work / "dsls" / "cpusimb.json").write_text(second)
        for stem in PROBLEMS:
            source = (fixtures / "solutions" / f"{stem}.cpusim.py").read_text()
            for dsl in ("cpusim", "cpusimb"):
                (self.work / "solutions" / f"{stem}.{dsl}.py").write_text(source)
        (self.work / "reference.json").write_text(json.dumps({"solutions_dir": str(self.work / "solutions")}))

    def mount_tmpfs(self) -> None:
        self.mount.mkdir(parents=True, exist_ok=True)
        if self.options.no_tmpfs:
            self.skipped.append("disk_full skipped: --no-tmpfs given; the store lives on the ordinary disk")
            return
        size = f"size={self.options.tmpfs_mib}m"
        result = subprocess.run(["mount", "-t", "tmpfs", "-o", size, "mkb-soak", str(self.mount)],
                                capture_output=True, text=True)
        if result.returncode != 0:
            reason = (result.stderr or result.stdout).strip() or f"mount exited {result.returncode}"
            self.skipped.append(f"disk_full skipped: cannot mount a tmpfs at {self.mount} ({reason}); "
                                "the store lives on the ordinary disk")
            return
        self.mounted = True

    def command(self, store: Path) -> list[str]:
        o = self.options
        return [o.mkb, "run", "--model", "soak", "--driver", "reference",
                "--driver-config", str(self.work / "reference.json"),
                "--problems", "p0[1-4]", "--dsls", "cpusim,cpusimb", "--replicates", str(o.replicates),
                "--suite", str(self.data / "tests" / "fixtures" / "problems"), "--dsl-dir", str(self.work / "dsls"),
                "--python", o.python, "--store", str(store), "--timing-draws", "3", "--concurrency", "2",
                "--devices", "cpu:0,cpu:1", "--progress", "json"]

    # ----- processes -----

    def start(self, store: Path, log_name: str) -> Invocation:
        number = len(self.invocations) + 1
        err = open(self.work / f"{log_name}-{number}.err", "wb")
        process = subprocess.Popen(self.command(store), stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL,
                                   env=self.environment(), cwd=self.work)
        err.close()
        invocation = Invocation(number, process)
        invocation.reader = threading.Thread(target=read_events, args=(invocation, self.work / f"{log_name}-{number}.out"),
                                             daemon=True)
        invocation.reader.start()
        self.invocations.append(invocation)
        return invocation

    def settle(self, invocation: Invocation, timeout: float | None = None) -> int | None:
        """Waits for the invocation to exit (None when it is still running after timeout), then reaps its orphans."""
        try:
            code = invocation.process.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        invocation.reader.join(30)
        invocation.exit_code = code
        self.reap_orphans()
        return code

    def orphans(self) -> list[int]:
        """Processes reparented to this script (mkb's descendants that outlived it), not ones it started itself."""
        own = {invocation.process.pid for invocation in self.invocations} | {helper.pid for helper in self.helpers}
        found = []
        for entry in os.listdir("/proc"):
            if entry.isdigit() and int(entry) not in own and parent_of(int(entry)) == os.getpid():
                found.append(int(entry))
        return found

    def reap_orphans(self) -> None:
        deadline = time.monotonic() + ORPHAN_GRACE_S
        while True:
            alive = []
            for pid in self.orphans():
                try:
                    done, _ = os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    continue
                if done == 0:
                    alive.append(pid)
            if not alive:
                return
            if time.monotonic() > deadline:
                for pid in alive:
                    self.orphans_outliving += 1
                    self.findings.append(f"process {pid} ({command_of(pid)}) outlived its mkb by "
                                         f"{ORPHAN_GRACE_S:.0f} s; killed")
                    kill(pid, signal.SIGKILL)
                continue
            time.sleep(0.1)

    def stop_everything(self) -> None:
        for helper in self.helpers:
            if helper.poll() is None:
                kill(helper.pid, signal.SIGKILL)
                helper.wait()
        for invocation in self.invocations:
            if invocation.process.poll() is None:
                kill(invocation.process.pid, signal.SIGKILL)
                invocation.process.wait()
        self.reap_orphans()
        self.free_disk()

    # ----- faults -----

    def servers_of(self, invocation: Invocation) -> list[int]:
        servers = []
        for entry in os.listdir("/proc"):
            if entry.isdigit() and parent_of(int(entry)) == invocation.process.pid:
                try:
                    environ = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
                except OSError:
                    continue
                if any(variable.startswith(b"MKB_POOL_DEVICE=") for variable in environ):
                    servers.append(int(entry))
        return servers

    def kill_server(self, invocation: Invocation) -> str:
        deadline = time.monotonic() + 10
        while not (servers := self.servers_of(invocation)):
            if invocation.process.poll() is not None or time.monotonic() > deadline:
                return "no grader server was running"
            time.sleep(0.2)
        chosen = servers if self.rng.random() < 0.3 else [self.rng.choice(servers)]
        for pid in chosen:
            kill(pid, signal.SIGKILL)
        return f"SIGKILL to {len(chosen)} of {len(servers)} grader servers"

    def kill_mkb(self, invocation: Invocation) -> str:
        kill(invocation.process.pid, signal.SIGKILL)
        invocation.cause = "kill_mkb"
        return "SIGKILL to mkb"

    def sigterm(self, invocation: Invocation) -> str:
        kill(invocation.process.pid, signal.SIGTERM)
        invocation.cause = "sigterm"
        started = time.monotonic()
        code = self.settle(invocation, SIGTERM_GRACE_S)
        if code is None:
            self.findings.append(f"invocation {invocation.number}: SIGTERM not honoured within {SIGTERM_GRACE_S:.0f} s;"
                                 " killed")
            kill(invocation.process.pid, signal.SIGKILL)
            self.settle(invocation)
            return "SIGTERM (not honoured)"
        if code not in (130, 0):
            self.findings.append(f"invocation {invocation.number}: SIGTERM made mkb exit {code}, not 130")
        return f"SIGTERM, exit {code} after {time.monotonic() - started:.1f} s"

    def fill_disk(self) -> str:
        self.filler = self.mount / "filler"
        written = 0
        descriptor = os.open(self.filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            for size in (1 << 20, 1 << 16, 1 << 12, 1 << 9):  # down to the last pages
                chunk = b"\0" * size
                try:
                    while True:
                        written += os.write(descriptor, chunk)
                except OSError as error:
                    if error.errno != errno.ENOSPC:
                        raise
        finally:
            os.close(descriptor)
        return f"tmpfs filled ({written >> 20} MiB of filler)"

    def free_disk(self) -> None:
        if self.filler is not None:
            try:
                self.filler.unlink()
            except FileNotFoundError:
                pass
            self.filler = None

    def hold_lock(self, store: Path, seconds: float) -> tuple[str, subprocess.Popen | None]:
        script = ("import sqlite3, sys, time\n"
                  "db = sqlite3.connect('file:' + sys.argv[1] + '?mode=rw', uri=True, timeout=30, isolation_level=None)\n"
                  "db.execute('BEGIN IMMEDIATE')\n"
                  "print('held', flush=True)\n"
                  "time.sleep(float(sys.argv[2]))\n"
                  "db.execute('ROLLBACK')\n")
        holder = subprocess.Popen([sys.executable, "-c", script, str(store), f"{seconds:.2f}"], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        self.helpers.append(holder)
        line = holder.stdout.readline().strip()
        if line != "held":
            holder.wait()
            return f"the write lock could not be taken ({holder.stderr.read().strip()[-200:]})", None
        return f"write lock held for {seconds:.1f} s", holder

    # ----- the chaos loop -----

    def chaos(self, store: Path) -> int:
        """Runs the command until it completes with every fault injected; returns the number of restarts."""
        kinds = [kind for kind in KINDS if kind != "disk_full" or self.mounted]
        per_kind = max(1, self.options.faults // len(kinds))
        plan = [kind for kind in kinds for _ in range(per_kind)]
        self.rng.shuffle(plan)
        print(f"chaos: {len(plan)} faults planned ({', '.join(f'{k} {plan.count(k)}' for k in kinds)}), "
              f"one every {self.options.gap[0]:g}-{self.options.gap[1]:g} s", flush=True)
        started = time.monotonic()
        invocation = self.start(store, "chaos")
        restarts = 0
        window_end = 0.0  # a disk-full or write-lock fault in force until then
        holder = None
        restarted_in_window = False
        while True:
            if time.monotonic() - started > self.options.deadline:
                raise SoakError(f"the soak did not converge within {self.options.deadline:.0f} s")
            code = invocation.process.poll()
            now = time.monotonic()
            if window_end and now >= window_end:
                self.free_disk()
                if holder is not None:
                    holder.wait()
                    holder = None
                window_end = 0.0
                restarted_in_window = False
            if code is not None:
                self.settle(invocation)
                finished = invocation.of_kind("run_finished")
                status = finished[-1].get("status") if finished else "none"
                print(f"  invocation {invocation.number} exited {code} (run_finished: {status}"
                      f"{', after ' + invocation.cause if invocation.cause else ''})", flush=True)
                if code == 0 and status == "complete" and not plan and not window_end:
                    return restarts
                if window_end and restarted_in_window:
                    time.sleep(max(0.0, window_end - time.monotonic()))
                    continue
                restarted_in_window = bool(window_end)
                invocation = self.start(store, "chaos")
                restarts += 1
                continue
            if plan and not window_end:
                gap = self.rng.uniform(*self.options.gap)
                try:
                    invocation.process.wait(gap)
                    continue  # it ended first: restart or finish above
                except subprocess.TimeoutExpired:
                    pass
                kind = plan.pop()
                self.faults[kind] += 1
                if kind == "kill_server":
                    what = self.kill_server(invocation)
                elif kind == "kill_mkb":
                    what = self.kill_mkb(invocation)
                elif kind == "sigterm":
                    what = self.sigterm(invocation)
                elif kind == "disk_full":
                    what = self.fill_disk()
                    window_end = time.monotonic() + self.rng.uniform(2, 6)
                else:
                    seconds = self.rng.uniform(1, 9)
                    what, holder = self.hold_lock(store, seconds)
                    window_end = time.monotonic() + seconds + 0.2 if holder else 0.0
                elapsed = time.monotonic() - started
                print(f"  {elapsed:7.1f} s  fault {sum(self.faults.values())}: {kind} on invocation "
                      f"{invocation.number}: {what}", flush=True)
                continue
            time.sleep(0.1)


class SoakError(Exception):
    """A soak that cannot go on (a set-up failure or a run that never converges)."""


def read_events(invocation: Invocation, log: Path) -> None:
    with open(log, "wb") as out:
        for line in invocation.process.stdout:
            out.write(line)
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict):
                invocation.events.append(event)


def parent_of(pid: int) -> int:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return -1
    return int(stat[stat.rfind(")") + 2:].split()[1])


def command_of(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()[:120]
    except OSError:
        return "?"


def kill(pid: int, number: int) -> None:
    """Signals one process; never 0, -1 or init (os.kill would then reach a whole group or every process)."""
    if pid <= 1:
        return
    try:
        os.kill(pid, number)
    except ProcessLookupError:
        pass


# ----- what the stores hold -----

def read_store(path: Path) -> dict:
    """The live and archived trials of a store, each live trial's verdicts, and its re-timings, read-only."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        trials = db.execute("SELECT id, coordinate, status, archived FROM trials").fetchall()
        finals = {row[0]: row[1:] for row in db.execute(
            "SELECT trial_id, imported, correct, passed, compliant, stage, infrastructure_error, speedup "
            "FROM final_verdicts")}
        submissions = collections.defaultdict(dict)
        for trial_id, idx, passed, correct, speedup in db.execute(
                "SELECT trial_id, idx, passed, correct, speedup FROM submissions"):
            submissions[trial_id][idx] = (passed, correct, speedup)
        retimings = db.execute("SELECT problem_number, replicate, source_dsl, target_dsl, archived, result_json, "
                               "source_trial_id, base_trial_id, skill_trial_id FROM retimings").fetchall()
    finally:
        db.close()
    return {"trials": trials, "finals": finals, "submissions": submissions, "retimings": retimings}


def masked_report(mkb: str, store: Path, env: dict) -> dict:
    result = subprocess.run([mkb, "report", "--store", str(store), "--metrics", "all", "--format", "json"],
                            capture_output=True, text=True, env=env)
    if result.returncode != 0:
        raise SoakError(f"mkb report --store {store} exited {result.returncode}: {result.stderr.strip()}")
    report = json.loads(result.stdout)
    for table in report["tables"]:
        columns = table["columns"]
        timing = [i for i, name in enumerate(columns) if TIMING_COLUMNS.match(name)]
        rows = [["~" if i in timing else value for i, value in enumerate(row)] for row in table["rows"]]
        if table["id"] in SPLIT_BY_TIMING:
            split = columns.index(SPLIT_BY_TIMING[table["id"]])
            sums: dict = {}
            for row in rows:
                key = tuple(value for i, value in enumerate(row) if i != split and not isinstance(value, float))
                total = sums.setdefault(key, [0.0] * len(row))
                for i, value in enumerate(row):
                    if isinstance(value, float) and i != split:
                        total[i] += value
            rows = [[str(key)] + total for key, total in sorted(sums.items())]
        table["rows"] = rows
        table["footnotes"] = [mask_footnote(note) for note in table.get("footnotes", [])]
        if "timing" in table:
            table["timing"].pop("within_noise", None)
    return report


def mask_footnote(note: str) -> str:
    if note.startswith("Borderline"):
        return re.sub(r"R@[\d.]+ \d+", "R@t ~", note)
    return re.sub(r"\(\d+ within noise\)", "(~ within noise)", note)


def report_diff(expected: dict, actual: dict) -> list[str]:
    lines = []
    for name in ("title", "notes"):
        if expected.get(name) != actual.get(name):
            lines.append(f"{name}: {expected.get(name)!r} != {actual.get(name)!r}")
    tables = {table["id"]: table for table in actual["tables"]}
    for table in expected["tables"]:
        other = tables.pop(table["id"], None)
        if other is None:
            lines.append(f"table {table['id']} missing")
            continue
        for key in ("columns", "rows", "footnotes", "timing"):
            if table.get(key) != other.get(key):
                lines.append(f"table {table['id']} {key}: {table.get(key)!r} != {other.get(key)!r}")
    lines += [f"table {name} not in the fault-free report" for name in tables]
    return lines


def compare(soak: Soak, baseline: dict, soaked: dict) -> dict:
    """Every figure of the summary: planned, recorded, duplicated and lost trials, lost or differing verdicts."""
    planned = {entry["coordinate"] for entry in soak.invocations[1].of_kind("plan")[0]["entries"]} \
        if soak.invocations[1].of_kind("plan") else set()
    base_live = {coordinate: trial_id for trial_id, coordinate, _, archived in baseline["trials"] if not archived}
    live = collections.defaultdict(list)
    archived_rows = 0
    for trial_id, coordinate, status, archived in soaked["trials"]:
        if archived:
            archived_rows += 1
        else:
            live[coordinate].append((trial_id, status))
    figures = {"planned": len(planned), "recorded": 0, "duplicated": 0, "lost": 0, "archived": archived_rows,
               "verdicts_reported": 0, "verdicts_lost": 0, "verdicts_differing": 0, "retimings_failed": 0,
               "submissions_voided": 0,
               "problems": []}
    if planned != set(base_live):
        figures["problems"].append(f"the plan ({len(planned)} trials) is not the fault-free run's {len(base_live)}")
    for coordinate in sorted(planned):
        rows = live.get(coordinate, [])
        if len(rows) > 1:
            figures["duplicated"] += len(rows) - 1
            figures["problems"].append(f"{coordinate}: {len(rows)} live trials")
        finished = [trial_id for trial_id, status in rows if status == "finished" and trial_id in soaked["finals"]]
        if not finished:
            figures["lost"] += 1
            figures["problems"].append(f"{coordinate}: no finished trial with a final verdict ({rows})")
            continue
        figures["recorded"] += 1
        trial_id, base_id = finished[0], base_live[coordinate]
        if soaked["finals"][trial_id][:-1] != baseline["finals"][base_id][:-1]:
            figures["verdicts_differing"] += 1
            figures["problems"].append(f"{coordinate}: final verdict {soaked['finals'][trial_id][:-1]} != fault-free "
                                       f"{baseline['finals'][base_id][:-1]}")
        ours = {idx: value[:2] for idx, value in soaked["submissions"][trial_id].items()}
        theirs = {idx: value[:2] for idx, value in baseline["submissions"][base_id].items()}
        if ours != theirs:
            figures["verdicts_differing"] += 1
            figures["problems"].append(f"{coordinate}: submissions {ours} != fault-free {theirs}")
    # Every verdict a run reported must still be in the store, unchanged, and its trial live.
    trial_rows = {trial_id: (coordinate, status, archived) for trial_id, coordinate, status, archived in soaked["trials"]}
    for invocation in soak.invocations[1:]:
        for event in invocation.of_kind("trial_finished"):
            if event.get("status") != "finished":
                continue
            figures["verdicts_reported"] += 1
            trial_id = event.get("trial_id")
            row, final = trial_rows.get(trial_id), soaked["finals"].get(trial_id)
            if row is None or row[2] or final is None or not close(final[-1], event.get("speedup")):
                figures["verdicts_lost"] += 1
                figures["problems"].append(f"invocation {invocation.number} reported trial {trial_id} "
                                           f"({event.get('coordinate')}) finished at {event.get('speedup')}; the store "
                                           f"has {row} with final verdict {final}")
        # A submission the event itself says was not stored ("stored": false, a full disk) is void, and so is one of
        # a trial that the same run then ended as failed: the trial is redone. Both are counted.
        failed = {event.get("trial_id") for event in invocation.of_kind("trial_finished")
                  if event.get("status") != "finished"}
        for event in invocation.of_kind("submission"):
            if event.get("stored") is False or (event.get("trial_id") in failed and event.get("index") not in
                                                 soaked["submissions"].get(event.get("trial_id"), {})):
                figures["submissions_voided"] += 1
                continue
            figures["verdicts_reported"] += 1
            stored = soaked["submissions"].get(event.get("trial_id"), {}).get(event.get("index"))
            if stored is None or not close(stored[2], event.get("speedup")):
                figures["verdicts_lost"] += 1
                figures["problems"].append(f"invocation {invocation.number} reported submission {event.get('index')} "
                                           f"of trial {event.get('trial_id')} ({event.get('coordinate')}); the store "
                                           f"has {stored}")
        for event in invocation.of_kind("retimed"):
            if event.get("ratio") is None:  # a re-timing that failed (its message says why): none to keep
                figures["retimings_failed"] += 1
                continue
            figures["verdicts_reported"] += 1
            if not any(close(base_skill_ratio(row[5]), event.get("ratio")) for row in soaked["retimings"]):
                figures["verdicts_lost"] += 1
                figures["problems"].append(f"invocation {invocation.number} reported cell {event.get('cell')} re-timed "
                                           f"at {event.get('ratio')}; no re-timing in the store has that ratio")
    live_ids = {trial_id for trial_id, (_, _, archived) in trial_rows.items() if not archived}
    cells = lambda store, ids: {row[:4] for row in store["retimings"] if not row[4] and set(row[6:9]) <= ids}
    base_cells = cells(baseline, {trial_id for trial_id, _, _, archived in baseline["trials"] if not archived})
    soaked_cells = cells(soaked, live_ids)
    figures["cells"] = (len(soaked_cells), len(base_cells))
    if soaked_cells != base_cells:
        figures["problems"].append(f"re-timed cells of live trials: {len(soaked_cells)}, fault-free "
                                   f"{len(base_cells)}; missing {sorted(base_cells - soaked_cells)[:5]}")
    return figures


def base_skill_ratio(result_json: str) -> float | None:
    try:
        pairs = json.loads(result_json).get("pairs", [])
    except ValueError:
        return None
    return next((pair.get("ratio") for pair in pairs if pair.get("a") == "base" and pair.get("b") == "skill"), None)


def close(a, b) -> bool:
    return isinstance(a, (int, float)) and isinstance(b, (int, float)) and abs(a - b) <= 1e-9 * max(1.0, abs(b))


# ----- the whole soak -----

def run_soak(soak: Soak) -> int:
    options = soak.options
    env = soak.environment()
    soak.write_fixtures()
    print(f"soak: seed {options.seed}, {len(PROBLEMS)} problems x 4 arms x {options.replicates} replicates = "
          f"{len(PROBLEMS) * 4 * options.replicates} trials, work folder {soak.work}", flush=True)
    baseline_store = soak.work / "fault-free.sqlite"
    started = time.monotonic()
    baseline = soak.start(baseline_store, "fault-free")
    if soak.settle(baseline) != 0:
        raise SoakError(f"the fault-free run exited {baseline.exit_code}; see {soak.work}/fault-free-1.err")
    print(f"fault-free run: {time.monotonic() - started:.1f} s, exit 0", flush=True)
    print("command: " + " ".join(shell_word(word) for word in soak.command(soak.mount / "store.sqlite")), flush=True)

    soak.mount_tmpfs()
    for line in soak.skipped:
        print(line, flush=True)
    store = soak.mount / "store.sqlite"
    started = time.monotonic()
    restarts = soak.chaos(store)
    chaos_seconds = time.monotonic() - started
    final = soak.start(store, "rerun")
    final_code = soak.settle(final)
    plans = final.of_kind("plan")
    counts = plans[0].get("plan_counts", {}) if plans else {}
    reused = counts.get("reuse", 0)

    check = subprocess.run([options.mkb, "db", "check", "--store", str(store)], capture_output=True, text=True, env=env)
    figures = compare(soak, read_store(baseline_store), read_store(store))
    diff = report_diff(masked_report(options.mkb, baseline_store, env), masked_report(options.mkb, store, env))
    if options.keep and soak.mounted:
        shutil.copy2(store, soak.work / "soaked.sqlite")

    exit_codes = collections.Counter(invocation.exit_code for invocation in soak.invocations[1:-1])
    injected = sum(soak.faults.values())
    print("\nsummary")
    print(f"  seed: {options.seed}")
    print(f"  faults injected: {injected} ({', '.join(f'{k} {soak.faults[k]}' for k in KINDS if k in soak.faults)})")
    for line in soak.skipped:
        print(f"  {line}")
    print(f"  restarts: {restarts} in {chaos_seconds:.0f} s (exit codes: "
          f"{', '.join(f'{code} x{n}' for code, n in sorted(exit_codes.items(), key=lambda kv: str(kv[0])))})")
    print(f"  trials planned {figures['planned']}, recorded {figures['recorded']}, duplicated "
          f"{figures['duplicated']}, lost {figures['lost']} ({figures['archived']} archived attempts redone)")
    print(f"  verdicts reported {figures['verdicts_reported']}, lost {figures['verdicts_lost']}, differing from the "
          f"fault-free run {figures['verdicts_differing']} ({figures['submissions_voided']} submissions reported by "
          f"trials that then failed, not stored, redone)")
    print(f"  re-timed cells {figures['cells'][0]} of the fault-free run's {figures['cells'][1]} "
          f"({figures['retimings_failed']} re-timings failed under a fault and were redone)")
    print(f"  processes outliving a killed mkb: {soak.orphans_outliving}")
    print(f"  last rerun: exit {final_code}, reused {reused} of {figures['planned']} "
          f"(plan {json.dumps(counts, sort_keys=True)})")
    print(f"  db check: {'ok' if check.returncode == 0 else 'FAILED: ' + (check.stdout + check.stderr).strip()}")
    print(f"  report (timing columns masked): {'equal to the fault-free run' if not diff else 'DIFFERS'}")
    for line in diff[:20]:
        print(f"    {line}")
    problems = figures["problems"] + soak.findings
    if final_code != 0 or reused != figures["planned"]:
        problems.append(f"the last rerun exited {final_code} and reused {reused} of {figures['planned']} trials")
    if injected < options.min_faults:
        problems.append(f"only {injected} faults were injected (at least {options.min_faults} wanted)")
    for line in problems[:40]:
        print(f"  problem: {line}")
    ok = not problems and check.returncode == 0 and not diff
    print(f"  result: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


def shell_word(word: str) -> str:
    return word if re.fullmatch(r"[\w@%+=:,./-]+", word) else "'" + word.replace("'", "'\\''") + "'"


def parse_options(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     usage="python3 bench/soak_faults.py [--quick] [--seed N] [--replicates N] "
                                           "[--faults N] [--mkb PATH] [--python PATH] [--workdir DIR] [--keep]")
    parser.add_argument("--quick", action="store_true",
                        help="the CI version: 2 replicates (32 trials), one fault of each kind")
    parser.add_argument("--seed", type=int, default=None, help="the chaos loop's seed (default: drawn and printed)")
    parser.add_argument("--replicates", type=int, default=None, help="replicates per cell (default 13: 208 trials)")
    parser.add_argument("--faults", type=int, default=None, help="faults to inject, spread over the kinds "
                        "(default 20; --quick 5)")
    parser.add_argument("--gap", type=float, nargs=2, default=None, metavar=("MIN", "MAX"),
                        help="seconds between faults, drawn uniformly (default 3 12; --quick 2 5)")
    parser.add_argument("--mkb", default=os.environ.get("MKB_CLI", str(REPO / "build" / "dev" / "app" / "mkb")))
    parser.add_argument("--python", default=os.environ.get("MKB_TEST_PYTHON", "/usr/bin/python3"),
                        help="the grader's interpreter (needs torch)")
    parser.add_argument("--workdir", help="the work folder (default: a fresh temporary one, removed at the end)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder (and a copy of the soaked store)")
    parser.add_argument("--tmpfs-mib", type=int, default=256, help="size of the store's tmpfs (default 256)")
    parser.add_argument("--no-tmpfs", action="store_true", help="keep the store on the ordinary disk, no disk_full")
    parser.add_argument("--deadline", type=float, default=1800, help="seconds the chaos phase may take (default 1800)")
    options = parser.parse_args(argv)
    if options.seed is None:
        options.seed = random.SystemRandom().randrange(1, 1 << 31)
    options.replicates = options.replicates or (2 if options.quick else 13)
    options.faults = options.faults if options.faults is not None else (5 if options.quick else 20)
    options.gap = options.gap or ([2.0, 5.0] if options.quick else [3.0, 12.0])
    options.min_faults = options.faults
    if not 1 <= options.replicates <= 100 or options.faults < 0 or options.gap[0] > options.gap[1]:
        parser.error("--replicates must be 1..100, --faults at least 0 and --gap MIN at most MAX")
    if not os.access(options.mkb, os.X_OK):
        parser.error(f"{options.mkb} is not an executable mkb (build it, or pass --mkb)")
    return options


def main(argv: list[str]) -> int:
    options = parse_options(argv)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        print("soak: cannot become a subreaper; orphans of a killed mkb are not followed", file=sys.stderr)
    soak = Soak(options)
    for number in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, lambda *_: sys.exit(3))
    try:
        return run_soak(soak)
    except SoakError as error:
        print(f"soak failed: {error}", file=sys.stderr)
        return 1
    finally:
        soak.stop_everything()
        if soak.mounted:
            if subprocess.run(["umount", str(soak.mount)]).returncode != 0:
                subprocess.run(["umount", "-l", str(soak.mount)])
        if not options.keep and not options.workdir:
            shutil.rmtree(soak.work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
