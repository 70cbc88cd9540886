#!/usr/bin/env bash
# `memtrace run --check` on unmodified binaries, both modes (issue 23; docs/check.md, "memtrace run --check"),
# against ASan and Valgrind's memcheck. Each program, -O2 -g as bench/check.sh builds them (the kernels that run
# under 20 ms enlarged the same way), then the system's gzip -6 on a 1.1 MB text; CPU time (user + system of the
# child and its children, getrusage), REPEAT runs each (default 1), interleaved, the least kept:
#   native     plain gcc build
#   asan       gcc -fsanitize=address build (leak detection on, as by default)
#   memcheck   the native build under valgrind --tool=memcheck --leak-check=full
#   fault      memtrace run --check --mode fault (the whole run: memtrace's JVM and the program)
#   rw-run     memtrace run --check --mode rewrite (the whole run: JVM start, plans from the cache, the program)
#   rewrite    the program alone as rw-run runs it: LD_PRELOAD of libmemtrace-check.so and libmemtrace-rt.so and
#              its cached check plans (memtrace's JVM costs about 1.3 s of CPU to start and wait, whatever the program)
# Ratios are to native; geomeans over the programs. A run over FAULT_LIMIT seconds (default 60, wall clock) is cut and shown
# as ">N". Usage: bench/run-check-modes.sh [program ...]. The output is appended to
# bench/results/run-check-modes.md (bench/results.sh; BENCH_RESULTS=off for a trial run).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$root/bench/out/run-check-modes"
mkdir -p "$out"
mt="$root/memtrace"
REPEAT=${REPEAT:-1}
FAULT_LIMIT=${FAULT_LIMIT:-60}
export MEMTRACE_CDS=off
programs=("$@")
[ ${#programs[@]} -eq 0 ] && programs=(gemm stencil matmul hash heap qsort branchy chase compute gzip)
. "$root/bench/results.sh"
bench_results run-check-modes "$@"
"$mt" --version >/dev/null   # builds on first use, outside the timings
make -s -C "$root/agent" OUT="$out/lib" "$out/lib/libmemtrace-rt.so" "$out/lib/libmemtrace-check.so"
preload="$out/lib/libmemtrace-check.so:$out/lib/libmemtrace-rt.so"
version=$(sed -n 's/.*PLANNER_VERSION = "\(.*\)";/\1/p' "$root/src/main/java/org/memtrace/rewrite/ModuleRewrite.java")
cache="${XDG_CACHE_HOME:-$HOME/.cache}/memtrace/rewrite"
. "$root/bench/rewrite-lib.sh"   # cpu, plans
key() { { printf '%s+CHECK' "$version"; cat "$1"; } | sha256sum | cut -d' ' -f1; }
. "$root/bench/enlarge.sh"   # the kernels at check.sh's sizes
min() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == "" || (a !~ />/ && (b ~ />/ || a + 0 < b + 0))) print a; else print b }'; }
awk 'BEGIN { for (i = 0; i < 44000; i++) printf "%d line of text %d\n", (i * 7919) % 20011, i % 97 }' >"$out/input.txt"
variants=(native asan memcheck fault rw-run rewrite)
echo "load: $(uptime | sed 's/.*load average: //')"
echo
echo "| program | native s | asan | memcheck | run --check fault | run --check rewrite (whole run) | rewrite (program alone) | checked / left unchecked |"
echo "|---|---|---|---|---|---|---|---|"
geo="$out/geomean.txt"
: >"$geo"
for p in "${programs[@]}"; do
  if [ "$p" = gzip ]; then
    bin=$(command -v gzip)
    args=(-6 -c "$out/input.txt")
    gcc_asan=
  else
    enlarge "$p" <"$root/bench/programs/$p.c" >"$out/$p.c"
    gcc -O2 -g -pthread -o "$out/$p" "$out/$p.c" -lm
    gcc -O2 -g -pthread -fsanitize=address -o "$out/$p.asan" "$out/$p.c" -lm
    bin="$out/$p"
    args=()
  fi
  # plans made (or found) outside the timings; the counts line says what is checked
  counts=$(MEMTRACE_CHECK=summary,noleaks "$mt" run --check --mode rewrite -- "$bin" "${args[@]}" 2>&1 >/dev/null \
    | sed -n "s|^memtrace: check: \([0-9]*\) memory instructions of $bin checked, \([0-9]*\) left unchecked.*|\1 / \2|p")
  all=$(plans "$bin")
  declare -A best=()
  for _ in $(seq "$REPEAT"); do
    for v in "${variants[@]}"; do
      case $v in
        native) t=$(REPEAT=1 cpu "$bin" "${args[@]}") ;;
        asan) if [ "$p" = gzip ]; then t=; else t=$(REPEAT=1 cpu "$out/$p.asan"); fi ;;
        memcheck) t=$(REPEAT=1 cpu valgrind -q --tool=memcheck --leak-check=full "$bin" "${args[@]}") ;;
        fault) t=$(REPEAT=1 cpu "$mt" run --check --mode fault -- "$bin" "${args[@]}") ;;
        rw-run) t=$(REPEAT=1 cpu "$mt" run --check --mode rewrite -- "$bin" "${args[@]}") ;;
        rewrite) t=$(REPEAT=1 cpu env LD_PRELOAD="$preload" MEMTRACE_REWRITE_PLAN="$all" "$bin" "${args[@]}") ;;
      esac
      [ -z "$t" ] || best[$v]=$(min "$t" "${best[$v]:-}")
    done
  done
  awk -v p="$p" -v n="${best[native]}" -v a="${best[asan]:-}" -v m="${best[memcheck]}" -v f="${best[fault]}" \
      -v r="${best[rw-run]}" -v w="${best[rewrite]}" -v c="$counts" -v geo="$geo" '
    function ratio(x) { if (x == "") return "-"; if (x ~ />/) return x " s"; return sprintf("%.1fx (%.2f s)", x / n, x) }
    function g(x) { return (x == "" || x ~ />/ || n <= 0) ? 0 : x / n }
    BEGIN {
      printf "| %s | %.3f | %s | %s | %s | %s | %s | %s |\n", p, n, ratio(a), ratio(m), ratio(f), ratio(r), ratio(w), c
      printf "%f %f %f %f %f\n", g(a), g(m), g(f), g(r), g(w) >>geo
    }'
  unset best
done
awk '{ for (i = 1; i <= 5; i++) if ($i > 0) { s[i] += log($i); k[i]++ } }
  function gm(i) { return k[i] ? sprintf("%.1fx (%d)", exp(s[i] / k[i]), k[i]) : "-" }
  END { printf "| geomean (programs) | | %s | %s | %s | %s | %s | |\n", gm(1), gm(2), gm(3), gm(4), gm(5) }' "$geo"
echo "load after: $(uptime | sed 's/.*load average: //')"
