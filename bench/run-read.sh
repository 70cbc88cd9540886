#!/usr/bin/env bash
# The JVM side of `memtrace run --mode rewrite` (issues 22 and 27): for each command, the CPU time (user +
# system, of the process and its children, fastest of $REPEAT runs, default 2) of
#   rw-disk   the program rewritten (the runtime preloaded with the cached plans), trace to disk, no JVM
#   before    `memtrace run --mode rewrite -q -o FILE` whole with the jar $BEFORE_JAR (when given)
#   after     the same with this checkout's jar (target/memtrace.jar)
# both jars run as the launcher runs `run` (java --enable-native-access=ALL-UNNAMED -XX:+UseSerialGC
# -XX:TieredStopAtLevel=1 -jar JAR), the trace written to a file as a user's is; then the events of the trace,
# each run's ratio to rw-disk and the JVM side's ns per event ((run - rw-disk) / events). With BEFORE_JAR, both
# jars also print the last rw-disk recording, and the script says whether the two texts are the same bytes.
# Commands: system python3 -c 'sum(range(10**5))', gzip -9c of $SMALL_KB KB of text (default 100), and the
# long ones of issue 22: json (python3 on rewrite-side.sh's JSON script, 60 M events) and sed (rewrite-sweep.sh's
# sed -E on 300 KB, 110 M events; each writes several GB of text: the output directory needs the room).
# Usage: BEFORE_JAR=old.jar bench/run-read.sh [python3|gzip|json|sed ...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/scripts/env.sh"
memtrace_prereqs
. "$root/bench/results.sh"
bench_results run-read "$@"
out="$root/bench/out/run-read"
mkdir -p "$out"
REPEAT=${REPEAT:-2}
export MEMTRACE_CDS=off
"$root/memtrace" --version >/dev/null   # builds on first use, outside the timings
make -s -C "$root/agent" OUT="$out/lib" "$out/lib/libmemtrace-rt.so"
rt="$out/lib/libmemtrace-rt.so"
version=$(sed -n 's/.*PLANNER_VERSION = "\(.*\)";/\1/p' "$root/src/main/java/org/memtrace/rewrite/ModuleRewrite.java")
cache="${XDG_CACHE_HOME:-$HOME/.cache}/memtrace/rewrite"
. "$root/bench/rewrite-lib.sh"   # cpu, plans
java=("$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -jar)


# plans PROGRAM: the cached plans of PROGRAM and of the libraries its loader lists, ':' between them
key() { { printf '%s' "$version"; cat "$1"; } | sha256sum | cut -d' ' -f1; }

head -c $((${SMALL_KB:-100} * 1024)) "$root/README.md" "$root"/docs/*.md > "$out/small.txt"
printf '%-8s %12s %9s %9s %9s %9s %9s %11s %11s\n' command events rw-disk before after before/rw after/rw before-ns/ev after-ns/ev
cmds=("$@")
[ ${#cmds[@]} -gt 0 ] || cmds=(python3 gzip)
for cmd in "${cmds[@]}"; do
  case $cmd in
    python3) bin=/usr/bin/python3; args=(-c "sum(range(10**5))") ;;
    gzip) bin=$(command -v gzip); args=(-9c "$out/small.txt") ;;
    json) bin=/usr/bin/python3; args=(-c 'import json, re
d = {str(i): [i, i * i, str(i)] for i in range(5000)}
s = json.dumps(d)
print(len(s), len(re.findall(r"\d+", s)), sum(v[0] for v in json.loads(s).values()))') ;;
    sed) bin=$(command -v sed)
      seq 1 20000 | awk '{ printf "%d line %x %s\n", ($1 * 7919) % 1000, $1, ($1 % 3 ? "alpha" : "beta") }' >"$out/sed.all"
      head -c 300000 "$out/sed.all" >"$out/sed.txt"
      args=(-E 's/([0-9]+) line/<\1>/; /alpha/d' "$out/sed.txt") ;;
    *) echo "unknown command $cmd (python3, gzip, json, sed)" >&2; exit 2 ;;
  esac
  rm -f "$out/$cmd.out"
  # once to plan (into the cache) and count the trace's events
  "${java[@]}" "$root/target/memtrace.jar" run --mode rewrite -o "$out/$cmd.out" -- "$bin" "${args[@]}" >/dev/null 2>"$out/$cmd.stderr"
  events=$(sed -n 's/.*trace written to .* (\([0-9]*\) events.*/\1/p' "$out/$cmd.stderr")
  all=$(plans "$bin")
  w=$(cpu env LD_PRELOAD="$rt" MEMTRACE_REWRITE_PLAN="$all" MEMTRACE_OUT="$out/$cmd.rw.mtr" "$bin" "${args[@]}")
  b=-
  if [ -n "${BEFORE_JAR:-}" ]; then
    b=$(cpu sh -c 'rm -f "$1"; shift; exec "$@"' - "$out/$cmd.before.out" "${java[@]}" "$BEFORE_JAR" run --mode rewrite -q -o "$out/$cmd.before.out" -- "$bin" "${args[@]}")
  fi
  a=$(cpu sh -c 'rm -f "$1"; shift; exec "$@"' - "$out/$cmd.out" "${java[@]}" "$root/target/memtrace.jar" run --mode rewrite -q -o "$out/$cmd.out" -- "$bin" "${args[@]}")
  python3 - "$cmd" "$events" "$w" "$b" "$a" <<'PY'
import sys
cmd, events, w, b, a = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4], float(sys.argv[5])
def ratio(x): return "-" if x == "-" else "%.1f" % (float(x) / w)
def ns(x): return "-" if x == "-" else "%.0f" % ((float(x) - w) / events * 1e9)
print("%-8s %12d %9.3f %9s %9.3f %9s %9s %11s %11s" % (cmd, events, w, b, a, ratio(b), ratio(a), ns(b), ns(a)))
PY
  # two runs' traces differ (addresses, pids): the two jars print the same recording instead, which must be the same bytes
  if [ -n "${BEFORE_JAR:-}" ]; then
    rm -f "$out/$cmd.before.txt" "$out/$cmd.after.txt"
    "${java[@]}" "$BEFORE_JAR" print -q "$out/$cmd.rw.mtr" -o "$out/$cmd.before.txt" 2>/dev/null || true
    "${java[@]}" "$root/target/memtrace.jar" print -q "$out/$cmd.rw.mtr" -o "$out/$cmd.after.txt" 2>/dev/null || true
    if cmp -s "$out/$cmd.before.txt" "$out/$cmd.after.txt"; then echo "$cmd: both jars print the recording byte for byte alike"
    else echo "$cmd: the jars print the recording differently"; fi
    rm -f "$out/$cmd.before.txt" "$out/$cmd.after.txt" "$out/$cmd.before.out"
  fi
done
echo "load: $(uptime | sed 's/.*load average/load average/')"
