#!/usr/bin/env bash
# The shipped suite's check (docs/suite.md and docs/suite.json) on a GPU host, in pieces that fit a time budget, one
# call after another: it builds mkb without Qt (once), resumes from the committed docs/suite.json and from this host's
# own partial reports, checks what is left until BUDGET_S seconds have passed since the script started, and leaves the
# merged report and table in $OUT (default ./gpu-results) to be committed as docs/suite.json and docs/suite.md.
#
# Usage: bash bench/suite_check_gpu.sh BUDGET_S [GLOB ...]    (BUDGET_S "build": build mkb and stop)
#   GLOB: problems to check first, in this order (each a --problems glob, e.g. '*/[5-7][0-9]_*'); the rest of the
#   suite follows in catalog order, with at least the last 90 s of the budget. Every problem is checked whole or not
#   at all: one cut short by the budget is left for the next call, and nothing already checked is lost (the reports
#   are rewritten after every problem, and an interrupted check keeps what the resumed reports hold).
# Environment: MKB_CANDIDATES, candidate folders to grade first (below); MKB_CLI, an mkb to use instead of building one; MKB_SUITE_FLAGS, the check's flags instead of the
#   committed report's (a dry run on the CPU: "--suite tests/suite/fixtures/suite --dsls cpusim --dsl-dir
#   tests/fixtures/dsls --device cpu --eager-target-ms 0 --gradings 2"); MKB_HEADERS, a folder with sqlite3.h and dtl/ for a host without them (bench/README.md; default
#   .device-carry/hdr when it exists); MKB_SUITE_WORK, where this host keeps its partial reports and store between
#   calls (default /tmp/mkb-suite).
# The flags are those of the committed report (four DSLs, each solution one evaluation: --flakiness single); change
# them and every problem is checked again. On a host with several
# GPUs, MKB_SUITE_FLAGS="--dsls triton,cuda --flakiness pooled --timeout 120 --devices all" spreads the check over
# them and reuses what any of them checked (a later one-GPU run reuses only what its own device checked).
set -uo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
budget=${1:?usage: bash bench/suite_check_gpu.sh BUDGET_S [GLOB ...]}
shift
OUT=${OUT:-$PWD/gpu-results}
work=${MKB_SUITE_WORK:-/tmp/mkb-suite}
mkdir -p "$OUT" "$work"
export MKB_PYTHON=${MKB_PYTHON:-python3} PYTHONUNBUFFERED=1
read -r -a flags <<<"${MKB_SUITE_FLAGS:---dsls triton,cuda,numba,pallas --flakiness single --timeout 120}"
flags+=(--store "$work/store.mkb")
left() { echo $((budget - ($(date +%s) - started))); }

mkb=${MKB_CLI:-$PWD/build/gpu-suite/app/mkb}
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
"$mkb" --version
[ "$budget" = build ] && exit 0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader

# Candidate solutions (bench/candidates/NN, MKB_CANDIDATES="21:cuda 53:triton") are graded beside the shipped ones
# first, and the best ships when it clearly beats both (grade_candidates.py --ship). Each call starts from the
# sender's tree again, so what an earlier call shipped is applied again here; commit the same copy where you work.
# Each problem's candidates get at most half of what is left, and what one shipped is recorded at once, so that a
# call stopped mid-way still applies it on the next.
for spec in ${MKB_CANDIDATES:-}; do
  number=${spec%%:*} dsl=${spec#*:}
  if [ "$(left)" -lt 240 ]; then
    echo "=== candidates for p$number ($dsl) left for the next call: $(left) s left"
    continue
  fi
  echo "=== candidates for p$number ($dsl, $(date +%T))"
  timeout -k 30 $(($(left) / 2)) python3 bench/candidates/grade_candidates.py --mkb "$mkb" --problem "p$number" \
    --dsl "$dsl" --ship bench/candidates/"$number"/v*."$dsl".py 2>&1 | tee "$work/candidates-p$number-$dsl.log" |
    tee -a "$OUT/candidates.log"
  sed -n 's/^ship: \(.*\) is now \(.*\) (CI low .*/\1 \2/p' "$work/candidates-p$number-$dsl.log" >>"$work/shipped"
done
if [ -s "$work/shipped" ]; then
  while read -r from to; do
    cp "$from" "$to" && echo "shipped: $from as $to"
  done <"$work/shipped"
fi

# Every report this host or the repository holds (the committed records in bench/results too, so a check cut short
# on one session goes on in the next); the first that still holds a problem under this grader is used.
resume=()
for report in "$work"/first-*.json "$work/suite.json" bench/results/suite-*.json docs/suite.json; do
  [ -s "$report" ] && resume+=(--resume "$report")
done

# The whole suite runs last, with at least `reserve` seconds, so that its report merges everything checked so far.
reserve=90
i=0
for glob in "$@"; do
  i=$((i + 1))
  [ "$(left)" -gt $((reserve + 30)) ] || break
  echo "=== first: $glob ($(left) s left, $(date +%T))"
  timeout -k 30 -s INT $(($(left) - reserve)) "$mkb" suite check "${flags[@]}" --problems "$glob" "${resume[@]}" \
    --json "$work/first-$i.json" 2>&1 | tee -a "$OUT/suite-check.log"
  [ -s "$work/first-$i.json" ] && resume=(--resume "$work/first-$i.json" "${resume[@]}")
done

limit=$(left)
[ "$limit" -gt 60 ] || limit=60
echo "=== the whole suite ($limit s, $(date +%T))"
timeout -k 30 -s INT "$limit" "$mkb" suite check "${flags[@]}" "${resume[@]}" --json "$work/suite.json.new" \
  --table "$work/suite.md" 2>&1 | tee -a "$OUT/suite-check.log"
[ -s "$work/suite.json.new" ] && mv "$work/suite.json.new" "$work/suite.json"
cp "$work/suite.json" "$work/suite.md" "$OUT/"
echo "=== done ($(left) s of the budget left, $(date +%T))"
