#!/usr/bin/env bash
# Rewrite mode against the other ways in (docs/rewriting.md, "Measured"): for each program, built plainly
# (gcc -O2 -g -no-pie) and with `memtrace cc`, the CPU time (user + system, of the process and its
# children, fastest of $REPEAT runs, default 3) of
#   native           the plain build
#   rw-exe-disk      only the executable rewritten (its plan alone, as before libraries), trace to disk, no JVM
#   rw-discard       the plain build rewritten, libc and every library loaded at start included (LD_PRELOAD of
#                    the runtime + the cached plans), trace discarded
#   rw-disk          the same, trace written to disk (MEMTRACE_OUT), no JVM
#   rw-run           `memtrace run --mode rewrite` whole: JVM start, plan from the cache, run, reading the trace
#   cc-disk          the `memtrace cc` build, trace to disk, no JVM
#   fault            `memtrace run` (fault mode) whole, cut off after $FAULT_LIMIT s (default 60; shown as ">")
# Then the system's gzip and sort (libc-heavy, stripped, unmodified) on a small input ($SMALL_KB KB, default
# 100) and its python3 (non-PIE, trampolines above its code) running `sum(range(10**5))`, with the columns
# native, rw-discard, rw-disk, rw-run, fault and lackey (Valgrind's Lackey, --trace-mem=yes to /dev/null; cut
# off like fault mode). SYSTEM=0 leaves them out; SYSTEM_ONLY=1 runs only them; SYSTEM_PROGRAMS chooses
# among them (default "gzip sort python3").
# Usage: bench/rewrite.sh [program ...]   (default: heap gemm)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$root/bench/out/rewrite"
mkdir -p "$out"
mt="$root/memtrace"
FAULT_LIMIT=${FAULT_LIMIT:-60}
REPEAT=${REPEAT:-3}
export MEMTRACE_CDS=off
"$mt" --version >/dev/null   # builds on first use, outside the timings
make -s -C "$root/agent" OUT="$out/lib" "$out/lib/libmemtrace-rt.so" # this checkout's runtime, as the jar holds it
rt="$out/lib/libmemtrace-rt.so"
version=$(sed -n 's/.*PLANNER_VERSION = "\(.*\)";/\1/p' "$root/src/main/java/org/memtrace/rewrite/ModuleRewrite.java")
cache="${XDG_CACHE_HOME:-$HOME/.cache}/memtrace/rewrite"
. "$root/bench/rewrite-lib.sh"   # cpu, plans


# plans PROGRAM: the cached plans of PROGRAM and of the libraries its loader lists, ':' between them
key() { { printf '%s' "$version"; cat "$1"; } | sha256sum | cut -d' ' -f1; }

progs=("$@")
[ ${#progs[@]} -gt 0 ] || progs=(heap gemm)
[ "${SYSTEM_ONLY:-0}" = 1 ] && progs=()
[ ${#progs[@]} -eq 0 ] || printf '%-8s %9s %11s %11s %9s %9s %9s %9s   %s\n' program native rw-exe-disk rw-discard rw-disk rw-run cc-disk fault "rewritten/left"
for p in ${progs[@]+"${progs[@]}"}; do
  gcc -O2 -g -no-pie -o "$out/$p" "$root/bench/programs/$p.c"
  "$mt" cc -O2 -g -no-pie -o "$out/$p.cc" "$root/bench/programs/$p.c"
  "$mt" run --mode rewrite -o /dev/null -- "$out/$p" >/dev/null 2>"$out/$p.rw.stderr"
  counts=$(sed -n 's/.*rewrite: \([0-9]*\) memory instructions.* rewritten, \([0-9]*\) left.*/\1\/\2/p' "$out/$p.rw.stderr" | head -1)
  plan="$cache/$(key "$out/$p").plan"
  [ -f "$plan" ] || { echo "no plan for $p at $plan" >&2; exit 1; }
  all=$(plans "$out/$p")
  n=$(cpu "$out/$p")
  e=$(cpu env LD_PRELOAD="$rt" MEMTRACE_REWRITE_PLAN="$plan" MEMTRACE_OUT="$out/$p.rwe.mtr" "$out/$p")
  d=$(cpu env LD_PRELOAD="$rt" MEMTRACE_REWRITE_PLAN="$all" "$out/$p")
  w=$(cpu env LD_PRELOAD="$rt" MEMTRACE_REWRITE_PLAN="$all" MEMTRACE_OUT="$out/$p.rw.mtr" "$out/$p")
  r=$(cpu "$mt" run --mode rewrite -q -o /dev/null -- "$out/$p")
  c=$(cpu env MEMTRACE_OUT="$out/$p.cc.mtr" "$out/$p.cc")
  f=$(REPEAT=1 cpu "$mt" run --mode fault -q -o /dev/null -- "$out/$p")
  printf '%-8s %9s %11s %11s %9s %9s %9s %9s   %s\n' "$p" "$n" "$e" "$d" "$w" "$r" "$c" "$f" "$counts"
done
if [ "${SYSTEM:-1}" != 0 ]; then
  head -c $((${SMALL_KB:-100} * 1024)) "$root/README.md" "$root"/docs/*.md > "$out/small.txt"
  printf '\n%-8s %9s %10s %9s %9s %9s %9s   %s\n' program native rw-discard rw-disk rw-run fault lackey "rewritten/left (program; libc)"
  for cmd in ${SYSTEM_PROGRAMS:-gzip sort python3}; do
    bin=$(command -v $cmd)
    args=(-9c "$out/small.txt")
    [ $cmd = sort ] && args=("$out/small.txt")
    # the system's own python3, not a wrapper script (pyenv's shims) found first on PATH
    [ $cmd = python3 ] && { bin=/usr/bin/python3; args=(-c "sum(range(10**5))"); }
    "$mt" run --mode rewrite -o /dev/null -- "$bin" "${args[@]}" >/dev/null 2>"$out/$cmd.rw.stderr"
    counts=$(sed -n 's/.*rewrite: \([0-9]*\) memory instructions.* rewritten, \([0-9]*\) left.*/\1\/\2/p' "$out/$cmd.rw.stderr" | head -1)
    counts="$counts;$(sed -n 's/.*rewrite: \([0-9]*\) memory instructions of .*libc\.so.* rewritten, \([0-9]*\) left.*/\1\/\2/p' "$out/$cmd.rw.stderr")"
    all=$(plans "$bin")
    n=$(cpu "$bin" "${args[@]}")
    d=$(cpu env LD_PRELOAD="$rt" MEMTRACE_REWRITE_PLAN="$all" "$bin" "${args[@]}")
    w=$(cpu env LD_PRELOAD="$rt" MEMTRACE_REWRITE_PLAN="$all" MEMTRACE_OUT="$out/$cmd.rw.mtr" "$bin" "${args[@]}")
    r=$(cpu "$mt" run --mode rewrite -q -o /dev/null -- "$bin" "${args[@]}")
    f=$(REPEAT=1 cpu "$mt" run --mode fault -q -o /dev/null -- "$bin" "${args[@]}")
    l=$(REPEAT=1 cpu valgrind --tool=lackey --trace-mem=yes --log-file=/dev/null "$bin" "${args[@]}")
    printf '%-8s %9s %10s %9s %9s %9s %9s   %s\n' "$cmd" "$n" "$d" "$w" "$r" "$f" "$l" "$counts"
  done
fi
echo "load: $(uptime | sed 's/.*load average/load average/')"
