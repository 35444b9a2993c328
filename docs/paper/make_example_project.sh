#!/usr/bin/env bash
# Regenerates resources/example/reference-cpusim.sqlite, the example project the welcome page opens: a real
# reference-driver run (model "reference-solutions": the shipped reference kernels, not a model's) over the CPU
# fixture suite's problems 1-4 in two CPU DSLs (cpusim ⇄ cpusimb), with paired re-timing and the device's
# calibration, on device "cpu".
# On an H200 the lead replaces it with the reference-driver A/A study (see the command at the end).
#
# usage: docs/paper/make_example_project.sh [BUILD_DIR]   (default build/dev; MKB_EXAMPLE_OUT=FILE writes elsewhere)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="$(cd "${1:-$root/build/dev}" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/dsls" "$work/solutions"
cp "$root/tests/fixtures/dsls/cpusim.json" "$work/dsls/cpusim.json"
sed -e 's/"id": "cpusim"/"id": "cpusimb"/' -e 's/cpusim (CPU test DSL)/cpusim B/' \
  "$root/tests/fixtures/dsls/cpusim.json" > "$work/dsls/cpusimb.json"
for stem in 01_vector_add 02_row_softmax 03_argmax_rows 04_quantize_rows; do
  cp "$root/tests/fixtures/solutions/$stem.cpusim.py" "$work/solutions/$stem.cpusim.py"
  cp "$root/tests/fixtures/solutions/$stem.cpusim.py" "$work/solutions/$stem.cpusimb.py"
done
printf '{"solutions_dir": "%s"}\n' "$work/solutions" > "$work/reference.json"

store="$work/reference-cpusim.sqlite"
MKB_DATA_DIR="$root" XDG_CONFIG_HOME="$work/config" XDG_DATA_HOME="$work/data" \
  "$build/app/mkb" run --model reference-solutions --driver reference --driver-config "$work/reference.json" \
  --problems 'p0[1-4]' --dsls cpusim,cpusimb --replicates 1 --suite "$root/tests/fixtures/problems" \
  --dsl-dir "$work/dsls" --device cpu --python /usr/bin/python3 --timing-draws 5 --concurrency 2 --store "$store"
# The device's calibration of the outcome rules (A/A and A/B per timing method), kept in the same store.
MKB_DATA_DIR="$root" XDG_CONFIG_HOME="$work/config" XDG_DATA_HOME="$work/data" \
  "$build/app/mkb" calibrate --problems 'p0[1-4]' --suite "$root/tests/fixtures/problems" --dsls cpusim,cpusimb \
  --solutions "$work/solutions" --dsl-dir "$work/dsls" --device cpu --python /usr/bin/python3 --timing-draws 5 \
  --store "$store"
out="${MKB_EXAMPLE_OUT:-$root/resources/example/reference-cpusim.sqlite}"
mkdir -p "$(dirname "$out")"
cp "$store" "$out"
echo "wrote $out"

# On the H200 (once the A/A study's driver options are final), the same shape with the shipped suite, e.g.:
#   mkb run --model reference-solutions --driver reference --problems 'GLOB' --dsls triton,cuda --replicates 3 \
#     --device cuda:0 --store reference-h200.sqlite && mkb retime --store reference-h200.sqlite --device cuda:0 \
#     && mkb calibrate --store reference-h200.sqlite --problems 'GLOB' --dsls triton,cuda --device cuda:0
