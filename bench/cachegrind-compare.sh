#!/usr/bin/env bash
# Compares memtrace cachesim with Valgrind's cachegrind on real programs, same data-cache geometry:
# D1 = L1 32k:8:64 and LL = 8m:16:64 (override with D1=… LL=… in bytes,ways,line), LRU in both.
# Usage: bench/cachegrind-compare.sh [program ...]   (default: matmul heap blockops cachewalk; bench/programs/)
# Prints, per program, data references, D1 misses and LL data misses as each tool counts them, and the
# miss ratios (misses per data reference). docs/cachesim.md explains why the columns differ.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/scripts/env.sh"
memtrace_prereqs --with-bench-tools
. "$root/bench/results.sh"
bench_results cachegrind-compare "$@"
out="$root/bench/out"
mkdir -p "$out"
D1=${D1:-32768,8,64}
LL=${LL:-8388608,16,64}
spec() { IFS=, read -r s w l <<<"$1"; echo "$s:$w:$l"; }

progs=("$@")
[ ${#progs[@]} -gt 0 ] || progs=(matmul heap blockops cachewalk)
printf '%-10s %-10s %12s %12s %12s %8s %8s\n' program tool data_refs D1_misses LL_misses D1_% LL_%
for p in "${progs[@]}"; do
  bin="$out/$p"
  gcc -O1 -g -no-pie -o "$bin" "$root/bench/programs/$p.c"
  args=()
  [ "$p" = cachewalk ] && args=(5)
  "$root/memtrace" run --mode fault -q -o /dev/null --save-stream "$out/$p.stream" -- "$bin" "${args[@]}" >/dev/null
  "$root/memtrace" cachesim "$out/$p.stream" --l1 "$(spec "$D1")" --l2 "$(spec "$LL")" --json "$out/$p.cachesim.json" >/dev/null
  valgrind --tool=cachegrind --cache-sim=yes --I1="$D1" --D1="$D1" --LL="$LL" \
    --cachegrind-out-file="$out/$p.cachegrind" "$bin" "${args[@]}" >/dev/null 2>&1
  python3 - "$p" "$out/$p.cachesim.json" "$out/$p.cachegrind" <<'PY'
import json, sys
name, sim, cg = sys.argv[1:]
j = json.load(open(sim))
l1, ll = j["levels"][0], j["levels"][-1]
events = summary = None
for line in open(cg):
    if line.startswith("events:"): events = line.split()[1:]
    if line.startswith("summary:"): summary = [int(x) for x in line.split()[1:]]
c = dict(zip(events, summary))
def row(tool, refs, d1, dl):
    print(f"{name:<10} {tool:<10} {refs:>12,} {d1:>12,} {dl:>12,} {100*d1/refs:>8.3f} {100*dl/refs:>8.3f}")
row("memtrace", l1["accesses"], l1["misses"], ll["misses"])
row("cachegrind", c["Dr"] + c["Dw"], c["D1mr"] + c["D1mw"], c["DLmr"] + c["DLmw"])
PY
done
