#!/usr/bin/env bash
# The HTML reports in a real browser: writes the reports of `ab`, `run` and `reproduce` and loads
# each in headless Chromium (check_report.py: plots, labelled axes, the JSON block, no console
# error, no request, a screenshot that is not blank). ctest runs it as browser.HtmlReports;
# scripts/report-screenshot.sh runs it to regenerate the README's screenshot.
#
# Usage: run.sh SCHEDLAB CHROMIUM [SCREENSHOT.png]   (SCREENSHOT: where the ab report's goes)
set -euo pipefail
schedlab=$1
chromium=${2:-}
shot=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
if [ -z "$chromium" ] || [ ! -x "$chromium" ]; then
  echo "browser test: no chromium (scripts/setup.sh installs Debian's chromium package)" >&2
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
check() { python3 "$here/check_report.py" --chromium "$chromium" "$@"; }
cd "$work"

# ab: the runs per side of schbench's five metrics, its two latency distributions, the key counters.
"$schedlab" ab --machine epyc-milan-2s --base '' --test IDLE_SPIN --runs 8 --jobs 2 --html ab.html \
  -- schbench -m 2 -t 4 -r 1 >ab.txt 2>/dev/null
check --report ab.html --plots 8 --kinds strip,cdf,counters --width 1280 --height 2000 \
  ${shot:+--screenshot "$shot"}

# run: rt-app's wakeup latency from the logs it writes, the CPU time per CPU.
cp "$src/tests/workload/rtapp/periodic.json" .
"$schedlab" run --machine tiny-4 --html run.html -- rt-app periodic.json >run.txt 2>/dev/null
check --report run.html --plots 2 --kinds cdf,cpu

# reproduce: published vs model gain against each case's band.
"$schedlab" reproduce haltpoll-arm64-guest-pipe ilb-softirq-v3-icx-ipistorm --runs 2 --jobs 2 \
  --html reproduce.html >reproduce.txt 2>/dev/null
check --report reproduce.html --plots 1 --kinds bands
