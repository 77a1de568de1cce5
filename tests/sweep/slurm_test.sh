#!/usr/bin/env bash
# A real one-node Slurm (Debian's slurm-wlm: slurmctld + slurmd in the foreground, no systemd,
# no munge: auth/none and cred/none, which Slurm 22.05 still has) runs a sweep as
# `schedlab sweep slurm` writes it: an array job of 3 shards and the merge job after it
# (--dependency=afterok). The merge must be byte-identical to the unsharded run's.
#
#   bash tests/sweep/slurm_test.sh path/to/schedlab
#
# Exit 77 (ctest: skipped) only when slurmctld is not installed; scripts/setup.sh installs it.
set -euo pipefail
SCHEDLAB=$(realpath "$1")
LIMIT=${SLURM_TEST_LIMIT:-150}  # seconds for the whole test; the daemons stop by themselves then

for tool in slurmctld slurmd sbatch scontrol sinfo scancel; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIP: $tool not installed (scripts/setup.sh installs slurm-wlm for make test)"
    exit 77
  fi
done

start=$(date +%s)
tmp=$(mktemp -d /tmp/schedlab-slurm.XXXXXX)
pids=()
jobs_submitted=()
ok=0
cleanup() {
  set +e
  export SLURM_CONF="$tmp/slurm.conf"
  for j in "${jobs_submitted[@]}"; do scancel "$j" 2>/dev/null; done
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for _ in $(seq 50); do
    alive=0
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ $alive = 0 ] && break
    sleep 0.1
  done
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  if [ $ok = 0 ]; then
    echo "--- slurmctld.log (tail)"; tail -n 30 "$tmp/slurmctld.log" 2>/dev/null
    echo "--- slurmd.log (tail)"; tail -n 30 "$tmp/slurmd.log" 2>/dev/null
    for f in "$tmp"/sl/logs/*.log; do [ -f "$f" ] && { echo "--- $f"; tail -n 20 "$f"; }; done
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

# Two TCP ports nobody listens on or holds (from /proc/net/tcp{,6}).
used=""
for f in /proc/net/tcp /proc/net/tcp6; do
  [ -r "$f" ] || continue
  while read -r _ local _; do
    [[ $local == *:* ]] && used+=$'\n'"$((16#${local##*:}))"
  done < <(tail -n +2 "$f")
done
free_port() {
  while :; do
    local p=$((20000 + RANDOM % 40000))
    if ! grep -qx "$p" <<<"$used"; then used+=$'\n'"$p"; echo "$p"; return; fi
  done
}
ctld_port=$(free_port)
slurmd_port=$(free_port)
user=$(id -un)
mkdir -p "$tmp/state" "$tmp/spool"
cat >"$tmp/slurm.conf" <<EOF
ClusterName=schedlabtest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/none
CredType=cred/none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SchedulerParameters=sched_interval=2
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ReturnToService=2
MinJobAge=600
MailProg=/bin/true
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$tmp/slurm.conf"

# The daemons in the foreground (-D) under `timeout`, so that they end even if this script is
# killed before its trap runs.
timeout -s TERM "$LIMIT" slurmctld -D -i -f "$SLURM_CONF" >"$tmp/slurmctld.out" 2>&1 &
pids+=($!)
timeout -s TERM "$LIMIT" slurmd -D -N localhost -f "$SLURM_CONF" >"$tmp/slurmd.out" 2>&1 &
pids+=($!)

# The sweep: 2 machines x 3 workload instances x 2 feature sets x 3 seeds = 36 short cells.
cat >"$tmp/s.toml" <<'EOF'
[sweep]
name = "slurm-test"
machines = [{ name = "tiny-4", sets = ["noise.jitter_cov=0.02"] }, "emag-32"]
runs = 3

[features]
base = ""
idle_spin = "IDLE_SPIN"

[[workload]]
name = "pipe"
command = "perf bench sched pipe -l {loops}"
params = { loops = [200, 400] }

[[workload]]
name = "hackbench"
command = "hackbench -g 1 -l 20"
counters_cpu = "0-1"

[[compare]]
base = "base"
test = "idle_spin"
EOF
cd "$tmp"
# The reference: the whole sweep in one process, while the daemons start.
"$SCHEDLAB" sweep run s.toml --out ref --jobs 2 2>/dev/null
"$SCHEDLAB" sweep merge ref -o ref/merge.txt

for _ in $(seq 300); do
  state=$(sinfo -h -n localhost -o %T 2>/dev/null || true)
  [ "$state" = idle ] && break
  for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null || fail "a Slurm daemon exited: $(cat slurmctld.out slurmd.out)"; done
  sleep 0.1
done
[ "$state" = idle ] || fail "node localhost not idle after 30 s (state '$state')"

"$SCHEDLAB" sweep slurm s.toml --shards 3 --out sl --jobs 1 --time 5
out=$(bash sl/slurm/submit.sh)
echo "$out"
array=$(sed -n 's/.*array job \([0-9]*\) .*/\1/p' <<<"$out")
merge=$(sed -n 's/.*merge job \([0-9]*\)$/\1/p' <<<"$out")
[ -n "$array" ] && [ -n "$merge" ] || fail "submit.sh printed no job ids"
jobs_submitted=("$array" "$merge")

job_state() { scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | sort -u | tr '\n' ' '; }
while :; do
  st=$(job_state "$merge")
  case "$st" in
    "COMPLETED ") break ;;
    *FAILED* | *CANCELLED* | *TIMEOUT* | *NODE_FAIL* | *OUT_OF_MEMORY*) fail "merge job $merge: $st (array: $(job_state "$array"))" ;;
  esac
  [ $(($(date +%s) - start)) -lt $((LIMIT - 10)) ] || fail "merge job $merge not done in time: '$st' (array: $(job_state "$array"))"
  sleep 0.5
done
[ "$(job_state "$array")" = "COMPLETED " ] || fail "array job $array: $(job_state "$array")"
tasks=$(scontrol show job "$array" | grep -c 'JobState=COMPLETED')
[ "$tasks" = 3 ] || fail "array job $array: $tasks tasks completed, expected 3"

# Byte for byte: the merge's three outputs and every cell file.
for f in merge.txt merge.json merge.csv sweep.json; do
  cmp "ref/$f" "sl/$f" || fail "sl/$f differs from the unsharded run's"
done
n=0
for f in ref/*.cell.json; do
  cmp "$f" "sl/${f#ref/}" || fail "sl/${f#ref/} differs"
  n=$((n + 1))
done
[ "$n" = 36 ] || fail "$n cells, expected 36"
[ "$(ls sl/*.cell.json | wc -l)" = 36 ] || fail "sl holds other cells"
grep -q "^# schedlab sweep slurm-test: 36 cells, 6 tables" sl/merge.txt || fail "sl/merge.txt: no header"
for i in 0 1 2; do
  grep -q "sweep slurm-test: shard $i/3: 12 of 36 cells" "sl/logs/shard-$i.log" || fail "sl/logs/shard-$i.log"
done
ok=1
echo "PASS: 3 shards as a Slurm array + the merge job (afterok) == the unsharded run, byte for byte" \
  "($(($(date +%s) - start)) s)"
