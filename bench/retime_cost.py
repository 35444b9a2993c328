"""The cost of paired re-timing beside the grading it joins (issue 20 item 9), read from a project store.

For the live re-timings of a store (mkb run's or mkb retime's), it prints the re-timing seconds of every cell with
its rounds, stop reason and time per stage, then the sum against the grading seconds of the cells' trials (every
submission of every source, base and skill trial, each trial counted once) and the ratio of the two. The goal is a
ratio of at most 0.5. Standard library only: the store is opened read-only.

Usage: python3 bench/retime_cost.py STORE [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import sys


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store", help="the project store (.mkb)")
    parser.add_argument("--json", help="also write the figures as JSON here")
    options = parser.parse_args()
    try:
        db = sqlite3.connect(f"file:{options.store}?mode=ro", uri=True)
        cells = db.execute("SELECT problem_number, source_dsl, target_dsl, replicate, rounds, stop, result_json, "
                           "source_trial_id, base_trial_id, skill_trial_id FROM retimings WHERE archived = 0 "
                           "ORDER BY problem_number, source_dsl, replicate").fetchall()
    except sqlite3.Error as error:
        print(f"retime_cost: cannot read the re-timings of {options.store}: {error}", file=sys.stderr)
        return 2
    if not cells:
        print(f"retime_cost: {options.store} holds no live re-timing", file=sys.stderr)
        return 1
    trials: set[int] = set()
    rows = []
    stages: dict[str, float] = {}
    for number, source, target, replicate, rounds, stop, result_json, *trial_ids in cells:
        result = json.loads(result_json)
        seconds = float(result.get("seconds") or 0.0)
        for stage, value in (result.get("stage_s") or {}).items():
            stages[stage] = stages.get(stage, 0.0) + float(value)
        trials.update(t for t in trial_ids if t is not None)
        rows.append({"cell": f"p{number:02d} {source}2{target} r{replicate}", "rounds": rounds, "stop": stop,
                     "seconds": seconds, "stage_s": result.get("stage_s") or {}})
        stage_text = " ".join(f"{k} {v:.1f}" for k, v in (result.get("stage_s") or {}).items())
        print(f"{rows[-1]['cell']:28s} {rounds:5d} rounds {stop:12s} {seconds:7.2f} s   {stage_text}")
    marks = ",".join("?" * len(trials))
    grading, evaluations = db.execute(f"SELECT COALESCE(SUM(eval_seconds), 0), COUNT(*) FROM submissions "
                                      f"WHERE trial_id IN ({marks})", sorted(trials)).fetchone()
    retiming = sum(r["seconds"] for r in rows)
    ratio = retiming / grading if grading > 0 else float("nan")
    rounds = [r["rounds"] for r in rows]
    print(f"\nstages over all cells (s): " + ", ".join(f"{k} {v:.1f}" for k, v in stages.items()))
    print(f"rounds per cell: min {min(rounds)}, median {statistics.median(rounds):g}, max {max(rounds)}; "
          f"{sum(1 for r in rows if r['stop'] != 'converged')} of {len(rows)} stopped at a limit")
    print(f"re-timing {retiming:.1f} s for {len(rows)} cells against grading {grading:.1f} s for {evaluations} "
          f"evaluations of their {len(trials)} trials: ratio {ratio:.2f} (goal <= 0.50)")
    if options.json:
        with open(options.json, "w", encoding="utf-8") as handle:
            json.dump({"cells": rows, "stages_s": stages, "retime_s": retiming, "grading_s": grading,
                       "evaluations": evaluations, "trials": len(trials), "ratio": ratio}, handle, indent=1)
    return 0 if ratio <= 0.5 else 1


if __name__ == "__main__":
    sys.exit(main())
