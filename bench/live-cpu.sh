#!/usr/bin/env bash
# The JVM side of a live `memtrace run` (issue 8): CPU seconds of the thread that reads the ring and
# interprets the trace (bench/MainThreadCpu.java runs the command in one JVM; process CPU adds the JIT and
# GC threads), per access recorded. On a 2-core machine that CPU is taken from the traced program.
# us_cpu_access = (thread CPU - the same for bench/programs/empty.c, run first: start-up, symbols) / accesses.
# Usage: bench/live-cpu.sh [JAR] [program ...]   (default: target/memtrace.jar; heap matmul)
# JAR may be an older build copied aside, to compare builds alternately in one session; the JVM flags
# are the launcher's for `run` (C1 only, serial GC). The trace is written to bench/out/NAME.live.trace.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/scripts/env.sh"
memtrace_prereqs --with-bench-tools
. "$root/bench/results.sh"
bench_results live-cpu "$@"
out="$root/bench/out"
mkdir -p "$out"
jar="${1:-$root/target/memtrace.jar}"
shift || true
[ $# -gt 0 ] || set -- heap matmul
printf '%-8s %9s %11s %11s %8s %14s\n' program accesses thread_cpu_s process_s wall_s us_cpu_access
fixed=
for p in empty "$@"; do
  gcc -O2 -g -no-pie -o "$out/$p" "$root/bench/programs/$p.c"
  line=$("$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -cp "$jar" \
    "$root/bench/MainThreadCpu.java" run --mode fault -o "$out/$p.live.trace" -- "$out/$p" 2>"$out/$p.live.summary")
  acc=$(( $(awk 'index($0, "  loads ") == 1 { gsub(",", "", $NF); print $NF }' "$out/$p.live.summary" | head -1) \
        + $(awk 'index($0, "  stores ") == 1 { gsub(",", "", $NF); print $NF }' "$out/$p.live.summary" | head -1) ))
  cpu=$(sed -n 's/.*main thread \([0-9.]*\) s CPU.*/\1/p' <<<"$line")
  proc=$(sed -n 's/.*process \([0-9.]*\) s CPU.*/\1/p' <<<"$line")
  wall=$(sed -n 's/.*wall \([0-9.]*\) s.*/\1/p' <<<"$line")
  [ -n "$fixed" ] || fixed=$cpu
  printf '%-8s %9d %11.2f %11.2f %8.2f %14.2f\n' "$p" "$acc" "$cpu" "$proc" "$wall" "$(echo "($cpu - $fixed) * 1000000 / $acc" | bc -l)"
done
