#!/usr/bin/env bash
# Installs schedlab's build and test dependencies from Debian 12 packages.
# Idempotent: does nothing when everything is already installed.
set -euo pipefail
PKGS=(
  build-essential cmake ninja-build pkg-config
  libfmt-dev libcli11-dev libtomlplusplus-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev libboost-dev
  trace-cmd rt-tests linux-perf
  clang libclang-rt-14-dev
)
# What only `make test` needs (kept as its own list for the demo/test split): headless Chromium
# for tests/browser, which loads the HTML reports; python3 for the golden CLI tests (tests/golden/cli); a one-node Slurm (slurmctld, slurmd, sbatch)
# that tests/sweep/slurm_test.sh starts itself, in the foreground, with its own slurm.conf.
TEST_PKGS=(
  python3
  chromium
  slurm-wlm
)
PKGS+=("${TEST_PKGS[@]}")
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
