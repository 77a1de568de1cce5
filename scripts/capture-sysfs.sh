#!/usr/bin/env bash
# Copies the sysfs/procfs files `schedlab host probe` reads into DEST, so a machine's layout can be
# kept as a test fixture (tests/host/fixtures/) or probed elsewhere: schedlab host probe --sysfs-root DEST
# Usage: scripts/capture-sysfs.sh DEST [SCHEDLAB]   (SCHEDLAB: the binary, for the CPUID leaves; default
# build/schedlab if present)
set -euo pipefail
dest=${1:?usage: $0 DEST [SCHEDLAB]}
schedlab=${2:-build/schedlab}
copy() {  # copy one readable file, keeping its path under DEST
  local f=$1
  [ -r "$f" ] || return 0
  mkdir -p "$dest$(dirname "$f")"
  cat "$f" > "$dest$f" 2>/dev/null || rm -f "$dest$f"
}
c=/sys/devices/system/cpu
for f in online offline possible present; do copy $c/$f; done
for f in current_driver current_governor current_governor_ro available_governors; do copy $c/cpuidle/$f; done
for d in $c/cpu[0-9]*; do
  copy $d/online
  for f in physical_package_id core_id die_id cluster_id thread_siblings_list core_cpus_list; do copy $d/topology/$f; done
  for i in $d/cache/index*; do
    [ -d "$i" ] || continue
    for f in level type size shared_cpu_list; do copy $i/$f; done
  done
  for s in $d/cpuidle/state*; do
    [ -d "$s" ] || continue
    for f in name desc latency residency disable; do copy $s/$f; done
  done
done
for n in /sys/devices/system/node/node[0-9]*; do
  [ -d "$n" ] && copy $n/cpulist
done
copy /proc/sys/kernel/arch
copy /proc/sys/kernel/osrelease
# The running kernel's scheduler settings (docs/host.md, "The running kernel"): base slice,
# features, preemption model, autogroup; the config (CONFIG_HZ, CONFIG_PREEMPT*) as boot/config-REL.
for f in base_slice_ns features preempt; do copy /sys/kernel/debug/sched/$f; done
if [ -r /sys/kernel/debug/sched/debug ]; then
  mkdir -p "$dest/sys/kernel/debug/sched"
  sed -n '1,/^cpu#/p' /sys/kernel/debug/sched/debug | sed '$d' > "$dest/sys/kernel/debug/sched/debug" || true
fi
copy /proc/self/sched
copy /proc/sys/kernel/sched_autogroup_enabled
copy /proc/cmdline
rel=$(cat /proc/sys/kernel/osrelease 2>/dev/null || uname -r)
if [ -r "/boot/config-$rel" ]; then copy "/boot/config-$rel"
elif [ -r /proc/config.gz ]; then mkdir -p "$dest/boot"; gzip -dc /proc/config.gz > "$dest/boot/config-$rel" || true
fi
# Virtual machines (docs/host.md, "Virtual machines"): the kernel's CPU flags, steal time, haltpoll.
copy /proc/cpuinfo
copy /proc/stat
for f in /sys/module/haltpoll/parameters/*; do [ -e "$f" ] && copy "$f"; done
if [ -x "$schedlab" ]; then
  mkdir -p "$dest"
  "$schedlab" host probe --dump-cpuid > "$dest/cpuid"
fi
echo "captured into $dest"
