#!/bin/sh
# Access stacks of `memtrace cc` builds (docs/stacks.md, "Access stacks"): the same binaries, built once with
# `memtrace cc -O2 -g`, run with the runtime of BASE (no probe armed) and with this tree's (each probe's first
# 4 executions trap and send their stack), both at the default depth 12, chosen by LD_LIBRARY_PATH (it
# overrides the binaries' RUNPATH). CPU (user + sys) of (a) the program alone writing a .mtr, K runs in a
# row, and (b) a whole `memtrace run -q -o PROG.trace -- ./PROG`; one of each, interleaved, ROUNDS rounds.
# Programs: bench/programs/heap.c, and bench/programs/qsort.c with N (1 << 12). Prints the table rows
# bench/results/access-stacks.md quotes, the load average before each pair.
# Usage: bench/access-stacks-cc.sh [ROUNDS] [BASE] [K]   (from the repository's root; BASE defaults to main)
set -eu
root=$(pwd)
rounds=${1:-3}
base=${2:-main}
k=${3:-20}
work=$(mktemp -d /tmp/access-stacks-cc.XXXXXX)
git archive "$base" agent | tar -x -C "$work" && mv "$work/agent" "$work/base-src"
make -s -C "$work/base-src" OUT="$work/base" "$work/base/libmemtrace-rt.so"
make -s -C agent OUT="$work/this" "$work/this/libmemtrace-rt.so"
"$root/memtrace" cc -O2 -g -o "$work/heap" bench/programs/heap.c
sed 's/^#define N (1 << 20)/#define N (1 << 12)/' bench/programs/qsort.c > "$work/qsort12.c"
"$root/memtrace" cc -O2 -g -o "$work/qsort12" "$work/qsort12.c"
cd "$work"
sum() { tail -1 | awk '{printf "%.2f", $1 + $2}'; }
alone() { LD_LIBRARY_PATH="$work/$1" /usr/bin/time -f '%U %S' sh -c "i=0; while [ \$i -lt $k ]; do MEMTRACE_OUT=$2.mtr ./$2 >/dev/null; i=\$((i + 1)); done" 2>&1 | sum; }
whole() { LD_LIBRARY_PATH="$work/$1" /usr/bin/time -f '%U %S' "$root/memtrace" run -q -o "$2.trace" -- "./$2" 2>&1 >/dev/null | sum; }
for p in heap qsort12; do whole this "$p" >/dev/null; done # JIT files warm
echo "| round | program | run | $base (s CPU) | this (s CPU) | ratio | load |"
echo "|---|---|---|---|---|---|---|"
r=1
while [ "$r" -le "$rounds" ]; do
    for p in heap qsort12; do
        for how in alone whole; do
            load=$(cut -d' ' -f1 /proc/loadavg)
            a=$($how base "$p")
            b=$($how this "$p")
            label=$how
            [ "$how" = alone ] && label="alone x$k"
            echo "| $r | $p | $label | $a | $b | $(echo "$b $a" | awk '{printf "%.2f", $1 / $2}') | $load |"
        done
    done
    r=$((r + 1))
done
rm -rf "$work"
