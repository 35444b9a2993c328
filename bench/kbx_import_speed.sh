#!/usr/bin/env bash
# The KernelBench-X import's speed (issue 31): `mkb suite import kernelbenchx` of a checkout's tasks and `mkb import
# kernelbenchx-corpus` of its corpus, each timed three times from a clean output (the median is printed), against the
# 10 s the two may take together on a 2-core machine; then the same tasks parsed by the importer alone
# (python3 -m mkbimport) as the baseline inside the same run, so the ratio says what the CLI adds around it.
# Usage: bash bench/kbx_import_speed.sh MKB CHECKOUT     (CHECKOUT: a KernelBench-X clone, e.g. BonnieW05/KernelBenchX)
set -uo pipefail
mkb=${1:?usage: bash bench/kbx_import_speed.sh MKB CHECKOUT}
checkout=${2:?usage: bash bench/kbx_import_speed.sh MKB CHECKOUT}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export MKB_DATA_DIR=${MKB_DATA_DIR:-$here}
median() { sort -n | sed -n 2p; }
seconds() { local start end; start=$(date +%s.%N); "$@" >/dev/null 2>&1; end=$(date +%s.%N); echo "$end - $start" | bc; }
tasks=$(for i in 1 2 3; do rm -rf "$work/suite"; seconds "$mkb" suite import kernelbenchx "$checkout" --out "$work/suite"; done | median)
corpus=$(for i in 1 2 3; do rm -f "$work/c.sqlite"*; seconds "$mkb" import kernelbenchx-corpus \
  "$checkout/data/kbx_corpus/all_records.jsonl" --tasks "$checkout" --suite "$work/suite" --store "$work/c.sqlite"; done | median)
parse=$(for i in 1 2 3; do rm -rf "$work/bare"; seconds env PYTHONPATH="$here/core/grader" python3 -m mkbimport \
  kernelbenchx "$checkout" --out "$work/bare"; done | median)
"$mkb" suite import kernelbenchx "$checkout" --out "$work/suite" 2>&1 | tail -1
"$mkb" import kernelbenchx-corpus "$checkout/data/kbx_corpus/all_records.jsonl" --tasks "$checkout" \
  --suite "$work/suite" --store "$work/c2.sqlite" 2>&1 | tail -1
printf 'tasks import %.2f s (median of 3), corpus import %.2f s, together %.2f s of the 10 s budget (%.0f%%)\n' \
  "$tasks" "$corpus" "$(echo "$tasks + $corpus" | bc)" "$(echo "100 * ($tasks + $corpus) / 10" | bc -l)"
printf 'baseline: the importer alone (python3 -m mkbimport) %.2f s; mkb suite import / importer alone: %.2f\n' \
  "$parse" "$(echo "$tasks / $parse" | bc -l)"
