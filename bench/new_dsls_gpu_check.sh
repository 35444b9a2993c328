#!/usr/bin/env bash
# The numba and pallas GPU check (issue 34) in one device call: probes, then the solutions of the given problems in
# both DSLs (numba and pallas side by side, two gradings at a time), logs under $OUT. Usage:
#   bash bench/new_dsls_gpu_check.sh [NN ...]       (default: every problem number with a numba or pallas solution)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-results}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/core/grader${PYTHONPATH:+:$PYTHONPATH}
numbers=("$@")
[ ${#numbers[@]} -eq 0 ] && mapfile -t numbers < <(ls problems/*/_solutions/*.numba.py problems/*/_solutions/*.pallas.py |
  sed 's|.*/\([0-9]*\)_[^/]*$|\1|' | sort -un)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c 'import numpy, torch, triton; print("numpy", numpy.__version__, "torch", torch.__version__, "triton", triton.__version__)'
if [ -z "${MKB_SKIP_PROBE:-}" ]; then
  timeout 150 python3 bench/new_dsls_gpu_check.py probe 2>&1 | tee "$OUT/probe.log" | grep -v "^W0000\|^I0000"
fi
timeout "${MKB_GRADE_S:-590}" python3 bench/new_dsls_gpu_check.py grade numba "${numbers[@]}" >"$OUT/numba.log" 2>&1 &
timeout "${MKB_GRADE_S:-590}" python3 bench/new_dsls_gpu_check.py grade pallas "${numbers[@]}" >"$OUT/pallas.log" 2>&1 &
wait
grep -h "^PASS\|^FAIL" "$OUT/numba.log" "$OUT/pallas.log"
echo "--- tails"; tail -5 "$OUT/numba.log" "$OUT/pallas.log" | cut -c1-600
