#!/usr/bin/env bash
# Checker benchmark (issue 23): each program built four ways, -O2 -g,
#   native      plain gcc
#   asan        gcc -fsanitize=address (libasan; leaks detection on, as by default)
#   check-all   memtrace cc --check --no-prune (every check gcc made: Spindle's SD-All)
#   scalar      memtrace cc --check with MEMTRACE_CC_VECTOR=off (pruned, gcc's checked bodies only: the
#               "before" of the vectorised bodies, docs/check.md "Vectorised loops")
#   check       memtrace cc --check (pruned: SD-Opt)
# and the native build under valgrind --tool=memcheck --leak-check=full (MEMCHECK=off leaves it out) and
# under `memtrace run --check` (fault mode, the default; the whole run, memtrace's JVM included: RUNCHECK=off
# leaves it out; a run over FAULT_LIMIT seconds of wall clock, default 120, is cut and shown as ">N"),
# then runs the builds of a program in turn, REPEAT times (default 3), interleaved, and keeps each
# build's least CPU time (user + system of the child and its children, getrusage). Prints a markdown table:
# CPU seconds, ratios to native, their geometric means, the pruned build's summary (checks executed against
# the unpruned build's, checks removed statically) and the errors its run reported. Programs: the bench
# kernels (the ones under 20 ms enlarged) and the real programs gzip, bzip2 and sqlite3 (Debian's sources,
# bench/real-programs.sh, fetched into bench/out/src; their workloads are bench/cc.sh's). Usage:
# bench/check.sh [program ...] (default: the kernels below, then gzip bzip2 sqlite3). Keep runs small: the
# machine is shared; say the load (printed first). The output is appended to bench/results/check.md
# (bench/results.sh; BENCH_RESULTS=off for a trial run).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$root/bench/out/check"
src="$root/bench/out/src"
mkdir -p "$out" "$src"
mt="$root/memtrace"
REPEAT=${REPEAT:-3}
MEMCHECK=${MEMCHECK:-on}
RUNCHECK=${RUNCHECK:-on}
FAULT_LIMIT=${FAULT_LIMIT:-120}
export MEMTRACE_CDS=off
programs=("$@")
[ ${#programs[@]} -eq 0 ] && programs=(gemm stencil matmul hash heap qsort branchy chase compute gzip bzip2 sqlite3)
. "$root/bench/results.sh"
bench_results check "$@"
"$mt" --version >/dev/null   # builds on first use, outside the timings
# the kernels that run under 20 ms as they are get larger sizes (their copies in bench/out/check)
. "$root/bench/enlarge.sh"
# gzip, sqlite3, bzip2: fetch_sources, build_*, make_inputs, workload, is_real (builds in $out/VARIANT/)
. "$root/bench/real-programs.sh"
cc_for() {
  case $1 in
    native) echo "gcc" ;;
    asan) echo "gcc -fsanitize=address" ;;
    all) echo "$mt cc --check --no-prune" ;;
    scalar) echo "env MEMTRACE_CC_VECTOR=off $mt cc --check" ;;
    check) echo "$mt cc --check" ;;
  esac
}
for p in "${programs[@]}"; do if is_real "$p"; then fetch_sources; break; fi; done
make_inputs
echo "load: $(uptime | sed 's/.*load average: //')"
# CPU seconds (user + system of the command and its children, to the microsecond: /usr/bin/time has 10 ms
# steps) of one run, its output thrown away; ">LIMIT" when it ran over FAULT_LIMIT seconds of wall clock
cpu() {
  python3 - "$FAULT_LIMIT" "$@" <<'PY'
import resource, subprocess, sys
limit, cmd = float(sys.argv[1]), sys.argv[2:]
before = resource.getrusage(resource.RUSAGE_CHILDREN)
try:
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=limit if limit > 0 else None)
except subprocess.TimeoutExpired:
    print(">%.0f" % limit); sys.exit()
after = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.6f" % ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)))
PY
}
min() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == "" || (a !~ />/ && (b ~ />/ || a + 0 < b + 0))) print a; else print b }'; }
variants=(native asan all scalar check)
[ "$MEMCHECK" = off ] || variants+=(memcheck)
[ "$RUNCHECK" = off ] || variants+=(runcheck)
echo "| program | native s | asan | check-all | scalar | check | memcheck | run --check | checks executed (check / check-all) | removed statically | errors (check) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
geo="$out/geomean.txt"
: >"$geo"
for p in "${programs[@]}"; do
  for v in native asan all scalar check; do
    mkdir -p "$out/$v"
    case $p in
      gzip) build_gzip "$v" ;;
      sqlite3) build_sqlite3 "$v" ;;
      bzip2) build_bzip2 "$v" ;;
      *) [ -f "$out/$p.c" ] || enlarge "$p" <"$root/bench/programs/$p.c" >"$out/$p.c"
         # shellcheck disable=SC2046 # the compiler command is words
         $(cc_for "$v") -O2 -g -pthread -o "$out/$v/$p" "$out/$p.c" -lm ;;
    esac
  done
  declare -A best=()
  for _ in $(seq "$REPEAT"); do
    for v in "${variants[@]}"; do
      # shellcheck disable=SC2046 # the workload is words
      case $v in
        memcheck) t=$(cpu valgrind -q --tool=memcheck --leak-check=full $(workload "$p" "$out/native/$p")) ;;
        runcheck) t=$(cpu "$mt" run --check -- $(workload "$p" "$out/native/$p")) ;;
        *) t=$(cpu $(workload "$p" "$out/$v/$p")) ;;
      esac
      best[$v]=$(min "$t" "${best[$v]:-}")
    done
  done
  # shellcheck disable=SC2046 # the workload is words
  sum_check=$(MEMTRACE_CHECK=summary $(workload "$p" "$out/check/$p") 2>&1 >/dev/null | grep 'check summary')
  # shellcheck disable=SC2046
  sum_all=$(MEMTRACE_CHECK=summary $(workload "$p" "$out/all/$p") 2>&1 >/dev/null | grep 'check summary')
  exec_check=$(sed -E 's/.* checked by ([0-9]+) checks.*/\1/' <<<"$sum_check")
  exec_all=$(sed -E 's/.* checked by ([0-9]+) checks.*/\1/' <<<"$sum_all")
  removed=$(sed -E 's/.*statically ([0-9]+ of [0-9]+) checks removed.*/\1/' <<<"$sum_check")
  errors=$(sed -E 's/.*; ([0-9]+) errors?$/\1/' <<<"$sum_check")
  awk -v p="$p" -v n="${best[native]}" -v a="${best[asan]}" -v l="${best[all]}" -v c="${best[check]}" -v v="${best[scalar]}" \
      -v m="${best[memcheck]:-}" -v f="${best[runcheck]:-}" -v ec="$exec_check" -v ea="$exec_all" -v r="$removed" \
      -v e="$errors" -v geo="$geo" '
    function ratio(x, fmt) { if (x == "") return "-"; if (x ~ />/) return x " s"; return sprintf(fmt, x / n) }
    function g(x) { return (x == "" || x ~ />/ || n <= 0) ? 0 : x / n }
    BEGIN {
      printf "| %s | %.3f | %s | %s | %s | %s | %s | %s | %d / %d (%.1f %%) | %s | %s |\n", p, n, ratio(a, "%.2fx"),
        ratio(l, "%.2fx"), ratio(v, "%.2fx"), ratio(c, "%.2fx"), ratio(m, "%.1fx"), ratio(f, "%.1fx"), ec, ea,
        (ea > 0 ? 100 * ec / ea : 0), r, e
      printf "%f %f %f %f %f %f\n", g(a), g(l), g(c), g(m), g(v), g(f) >>geo
    }'
  unset best
done
awk '{ for (i = 1; i <= 6; i++) if ($i > 0) { s[i] += log($i); k[i]++ } }
  function gm(i, fmt) { return k[i] ? sprintf(fmt, exp(s[i] / k[i])) : "-" }
  END { if (NR) printf "| geomean | | %s | %s | %s | %s | %s | %s | | | |\n", gm(1, "%.2fx"), gm(2, "%.2fx"), gm(5, "%.2fx"),
    gm(3, "%.2fx"), gm(4, "%.1fx"), gm(6, "%.1fx") }' "$geo"
echo "load after: $(uptime | sed 's/.*load average: //')"
