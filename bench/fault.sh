#!/usr/bin/env bash
# Fault mode's cost per access next to the bare fault round trip, in one run (issue 8, item 2).
# Usage: bench/fault.sh [program ...]   (default: compute heap matmul; see bench/programs/)
# For each program: wall time natively, under `memtrace run` and under Lackey; the accesses memtrace
# recorded; us_per_access = (memtrace - native - fixed start-up cost) / accesses; bare_us = the bare fault
# round trip of bench/fault/bare_fault.c (fault + 2 mprotect + sigreturn) measured right after; x_bare their
# ratio (target <= 1.3); then `strace -f -c` of a second memtrace run: system calls per recorded access
# (the program and memtrace's JVM together: futex is the consumer's).
# MEMTRACE="java -jar other.jar" compares another build (the launcher is the default).
# The machine is shared: quote ratios from one run.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/scripts/env.sh"
memtrace_prereqs --with-test-tools
command -v strace >/dev/null || { echo "bench/fault.sh: needs strace (apt-get install strace)" >&2; exit 2; }
out="$root/bench/out"
mkdir -p "$out"
mt=(${MEMTRACE:-"$root/memtrace"})
"${mt[@]}" --version >/dev/null   # builds on first use, outside the timings

now() { date +%s.%N; }
elapsed() { local s; s=$(now); "$@" >/dev/null 2>&1 || true; echo "$(now) - $s" | bc -l; }

gcc -O2 -o "$out/bare_fault" "$root/bench/fault/bare_fault.c"
gcc -O2 -o "$out/empty" "$root/bench/programs/empty.c"
fixed=$(elapsed "${mt[@]}" run --quiet -o "$out/empty.trace" -- "$out/empty")
echo "memtrace fixed cost (empty program): ${fixed} s"

progs=("$@")
[ ${#progs[@]} -gt 0 ] || progs=(compute heap matmul)
printf '%-9s %9s %10s %9s %9s %9s %8s %6s | per access: %8s %8s %8s %8s\n' program native_s memtrace_s lackey_s \
  accesses us_access bare_us x_bare mprotect sigmask sigret futex
for p in "${progs[@]}"; do
  bin="$out/$p"
  gcc -O2 -g -no-pie -o "$bin" "$root/bench/programs/$p.c"
  tn=$(elapsed "$bin")
  tm=$(elapsed "${mt[@]}" run --quiet -o "$out/$p.trace" -- "$bin")
  bare=$("$out/bare_fault" 100000 | awk '{print $4}')
  tl=$(elapsed valgrind --tool=lackey --trace-mem=yes --log-file="$out/$p.lackey" "$bin")
  acc=$(grep -c '^[LS]' "$out/$p.trace" || true)
  per=$(echo "if ($acc > 0) ($tm - $tn - $fixed) * 1000000 / $acc else 0" | bc -l)
  strace -f -c -o "$out/$p.strace" "${mt[@]}" run --quiet -o /dev/null -- "$bin" >/dev/null 2>&1 || true
  calls() { awk -v s="$1" '$NF == s { print $4 }' "$out/$p.strace" | head -1; }
  ratio() { local n; n=$(calls "$1"); echo "if ($acc > 0) ${n:-0} / $acc else 0" | bc -l; }
  printf '%-9s %9.3f %10.3f %9.3f %9d %9.2f %8.2f %6.2f | %20.2f %8.2f %8.2f %8.2f\n' "$p" "$tn" "$tm" "$tl" "$acc" \
    "$per" "$bare" "$(echo "$per / $bare" | bc -l)" "$(ratio mprotect)" "$(ratio rt_sigprocmask)" \
    "$(ratio rt_sigreturn)" "$(ratio futex)"
done
