#!/usr/bin/env bash
# Is a skeleton build ever slower than a full one (issue 10)? For each program of bench/programs, builds
# it with `memtrace cc -O2` and `memtrace cc --skeleton -O2`, then runs the two builds alternately RUNS
# times (default 11) with the trace written to disk (MEMTRACE_OUT, deleted after each run), and prints the
# CPU milliseconds of each build (perf stat's task-clock: user and system time of the program's threads, to
# the microsecond, where /usr/bin/time counts in 10 ms steps and heap.c runs for 5): median, lowest and
# highest, and the skeleton's median against the full build's; then the wall-clock milliseconds of the same
# runs the same way (the runtime's encoder threads make CPU time exceed the wall clock on two cores). CPU
# time first, and alternating runs, because the machine is shared: another engineer's build moves the wall
# clock of a 0.1 s run by 2x, the CPU time much less, and whatever load there is falls on both builds alike. The load average before and after is printed with the table.
# Usage: bench/skeleton-cpu.sh [program ...]   (default: qsort chase hash heap, the irregular ones)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/scripts/env.sh"
memtrace_prereqs --with-bench-tools
. "$root/bench/results.sh"
bench_results skeleton-cpu "$@"
out="$root/bench/out/skeleton-cpu"
mkdir -p "$out"
mt="$root/memtrace"
"$mt" --version >/dev/null   # builds on first use, outside the timings
runs=${RUNS:-11}
progs=("$@")
[ ${#progs[@]} -gt 0 ] || progs=(qsort chase hash heap)

# cpu FILE: the task-clock milliseconds in perf stat's CSV output FILE
cpu() { awk -F, '$3 == "task-clock" { printf "%.2f", $1 }' "$1"; }
# stats: median, min and max of the numbers on stdin, one a line
stats() { sort -g | awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
                                               printf "%.2f %.2f %.2f\n", m, v[1], v[NR] }'; }

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-8s %5s %-4s %9s %9s %9s %9s %9s %9s %8s\n' program runs time full_ms full_min full_max skel_ms skel_min skel_max skel/full
for p in "${progs[@]}"; do
    c="$root/bench/programs/$p.c"
    "$mt" cc -O2 -o "$out/$p.full" "$c" -lm 2>/dev/null
    "$mt" cc --skeleton -O2 -o "$out/$p.skel" "$c" -lm 2>/dev/null
    for b in full skel; do : >"$out/$p.$b.times"; : >"$out/$p.$b.walls"; done
    for ((i = 0; i < runs; i++)); do
        for b in full skel; do
            t0=$(date +%s%N)
            MEMTRACE_OUT="$out/$p.$b.mtr" perf stat -x, -e task-clock -o "$out/$p.$b.time" "$out/$p.$b" >/dev/null 2>&1 || true
            t1=$(date +%s%N)
            rm -f "$out/$p.$b.mtr"
            cpu "$out/$p.$b.time" >>"$out/$p.$b.times"; echo >>"$out/$p.$b.times"
            echo "scale=3; ($t1 - $t0) / 1000000" | bc >>"$out/$p.$b.walls"
        done
    done
    for kind in times walls; do
        label=cpu; [ "$kind" = times ] || label=wall
        read -r fm fl fh < <(stats <"$out/$p.full.$kind")
        read -r sm sl sh < <(stats <"$out/$p.skel.$kind")
        printf '%-8s %5d %-4s %9s %9s %9s %9s %9s %9s %8.3f\n' "$p" "$runs" "$label" "$fm" "$fl" "$fh" \
            "$sm" "$sl" "$sh" "$(echo "$sm / $fm" | bc -l)"
    done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
