#!/usr/bin/env bash
# CPU time of the offline commands on a .mtr trace (issue 21: the readers' allocation-free path): a bench
# program built with `memtrace cc` (default gemm.c: 256x256 doubles, 25.4 M accesses), its trace read by
# print, report, cachesim and convert --to din, each run REPEAT times (default 3) in a fresh JVM with the
# launcher's flags (-XX:+UseSerialGC, C2). The table gives the fastest user+sys CPU seconds (/usr/bin/time),
# which the load of a shared machine disturbs least, with that run's wall seconds (the text trace's bytes are
# made on a thread of their own: print's CPU and wall part), and the young collections of that run (-Xlog:gc).
# Usage: bench/offline-mtr.sh [PROGRAM]   (a bench/programs/ name; default gemm)
# BEFORE_JAR=FILE also measures another build's jar on the same trace, its runs alternating with this
# build's (so that a change of load hits both alike), in two more columns.
# Prints the table and appends it to bench/results/offline-mtr.md (bench/results.sh).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/scripts/env.sh"
memtrace_prereqs
. "$root/bench/results.sh"
bench_results offline-mtr "$@"
prog=${1:-gemm}
out="$root/bench/out/offline-mtr"
mkdir -p "$out" "$root/bench/results"
"$root/memtrace" --version >/dev/null   # builds on first use
jar="$root/target/memtrace.jar"
cp "$jar" "$out/after.jar"   # a rebuild while this runs changes nothing measured
jars=(after)
if [ -n "${BEFORE_JAR:-}" ]; then cp "$BEFORE_JAR" "$out/before.jar"; jars=(before after); fi
"$root/memtrace" cc -O2 -g -no-pie -o "$out/$prog" "$root/bench/programs/$prog.c"
rm -f "$out/$prog.mtr"
MEMTRACE_OUT="$out/$prog.mtr" "$out/$prog" >/dev/null
accesses=$("$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -jar "$jar" print -o /dev/null "$out/$prog.mtr" 2>&1 |
  awk '/^ +probes / { print $NF }')
row() {   # name memtrace-arguments...: one table row, REPEAT alternating runs of each jar
  local name=$1 best=() walls=() gcs=() t w g i j cells=""
  shift
  for ((i = 0; i < ${REPEAT:-3}; i++)); do
    for j in "${!jars[@]}"; do
      /usr/bin/time -f '%U %S %e' -o "$out/time" "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -XX:+UseSerialGC \
        -Xlog:gc:file="$out/gc.log" -jar "$out/${jars[$j]}.jar" "$@" >/dev/null 2>"$out/stderr" || { cat "$out/stderr" >&2; exit 1; }
      t=$(awk '{ printf "%.2f", $1 + $2 }' "$out/time")
      w=$(awk '{ printf "%.2f", $3 }' "$out/time")
      g=$(grep -c 'Pause Young' "$out/gc.log" || true)
      if [ -z "${best[$j]:-}" ] || [ "$(echo "$t < ${best[$j]}" | bc)" = 1 ]; then best[$j]=$t; walls[$j]=$w; gcs[$j]=$g; fi
    done
  done
  for j in "${!jars[@]}"; do cells+=" ${best[$j]} (${walls[$j]}) | ${gcs[$j]} |"; done
  echo "| $name |$cells"
}
rows=$(
  row "print -o /dev/null" print -o /dev/null "$out/$prog.mtr"
  row "report" report -o "$out/report.html" "$out/$prog.mtr"
  row "cachesim" cachesim "$out/$prog.mtr"
  row "convert --to din" convert --to din -o "$out/trace.din" "$out/$prog.mtr"
)
rm -f "$out/report.html" "$out/trace.din"
echo "Trace: bench/programs/$prog.c built with \`memtrace cc -O2\`, $accesses probe records${BEFORE_JAR:+; before: $BEFORE_JAR}."
echo "CPU seconds (user+sys, /usr/bin/time), the fastest of ${REPEAT:-3} runs, each in a fresh JVM, and that run's wall"
echo "seconds in parentheses; GCs: the young collections of that run."
echo
if [ ${#jars[@]} = 2 ]; then
  echo "| command | before CPU s (wall) | before GCs | after CPU s (wall) | after GCs |"
  echo "|---|---:|---:|---:|---:|"
else
  echo "| command | CPU s (wall) | GCs |"
  echo "|---|---:|---:|"
fi
echo "$rows"
