#!/usr/bin/env bash
# Codec 7's encoder alone (agent/runtime/rt_fused.c, bench/runtime/fused_bench.c): ns per record on made-up
# slots of five patterns, this checkout's rt_fused.c writing codec $CODEC (default 9; 7 or 9) against
# $BEFORE's writing its default (a commit; default HEAD; codec 7 then), and codec 8's
# (rt_period.c), alternated run by run, fastest of ROUNDS (4). Free of the program, planning, zstd and the write, so it
# shows a change to the encoder's loop that the whole-process figures of bench/encoder.sh lose in the noise
# of a loaded machine.
#
#     BEFORE=COMMIT bench/fused.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/bench/results.sh"
bench_results fused "$@"
work=$(mktemp -d)
trap 'rm -rf "$work"; bench_results_end' EXIT
before=${BEFORE:-HEAD}
git -C "$root" show "$before:agent/runtime/rt_fused.c" >"$work/rt_fused_before.c"
git -C "$root" show "$before:agent/runtime/rt_fused.h" >"$work/rt_fused.h"
git -C "$root" show "$before:bench/runtime/fused_bench.c" >"$work/fused_bench_before.c"
codec=${CODEC:-9}
flags=(-O2 -std=gnu11 -fno-omit-frame-pointer)
gcc "${flags[@]}" -I"$work" -o "$work/before" "$work/fused_bench_before.c" "$work/rt_fused_before.c"
gcc "${flags[@]}" -I"$root/agent/runtime" -o "$work/after" "$root/bench/runtime/fused_bench.c" "$root/agent/runtime/rt_fused.c"
gcc "${flags[@]}" -DPERIOD -I"$root/agent/runtime" -o "$work/period" "$root/bench/runtime/fused_bench.c" "$root/agent/runtime/rt_period.c"
names=(spmv gemm smooth hash chase)
printf '| slots like | codec 7 ns/record %s | codec '"$codec"' ns/record this checkout | codec 8 ns/record this checkout | bytes before zstd, last chunk, '"$codec"' / 8 |\n|---|---|---|---|---|\n' "$before"
for kind in 0 1 2 3 4; do
  b="" a="" p=""
  for ((i = 0; i < ${ROUNDS:-4}; i++)); do
    t=$("$work/before" "$kind" | awk '{print $3}'); b=$(awk -v x="$t" -v m="$b" 'BEGIN{print (m == "" || x < m) ? x : m}')
    t=$("$work/after" "$kind" 64 "$codec" | awk '{print $3}'); a=$(awk -v x="$t" -v m="$a" 'BEGIN{print (m == "" || x < m) ? x : m}')
    t=$("$work/period" "$kind" | awk '{print $3}'); p=$(awk -v x="$t" -v m="$p" 'BEGIN{print (m == "" || x < m) ? x : m}')
  done
  printf '| %s | %s | %s | %s | %s / %s |\n' "${names[$kind]}" "$b" "$a" "$p" "$("$work/after" "$kind" 4 "$codec" | awk '{print $5}')" "$("$work/period" "$kind" 4 | awk '{print $5}')"
done
