#!/usr/bin/env bash
# Checker benchmark (issue 23): each program built four ways, -O2 -g,
#   native      plain gcc
#   asan        gcc -fsanitize=address (libasan; leaks detection on, as by default)
#   check-all   memtrace cc --check --no-prune (every check gcc made: Spindle's SD-All)
#   scalar      memtrace cc --check with MEMTRACE_CC_VECTOR=off (pruned, gcc's checked bodies only: the
#               "before" of the vectorised bodies, docs/check.md "Vectorised loops")
#   check       memtrace cc --check (pruned: SD-Opt)
# and the native build under valgrind --tool=memcheck --leak-check=full (MEMCHECK=off leaves it out),
# then runs the builds of a program in turn, REPEAT times (default 3), interleaved, and keeps each
# build's least CPU time (user + system, getrusage of the child). Prints a markdown table: CPU seconds,
# ratios to native, their geometric means, and the pruned build's summary (checks executed against the
# unpruned build's, checks removed statically). Usage: bench/check.sh [program ...] (default: the bench
# kernels below). Keep runs small: the machine is shared; say the load (printed first). The output is
# appended to bench/results/check.md (bench/results.sh; BENCH_RESULTS=off for a trial run).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$root/bench/out/check"
mkdir -p "$out"
mt="$root/memtrace"
REPEAT=${REPEAT:-3}
MEMCHECK=${MEMCHECK:-on}
programs=("$@")
[ ${#programs[@]} -eq 0 ] && programs=(gemm stencil matmul hash heap qsort branchy chase compute)
. "$root/bench/results.sh"
bench_results check "$@"
# the kernels that run under 20 ms as they are get larger sizes (their copies in bench/out/check)
. "$root/bench/enlarge.sh"
echo "load: $(uptime | sed 's/.*load average: //')"
# the CPU seconds of one run, user + system, to the microsecond (/usr/bin/time has 10 ms steps)
cat >"$out/cputime.c" <<'C'
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char **argv) {
    pid_t p = fork();
    if (p == 0) { execv(argv[1], argv + 1); _exit(127); }
    int status;
    struct rusage ru;
    if (p < 0 || wait4(p, &status, 0, &ru) < 0) return 1;
    printf("%.6f\n", ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
    return 0;
}
C
gcc -O2 -o "$out/cputime" "$out/cputime.c"
cpu() { "$out/cputime" "$@" 2>/dev/null | tail -1; }
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a < b) ? a : b }'; }
variants=(native asan all scalar check)
[ "$MEMCHECK" = off ] || variants+=(memcheck)
echo "| program | native s | asan | check-all | scalar | check | memcheck | checks executed (check / check-all) | removed statically |"
echo "|---|---|---|---|---|---|---|---|---|"
geo="$out/geomean.txt"
: >"$geo"
for p in "${programs[@]}"; do
  s="$out/$p.c"
  enlarge "$p" <"$root/bench/programs/$p.c" >"$s"
  gcc -O2 -g -pthread -o "$out/$p.native" "$s" -lm
  gcc -O2 -g -pthread -fsanitize=address -o "$out/$p.asan" "$s" -lm
  "$mt" cc --check --no-prune -O2 -g -pthread -o "$out/$p.all" "$s" -lm
  MEMTRACE_CC_VECTOR=off "$mt" cc --check -O2 -g -pthread -o "$out/$p.scalar" "$s" -lm
  "$mt" cc --check -O2 -g -pthread -o "$out/$p.check" "$s" -lm
  printf '#!/bin/sh\nexec valgrind -q --tool=memcheck --leak-check=full "%s" "$@"\n' "$out/$p.native" >"$out/$p.memcheck"
  chmod +x "$out/$p.memcheck"
  declare -A best=()
  for _ in $(seq "$REPEAT"); do
    for v in "${variants[@]}"; do
      t=$(cpu "$out/$p.$v")
      best[$v]=$(min "$t" "${best[$v]:-}")
    done
  done
  sum_check=$(MEMTRACE_CHECK=summary "$out/$p.check" 2>&1 >/dev/null | grep 'check summary')
  sum_all=$(MEMTRACE_CHECK=summary "$out/$p.all" 2>&1 >/dev/null | grep 'check summary')
  exec_check=$(sed -E 's/.* checked by ([0-9]+) checks.*/\1/' <<<"$sum_check")
  exec_all=$(sed -E 's/.* checked by ([0-9]+) checks.*/\1/' <<<"$sum_all")
  removed=$(sed -E 's/.*statically ([0-9]+ of [0-9]+) checks removed.*/\1/' <<<"$sum_check")
  awk -v p="$p" -v n="${best[native]}" -v a="${best[asan]}" -v l="${best[all]}" -v c="${best[check]}" -v v="${best[scalar]}" \
      -v m="${best[memcheck]:-0}" -v ec="$exec_check" -v ea="$exec_all" -v r="$removed" -v geo="$geo" 'BEGIN {
    r1 = n > 0 ? a / n : 0; r2 = n > 0 ? l / n : 0; r3 = n > 0 ? c / n : 0; r4 = n > 0 ? m / n : 0; r5 = n > 0 ? v / n : 0
    printf "| %s | %.3f | %.2fx | %.2fx | %.2fx | %.2fx | %s | %d / %d (%.1f %%) | %s |\n", p, n, r1, r2, r5, r3,
      (r4 > 0 ? sprintf("%.1fx", r4) : "-"), ec, ea, (ea > 0 ? 100 * ec / ea : 0), r
    printf "%f %f %f %f %f\n", r1, r2, r3, r4, r5 >>geo
  }'
  unset best
done
awk '$1 > 0 { n++; for (i = 1; i <= 5; i++) if ($i > 0) { s[i] += log($i); k[i]++ } }
  END { if (n) printf "| geomean | | %.2fx | %.2fx | %.2fx | %.2fx | %s | | |\n", exp(s[1] / n), exp(s[2] / n), exp(s[5] / n),
    exp(s[3] / n), (k[4] ? sprintf("%.1fx", exp(s[4] / k[4])) : "-") }' "$geo"
echo "load after: $(uptime | sed 's/.*load average: //')"
