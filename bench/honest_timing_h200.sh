#!/usr/bin/env bash
# The H200 proof of paired re-timing (issue 20 item 9), one command: the reference-driver A/A run over p01-p12 in
# both directions (identical kernels in base and skill, so every outcome should be neutral) with mkb run's paired
# re-timing, its report under the paired and the unpaired rule side by side, then mkb calibrate over 12 problems.
# The run is convergent: a second invocation (e.g. after a time limit) continues where the first stopped.
# Usage: bash bench/honest_timing_h200.sh MKB [STORE]   (outputs beside the store; prints the tables last)
# MKB_AA_DSLS: the DSLs of the A/A run (default triton,cuda: 2 directions; triton,cuda,numba,pallas: all 12).
# MKB_AA_BUDGET_S: stop the A/A run (as Ctrl+C does: the trial in hand is finished or dropped, nothing committed is
#   lost) once this many seconds have passed, so that a run longer than one device call goes on in the next call
#   from the same STORE (copy STORE back into the tree, e.g. under .device-carry/, and carry it). Default: no limit.
# MKB_AA_CALIBRATE=0: skip mkb calibrate (the 12-direction run needs only the A/A).
set -uo pipefail
MKB=${1:?usage: honest_timing_h200.sh MKB [STORE]}
STORE=${2:-/tmp/mkb-honest-timing/aa.mkb}
mkdir -p "$(dirname "$STORE")"
out=$(dirname "$STORE")
export MKB_STORE=$STORE
dsls=${MKB_AA_DSLS:-triton,cuda}
started=$(date +%s)
budget=${MKB_AA_BUDGET_S:-0}
for selection in 'p0[1-9]' 'p1[0-2]'; do
  limit=()
  if [ "$budget" -gt 0 ]; then
    left=$((budget - ($(date +%s) - started)))
    [ "$left" -gt 30 ] || { echo "A/A run: $selection left for the next call (budget spent)"; continue; }
    limit=(timeout -k 60 -s INT "$left")
  fi
  "${limit[@]}" "$MKB" run --model reference-solutions --driver reference --problems "$selection" --dsls "$dsls" \
    --replicates 1 --store "$STORE" >>"$out/aa-run.log" 2>&1 || echo "mkb run $selection exit $?"
done
echo "A/A run: $(( $(date +%s) - started )) s wall"
grep -h "re-timed:" "$out/aa-run.log" | sed 's/.*\] //'
for rule in paired unpaired; do
  "$MKB" report --store "$STORE" --metrics transfer,ladder --split direction --timing "$rule" >"$out/aa-report-$rule.md"
done
[ "${MKB_AA_CALIBRATE:-1}" = 0 ] && { grep -E "^\| [a-z]+2[a-z]+ \| [0-9]|_Timing" "$out/aa-report-paired.md" \
  "$out/aa-report-unpaired.md"; exit 0; }
calibration_started=$(date +%s)
"$MKB" calibrate --problems 'p[0-3][1-3]' --dsls triton --store "$STORE" >"$out/calibrate.log" 2>&1 ||
  echo "mkb calibrate exit $?"
echo "calibration: $(( $(date +%s) - calibration_started )) s wall"
tail -20 "$out/calibrate.log"
grep -E "^\| [a-z]+2[a-z]+ \| [0-9]|_Timing" "$out/aa-report-paired.md" "$out/aa-report-unpaired.md"
