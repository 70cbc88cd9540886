#!/usr/bin/env bash
# Cost of naming allocation and free sites by the user's call (agent/check/check_callers.c, issue 23): the same
# `memtrace cc --check -O2 -g` binaries run with the check runtime of BASE (default 38ee411d, the runtime before it, built from `git
# archive` into /tmp) and of the working tree's build, preloaded so that each replaces the one the rpath names
# (the loader matches the soname). Programs: bench/programs/heap.c enlarged as bench/check.sh runs it (400 k
# malloc and free from main: the cache probe only) and bench/callers/vectors.cc (200 k std::vector built and
# freed; at -O2 gcc inlines the vector's allocator into main, at -O0 (vectors-O0) it does not: a walk per
# allocation and free). REPEAT rounds (default 10), interleaved; the least and the median
# CPU time (user + sys, getrusage of the child) of each. Appends a table to bench/results/check-callers.md.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BASE=${BASE:-38ee411d}
REPEAT=${REPEAT:-10}
work=$(mktemp -d /tmp/check-callers.XXXXXX)
. "$root/bench/enlarge.sh"
git -C "$root" archive "$BASE" agent | tar -x -C "$work"
make -s -C "$work/agent" OUT="$work/base" "$work/base/libmemtrace-check.so" >/dev/null
make -s -C "$root/agent" OUT="$work/new" "$work/new/libmemtrace-check.so" >/dev/null
enlarge heap <"$root/bench/programs/heap.c" >"$work/heap.c"
"$root/memtrace" cc --check -O2 -g -o "$work/heap" "$work/heap.c"
"$root/memtrace" c++ --check -O2 -g -o "$work/vectors" "$root/bench/callers/vectors.cc"
"$root/memtrace" c++ --check -O0 -g -o "$work/vectors-O0" "$root/bench/callers/vectors.cc"
cpu() { # CPU seconds of one run of $2 with $1 preloaded
  python3 - "$1" "$2" <<'PY'
import os, resource, subprocess, sys
env = dict(os.environ, LD_PRELOAD=sys.argv[1])
subprocess.run([sys.argv[2]], env=env, stdout=subprocess.DEVNULL, check=True)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{r.ru_utime + r.ru_stime:.3f}")
PY
}
declare -A t
for ((i = 0; i < REPEAT; i++)); do
  for p in heap vectors vectors-O0; do
    for v in base new; do t[$p.$v]+="$(cpu "$work/$v/libmemtrace-check.so" "$work/$p") "; done
  done
done
stats() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {printf "%.3f | %.3f", a[1], a[int((NR+1)/2)]}'; }
{
  echo
  echo "## $(date -u +%F) check_callers.c: $(git -C "$root" rev-parse --short "$BASE") against $(git -C "$root" rev-parse --short HEAD), load $(uptime | sed 's/.*load average: //')"
  echo
  echo "| program | base least | base median | new least | new median |"
  echo "|---|---|---|---|---|"
  for p in heap vectors vectors-O0; do
    echo "| $p | $(echo "${t[$p.base]}" | stats) | $(echo "${t[$p.new]}" | stats) |"
  done
} | tee -a "$root/bench/results/check-callers.md"
rm -rf "$work"
