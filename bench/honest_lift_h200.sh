#!/usr/bin/env bash
# The H200 proof of the honest lift (issue 35 item 5), one command: the reference-driver A/A run over p01-p12 in both
# directions (bench/honest_timing_h200.sh: identical kernels in base and skill, re-timed in pairs, then mkb calibrate),
# then the ladder by family and direction under the paired rule beside the unpaired rule, a check that under the
# paired rule every lift is 0.0 and every lift interval contains 0, and the calibration's A/B summary.
# The run is convergent: a second invocation (e.g. after a time limit) continues where the first stopped.
# Usage: bash bench/honest_lift_h200.sh MKB [STORE]   (outputs beside the store; prints the tables last)
set -uo pipefail
MKB=${1:?usage: honest_lift_h200.sh MKB [STORE]}
STORE=${2:-/tmp/mkb-honest-lift/aa.mkb}
here=$(cd "$(dirname "$0")" && pwd)
out=$(dirname "$STORE")
mkdir -p "$out"
bash "$here/honest_timing_h200.sh" "$MKB" "$STORE"

for split in family direction; do
  for rule in paired unpaired; do
    "$MKB" report --store "$STORE" --metrics ladder --split "$split" --timing "$rule" \
      >"$out/lift-$split-$rule.md" || echo "mkb report --split $split --timing $rule exit $?"
    "$MKB" report --store "$STORE" --metrics ladder --split "$split" --timing "$rule" --format csv \
      >"$out/lift-$split-$rule.csv" || echo "mkb report --format csv --split $split --timing $rule exit $?"
  done
  echo
  echo "== ladder by $split: paired (left) | unpaired (right) =="
  pr -m -t -w 240 "$out/lift-$split-paired.md" "$out/lift-$split-unpaired.md"
done

# Under the paired rule: the lift rows are 0 at every threshold and in S, the low bounds <= 0 and the high bounds >= 0.
echo
echo "== paired A/A check (lift 0.0, every interval contains 0) =="
for split in family direction; do
  awk -F, -v group="$split" '
    /^"/ || NF < 6 { next }            # titles and footnotes (quoted), short lines
    $2 == "lift" || $2 == "lift 95% low" || $2 == "lift 95% high" {
      for (i = 4; i <= NF; i++) {
        if ($i == "") continue           # no interval (one cell) or the S interval columns of the bound rows
        v = $i + 0
        if ($2 == "lift" && i <= NF - 2 && v != 0) { bad++; print "  " group " " $1 ": lift column " i " = " $i }
        if ($2 == "lift 95% low" && v > 0) { bad++; print "  " group " " $1 ": interval low " $i " > 0" }
        if ($2 == "lift 95% high" && v < 0) { bad++; print "  " group " " $1 ": interval high " $i " < 0" }
      }
      rows++
    }
    END { printf "%s: %d lift rows checked, %s\n", group, rows, bad ? bad " FAILED" : "PASS" }
  ' "$out/lift-$split-paired.csv"
done
grep -h "^_Ladder" "$out/lift-family-paired.md" "$out/lift-family-unpaired.md"

# The A/B controls: a copy slowed by 10% must be judged harmed (detection) and the A/A copies neutral (false rate).
echo
echo "== mkb calibrate A/B summary =="
"$MKB" report --store "$STORE" --metrics ladder --format md 2>/dev/null | sed -n '/alibration/,/^$/p'
grep -E "A/B|detected|slowed" "$out/calibrate.log" | tail -30
