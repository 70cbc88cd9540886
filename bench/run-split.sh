#!/usr/bin/env bash
# Where a whole `memtrace run` (rewrite mode, the default) spends its CPU (issue 22): for each small workload,
# interleaved round by round, the CPU time (user + system) of
#   native     the program alone
#   rw         the program rewritten (the runtime preloaded with the cached plans), its .mtr to disk, no JVM
#   null       `memtrace run -q -o /dev/null` (no text trace is made: the summary alone)
#   text       `memtrace run -q -o FILE`, the default text trace (memtrace.out's format) to a file
#   mtr        `memtrace run -q -o /dev/null --save-stream FILE.mtr` (-o always writes text, whatever its name)
#   rec        `memtrace run -q --record-only FILE.mtr`: the recording kept, nothing decoded (print reads it later)
# each memtrace run as the whole process tree and as the JVM alone (its own CPU, read from /proc while it is
# a zombie: the program is its child), for every jar in $JARS (default this checkout's target/memtrace.jar),
# as the launcher runs `run` (java --enable-native-access=ALL-UNNAMED -XX:+UseSerialGC -XX:TieredStopAtLevel=1
# -jar JAR); an entry JAR,FLAG,... runs that jar with the FLAGs instead of -XX:TieredStopAtLevel=1 (JIT choices
# for the reading stage). With LACKEY=1 also `valgrind --tool=lackey --trace-mem=yes --log-file=FILE` once per workload.
# Figures are the fastest of $REPEAT rounds (default 2), by CPU (its wall seconds beside); ratios are to native and to rw. $MODES picks the
# memtrace runs (default "null text mtr rec").
# Workloads: python3 (json.dumps of range(20000), 29 M events), pyre (json.dumps and loads of 5,000 dicts and a
# regex over the text), gzip (-6 of 1 MB of text), gzip9 (-9 of it), sort (its lines), sqlite3 (a 2000-row
# table: insert, index, group by).
# Usage: JARS="old.jar new.jar" LACKEY=1 MODES="null rec" bench/run-split.sh [python3|gzip|sqlite3 ...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/scripts/env.sh"
memtrace_prereqs
. "$root/bench/results.sh"
bench_results run-split "$@"
out="$root/bench/out/run-split"
mkdir -p "$out"
REPEAT=${REPEAT:-2}
read -r -a modes <<<"${MODES:-null text mtr rec}"
export MEMTRACE_CDS=off
# builds on first use, outside the timings (not needed when the jars are given)
[ -n "${JARS:-}" ] || "$root/memtrace" --version >/dev/null
make -s -C "$root/agent" OUT="$out/lib" "$out/lib/libmemtrace-rt.so"
rt="$out/lib/libmemtrace-rt.so"
version=$(sed -n 's/.*PLANNER_VERSION = "\(.*\)";/\1/p' "$root/src/main/java/org/memtrace/rewrite/ModuleRewrite.java")
cache="${XDG_CACHE_HOME:-$HOME/.cache}/memtrace/rewrite"
. "$root/bench/rewrite-lib.sh"   # plans
key() { { printf '%s' "$version"; cat "$1"; } | sha256sum | cut -d' ' -f1; }
read -r -a jars <<<"${JARS:-$root/target/memtrace.jar}"
# variant J: the java command line up to the program's arguments, "jar[,flags]" as given
variant() {
  local entry=${jars[$1]} flags=(-XX:TieredStopAtLevel=1)
  if [[ $entry == *,* ]]; then IFS=, read -r -a flags <<<"${entry#*,}"; fi
  java=("$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -XX:+UseSerialGC "${flags[@]}" -jar "${entry%%,*}")
}

# split CMD...: "TOTAL SELF WALL", the CPU seconds of CMD's whole process tree and of CMD's own process, and
# its wall seconds (the JVM's text trace is made on two threads: on two cores its CPU and its wall part)
split() {
  python3 - "$@" <<'PY'
import os, subprocess, sys, time
tick = os.sysconf('SC_CLK_TCK')
start = time.monotonic()
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT)   # a zombie still has its times in /proc
wall = time.monotonic() - start
f = open('/proc/%d/stat' % p.pid).read().rsplit(')', 1)[1].split()
ut, st, cut, cst = (int(x) / tick for x in f[11:15])
p.wait()
print("%.2f %.2f %.2f" % (ut + st + cut + cst, ut + st, wall))
PY
}

python3 - "$out/in.txt" "$out/q.sql" <<'PY'
import random, sys
random.seed(1)
words = ['alpha', 'beta', 'gamma', 'delta', 'memory', 'trace', 'line', 'value']
with open(sys.argv[1], 'w') as f:
    n = 0
    while n < 1_000_000:
        s = ' '.join(random.choice(words) + str(random.randint(0, 999)) for _ in range(12)) + '\n'
        f.write(s)
        n += len(s)
open(sys.argv[2], 'w').write("""create table t(a integer primary key, b text, c integer);
with recursive r(i) as (select 1 union all select i+1 from r where i<2000) insert into t select i, 'name'||i, i*7%1000 from r;
create index tc on t(c);
select c, count(*), max(b) from t group by c order by 2 desc limit 5;
select sum(a) from t where c between 100 and 200;
""")
PY

best() { python3 -c 'import sys; v=[l.split() for l in sys.stdin if l.strip()]; b=min(v, key=lambda x: float(x[0])); print(*b)'; }
cmds=("$@")
[ ${#cmds[@]} -gt 0 ] || cmds=(python3 gzip sqlite3)
printf '%-8s %-6s %8s %8s %8s %8s %8s %8s %s\n' program what total jvm wall x-native x-rw events jar
for cmd in "${cmds[@]}"; do
  case $cmd in
    python3) argv=(/usr/bin/python3 -c 'import json; json.dumps(list(range(20000)))') ;;
    pyre) argv=(/usr/bin/python3 -c 'import json, re; s = json.dumps([{"k": i, "v": str(i) * 3} for i in range(5000)]); print(len(re.findall(r"[0-9]+", s)), len(json.loads(s)))') ;;
    gzip) argv=("$(command -v gzip)" -6 -c "$out/in.txt") ;;
    gzip9) argv=("$(command -v gzip)" -9 -c "$out/in.txt") ;;
    sort) argv=("$(command -v sort)" "$out/in.txt") ;;
    sqlite3) argv=("$(command -v sqlite3)" :memory: ".read $out/q.sql") ;;
    *) echo "unknown program $cmd (python3, pyre, gzip, gzip9, sort, sqlite3)" >&2; exit 2 ;;
  esac
  bin=${argv[0]}
  # once to plan (into the cache) and count the trace's events
  rm -f "$out/$cmd.out"
  variant 0
  "${java[@]}" run -o "$out/$cmd.out" -- "${argv[@]}" >/dev/null 2>"$out/$cmd.stderr"
  events=$(sed -n 's/.*trace written to .* (\([0-9]*\) events.*/\1/p' "$out/$cmd.stderr")
  bytes=$(stat -c %s "$out/$cmd.out")
  all=$(plans "$bin")
  : >"$out/$cmd.times"
  for _ in $(seq "$REPEAT"); do
    echo "native - $(split "${argv[@]}")" >>"$out/$cmd.times"
    echo "rw - $(split env LD_PRELOAD="$rt" MEMTRACE_REWRITE_PLAN="$all" MEMTRACE_OUT="$out/$cmd.rw.mtr" "${argv[@]}")" >>"$out/$cmd.times"
    for j in "${!jars[@]}"; do
      variant "$j"
      for m in "${modes[@]}"; do
        rm -f "$out/$cmd.out" "$out/$cmd.mtr"
        case $m in
          null) opts=(-o /dev/null) ;;
          text) opts=(-o "$out/$cmd.out") ;;
          mtr) opts=(-o /dev/null --save-stream "$out/$cmd.mtr") ;;
          rec) opts=(--record-only "$out/$cmd.mtr") ;;
          *) echo "unknown mode $m (null, text, mtr, rec)" >&2; exit 2 ;;
        esac
        echo "$m $j $(split "${java[@]}" run -q "${opts[@]}" -- "${argv[@]}")" >>"$out/$cmd.times"
      done
    done
  done
  if [ "${LACKEY:-0}" = 1 ]; then
    echo "lackey - $(split valgrind --tool=lackey --trace-mem=yes --log-file="$out/$cmd.lackey" "${argv[@]}")" >>"$out/$cmd.times"
    rm -f "$out/$cmd.lackey"
  fi
  python3 - "$cmd" "$events" "$bytes" "$out/$cmd.times" "${jars[@]}" <<'PY'
import sys
cmd, events, nbytes, times, jars = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5:]
best = {}
for line in open(times):
    what, jar, total, own, wall = line.split()
    k = (what, jar)
    if k not in best or float(total) < best[k][0]: best[k] = (float(total), float(own), float(wall))
native, rw = best[('native', '-')][0], best[('rw', '-')][0]
for (what, jar), (total, own, wall) in best.items():
    name = '-' if jar == '-' else jars[int(jar)].rsplit('/', 1)[-1].replace('-XX:', '')
    jvm = '-' if jar == '-' else '%.2f' % own
    print('%-8s %-6s %8.2f %8s %8.2f %8.1f %8.1f %8d %s' % (cmd, what, total, jvm, wall, total / max(native, 0.01), total / max(rw, 0.01), events, name))
print('%s: %d events, text trace %d bytes' % (cmd, events, nbytes))
PY
  rm -f "$out/$cmd.out" "$out/$cmd.mtr" "$out/$cmd.rw.mtr"
done
echo "load: $(uptime | sed 's/.*load average/load average/')"
