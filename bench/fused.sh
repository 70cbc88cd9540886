#!/usr/bin/env bash
# Codec 7's encoder alone (agent/runtime/rt_fused.c, bench/runtime/fused_bench.c): ns per record on made-up
# slots of five patterns, this checkout's rt_fused.c against $BEFORE's (a commit; default HEAD), the two
# alternated run by run, fastest of ROUNDS (4). Free of the program, planning, zstd and the write, so it
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
flags=(-O2 -std=gnu11 -fno-omit-frame-pointer)
gcc "${flags[@]}" -I"$work" -o "$work/before" "$root/bench/runtime/fused_bench.c" "$work/rt_fused_before.c"
gcc "${flags[@]}" -I"$root/agent/runtime" -o "$work/after" "$root/bench/runtime/fused_bench.c" "$root/agent/runtime/rt_fused.c"
names=(spmv gemm smooth hash chase)
printf '| slots like | ns/record %s | ns/record this checkout |\n|---|---|---|\n' "$before"
for kind in 0 1 2 3 4; do
  b="" a=""
  for ((i = 0; i < ${ROUNDS:-4}; i++)); do
    t=$("$work/before" "$kind" | awk '{print $3}'); b=$(awk -v x="$t" -v m="$b" 'BEGIN{print (m == "" || x < m) ? x : m}')
    t=$("$work/after" "$kind" | awk '{print $3}'); a=$(awk -v x="$t" -v m="$a" 'BEGIN{print (m == "" || x < m) ? x : m}')
  done
  printf '| %s | %s | %s |\n' "${names[$kind]}" "$b" "$a"
done
