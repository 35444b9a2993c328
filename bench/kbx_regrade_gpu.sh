#!/usr/bin/env bash
# The KernelBench-X corpus re-graded by our grader on a GPU host (issue 31, item 5), within a time budget, resuming:
# the checkout's task set is imported as a suite and its corpus into a store (once), then `mkb regrade` grades every
# round under the mkb boundary and then under strict, `mkb retime --transitions` re-times each before/after pair, and
# `mkb report` prints the agreement of our verdicts with KernelBench-X's, every disagreement, the performance events
# judged on our verdicts and the paper's findings under both graders. Every step is convergent: a call cut short by the
# budget keeps what it graded, and the next call with the same arguments continues where it stopped.
#
# Usage: bash bench/kbx_regrade_gpu.sh MKB CHECKOUT BUDGET_S
#   MKB: an mkb binary, or "build" to build one without Qt (as bench/suite_check_gpu.sh does; MKB_HEADERS as there)
#   CHECKOUT: a KernelBench-X checkout (data/kernelbenchx/, data/kbx_corpus/all_records.jsonl)
#   BUDGET_S: seconds for the whole call
# Environment: MKB_KBX_WORK, where this host keeps the suite and the store between calls (default /tmp/mkb-kbx-regrade);
#   MKB_REGRADE_FLAGS, extra flags of both regrades and the re-timing (a dry run on the CPU: "--device cpu"; default
#   "--grade-timeout 60": one round of the real corpus hangs its evaluation, and the grader's 600 s default spends a
#   whole device call on it). The reports, the logs and a copy of the store land in $OUT (default ./gpu-results): to
#   continue on a fresh host, put that copy at $MKB_KBX_WORK/kbx.mkb (a carried folder) and call again.
#   MKB_RETIME_FLAGS, extra flags of the re-timing (default "--max-seconds 5 --ci-halfwidth 0.02": 54 pairs of the real
#   corpus are timed, and the re-timer's 60 s per pair would take most of an hour).
set -uo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
mkb=${1:?usage: bash bench/kbx_regrade_gpu.sh MKB CHECKOUT BUDGET_S}
checkout=${2:?usage: bash bench/kbx_regrade_gpu.sh MKB CHECKOUT BUDGET_S}
budget=${3:?usage: bash bench/kbx_regrade_gpu.sh MKB CHECKOUT BUDGET_S}
OUT=${OUT:-$PWD/gpu-results}
work=${MKB_KBX_WORK:-/tmp/mkb-kbx-regrade}
mkdir -p "$OUT" "$work"
export MKB_PYTHON=${MKB_PYTHON:-python3} PYTHONUNBUFFERED=1 MKB_DATA_DIR=${MKB_DATA_DIR:-$PWD}
read -r -a extra <<<"${MKB_REGRADE_FLAGS:---grade-timeout 60}"
left() { echo $((budget - ($(date +%s) - started))); }
store=$work/kbx.mkb

if [ "$mkb" = build ]; then
  OUT=$OUT/build bash bench/suite_check_gpu.sh build >/dev/null || { cat "$OUT/build/build.log" | tail -30; exit 1; }
  mkb=$PWD/build/gpu-suite/app/mkb
fi
"$mkb" --version || exit 1
command -v nvidia-smi >/dev/null &&
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader

if [ ! -d "$work/kbx-suite" ] || [ ! -s "$store" ]; then
  echo "=== importing $checkout ($(date +%T))"
  "$mkb" suite import kernelbenchx "$checkout" --out "$work/kbx-suite" | tail -1 || exit 1
fi
if [ ! -s "$store" ]; then
  "$mkb" import kernelbenchx-corpus "$checkout/data/kbx_corpus/all_records.jsonl" --tasks "$checkout" \
    --suite "$work/kbx-suite" --store "$store" | tail -3 || exit 1
fi

# One step within what is left of the budget (30 s kept for the report); a step with no time left is skipped.
step() {
  local name=$1
  shift
  local limit=$(($(left) - 30))
  if [ "$limit" -lt 20 ]; then
    echo "=== $name: no time left, next call"
    return
  fi
  echo "=== $name ($limit s, $(date +%T))"
  "$@" --time-limit "$limit" 2>&1 | tee -a "$OUT/$name.log" | tail -4
}
step regrade-mkb "$mkb" regrade --store "$store" --boundary mkb "${extra[@]}"
step regrade-strict "$mkb" regrade --store "$store" --boundary strict "${extra[@]}"
read -r -a retime <<<"${MKB_RETIME_FLAGS:---max-seconds 5 --ci-halfwidth 0.02}"
step retime-transitions "$mkb" retime --transitions --store "$store" --suite "$work/kbx-suite" "${extra[@]}" \
  "${retime[@]}"

for metrics in kbx-agreement kbx-events kbx-paper; do
  "$mkb" report --store "$store" --metrics "$metrics" >"$OUT/report-$metrics.txt" 2>&1
done
cp "$store" "$OUT/kbx.mkb"
echo "=== done ($(left) s of the budget left, $(date +%T))"
