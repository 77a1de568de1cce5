#!/usr/bin/env bash
# One-at-a-time sensitivity of the model: for every cost in a profile's [costs] table, the change
# of each benchmark's simulated metric when that one cost is halved and doubled (all else as in
# the profile). Model only: nothing real is run, nothing is fitted. See docs/validation.md.
#
#   scripts/sensitivity.sh [SCHEDLAB_BINARY] [MACHINE] [BENCHMARK...]
#     defaults: build/schedlab, host, and the four commands below (separate a command's words
#     with spaces inside one argument: 'hackbench -g 1 -l 200').
# Output: a markdown table, costs sorted by the largest |change| over the benchmarks, then a
# note of the costs that are 0 in the profile (scaling them changes nothing).
set -euo pipefail
BIN=${1:-build/schedlab}
MACHINE=${2:-host}
shift $(( $# > 2 ? 2 : $# ))
if [ $# -gt 0 ]; then CASES=("$@"); else
  CASES=("hackbench -g 1 -l 200" "hackbench -p -g 1 -l 200" "perf bench sched pipe -l 20000"
         "perf bench sched pipe -l 20000 -T")
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# The profile file (for the list of costs): `host` is the host profile; a name is built-in.
if [ "$MACHINE" = host ]; then
  PROFILE=${XDG_CONFIG_HOME:-${HOME:-.}/.config}/schedlab/host.toml
  [ -n "${XDG_CONFIG_HOME:-}${HOME:-}" ] || PROFILE=./host.toml
elif [ -f "$MACHINE" ]; then PROFILE=$MACHINE
else PROFILE=$(dirname "$0")/../profiles/$MACHINE.toml; fi
[ -f "$PROFILE" ] || { echo "sensitivity.sh: no profile file $PROFILE" >&2; exit 2; }

# metric VALUE of one simulated run (seed 1; the first metric of the run's JSON).
metric() {
  "$BIN" run --machine "$MACHINE" --seed 1 "${@:2}" --json "$TMP/r.json" -- $1 >/dev/null
  grep -m1 '"value"' "$TMP/r.json" | sed 's/.*: *//; s/,$//'
}

mapfile -t KEYS < <(awk '/^\[/{t=$0} t=="[costs]" && /^[a-z_]+ *=/{print $1"="$3}' "$PROFILE")
declare -a BASE
for i in "${!CASES[@]}"; do BASE[$i]=$(metric "${CASES[$i]}"); done

header="| cost | value |"; sep="|---|---:|"
for c in "${CASES[@]}"; do header+=" \`$c\` x0.5 | x2 |"; sep+="---:|---:|"; done
zero=()
: > "$TMP/rows"
for kv in "${KEYS[@]}"; do
  key=${kv%%=*}; val=${kv#*=}
  if awk -v v="$val" 'BEGIN{exit !(v+0==0)}'; then zero+=("$key"); continue; fi
  row="| $key | $val |"; worst=0
  for i in "${!CASES[@]}"; do
    for f in 0.5 2; do
      nv=$(awk -v v="$val" -v f="$f" -v k="$key" 'BEGIN{ if (k ~ /_ns$|_kb$/) printf "%d", v*f+0.5; else { x=v*f; if (k=="smt_pair_throughput") { if (x<1) x=1; if (x>2) x=2 } printf "%g", x } }')
      m=$(metric "${CASES[$i]}" --set "costs.$key=$nv")
      pct=$(awk -v a="${BASE[$i]}" -v b="$m" 'BEGIN{printf "%+.1f", (b-a)/a*100}')
      row+=" $pct |"
      worst=$(awk -v w="$worst" -v p="$pct" 'BEGIN{p=p<0?-p:p; print (p>w?p:w)}')
    done
  done
  printf '%s\t%s\n' "$worst" "$row" >> "$TMP/rows"
done
echo "Model sensitivity on $MACHINE ($PROFILE): % change of each benchmark's simulated metric (seed 1)"
echo "when one cost is halved (x0.5) or doubled (x2). Base values:"
for i in "${!CASES[@]}"; do echo "  \`${CASES[$i]}\`: ${BASE[$i]}"; done
echo
echo "$header"
echo "$sep"
sort -t$'\t' -k1,1 -g -r "$TMP/rows" | cut -f2
echo
[ ${#zero[@]} -eq 0 ] || echo "Costs that are 0 in the profile (not varied): ${zero[*]}"
