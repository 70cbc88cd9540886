#!/bin/bash
# Usage: bench/rewrite-omega.sh   (REPEAT=5; results in docs/rewriting.md, "Measured")
# (the plans' cache keys as ModuleRewrite and Selective.key make them; W spelled as Java prints a double)
# events and CPU time of the system's python3 rewritten with --omega W (bench/rewrite.sh's method: the runtime
# preloaded with the cached plans, CPU time of the traced process, fastest of REPEAT)
set -uo pipefail
export MEMTRACE_CDS=off
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"; mt=$root/memtrace; out=$root/bench/out/rewrite-omega; mkdir -p $out
REPEAT=${REPEAT:-5}
make -s -C "$root/agent" OUT="$out/lib" "$out/lib/libmemtrace-rt.so"
rt="$out/lib/libmemtrace-rt.so"
version=$(sed -n 's/.*PLANNER_VERSION = "\(.*\)";/\1/p' "$root/src/main/java/org/memtrace/rewrite/ModuleRewrite.java")
select=$(sed -n 's/.*String VERSION = "\(.*\)";/\1/p' "$root/src/main/java/org/memtrace/rewrite/Selective.java")
cache="${XDG_CACHE_HOME:-$HOME/.cache}/memtrace/rewrite"
. "$root/bench/rewrite-lib.sh"   # cpu, plans
"$mt" --version >/dev/null   # builds on first use, outside the timings
key() { { printf '%s' "$version"; [ -n "$W" ] && printf '\0%s omega=%s chunk=4096 scores=1,2,4 no-stack\0' "$select" "$W"; cat "$1"; } | sha256sum | cut -d' ' -f1; }
bin=/usr/bin/python3; args=(-c "sum(range(10**5))")
echo "native $(cpu $bin "${args[@]}")"
for W in "" 1.0 0.5 0.25; do
  opt=(); [ -n "$W" ] && opt=(--omega $W)
  "$mt" run --mode rewrite "${opt[@]}" --save-stream $out/py$W.mtr -o /dev/null -- $bin "${args[@]}" >/dev/null 2>$out/py$W.stderr
  all=$(plans $bin)
  n=$(echo "$all" | tr ':' '\n' | while read p; do [ -f "$p" ] && echo x; done | wc -l)
  d=$(cpu env LD_PRELOAD="$rt" MEMTRACE_REWRITE_PLAN="$all" $bin "${args[@]}")
  w=$(cpu env LD_PRELOAD="$rt" MEMTRACE_REWRITE_PLAN="$all" MEMTRACE_OUT="$out/py$W.rw.mtr" $bin "${args[@]}")
  ev=$(sed -n 's/^ *probes *\([0-9,]*\)$/\1/p' $out/py$W.stderr)
  acc=$(grep -E "accuracy|static" $out/py$W.stderr | tr -s ' ' | tr '\n' ';')
  echo "omega=${W:-none} plans=$n probes=$ev cpu-discard=$d cpu-disk=$w $acc"
  grep "rewrite:" $out/py$W.stderr | grep -E "python3|libc" 
done
echo "load: $(uptime | sed 's/.*load average/load average/')"
