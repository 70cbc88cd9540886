#!/usr/bin/env bash
# The cold cost of `memtrace run --check` (issue 23): CPU time (user + system of the whole run, memtrace's JVM
# and the program) of a run whose plan cache is empty (XDG_CACHE_HOME a fresh directory each time), so it plans
# the executable and reads its DWARF; then a warm run on that cache. With BASELINE_JAR=path/memtrace.jar (a jar
# `mvn package` made at another commit) each round runs that build too, interleaved, and the plans both made are
# trampoline files both made are compared byte for byte (same names: the cache key is the module's content and the
# planner's version; not the .plan files, which differ in a few bytes between two cold runs of one jar).
# Programs: sqlite3 built -O0 -g and -O2 -g from the amalgamation in $SQLITE_DIR (sqlite3.c and shell.c; skipped
# without it), the bench kernel heap -O0 -g, and the system's python3 (no DWARF). REPEAT rounds (default 3),
# the least kept; PROGRAMS="sqlite3-O0 python3" picks some. Usage: [BASELINE_JAR=…] [SQLITE_DIR=…] bench/run-check-plan.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/bench/results.sh"
bench_results run-check "$@" # the heading names bench/run-check.sh: the record is the same file's
out="$root/bench/out/run-check-plan"
mkdir -p "$out"
REPEAT=${REPEAT:-3}
java="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java"
echo "load: $(uptime | sed 's/.*load average: //')"
gcc -O2 -o "$out/cputime" "$root/bench/tools/cputime.c"
gcc -O0 -g -o "$out/heap-O0" "$root/bench/programs/heap.c"
declare -A cmd=([heap-O0]="$out/heap-O0" [python3]="/usr/bin/python3 -c pass")
order="heap-O0 python3"
if [ -n "${SQLITE_DIR:-}" ] && [ -f "$SQLITE_DIR/sqlite3.c" ]; then
  for o in O0 O2; do
    [ -x "$out/sqlite3-$o" ] || gcc -$o -g -DSQLITE_THREADSAFE=0 -DSQLITE_OMIT_LOAD_EXTENSION -I"$SQLITE_DIR" \
      -o "$out/sqlite3-$o" "$SQLITE_DIR/sqlite3.c" "$SQLITE_DIR/shell.c" -lm
    cmd[sqlite3-$o]="$out/sqlite3-$o :memory: select\ 1;"
  done
  order="sqlite3-O0 sqlite3-O2 $order"
fi
order=${PROGRAMS:-$order}
this="$out/this.jar"
cp "$root/target/memtrace.jar" "$this" # built by the launcher from the tree
jars="this"
[ -z "${BASELINE_JAR:-}" ] || jars="baseline this"
jar_of() { [ "$1" = this ] && echo "$this" || echo "$BASELINE_JAR"; }
# one run of PROGRAM by JAR on cache DIR: its CPU seconds
cpu() { # jar cache program
  # shellcheck disable=SC2086 # the program's words
  XDG_CACHE_HOME="$2" MEMTRACE_CHECK=noleaks "$out/cputime" "$java" --enable-native-access=ALL-UNNAMED -XX:+UseSerialGC \
    -XX:TieredStopAtLevel=1 -jar "$(jar_of "$1")" run -q --check -- ${cmd[$3]} 2>/dev/null | tail -1
}
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a < b) ? a : b }'; }
declare -A cold warm
for ((r = 1; r <= REPEAT; r++)); do
  for p in $order; do
    for j in $jars; do
      c="$out/cache-$j-$p-$r"
      rm -rf "$c" && mkdir -p "$c"
      cold[$j/$p]=$(min "$(cpu "$j" "$c" "$p")" "${cold[$j/$p]:-}")
      warm[$j/$p]=$(min "$(cpu "$j" "$c" "$p")" "${warm[$j/$p]:-}")
    done
  done
done
echo
echo "REPEAT=$REPEAT, least of the rounds; CPU seconds of the whole run${BASELINE_JAR:+; baseline $BASELINE_JAR}"
echo
if [ -n "${BASELINE_JAR:-}" ]; then
  echo "| program | cold: baseline / this s | this / baseline | warm: baseline / this s | trampolines identical |"
  echo "|---|---|---|---|---|"
  for p in $order; do
    same=yes
    for f in "$out/cache-baseline-$p-1"/memtrace/rewrite/*.elf; do
      [ -e "$f" ] || { same="no plan"; break; }
      cmp -s "$f" "$out/cache-this-$p-1/memtrace/rewrite/${f##*/}" || same=NO
    done
    printf '| %s | %.2f / %.2f | %.2f | %.2f / %.2f | %s |\n' "$p" "${cold[baseline/$p]}" "${cold[this/$p]}" \
      "$(awk -v a="${cold[this/$p]}" -v b="${cold[baseline/$p]}" 'BEGIN { print a / b }')" "${warm[baseline/$p]}" "${warm[this/$p]}" "$same"
  done
else
  echo "| program | cold s | warm s |"
  echo "|---|---|---|"
  for p in $order; do printf '| %s | %.2f | %.2f |\n' "$p" "${cold[this/$p]}" "${warm[this/$p]}"; done
fi
rm -rf "$out"/cache-*
