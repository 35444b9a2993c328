#!/usr/bin/env bash
# The H200 proof of paired re-timing (issue 20 item 9), one command: the reference-driver A/A run over p01-p12 in
# both directions (identical kernels in base and skill, so every outcome should be neutral) with mkb run's paired
# re-timing, its report under the paired and the unpaired rule side by side, then mkb calibrate over 12 problems.
# The run is convergent: a second invocation (e.g. after a time limit) continues where the first stopped.
# Usage: bash bench/honest_timing_h200.sh MKB [STORE]   (outputs beside the store; prints the tables last)
# MKB_AA_DSLS: the DSLs of the A/A run (default triton,cuda: 2 directions; triton,cuda,numba,pallas: all 12).
set -uo pipefail
MKB=${1:?usage: honest_timing_h200.sh MKB [STORE]}
STORE=${2:-/tmp/mkb-honest-timing/aa.mkb}
mkdir -p "$(dirname "$STORE")"
out=$(dirname "$STORE")
export MKB_STORE=$STORE
dsls=${MKB_AA_DSLS:-triton,cuda}
started=$(date +%s)
for selection in 'p0[1-9]' 'p1[0-2]'; do
  "$MKB" run --model reference-solutions --driver reference --problems "$selection" --dsls "$dsls" \
    --replicates 1 --store "$STORE" >>"$out/aa-run.log" 2>&1 || echo "mkb run $selection exit $?"
done
echo "A/A run: $(( $(date +%s) - started )) s wall"
grep -h "re-timed:" "$out/aa-run.log" | sed 's/.*\] //'
for rule in paired unpaired; do
  "$MKB" report --store "$STORE" --metrics transfer,ladder --split direction --timing "$rule" >"$out/aa-report-$rule.md"
done
calibration_started=$(date +%s)
"$MKB" calibrate --problems 'p[0-3][1-3]' --dsls triton --store "$STORE" >"$out/calibrate.log" 2>&1 ||
  echo "mkb calibrate exit $?"
echo "calibration: $(( $(date +%s) - calibration_started )) s wall"
tail -20 "$out/calibrate.log"
grep -E "^\| [a-z]+2[a-z]+ \| [0-9]|_Timing" "$out/aa-report-paired.md" "$out/aa-report-unpaired.md"
