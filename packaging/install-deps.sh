#!/usr/bin/env bash
# Installs what MetaKernelBench Workbench needs to build, test and run on Debian 12 or Ubuntu 24.04.
# Idempotent: packages already present are left alone. Run as root or with sudo available.
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build pkg-config git lld
  # GUI: Qt 6 Widgets/PrintSupport/Svg/Test, QCustomPlot for charts, OpenGL headers Qt's CMake files ask for
  qt6-base-dev qt6-svg-dev libqcustomplot-dev libgl-dev
  # core: SQLite store, JSON, HTTP for model endpoints, dtl for kernel diffs
  libsqlite3-dev nlohmann-json3-dev libcurl4-openssl-dev libdtl-dev
  # grader tests: Debian's CPU-only PyTorch for /usr/bin/python3
  python3 python3-torch
  # headless GUI tests and screenshots
  xvfb xauth fonts-dejavu-core
  # the .deb (cpack: dpkg-deb, dpkg-shlibdeps) and its desktop-file and AppStream checks
  dpkg-dev desktop-file-utils appstream
  # fuzz targets (tests/fuzz): clang with libFuzzer and the ASan/UBSan runtimes
  clang libclang-rt-dev
  # paper output tests (tests/paper): pdffonts checks embedded fonts; pdflatex with booktabs compiles the tables
  poppler-utils texlive-latex-base texlive-latex-recommended
  # Slurm executor tests (tests/cluster): a single-node cluster the test starts itself (slurmctld, slurmd, munged)
  slurm-wlm munge
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: everything is already installed."
  exit 0
fi

echo "install-deps: installing ${#missing[@]} missing package(s): ${missing[*]}"
run_as_root=()
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "install-deps: not root and sudo is missing; install as root: apt-get install ${missing[*]}" >&2
    exit 1
  fi
  run_as_root=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${run_as_root[@]}" apt-get update
"${run_as_root[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
echo "install-deps: done."
