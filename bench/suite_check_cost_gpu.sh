#!/usr/bin/env bash
# bench/suite_check_cost.py on a GPU host, its BEFORE side built from an older tree of this repository: one call.
# Usage: bash bench/suite_check_cost_gpu.sh BASE_TARBALL PROBLEMS [BEFORE_FLAGS [AFTER_FLAGS]]
#   BASE_TARBALL: `git archive --format=tar.gz -o base.tar.gz COMMIT` of the tree to compare with (its mkb, grader and
#   problems); PROBLEMS: the bench's comma list. Default flags: four DSLs, the pooled repeats before, single after.
# Leaves the bench's reports in $OUT/suite-cost (default ./gpu-results), and AFTER's reports also in
# $MKB_SUITE_WORK as first-cost-*.json, where bench/suite_check_gpu.sh resumes them.
set -uo pipefail
cd "$(dirname "$0")/.."
base=${1:?usage: bash bench/suite_check_cost_gpu.sh BASE_TARBALL PROBLEMS [BEFORE_FLAGS [AFTER_FLAGS]]}
problems=${2:?usage: bash bench/suite_check_cost_gpu.sh BASE_TARBALL PROBLEMS [BEFORE_FLAGS [AFTER_FLAGS]]}
four=--dsls\ triton,cuda,numba,pallas
before_flags=${3:-$four --flakiness pooled --timeout 120}
after_flags=${4:-$four --flakiness single --timeout 120}
OUT=${OUT:-$PWD/gpu-results}
work=${MKB_SUITE_WORK:-/tmp/mkb-suite}
mkdir -p "$OUT" "$work"
headers=$PWD/${MKB_HEADERS:-.device-carry/hdr}
basedir=/tmp/mkb-cost-base
rm -rf "$basedir" && mkdir -p "$basedir" && tar -xzf "$base" -C "$basedir"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
build() { # SOURCE BUILD_DIR LOG
  cmake -S "$1" -B "$2" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DMKB_HEADLESS=ON -DMKB_BUILD_TESTS=OFF \
    -DSQLite3_INCLUDE_DIR="$headers" -DDTL_INCLUDE_DIR="$headers" \
    -DSQLite3_LIBRARY=/usr/lib/x86_64-linux-gnu/libsqlite3.so.0 >"$3" 2>&1 &&
    cmake --build "$2" --target mkb -j "$(($(nproc) / 2))" >>"$3" 2>&1 || { tail -20 "$3"; return 1; }
}
started=$(date +%s)
build "$basedir" "$basedir/build" "$OUT/build-base.log" &
before_build=$!
build "$PWD" "$PWD/build/gpu-suite" "$OUT/build.log" || exit 1
wait "$before_build" || exit 1
echo "both built in $(($(date +%s) - started)) s"
export MKB_PYTHON=${MKB_PYTHON:-python3} PYTHONUNBUFFERED=1
python3 bench/suite_check_cost.py --before "$basedir/build/app/mkb" --before-flags "$before_flags" \
  --after "$PWD/build/gpu-suite/app/mkb" --after-flags "$after_flags" --problems "$problems" --out "$OUT/suite-cost"
i=0
for report in "$OUT"/suite-cost/after-*.json; do
  i=$((i + 1))
  cp "$report" "$work/first-cost-$i.json"
done
