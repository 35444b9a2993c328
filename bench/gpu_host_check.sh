#!/usr/bin/env bash
# One batch on a GPU host (no Qt needed): headless build, device probe, the `gpu` test label, the grader benchmarks,
# (with --suite) the suite check and table, and (with --run) a reference-driver protocol run over problems 01-06 in
# both directions. The suite check runs alone (its timings go into docs/suite.md); the tests and the run then go
# side by side (mkb serialises GPU work per device with its lock). Logs and results go to $OUT
# (default ./gpu-results). With --suite, `ctest -L gpu` leaves out suite_solutions_pass: the suite check grades the
# same 72 solutions.
# Usage: bash bench/gpu_host_check.sh [--tests] [--benches] [--suite] [--suite-args "..."] [--run]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-results}
mkdir -p "$OUT"
export MKB_PYTHON=${MKB_PYTHON:-python3} PYTHONUNBUFFERED=1
export MKB_STORE=${MKB_STORE:-/tmp/mkb-gpu-host/store.mkb}
mkdir -p "$(dirname "$MKB_STORE")"
run_tests=0 run_benches=0 run_suite=0 run_protocol=0 suite_args=""
while [ $# -gt 0 ]; do
  case "$1" in
    --tests) run_tests=1 ;; --benches) run_benches=1 ;; --suite) run_suite=1 ;;
    --suite-args) suite_args="$2"; shift ;;
    --run) run_protocol=1 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
step() { echo; echo "=== $* ($(date +%T))"; }

step build
generator=(); command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S . -B build/gpu-host "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DMKB_HEADLESS=ON -DMKB_BUILD_TESTS=ON \
  -DMKB_TEST_PYTHON="$(command -v python3)" ${MKB_EXTRA_CMAKE_ARGS:-} >"$OUT/build.log" 2>&1 &&
  cmake --build build/gpu-host -j "$(nproc)" >>"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
MKB=$PWD/build/gpu-host/app/mkb
"$MKB" --version
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv

step probe
"$MKB" device probe 2>&1 | tee "$OUT/probe.txt"

if [ $run_suite = 1 ]; then
  step "suite check"
  # shellcheck disable=SC2086
  "$MKB" suite check --json "$OUT/suite.json" --table "$OUT/suite.md" $suite_args 2>&1 | tee "$OUT/suite-check.log" | tail -60
fi

pids=()
if [ $run_tests = 1 ]; then
  step "ctest -L gpu"
  # The hostile corpus runs outside ctest so that its table reaches $OUT row by row (ctest keeps a test's output
  # until it ends); it is the same command as the grader_hostile_corpus test.
  exclude="grader_hostile_corpus"; [ $run_suite = 1 ] && exclude="$exclude|suite_solutions_pass"
  ( (cd build/gpu-host && ctest -L gpu -E "$exclude" --output-on-failure --timeout 900) >"$OUT/ctest-gpu.log" 2>&1
    MKB_CLI=$MKB MKB_SOURCE_DIR=$PWD python3 tests/hostile/run_corpus.py --timeout 20 --jobs 8 \
      --report "$OUT/corpus.json" >"$OUT/corpus.log" 2>&1; echo "corpus exit $?" >>"$OUT/corpus.log" ) &
  pids+=($!)
fi
if [ $run_protocol = 1 ]; then
  step "reference protocol run"
  rm -f "$OUT/run.mkb"
  "$MKB" run --model reference-h200 --driver reference --problems 'p0[1-6]' --dsls triton,cuda --replicates 1 \
    --timing-draws 20 --grade-timeout 300 --concurrency 2 --store "$OUT/run.mkb" >"$OUT/run.log" 2>&1 &
  pids+=($!)
fi
for pid in "${pids[@]}"; do wait "$pid"; done
if [ $run_tests = 1 ]; then
  grep -E "tests passed|Failed|\*\*\*|Passed|Test +#" "$OUT/ctest-gpu.log" | tail -30
  tail -15 "$OUT/corpus.log"
fi
if [ $run_protocol = 1 ]; then
  tail -5 "$OUT/run.log"
  "$MKB" report --store "$OUT/run.mkb" --metrics ladder,transfer >"$OUT/run-report.md" 2>&1; head -40 "$OUT/run-report.md"
fi

if [ $run_benches = 1 ]; then
  step "bench: grader overhead"
  timeout 300 python3 bench/grader_overhead.py --evaluations 8 2>&1 | tail -6 | tee -a "$OUT/bench.txt"
  step "bench: CUDA compile"
  timeout 400 python3 bench/cuda_compile.py --repeats 2 2>&1 | tail -8 | tee -a "$OUT/bench.txt"
  step "bench: reproducibility"
  timeout 300 python3 bench/grade_repro.py --mkb "$MKB" --problem attention/01_gqa_decode_attention \
    --kernel problems/attention/_solutions/01_gqa_decode_attention.triton.py --dsl triton --times 5 2>&1 | tail -8 |
    tee -a "$OUT/bench.txt"
fi
step done
