#!/usr/bin/env bash
# Builds the fuzz targets with clang (libFuzzer, ASan, UBSan) and runs one for a bounded time; ctest calls it.
#   run_fuzz.sh build                         configure (once) and build every target into $MKB_FUZZ_BUILD_DIR
#   run_fuzz.sh run TARGET SECONDS [FLAG...]  fuzz TARGET for SECONDS from its committed corpus; extra libFuzzer flags
#                                             go last. Exit 1 on a crash, a leak, undefined behaviour or a time-out.
# Environment: MKB_FUZZ_BUILD_DIR (default build/dev/fuzz), MKB_FUZZ_SEED (default 1), MKB_FUZZ_JOBS (default 2),
# MKB_FUZZ_RSS_MB (default 2048), MKB_FUZZ_GENERATED_DIR (the main build's generated/, for mkb/version.h).
# Without clang it skips (exit 77), except under CI=true, where it fails.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="${MKB_FUZZ_BUILD_DIR:-$root/build/dev/fuzz}"
fuzzer_runtime="$(clang++ -print-file-name=libclang_rt.fuzzer-x86_64.a 2>/dev/null || true)"

no_toolchain() {
  local what="$1"
  if [ "${CI:-}" = "true" ]; then
    echo "fuzz: $what; CI must run the fuzz targets: add it to packaging/install-deps.sh" >&2
    exit 1
  fi
  echo "fuzz: $what; skipping (install it with: bash packaging/install-deps.sh)" >&2
  exit 77
}

check_toolchain() {
  command -v clang++ >/dev/null 2>&1 || no_toolchain "clang++ is not installed (Debian package clang)"
  [ -f "$fuzzer_runtime" ] || no_toolchain "libFuzzer is not installed (Debian package libclang-rt-dev)"
}

case "${1:-}" in
  build)
    check_toolchain
    if [ ! -f "$build/CMakeCache.txt" ]; then
      generator=()
      command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
      cmake -S "$here" -B "$build" "${generator[@]}" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo
    fi
    if [ -n "${MKB_FUZZ_GENERATED_DIR:-}" ]; then
      cmake -S "$here" -B "$build" -DMKB_GENERATED_DIR="$MKB_FUZZ_GENERATED_DIR" >/dev/null
    fi
    cmake --build "$build" -j "${MKB_FUZZ_JOBS:-2}"
    ;;
  run)
    target="${2:?run needs a target: problem_source, results_import or verdict_json}"
    seconds="${3:?run needs a number of seconds}"
    shift 3
    binary="$build/fuzz_$target"
    if [ ! -x "$binary" ]; then
      check_toolchain
      echo "fuzz: $binary is not built; run: bash $here/run_fuzz.sh build" >&2
      exit 1
    fi
    seeds="$here/corpus/$target"
    found="$build/corpus/$target"       # what this machine's runs found; it grows from run to run
    artifacts="$build/artifacts/$target" # crash-*, leak-*, timeout-*, oom-* reproducers
    mkdir -p "$found" "$artifacts"
    dict=()
    [ -f "$here/$target.dict" ] && dict=(-dict="$here/$target.dict")
    export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
    export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
    rc=0
    "$binary" -seed="${MKB_FUZZ_SEED:-1}" -max_total_time="$seconds" -rss_limit_mb="${MKB_FUZZ_RSS_MB:-2048}" \
      -timeout=25 -max_len=16384 -print_final_stats=1 -artifact_prefix="$artifacts/" "${dict[@]}" "$@" \
      "$found" "$seeds" || rc=$?
    if [ "$rc" -ne 0 ]; then
      echo "fuzz: $target FAILED (exit $rc). The reproducer is the newest file in $artifacts/;" \
        "replay it with: $binary $artifacts/<file>" >&2
      ls -t "$artifacts" 2>/dev/null | head -3 | sed "s|^|fuzz:   $artifacts/|" >&2
      exit 1
    fi
    echo "fuzz: $target ran ${seconds}s from $(ls "$seeds" | wc -l) seed(s) with no crash"
    ;;
  *)
    sed -n '2,9p' "$0" >&2
    exit 2
    ;;
esac
