#!/usr/bin/env bash
# The imported KernelBench-X suite validated on a GPU host (docs/kernelbenchx.md and docs/kernelbenchx.json), within a
# time budget, resuming: `mkb suite check --validate-only` checks each problem's determinism, its sensitivity to each
# input and its eager time against the 50 us floor, resuming from the committed docs/kernelbenchx.json and from this
# host's own partial report, until BUDGET_S seconds have passed since the script started. The merged report and its
# table land in $OUT (default ./gpu-results), to be committed as docs/kernelbenchx.json and docs/kernelbenchx.md.
#
# Usage: bash bench/kbx_validate_gpu.sh MKB SUITE BUDGET_S
#   MKB: an mkb binary, or "build" to build one without Qt (as bench/suite_check_gpu.sh does; MKB_HEADERS as there)
#   SUITE: the folder `mkb suite import kernelbenchx` wrote, or a KernelBench-X checkout (data/kernelbenchx/), which
#     is imported first into $MKB_KBX_WORK/kbx-suite
#   BUDGET_S: seconds for the whole call; every problem is validated whole or not at all, one cut short by the budget
#     is left for the next call, and nothing already validated is lost (the report is rewritten after every problem)
# Environment: MKB_KBX_FLAGS, the check's flags (default "--timeout 120"; a dry run on the CPU: "--device cpu
#   --eager-target-ms 0"); MKB_KBX_WORK, where this host keeps its partial report between calls (default
#   /tmp/mkb-kbx). Run it again with the same SUITE until the summary says every problem was validated.
set -uo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
mkb=${1:?usage: bash bench/kbx_validate_gpu.sh MKB SUITE BUDGET_S}
suite=${2:?usage: bash bench/kbx_validate_gpu.sh MKB SUITE BUDGET_S}
budget=${3:?usage: bash bench/kbx_validate_gpu.sh MKB SUITE BUDGET_S}
OUT=${OUT:-$PWD/gpu-results}
work=${MKB_KBX_WORK:-/tmp/mkb-kbx}
mkdir -p "$OUT" "$work"
export MKB_PYTHON=${MKB_PYTHON:-python3} PYTHONUNBUFFERED=1
read -r -a flags <<<"${MKB_KBX_FLAGS:---timeout 120}"
left() { echo $((budget - ($(date +%s) - started))); }

if [ "$mkb" = build ]; then
  mkb=$PWD/build/gpu-suite/app/mkb
  if [ ! -x "$mkb" ]; then
    headers=${MKB_HEADERS:-.device-carry/hdr}
    extra=()
    if [ -f "$headers/sqlite3.h" ]; then
      extra=(-DSQLite3_INCLUDE_DIR="$PWD/$headers" -DDTL_INCLUDE_DIR="$PWD/$headers"
        -DSQLite3_LIBRARY=/usr/lib/x86_64-linux-gnu/libsqlite3.so.0)
    fi
    generator=()
    command -v ninja >/dev/null && generator=(-G Ninja)
    { cmake -S . -B build/gpu-suite "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DMKB_HEADLESS=ON \
        -DMKB_BUILD_TESTS=OFF "${extra[@]}" && cmake --build build/gpu-suite --target mkb -j "$(nproc)"; } \
      >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
  fi
fi
"$mkb" --version || exit 1
command -v nvidia-smi >/dev/null &&
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader

if [ -d "$suite/data/kernelbenchx" ]; then # a checkout: import it (again; unchanged files are left alone)
  echo "=== importing $suite ($(date +%T))"
  "$mkb" suite import kernelbenchx "$suite" --out "$work/kbx-suite" --force | tail -1
  suite=$work/kbx-suite
fi
[ -d "$suite" ] || { echo "no suite folder $suite" >&2; exit 3; }

# This host's partial report first, then the committed one; the first that holds a problem is used.
resume=()
for report in "$work/kernelbenchx.json" docs/kernelbenchx.json; do
  [ -s "$report" ] && resume+=(--resume "$report")
done

limit=$(($(left) - 15))
[ "$limit" -gt 30 ] || limit=30
echo "=== validating $suite ($limit s, $(date +%T))"
timeout -k 30 -s INT "$limit" "$mkb" suite check --validate-only --suite "$suite" "${flags[@]}" "${resume[@]}" \
  --json "$work/kernelbenchx.json.new" --table "$work/kernelbenchx.md" 2>&1 | tee -a "$OUT/kbx-validate.log"
[ -s "$work/kernelbenchx.json.new" ] && mv "$work/kernelbenchx.json.new" "$work/kernelbenchx.json"
cp "$work/kernelbenchx.json" "$work/kernelbenchx.md" "$OUT/" 2>/dev/null
grep -m1 '^- \*\*partial\*\*' "$OUT/kernelbenchx.md" || echo "every problem validated"
echo "=== done ($(left) s of the budget left, $(date +%T))"
