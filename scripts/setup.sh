#!/usr/bin/env bash
# Installs schedlab's dependencies from Debian 12 packages.
#   setup.sh --demo   what building the schedlab binary needs (`make demo`)
#   setup.sh --test   that, and what the test suite needs (`make test`)
#   setup.sh          everything: that, and clang for the fuzz targets (`make fuzz`, CI)
#   setup.sh MODE --print   prints the packages of MODE, one a line, and installs nothing
# Idempotent: does nothing when everything is already installed.
set -euo pipefail
mode=${1:---all}
if [ "$mode" = --print ]; then set -- --all --print; mode=--all; fi
case "$mode" in
  --demo|--test|--all) ;;
  *) echo "setup.sh: unknown option '$mode' (use --demo, --test or nothing for everything)" >&2; exit 2 ;;
esac
print=${2:-}
if [ -n "$print" ] && [ "$print" != --print ]; then
  echo "setup.sh: unknown option '$print' (only --print may follow the mode)" >&2; exit 2
fi
# The build: a C++20 compiler, CMake + Ninja, the libraries (GoogleTest and Google Benchmark too:
# CMake's configure step finds them, though `make demo` builds neither).
BUILD_PKGS=(
  build-essential cmake ninja-build pkg-config
  libfmt-dev libcli11-dev libtomlplusplus-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev libboost-dev
)
# What only `make test` needs: python3 for the golden CLI tests (tests/golden/cli); the real tools
# that `host bench` and `validate` run (tests/cli/validate_test.cpp, tests/host); headless
# Chromium for tests/browser, which loads the HTML reports; a one-node Slurm (slurmctld, slurmd,
# sbatch) that tests/sweep/slurm_test.sh starts itself, in the foreground, with its own slurm.conf;
# Universal Ctags for scripts/long-functions.sh (lint.LongFunctions).
TEST_PKGS=(
  python3
  trace-cmd rt-tests linux-perf
  chromium
  slurm-wlm
  universal-ctags
)
# The libFuzzer build (make fuzz).
FUZZ_PKGS=(
  clang libclang-rt-14-dev
)
PKGS=("${BUILD_PKGS[@]}")
if [ "$mode" != --demo ]; then PKGS+=("${TEST_PKGS[@]}"); fi
if [ "$mode" = --all ]; then PKGS+=("${FUZZ_PKGS[@]}"); fi
if [ -n "$print" ]; then
  printf '%s\n' "${PKGS[@]}"
  exit 0
fi
missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "setup: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
