#!/usr/bin/env bash
# The stream scanf's cost under the checker (issue 23, check_scan.h's mc_fscan_run): N lines (default 1,000,000)
# of "<number> <word of 3-12 letters>" read by fscanf(f, "%d %31s") in a loop, built -O2 -g
#   native    plain gcc
#   check     memtrace cc --check (this tree's runtime: the call into the runtime's slots, ranges checked first)
#   before    the same binary with BEFORE_LIB's libmemtrace-check.so first on LD_LIBRARY_PATH (a runtime built
#             from an older commit: `git archive <commit> agent | tar -x -C DIR; make -C DIR/agent OUT=DIR/out`,
#             then BEFORE_LIB=DIR/out); left out when BEFORE_LIB is unset
# each REPEAT times (default 5), interleaved, keeping each variant's least CPU time (user + system, getrusage).
# Checks that every variant prints the same count and sum. Appends to bench/results/check-fscanf.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/results.sh"
N=${N:-1000000}
REPEAT=${REPEAT:-5}
work=$(mktemp -d /tmp/check-fscanf.XXXXXX)
trap 'rm -rf "$work"; bench_results_end' EXIT
cat >"$work/fscan.c" <<'C'
#include <stdio.h>
int main(int argc, char **argv)
{
    FILE *f = fopen(argv[1], "r");
    if (!f) return 2;
    int k;
    char word[32];
    long sum = 0, cnt = 0;
    while (fscanf(f, "%d %31s", &k, word) == 2) { sum += k + word[0]; cnt++; }
    printf("%ld %ld\n", cnt, sum);
    return 0;
}
C
awk -v n="$N" 'BEGIN { srand(1); for (i = 0; i < n; i++) { w = ""; l = 3 + int(rand() * 10);
  for (j = 0; j < l; j++) w = w sprintf("%c", 97 + int(rand() * 10)); printf "%d %s\n", int(rand() * 100000), w } }' >"$work/in.txt"
gcc -O2 -g -o "$work/native" "$work/fscan.c"
"$root/memtrace" cc --check -O2 -g -o "$work/check" "$work/fscan.c"
bench_results check-fscanf "$@"
echo "fscanf(f, \"%d %31s\") of $N lines ($(stat -c %s "$work/in.txt") bytes), least CPU s of $REPEAT; load $(cut -d' ' -f1-3 /proc/loadavg)"
variants="native check"
[ -n "${BEFORE_LIB:-}" ] && variants="$variants before"
declare -A best out
cpu() {   # variant -> prints "seconds output"
  local v=$1 exe=$work/native env=()
  [ "$v" = native ] || exe=$work/check
  [ "$v" = before ] && env=(LD_LIBRARY_PATH="$BEFORE_LIB")
  env "${env[@]}" python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[2:], stdout=open(sys.argv[1], "w"), check=True)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(r.ru_utime + r.ru_stime)' "$work/o" "$exe" "$work/in.txt" >"$work/t"
  echo "$(cat "$work/t") $(cat "$work/o")"
}
for ((r = 0; r < REPEAT; r++)); do
  for v in $variants; do
    read -r s o1 o2 < <(cpu "$v")
    out[$v]="$o1 $o2"
    if [ -z "${best[$v]:-}" ] || awk -v a="$s" -v b="${best[$v]}" 'BEGIN { exit !(a < b) }'; then best[$v]=$s; fi
  done
done
printf '| variant | CPU s | / native | output |\n|---|---|---|---|\n'
for v in $variants; do
  printf '| %s | %.2f | %.2fx | %s |\n' "$v" "${best[$v]}" "$(awk -v a="${best[$v]}" -v b="${best[native]}" 'BEGIN { print a / b }')" "${out[$v]}"
  [ "${out[$v]}" = "${out[native]}" ] || echo "MISMATCH: $v printed ${out[$v]}, native ${out[native]}"
done
