#!/usr/bin/env bash
# What the access stacks of rewrite mode cost a program with many trampolines (issue 22/25; agent/rewrite/rw_arm.c):
# the program rewritten without the JVM (the runtime preloaded with the cached plans, its .mtr to a file), as
# bench/run-split.sh's `rw` row runs it, CPU time (user + system, getrusage of the children) of
#   native       the program alone
#   d1           MEMTRACE_STACK_DEPTH=1: nothing armed
#   d12          the default depth 12: nothing armed since access stacks became opt-in (run --access-stacks);
#                a runtime from before that arms here, as d12a does
#   d12a         depth 12 and MEMTRACE_ACCESS_STACKS=1 (--access-stacks): each trampoline's first RW_ARM_RUNS
#                entries trap and send a stack
# for this checkout's runtime and for each extra runtime in $RTS ("name=path/libmemtrace-rt.so ...", e.g. a
# build of an older commit or of RW_ARM_RUNS=1), interleaved round by round, the fastest of $ROUNDS (default 2).
# Workloads: pyre (json.dumps/loads of 5,000 dicts, a regex), python3 (json.dumps of range(20000), run-split's),
# pass (python3 -S -c pass: start-up alone), gzip9 (gzip -9 of 1 MB of text), sort (its lines).
# The plans must be in the cache: run `memtrace run` once on each program first (bench/run-split.sh does).
# Usage: RTS="before=/tmp/old/libmemtrace-rt.so" bench/rewrite-arm-cost.sh [pyre python3 pass gzip9 sort]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/scripts/env.sh"
memtrace_prereqs
. "$root/bench/results.sh"
bench_results rewrite-arm-cost "$@"
out="$root/bench/out/rewrite-arm-cost"
mkdir -p "$out"
make -s -C "$root/agent" OUT="$out/lib" "$out/lib/libmemtrace-rt.so"
version=$(sed -n 's/.*PLANNER_VERSION = "\(.*\)";/\1/p' "$root/src/main/java/org/memtrace/rewrite/ModuleRewrite.java")
cache="${XDG_CACHE_HOME:-$HOME/.cache}/memtrace/rewrite"
. "$root/bench/rewrite-lib.sh"   # cpu, plans
key() { { printf '%s' "$version"; cat "$1"; } | sha256sum | cut -d' ' -f1; }
read -r -a rts <<<"head=$out/lib/libmemtrace-rt.so ${RTS:-}"
in="$root/bench/out/run-split/in.txt"
[ -f "$in" ] || { echo "no $in: run bench/run-split.sh gzip once first (it writes the input)" >&2; exit 2; }
cmds=("$@")
[ ${#cmds[@]} -gt 0 ] || cmds=(pyre python3 pass gzip9 sort)
printf '%-8s %-14s %8s %8s\n' program variant cpu x-native
for cmd in "${cmds[@]}"; do
  case $cmd in
    pyre) argv=(/usr/bin/python3 -c 'import json, re; s = json.dumps([{"k": i, "v": str(i) * 3} for i in range(5000)]); print(len(re.findall(r"[0-9]+", s)), len(json.loads(s)))') ;;
    python3) argv=(/usr/bin/python3 -c 'import json; json.dumps(list(range(20000)))') ;;
    pass) argv=(/usr/bin/python3 -S -c pass) ;;
    gzip9) argv=("$(command -v gzip)" -9 -c "$in") ;;
    sort) argv=("$(command -v sort)" "$in") ;;
    *) echo "unknown program $cmd (pyre, python3, pass, gzip9, sort)" >&2; exit 2 ;;
  esac
  all=$(plans "${argv[0]}")
  : >"$out/$cmd.times"
  for _ in $(seq "${ROUNDS:-2}"); do
    echo "native $(cpu "${argv[@]}")" >>"$out/$cmd.times"
    for v in "${rts[@]}"; do
      for d in 1 12 12a; do
        echo "${v%%=*}-d$d $(cpu env MEMTRACE_STACK_DEPTH=${d%a} MEMTRACE_ACCESS_STACKS=$([ "$d" = 12a ] && echo 1 || echo 0) LD_PRELOAD="${v#*=}" MEMTRACE_REWRITE_PLAN="$all" MEMTRACE_OUT="$out/$cmd.mtr" "${argv[@]}")" >>"$out/$cmd.times"
      done
    done
  done
  python3 - "$cmd" "$out/$cmd.times" <<'PY'
import sys
cmd, best = sys.argv[1], {}
for line in open(sys.argv[2]):
    what, t = line.split()
    best[what] = min(float(t), best.get(what, float(t)))
for what, t in best.items():
    print('%-8s %-14s %8.2f %8.1f' % (cmd, what, t, t / max(best['native'], 0.01)))
PY
  rm -f "$out/$cmd.mtr"
done
echo "load: $(uptime | sed 's/.*load average/load average/')"
