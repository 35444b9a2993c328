#!/usr/bin/env bash
# Regenerates docs/screenshots/*.png: every workbench view on a fixture project under Xvfb.
# The project is labelled synthetic: its models are "synthetic-model-<k>" (written by bench_gui_scale
# --write-fixture), plus one real reference-driver run on the CPU fixture suite (model "reference-cpu",
# DSLs cpusim ⇄ cpusimb) so the Runs view shows a run as mkb run reported it.
#
# usage: docs/screenshots/make_screenshots.sh [BUILD_DIR]   (default build/dev; needs xvfb-run)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="$(cd "${1:-$root/build/dev}" && pwd)"
out="$root/docs/screenshots"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

project="$work/synthetic-study.sqlite"
"$build/bench/bench_gui_scale" --write-fixture "$project" --trials 1440

# The CPU fixture suite: a second CPU DSL (cpusimb) and the reference solutions for both.
mkdir -p "$work/dsls" "$work/solutions"
cp "$root/tests/fixtures/dsls/cpusim.json" "$work/dsls/cpusim.json"
sed -e 's/"id": "cpusim"/"id": "cpusimb"/' -e 's/cpusim (CPU test DSL)/cpusim B/' \
  "$root/tests/fixtures/dsls/cpusim.json" > "$work/dsls/cpusimb.json"
for stem in 01_vector_add 02_row_softmax 03_argmax_rows; do
  cp "$root/tests/fixtures/solutions/$stem.cpusim.py" "$work/solutions/$stem.cpusim.py"
  cp "$root/tests/fixtures/solutions/$stem.cpusim.py" "$work/solutions/$stem.cpusimb.py"
done
printf '{"solutions_dir": "%s"}\n' "$work/solutions" > "$work/reference.json"

# The run goes through the workbench's own launcher (the Runs view's files: <project>.runs/run-*.json(l)).
export MKB_DATA_DIR="$root" MKB_CLI="$build/app/mkb"
export XDG_CONFIG_HOME="$work/config" XDG_DATA_HOME="$work/data"
runs="$work/synthetic-study.runs"
mkdir -p "$runs"
stamp="run-$(date -u +%Y%m%d-%H%M%S-000)"
args=(run --model reference-cpu --driver reference --driver-config "$work/reference.json" --problems 'p0[1-3]'
      --dsls cpusim,cpusimb --replicates 1 --suite "$root/tests/fixtures/problems" --dsl-dir "$work/dsls"
      --device cpu --python /usr/bin/python3 --timing-draws 5 --concurrency 2 --store "$project" --progress json)
"$MKB_CLI" "${args[@]}" > "$runs/$stamp.jsonl" 2> "$runs/$stamp.log" || true
started="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
python3 - "$runs/$stamp.json" "$MKB_CLI" "$stamp" "$started" "${args[@]}" <<'PY'
import json, sys
path, program, stamp, started, *arguments = sys.argv[1:]
json.dump({"pid": 0, "program": program, "arguments": arguments, "progress": stamp + ".jsonl",
           "log": stamp + ".log", "started_at": started}, open(path, "w"), indent=2)
PY

shoot() { # view file [palette]
  xvfb-run -a -s "-screen 0 1600x1000x24" "$build/app/mkb-workbench" --screenshot "$out/$2" --view "$1" \
    --palette "${3:-light}" "$project"
  echo "wrote $out/$2"
}
for view in overview transfers comparisons charts runs problems; do
  shoot "$view" "$view.png"
done
shoot overview overview-dark.png dark
