#!/usr/bin/env python3
"""Eager timings of KernelBench-X's tasks on this GPU, at the input sizes of its published golden timings.

KernelBench-X publishes, per task, the eager (torch) time at a ladder of input sizes on six GPUs
(metrics/golden_results/<gpu>/<op>.json), measured by its templates metrics/golden_metrics/<op>_perf.py with
triton.testing.do_bench (median). This script times the same templates' inputs and calls on the local GPU with the
same clock, at the largest size every one of those six GPUs has a timing for, and
writes <out>/<gpu>/<op>.json in the golden format, so that `mkb report --metrics kbx-portability --golden DIR` can set
this GPU beside the six:

    python3 bench/kbx_golden_timing.py CHECKOUT --out DIR [--gpu h200] [--ops Lion,abs] [--budget 400]

DIR then holds copies of the six published folders and the new one. Each op runs in this process under an alarm (--op-seconds, 60 s);
an op that fails or times out is listed with its reason in <out>/<gpu>/_failures.json and the run goes on. It stops
starting new ops when the budget (seconds) is spent; run it again on the same --out to continue: the templates
timed are listed in <out>/<gpu>/_done.json and kept, the failed ones are tried again.
"""

import argparse
import importlib.util
import json
import os
import shutil
import signal
import sys
import time

PUBLISHED = ("4090", "5090", "a100", "h20", "h800", "l20")


class OpTimeout(Exception):
    pass


def shape_of(value):
    """The golden files' input_size: every tensor's shape, nested as the inputs are; other values as they are."""
    import torch

    if isinstance(value, torch.Tensor):
        return list(value.shape)
    if isinstance(value, (list, tuple)):
        return [shape_of(item) for item in value]
    return value


def key_of(size):
    return json.dumps(size, sort_keys=True)


def common_sizes(golden_root, op_name):
    """The input sizes all six published GPUs timed for op_name, in the first GPU's order; None if one lacks the op."""
    per_gpu = []
    for gpu in PUBLISHED:
        path = os.path.join(golden_root, gpu, op_name + ".json")
        if not os.path.exists(path):
            return None
        with open(path) as handle:
            per_gpu.append([key_of(entry["input_size"]) for entry in json.load(handle)])
    shared = set(per_gpu[0]).intersection(*per_gpu[1:])
    return [key for key in per_gpu[0] if key in shared]


def load_template(path):
    name = "kbx_perf_" + os.path.basename(path)[: -len(".py")]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def task_of(path):
    """The task a template times, from its import line ('from kernelbenchx.Optimizer.Lion import ...')."""
    with open(path) as handle:
        for line in handle:
            if line.startswith("from kernelbenchx."):
                parts = line.split()[1].split(".")
                if len(parts) >= 3:
                    return parts[1] + "/" + parts[2]
    return ""


def time_op(path, golden_root, warmup_ms, rep_ms):
    import torch
    import triton

    module = load_template(path)
    bench = module.performance_metrics()
    wanted = common_sizes(golden_root, bench.op_name)
    if not wanted:
        raise RuntimeError("no input size that all six published GPUs timed")
    chosen = {wanted[-1]}
    bench.get_input_tensors()
    results = []
    for raw in bench.input_tensors:
        inputs = bench.to_cuda(raw)
        size = shape_of(inputs)
        # A template whose call takes one tensor recorded its input_size wrapped in a list ([[n]] for a [n] tensor).
        if key_of(size) not in chosen and key_of([size]) in chosen:
            size = [size]
        if key_of(size) in chosen:
            median, low, high = triton.testing.do_bench(lambda: bench.call_op(inputs), warmup=warmup_ms, rep=rep_ms,
                                                        quantiles=[0.5, 0.2, 0.8], return_mode="median")
            results.append({"input_size": size, "ms": median, "q20_ms": low, "q80_ms": high,
                            "warmup_ms": warmup_ms, "rep_ms": rep_ms})
            chosen.discard(key_of(size))
        del inputs
        if not chosen:
            break
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    if chosen:
        raise RuntimeError("the template's inputs on this GPU never reached size(s) " + ", ".join(sorted(chosen)))
    return bench.op_name, results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", help="a KernelBench-X checkout (its data/ and metrics/)")
    parser.add_argument("--out", required=True, help="folder for the golden folders, this GPU's among them")
    parser.add_argument("--gpu", default="h200", help="this GPU's folder name (default h200)")
    parser.add_argument("--ops", default="", help="comma-separated template names (default: every one)")
    parser.add_argument("--budget", type=float, default=1e9, help="seconds after which no new op is started")
    parser.add_argument("--warmup-ms", type=int, default=25)
    parser.add_argument("--rep-ms", type=int, default=100)
    parser.add_argument("--op-seconds", type=int, default=60, help="the alarm each template runs under")
    args = parser.parse_args()

    metrics = os.path.join(args.checkout, "metrics")
    templates = os.path.join(metrics, "golden_metrics")
    golden_root = os.path.join(metrics, "golden_results")
    for folder in (templates, golden_root, os.path.join(args.checkout, "data", "kernelbenchx"),
                   os.path.join(args.checkout, "utils")):
        if not os.path.isdir(folder):
            sys.exit(f"kbx_golden_timing: {folder} is missing (is {args.checkout} a KernelBench-X checkout?)")
    # The task files add "utils" relative to the working folder (their data_utils); give them the checkout's.
    sys.path[:0] = [metrics, os.path.join(args.checkout, "data"), os.path.join(args.checkout, "utils")]
    here = os.path.join(args.out, args.gpu)
    os.makedirs(here, exist_ok=True)
    for gpu in PUBLISHED:
        target = os.path.join(args.out, gpu)
        if not os.path.isdir(target):
            shutil.copytree(os.path.join(golden_root, gpu), target)

    failures_path = os.path.join(here, "_failures.json")
    failures = json.load(open(failures_path)) if os.path.exists(failures_path) else {}
    done_path = os.path.join(here, "_done.json")  # templates timed in an earlier run (a failed one is tried again)
    timed_before = set(json.load(open(done_path))) if os.path.exists(done_path) else set()
    names = sorted(name for name in os.listdir(templates) if name.endswith("_perf.py"))
    if args.ops:
        wanted = {op + "_perf.py" for op in args.ops.split(",")}
        names = [name for name in names if name in wanted]

    def on_alarm(signum, frame):
        raise OpTimeout(f"timed out after {args.op_seconds} s")

    signal.signal(signal.SIGALRM, on_alarm)
    start = time.monotonic()
    done = timed = failed = 0
    for name in names:
        stem = name[: -len("_perf.py")]
        if stem in timed_before:
            done += 1
            continue
        if time.monotonic() - start > args.budget:
            print(f"budget spent: {len(names) - done - timed - failed} templates left; run again to continue",
                  flush=True)
            break
        path = os.path.join(templates, name)
        began = time.monotonic()
        signal.alarm(args.op_seconds)
        try:
            op_name, results = time_op(path, golden_root, args.warmup_ms, args.rep_ms)
            signal.alarm(0)
            payload = {"task": task_of(path), "device": args.gpu, "results": results}
            with open(os.path.join(here, op_name + ".json"), "w") as handle:
                json.dump(payload, handle, indent=1)
            failures.pop(stem, None)
            timed_before.add(stem)
            timed += 1
            sizes = "; ".join(f"{key_of(r['input_size'])[:40]} {r['ms']:.4f} ms" for r in results)
            print(f"{stem}: {sizes} ({time.monotonic() - began:.1f} s)", flush=True)
        except BaseException as error:  # a template's own failure, whatever it raises, is its row
            signal.alarm(0)
            if isinstance(error, KeyboardInterrupt):
                raise
            failures[stem] = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"[:300]
            failed += 1
            print(f"{stem}: failed: {failures[stem]}", flush=True)
            try:
                import torch

                torch.cuda.synchronize()
                torch.cuda.empty_cache()
            except Exception:
                pass
        with open(done_path, "w") as handle:
            json.dump(sorted(timed_before), handle, indent=1)
        with open(failures_path, "w") as handle:
            json.dump(failures, handle, indent=1, sort_keys=True)
    print(f"{timed} templates timed, {failed} failed, {done} already done, in {time.monotonic() - start:.0f} s")


if __name__ == "__main__":
    main()
