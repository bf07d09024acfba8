#!/usr/bin/env bash
# Installs the Debian packages racksim needs, and only those missing (apt-get runs only when one is).
# Package list and versions: ../shared/TOOLCHAIN.md. Runs as root on Debian 12; non-root with sudo.
# `install-deps.sh fuzz` adds clang-14 and its runtime libraries (libFuzzer, sanitizers) for make fuzz.
set -euo pipefail
packages=(
  cmake g++ make ninja-build pkg-config python3-dev
  libsimgrid-dev libeigen3-dev libboost-graph-dev nlohmann-json3-dev
  libbenchmark-dev libgtest-dev libgmock-dev pybind11-dev libcli11-dev libfmt-dev
  libcpp-httplib-dev libjs-d3 chromium chromium-driver python3-selenium
  python3-numpy python3-matplotlib python3-pandas python3-pytest
  jupyter-nbconvert python3-nbclient python3-ipykernel
  python3-distributed python3-tqdm
)
if [ "${1:-}" = "fuzz" ]; then
  packages+=(clang-14 libclang-rt-14-dev)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "racksim: installing missing Debian packages: ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
