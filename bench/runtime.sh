#!/usr/bin/env bash
# The compiled-in runtime's costs: each kernel of bench/runtime/loops.c natively (no probes), with probes and
# the trace discarded (MEMTRACE_OUT unset), and written to disk: codec 4 (the default), codec 3 (the same
# packing without the site prediction) and codec 1 (plain zstd, to show what the packing buys). Best of
# three runs; prints ns per access, the slowdown against native and the file's bytes per access.
#
#     bench/runtime.sh [PASSES]        (default 1000 passes over 64 Ki longs per kernel)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
passes=${1:-1000}
work=$(mktemp -d)
. "$root/bench/results.sh"
bench_results runtime "$@"
trap 'rm -rf "$work"; bench_results_end' EXIT
make -s -C "$root/agent" >/dev/null
lib="$root/agent/build"
inc="$root/src/test/resources/c/runtime"
gcc -O2 -DNATIVE -I"$inc" -o "$work/native" "$root/bench/runtime/loops.c"
gcc -O2 -I"$inc" -o "$work/probed" "$root/bench/runtime/loops.c" -L"$lib" -Wl,-rpath,"$lib" -lmemtrace-rt

best() { # best kernel time of three runs: best PROGRAM KERNEL [ENV...]
  local prog=$1 kernel=$2; shift 2
  local t min=""
  for _ in 1 2 3; do
    t=$(env "$@" "$work/$prog" "$kernel" "$passes" | awk '{print $4}')
    if [ -z "$min" ] || awk -v a="$t" -v b="$min" 'BEGIN{exit !(a<b)}'; then min=$t; fi
  done
  echo "$min"
}

printf '%-7s %-16s %10s %9s %12s\n' kernel mode ns/access slowdown bytes/access
for kernel in sum copy random; do
  n=$("$work/native" "$kernel" "$passes" | awk '{print $2}')
  native=$(best native "$kernel")
  row() { # row MODE SECONDS [FILE]
    local bytes="-"
    [ -n "${3:-}" ] && bytes=$(awk -v s="$(stat -c %s "$3")" -v n="$n" 'BEGIN{printf "%.4f", s/n}')
    awk -v k="$kernel" -v m="$1" -v t="$2" -v nt="$native" -v n="$n" -v b="$bytes" \
      'BEGIN{printf "%-7s %-16s %10.2f %8.1fx %12s\n", k, m, t*1e9/n, t/nt, b}'
  }
  row native "$native"
  row discarded "$(best probed "$kernel" MEMTRACE_OUT=)"
  row "disk codec 4" "$(best probed "$kernel" MEMTRACE_OUT="$work/t4.mtr" MEMTRACE_CODEC=4)" "$work/t4.mtr"
  row "disk codec 3" "$(best probed "$kernel" MEMTRACE_OUT="$work/t3.mtr" MEMTRACE_CODEC=3)" "$work/t3.mtr"
  row "disk codec 1" "$(best probed "$kernel" MEMTRACE_OUT="$work/t1.mtr" MEMTRACE_CODEC=1)" "$work/t1.mtr"
done
