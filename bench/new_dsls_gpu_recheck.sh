#!/usr/bin/env bash
# The second numba/pallas device call (issue 34): the fixed numba solutions again, the slowed-copy check for both
# DSLs, every solution under the strict boundary, and the hostile corpus's numba and pallas rows under both
# boundaries (direct, no good re-check), side by side. Logs under $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-results}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/core/grader${PYTHONPATH:+:$PYTHONPATH}
check=bench/new_dsls_gpu_check.py
all=(03 02 04 05 12 01 11 07 09 06 08 10)
limit=${MKB_STEP_S:-150}
{ timeout "$limit" python3 $check grade numba ${MKB_FIXED:-02 03 05}; timeout 60 python3 $check slowdown numba 04
  timeout 60 python3 $check slowdown pallas 03; } >"$OUT/fixed_and_slowdown.log" 2>&1 &
MKB_BOUNDARY=strict timeout "$limit" python3 $check grade numba "${all[@]}" >"$OUT/strict_numba.log" 2>&1 &
MKB_BOUNDARY=strict timeout "$limit" python3 $check grade pallas "${all[@]}" >"$OUT/strict_pallas.log" 2>&1 &
for boundary in mkb strict; do
  timeout "$limit" python3 tests/hostile/run_corpus.py --direct --device cuda:0 --dsl numba --dsl pallas \
    --no-good-check --jobs 3 --timeout 60 --boundary $boundary >"$OUT/hostile_$boundary.log" 2>&1 &
done
wait
grep -h "^PASS\|^FAIL\|slowed" "$OUT/fixed_and_slowdown.log" "$OUT/strict_numba.log" "$OUT/strict_pallas.log" | cut -c1-400
for boundary in mkb strict; do echo "--- hostile $boundary"; grep -v "^\s*$" "$OUT/hostile_$boundary.log" | cut -c1-200 | tail -22; done
