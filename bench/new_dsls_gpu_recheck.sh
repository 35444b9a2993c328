#!/usr/bin/env bash
# The second numba/pallas device call (issue 34): the fixed numba solutions again, the slowed-copy check for both
# DSLs, every solution present (or those MKB_NUMBERS names) under the strict boundary, and the hostile corpus's numba and pallas rows under both
# boundaries (direct, no good re-check), side by side. Logs under $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-results}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/core/grader${PYTHONPATH:+:$PYTHONPATH}
check=bench/new_dsls_gpu_check.py
# every problem number that has a solution in the DSL (problems/*/_solutions/NN_*.<dsl>.py), in number order
present() { ls problems/*/_solutions/*."$1".py 2>/dev/null | sed 's|.*/\([0-9]*\)_[^/]*$|\1|' | sort -un; }
mapfile -t numba_all < <(present numba)
mapfile -t pallas_all < <(present pallas)
if [ -n "${MKB_NUMBERS:-}" ]; then  # a subset, e.g. MKB_NUMBERS="13 14 15" (one device call runs 10 minutes at most)
  read -ra numba_all <<<"$MKB_NUMBERS"
  pallas_all=("${numba_all[@]}")
fi
echo "numba: ${#numba_all[@]} solutions, pallas: ${#pallas_all[@]} solutions"
limit=${MKB_STEP_S:-150}
strict_limit=${MKB_STRICT_S:-590}  # 74 solutions per DSL take longer than the 12 did
{ timeout "$limit" python3 $check grade numba ${MKB_FIXED:-02 03 05}; timeout 60 python3 $check slowdown numba 04
  timeout 60 python3 $check slowdown pallas 03; } >"$OUT/fixed_and_slowdown.log" 2>&1 &
MKB_BOUNDARY=strict timeout "$strict_limit" python3 $check grade numba "${numba_all[@]}" >"$OUT/strict_numba.log" 2>&1 &
MKB_BOUNDARY=strict timeout "$strict_limit" python3 $check grade pallas "${pallas_all[@]}" >"$OUT/strict_pallas.log" 2>&1 &
for boundary in mkb strict; do
  timeout "$limit" python3 tests/hostile/run_corpus.py --direct --device cuda:0 --dsl numba --dsl pallas \
    --no-good-check --jobs 3 --timeout 60 --boundary $boundary >"$OUT/hostile_$boundary.log" 2>&1 &
done
wait
grep -h "^PASS\|^FAIL\|slowed" "$OUT/fixed_and_slowdown.log" "$OUT/strict_numba.log" "$OUT/strict_pallas.log" | cut -c1-400
for boundary in mkb strict; do echo "--- hostile $boundary"; grep -v "^\s*$" "$OUT/hostile_$boundary.log" | cut -c1-200 | tail -22; done
