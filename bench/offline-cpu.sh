#!/usr/bin/env bash
# The offline jobs of bench/offline.sh (report, cachesim, convert din/csv/parquet on the ~10^7-event cachewalk
# stream), each run once inside one JVM by bench/MainThreadCpu.java, which prints the CPU seconds of the thread
# that interprets the trace and runs the analyses (a saved stream is read and decoded on a second thread, and
# the Parquet pages compressed on a third: process CPU counts them): on this shared machine the figure other
# jobs disturb least (wall and process CPU vary 2x with the load). events/s = events / main-thread CPU seconds.
# Usage: bench/offline-cpu.sh [STREAM]   (default: bench/out/cachewalk.stream, recorded by bench/offline.sh)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/scripts/env.sh"
memtrace_prereqs --with-bench-tools
. "$root/bench/results.sh"
bench_results offline-cpu "$@"
out="$root/bench/out"
stream="${1:-$out/cachewalk.stream}"
[ -f "$stream" ] || { echo "no stream $stream: run bench/offline.sh first" >&2; exit 2; }
"$root/memtrace" --version >/dev/null   # builds on first use
events=$("$root/memtrace" cachesim "$stream" --top 0 | sed -n 's/.*, \([0-9,]*\) events,.*/\1/p' | tr -d ,)
echo "stream: $stream, $events events"
run() {   # job-name memtrace-arguments...
  local name=$1 line cpu
  shift
  line=$("$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -cp "$root/target/memtrace.jar" \
    "$root/bench/MainThreadCpu.java" "$@" 2>/dev/null)
  cpu=$(sed -n 's/.*main thread \([0-9.]*\) s CPU.*/\1/p' <<<"$line")
  printf '%-22s %s; %.1f M events per main-thread CPU second\n' "$name" "$line" "$(echo "$events / $cpu / 1000000" | bc -l)"
}
run "report" report "$stream" -o "$out/offline.html"
run "cachesim L1" cachesim "$stream"
run "convert --to din" convert "$stream" --to din -o "$out/offline.din"
run "convert --to csv" convert "$stream" --to csv -o "$out/offline.csv"
run "convert --to parquet" convert "$stream" --to parquet -o "$out/offline.parquet"
rm -f "$out/offline.html" "$out/offline.din" "$out/offline.csv" "$out/offline.parquet"
