#!/usr/bin/env bash
# Rewrite mode against the other ways in (docs/rewriting.md, "Measured"): for each program, built plainly
# (gcc -O2 -g -no-pie) and with `memtrace cc`, the CPU time (user + system, of the process and its
# children, fastest of $REPEAT runs, default 3) of
#   native           the plain build
#   rw-discard       the plain build rewritten (LD_PRELOAD of the runtime + its cached plan), trace discarded
#   rw-disk          the same, trace written to disk (MEMTRACE_OUT), no JVM
#   rw-run           `memtrace run --mode rewrite` whole: JVM start, plan from the cache, run, reading the trace
#   cc-disk          the `memtrace cc` build, trace to disk, no JVM
#   fault            `memtrace run` (fault mode) whole, cut off after $FAULT_LIMIT s (default 60; shown as ">")
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

# cpu COMMAND...: the fastest CPU seconds of $REPEAT runs of COMMAND (its children included)
cpu() {
  python3 - "$REPEAT" "$FAULT_LIMIT" "$@" <<'PY'
import resource, subprocess, sys
repeat, limit, cmd = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3:]
best = None
for _ in range(repeat):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=limit)
    except subprocess.TimeoutExpired:
        print(">%.0f" % limit); sys.exit()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    best = t if best is None else min(best, t)
print("%.3f" % best)
PY
}

progs=("$@")
[ ${#progs[@]} -gt 0 ] || progs=(heap gemm)
printf '%-8s %9s %11s %9s %9s %9s %9s   %s\n' program native rw-discard rw-disk rw-run cc-disk fault "rewritten/left"
for p in "${progs[@]}"; do
  gcc -O2 -g -no-pie -o "$out/$p" "$root/bench/programs/$p.c"
  "$mt" cc -O2 -g -no-pie -o "$out/$p.cc" "$root/bench/programs/$p.c"
  "$mt" run --mode rewrite -o /dev/null -- "$out/$p" >/dev/null 2>"$out/$p.rw.stderr"
  counts=$(sed -n 's/.*rewrite: \([0-9]*\) memory instructions.* rewritten, \([0-9]*\) left.*/\1\/\2/p' "$out/$p.rw.stderr")
  key=$({ printf '%s' "$version"; cat "$out/$p"; } | sha256sum | cut -d' ' -f1)
  plan="$cache/$key.plan"
  [ -f "$plan" ] || { echo "no plan for $p at $plan" >&2; exit 1; }
  n=$(cpu "$out/$p")
  d=$(cpu env LD_PRELOAD="$rt" MEMTRACE_REWRITE_PLAN="$plan" "$out/$p")
  w=$(cpu env LD_PRELOAD="$rt" MEMTRACE_REWRITE_PLAN="$plan" MEMTRACE_OUT="$out/$p.rw.mtr" "$out/$p")
  r=$(cpu "$mt" run --mode rewrite -q -o /dev/null -- "$out/$p")
  c=$(cpu env MEMTRACE_OUT="$out/$p.cc.mtr" "$out/$p.cc")
  f=$(REPEAT=1 cpu "$mt" run -q -o /dev/null -- "$out/$p")
  printf '%-8s %9s %11s %9s %9s %9s %9s   %s\n' "$p" "$n" "$d" "$w" "$r" "$c" "$f" "$counts"
done
echo "load: $(uptime | sed 's/.*load average/load average/')"
