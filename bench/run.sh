#!/usr/bin/env bash
# Whole-process benchmark: times each program natively, under `memtrace run` and under Valgrind's Lackey
# (--trace-mem=yes), in one run, and prints slowdowns and memtrace's cost per recorded access.
# Usage: bench/run.sh [program ...]   (default: compute heap blockops; see bench/programs/)
# us_per_access is memtrace's time beyond the native run and beyond its fixed start-up cost (memtrace on
# an empty program), divided by the loads and stores it recorded.
# Quote ratios from one run: the machine is shared and absolute times drift.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/scripts/env.sh"
memtrace_prereqs --with-bench-tools
. "$root/bench/results.sh"
bench_results run "$@"
out="$root/bench/out"
mkdir -p "$out"
"$root/memtrace" --version >/dev/null   # builds on first use, outside the timings

now() { date +%s.%N; }
elapsed() { local s; s=$(now); "$@" >/dev/null 2>&1 || true; echo "$(now) - $s" | bc -l; }

gcc -O2 -o "$out/empty" "$root/bench/programs/empty.c"
fixed=$(elapsed "$root/memtrace" run --mode fault --quiet -o "$out/empty.trace" -- "$out/empty")
echo "memtrace fixed cost (empty program): ${fixed} s"

progs=("$@")
[ ${#progs[@]} -gt 0 ] || progs=(compute heap blockops)
printf '%-10s %10s %10s %10s %9s %9s %12s %14s\n' program native_s memtrace_s lackey_s mt_x lackey_x accesses us_per_access
for p in "${progs[@]}"; do
  bin="$out/$p"
  gcc -O2 -g -no-pie -o "$bin" "$root/bench/programs/$p.c"
  tn=$(elapsed "$bin")
  tm=$(elapsed "$root/memtrace" run --mode fault --quiet -o "$out/$p.trace" -- "$bin")
  tl=$(elapsed valgrind --tool=lackey --trace-mem=yes --log-file="$out/$p.lackey" "$bin")
  acc=$(grep -c '^[LS]' "$out/$p.trace" || true)
  per=$(echo "if ($acc > 0) ($tm - $tn - $fixed) * 1000000 / $acc else 0" | bc -l)
  printf '%-10s %10.3f %10.3f %10.3f %9.0f %9.0f %12d %14.2f\n' "$p" "$tn" "$tm" "$tl" \
    "$(echo "$tm / $tn" | bc -l)" "$(echo "$tl / $tn" | bc -l)" "$acc" "$per"
done
