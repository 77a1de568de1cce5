#!/usr/bin/env bash
# The include rule inside src/kernel (issue 26; docs/architecture.md, "Inside src/kernel"):
# kernel.hpp, which ties every subsystem's state together, is included by kernel.cpp only (the
# engine's boot and run loop) and by the layers above src/kernel. Every other file there (the
# policy files, the engine's cpu.cpp and check.cpp, the changes under changes/) includes
# kernel/base.hpp (the Kernel object, its shared services) and the state headers it uses
# (sched.hpp, cpu.hpp, cpuidle.hpp, tick.hpp, softirq.hpp, smp.hpp, guest.hpp, deferred.hpp,
# change.hpp). And no header in src/kernel includes kernel.hpp, nor a change kept outside the tree
# (examples/changes/, built in as SCHEDLAB_CHANGES_DIR builds it). A change also acts only
# through its hooks and the kernel's API: none sets a CPU's mode itself (Cpu::set_mode(); a
# busy-wait is Cpu::spin_wait()). Lists each offending
# FILE:LINE and exits 1 if there is one, 0 otherwise; exit 2 on an argument (it takes none).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -gt 0 ]; then echo "include-rule: unknown argument '$1' (it takes none)" >&2; exit 2; fi
cd "$ROOT"
bad=$(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](kernel/)?kernel\.hpp[>"]' src/kernel examples/changes |
  grep -v '^src/kernel/kernel\.cpp:' || true)
# Prints each offending line of $1 (grep output) and echoes how many there are.
count_lines() {
  local n=0 line
  while IFS= read -r line; do
    [ -n "$line" ] || continue
    echo "$line" >&2
    n=$((n + 1))
  done <<< "$1"
  echo "$n"
}
total=$(count_lines "$bad")
echo "include-rule: $total files in src/kernel include kernel.hpp besides kernel.cpp (policy files include base.hpp and the state headers they use)" >&2
modes=$(grep -rnE '\bset_mode[[:space:]]*\(' src/kernel/changes examples/changes || true)
nmodes=$(count_lines "$modes")
echo "include-rule: $nmodes calls of Cpu::set_mode() in changes (a change acts through hooks and the kernel API)" >&2
[ "$total" = 0 ] && [ "$nmodes" = 0 ]
