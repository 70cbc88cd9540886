#!/bin/sh
# Access stacks of `memtrace cc` builds (docs/stacks.md, "Access stacks"): the same binaries, built once with
# `memtrace cc -O2 -g` by this tree, run with this tree's runtime unarmed and armed (MEMTRACE_ACCESS_STACKS=1:
# each probe's first 4 executions trap and send their stack), both at the default depth 12. CPU (user + sys)
# of (a) the program alone writing a .mtr, K runs in a row, and (b) a whole `memtrace run -q -o PROG.trace
# -- ./PROG` against `memtrace run --access-stacks …`; one of each, interleaved, ROUNDS rounds. Programs:
# bench/programs/heap.c, bench/programs/qsort.c with N (1 << 12), and src/test/resources/c/skel_sites.c
# (a thousand functions: 4,000 armed executions, the most traps per run of the three). Prints the table rows
# bench/results/access-stacks.md quotes, the load average before each pair. (Until 2026-12-07 it compared
# BASE's runtime, which armed by default, with main's, which did not; arming is now asked for.)
# Usage: bench/access-stacks-cc.sh [ROUNDS] [K]   (from the repository's root)
set -eu
root=$(pwd)
rounds=${1:-3}
k=${2:-20}
work=$(mktemp -d /tmp/access-stacks-cc.XXXXXX)
"$root/memtrace" cc -O2 -g -o "$work/heap" bench/programs/heap.c
sed 's/^#define N (1 << 20)/#define N (1 << 12)/' bench/programs/qsort.c > "$work/qsort12.c"
"$root/memtrace" cc -O2 -g -o "$work/qsort12" "$work/qsort12.c"
"$root/memtrace" cc -O2 -g -o "$work/sites" src/test/resources/c/skel_sites.c
cd "$work"
sum() { tail -1 | awk '{printf "%.2f", $1 + $2}'; }
alone() { MEMTRACE_ACCESS_STACKS=$1 /usr/bin/time -f '%U %S' sh -c "i=0; while [ \$i -lt $k ]; do MEMTRACE_OUT=$2.mtr ./$2 >/dev/null; i=\$((i + 1)); done" 2>&1 | sum; }
whole() {
    if [ "$1" = 1 ]; then set -- --access-stacks "$2"; else set -- --stack-depth=12 "$2"; fi
    /usr/bin/time -f '%U %S' "$root/memtrace" run -q "$1" -o "$2.trace" -- "./$2" 2>&1 >/dev/null | sum
}
for p in heap qsort12 sites; do whole 1 "$p" >/dev/null; done # JIT files warm
echo "| round | program | run | unarmed (s CPU) | armed (s CPU) | ratio | load |"
echo "|---|---|---|---|---|---|---|"
r=1
while [ "$r" -le "$rounds" ]; do
    for p in heap qsort12 sites; do
        for how in alone whole; do
            load=$(cut -d' ' -f1 /proc/loadavg)
            a=$($how 0 "$p")
            b=$($how 1 "$p")
            label=$how
            [ "$how" = alone ] && label="alone x$k"
            echo "| $r | $p | $label | $a | $b | $(echo "$b $a" | awk '{printf "%.2f", $1 / $2}') | $load |"
        done
    done
    r=$((r + 1))
done
rm -rf "$work"
