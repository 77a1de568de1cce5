#!/usr/bin/env bash
# Regenerates docs/img/report-ab.png, the README's screenshot of an HTML report: the browser test
# (tests/browser/run.sh) with its ab report's screenshot kept. Needs a build (BUILD, default
# build/) and Debian's chromium (scripts/setup.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
mkdir -p "$root/docs/img"
bash "$root/tests/browser/run.sh" "$build/schedlab" "$(command -v chromium || command -v chromium-browser)" \
  "$root/docs/img/report-ab.png"
