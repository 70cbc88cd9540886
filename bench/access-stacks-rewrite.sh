#!/bin/sh
# Access stacks in rewrite mode (docs/stacks.md, "Access stacks"): the CPU (user + sys) of a whole
# `memtrace run -q -o PROG.trace -- ./PROG` at --stack-depth 1 (no trampoline armed: today's run) and at the
# default depth 12 (each trampoline's first 4 entries trap and send their stack), one run each, interleaved,
# ROUNDS rounds. Programs gcc -O2 -g: bench/programs/heap.c and qsort.c with N (1 << 12). Prints the table
# rows bench/results/access-stacks.md quotes, with the load average before each pair.
# Usage: bench/access-stacks-rewrite.sh [ROUNDS]   (from the repository's root; the plans cached first)
set -eu
root=$(pwd)
rounds=${1:-2}
work=$(mktemp -d /tmp/access-stacks-rw.XXXXXX)
gcc -O2 -g -o "$work/heap" bench/programs/heap.c
sed 's/^#define N (1 << 20)/#define N (1 << 12)/' bench/programs/qsort.c > "$work/qsort12.c"
gcc -O2 -g -o "$work/qsort12" "$work/qsort12.c"
cd "$work"
cpu() { /usr/bin/time -f '%U %S' "$root/memtrace" run -q --stack-depth "$1" -o "$2.trace" -- "./$2" 2>&1 >/dev/null | tail -1 | awk '{printf "%.2f", $1 + $2}'; }
for p in heap qsort12; do cpu 1 "$p" >/dev/null; done # plans made and cached, JIT files warm
echo "| round | program | depth 1 (s CPU) | depth 12 (s CPU) | ratio | load |"
echo "|---|---|---|---|---|---|"
r=1
while [ "$r" -le "$rounds" ]; do
    for p in heap qsort12; do
        load=$(cut -d' ' -f1 /proc/loadavg)
        a=$(cpu 1 "$p")
        b=$(cpu 12 "$p")
        echo "| $r | $p | $a | $b | $(echo "$b $a" | awk '{printf "%.2f", $1 / $2}') | $load |"
    done
    r=$((r + 1))
done
rm -rf "$work"
