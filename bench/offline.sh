#!/usr/bin/env bash
# Offline throughput: events per second of `memtrace cachesim`, `memtrace convert` (csv, parquet) and `memtrace report` on a
# saved stream of about 10^7 events, recorded once from bench/programs/cachewalk.c (130 rounds) under
# `memtrace run --save-stream` and kept in bench/out/ for later runs (recording takes a few minutes).
# Usage: bench/offline.sh [STREAM]   (default: record or reuse bench/out/cachewalk.stream)
# Each job runs twice: through the ./memtrace launcher (a JVM tuned for start-up: C1 only) and as
# `java -jar target/memtrace.jar` (the full JIT). events/s = events in the stream / wall-clock seconds,
# JVM start included. The machine is shared: quote one run, and the CPU seconds next to the wall time.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/scripts/env.sh"
memtrace_prereqs --with-bench-tools
. "$root/bench/results.sh"
bench_results offline "$@"
out="$root/bench/out"
mkdir -p "$out"
"$root/memtrace" --version >/dev/null   # builds on first use, outside the timings
stream="${1:-$out/cachewalk.stream}"
if [ ! -f "$stream" ]; then
  gcc -O1 -g -no-pie -o "$out/cachewalk" "$root/bench/programs/cachewalk.c"
  echo "recording $stream (a few minutes)..." >&2
  (cd "$out" && "$root/memtrace" run --mode fault -q -o /dev/null --save-stream "$stream" -- ./cachewalk 130 >/dev/null)
fi
events=$("$root/memtrace" cachesim "$stream" --top 0 | sed -n 's/.*, \([0-9,]*\) events,.*/\1/p' | tr -d ,)
echo "stream: $stream, $events events, $(du -hL "$stream" | cut -f1)"

jit_full=("$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -jar "$root/target/memtrace.jar")
printf '%-26s %-9s %9s %9s %12s\n' job jvm wall_s cpu_s events_per_s
timed() {   # job-name jvm-name command...
  local name=$1 jvm=$2 t
  shift 2
  /usr/bin/time -o "$out/offline.time" -f '%e %U %S' "$@" >/dev/null 2>&1
  read -r wall user sys <"$out/offline.time"
  printf '%-26s %-9s %9.2f %9.2f %12.0f\n' "$name" "$jvm" "$wall" "$(echo "$user + $sys" | bc -l)" "$(echo "$events / $wall" | bc -l)"
}
for jvm in launcher full-jit; do
  if [ "$jvm" = launcher ]; then cmd=("$root/memtrace"); else cmd=("${jit_full[@]}"); fi
  timed "cachesim L1" "$jvm" "${cmd[@]}" cachesim "$stream"
  timed "cachesim L1+L2+L3" "$jvm" "${cmd[@]}" cachesim "$stream" --l2 1m:16:64 --l3 8m:16:64
  timed "convert --to din" "$jvm" "${cmd[@]}" convert "$stream" --to din -o "$out/offline.din"
  timed "convert --to csv" "$jvm" "${cmd[@]}" convert "$stream" --to csv -o "$out/offline.csv"
  timed "convert --to parquet" "$jvm" "${cmd[@]}" convert "$stream" --to parquet -o "$out/offline.parquet"
  timed "report" "$jvm" "${cmd[@]}" report "$stream" -o "$out/offline.html"
done
rm -f "$out/offline.din" "$out/offline.csv" "$out/offline.html" "$out/offline.time"
