#!/usr/bin/env bash
# `memtrace run --check` against Valgrind's memcheck (issue 23): CPU time (user + system of the whole run,
# memtrace's JVM included, as /usr/bin/time would count it) of a few small programs, native, under
# `valgrind --tool=memcheck --leak-check=full` and under `memtrace run --check` in each mode (`--mode fault`,
# `--mode rewrite`; the default is rewrite, docs/check.md), each REPEAT times (default 3), interleaved, the
# least kept. Programs: gzip -6 on a text of 20 000 lines (0.5 MB),
# sort -n on its first 500 lines, and the bench kernel heap (malloc/free pairs) at -O2 -g. Usage: bench/run-check.sh. Keep runs small:
# the machine is shared; the load is printed first.
# PROGRAMS="heap" picks programs; BASELINE_JAR=path/memtrace.jar also runs that build of memtrace's JVM (a
# jar `mvn package` made at another commit, run with the launcher's JVM flags; its agent and runtime are the
# ones inside it) in each round, next to this one, for a before/after of memtrace's own fixed cost.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/bench/results.sh"
bench_results run-check "$@"
out="$root/bench/out/run-check"
mkdir -p "$out"
mt="$root/memtrace"
REPEAT=${REPEAT:-3}
echo "load: $(uptime | sed 's/.*load average: //')"
gcc -O2 -o "$out/cputime" "$root/bench/tools/cputime.c"
gcc -O2 -g -o "$out/heap" "$root/bench/programs/heap.c"
awk 'BEGIN { for (i = 0; i < 20000; i++) printf "%d line of text %d\n", (i * 7919) % 20011, i % 97 }' >"$out/input.txt"
head -500 "$out/input.txt" >"$out/short.txt"
cpu() { "$out/cputime" "$@" 2>/dev/null | tail -1; }
# the launcher's JVM (memtrace, `jit` and `flags`) on another jar
baseline() {
  MEMTRACE_CHECK=noleaks "$out/cputime" "${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java" --enable-native-access=ALL-UNNAMED \
    -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -jar "$BASELINE_JAR" "$@" 2>/dev/null | tail -1
}
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a < b) ? a : b }'; }
declare -A cmd=(
  [gzip]="gzip -6 -c $out/input.txt"
  [sort]="sort -n $out/short.txt"
  [heap]="$out/heap"
)
echo
if [ -n "${BASELINE_JAR:-}" ]; then
  echo "baseline: $BASELINE_JAR ($(stat -c '%y' "$BASELINE_JAR" | cut -d. -f1)), REPEAT=$REPEAT, least of the rounds"
  echo
  echo "| program | native s | memcheck s | fault: baseline / this s | rewrite: baseline / this s | fault this/baseline | rewrite this/baseline | rewrite this / memcheck |"
  echo "|---|---|---|---|---|---|---|---|"
else
  echo "| program | native s | memcheck | run --check --mode fault | --mode rewrite | fault / memcheck | rewrite / memcheck |"
  echo "|---|---|---|---|---|---|---|"
fi
for p in ${PROGRAMS:-gzip sort heap}; do
  n= v= c= r= bc= br=
  for ((i = 0; i < REPEAT; i++)); do
    # shellcheck disable=SC2086
    n=$(min "$(cpu ${cmd[$p]} | tail -1)" "$n")
    # shellcheck disable=SC2086
    v=$(min "$("$out/cputime" valgrind -q --tool=memcheck --leak-check=full ${cmd[$p]} 2>/dev/null | tail -1)" "$v")
    # shellcheck disable=SC2086
    [ -z "${BASELINE_JAR:-}" ] || bc=$(min "$(baseline run --check --mode fault -- ${cmd[$p]})" "$bc")
    # shellcheck disable=SC2086
    c=$(min "$(MEMTRACE_CHECK=noleaks "$out/cputime" "$mt" run --check --mode fault -- ${cmd[$p]} 2>/dev/null | tail -1)" "$c")
    # shellcheck disable=SC2086
    [ -z "${BASELINE_JAR:-}" ] || br=$(min "$(baseline run --check --mode rewrite -- ${cmd[$p]})" "$br")
    # shellcheck disable=SC2086
    r=$(min "$(MEMTRACE_CHECK=noleaks "$out/cputime" "$mt" run --check --mode rewrite -- ${cmd[$p]} 2>/dev/null | tail -1)" "$r")
  done
  if [ -n "${BASELINE_JAR:-}" ]; then
    awk -v p="$p" -v n="$n" -v v="$v" -v c="$c" -v r="$r" -v bc="$bc" -v br="$br" \
      'BEGIN { printf "| %s | %.3f | %.2f | %.2f / %.2f | %.2f / %.2f | %.2f | %.2f | %.2f |\n", p, n, v, bc, c, br, r, c / bc, r / br, r / v }'
  else
    awk -v p="$p" -v n="$n" -v v="$v" -v c="$c" -v r="$r" \
      'BEGIN { printf "| %s | %.3f | %.1fx (%.2f s) | %.1fx (%.2f s) | %.1fx (%.2f s) | %.2f | %.2f |\n", p, n, v / n, v, c / n, c, r / n, r, c / v, r / v }'
  fi
done
