#!/usr/bin/env bash
# Where a rewritten program's own CPU goes (issue 22): the system's sqlite3 (500 inserts and two queries) and
# python3 (a 5,000-entry JSON built, dumped, searched and parsed), bench/rewrite-side.sh's full workloads, run
# as its rw-disk column does (this checkout's runtime preloaded with the cached plans of the program, its
# libraries and ld.so, the .mtr written to disk, no JVM). Per program:
#   - CPU (user + system) of native and of the rewritten run, interleaved, RUNS (default 6) of each, median and
#     fastest; with BEFORE_RT=<libmemtrace-rt.so> also the rewritten run with that runtime (the same plans), in
#     the same rounds, so the ratios of a row come from one stretch of the machine;
#   - the signals the rewritten run takes (strace): SIGTRAP is an int3 fallback trap, SIGSEGV a full buffer;
#   - `perf record -e cpu-clock -g` of one rewritten run, each sample put in one class by its call chain (the
#     first that matches): start-up (rw_apply and what it calls: plans mapped, stub pages, jumps written),
#     traps (the int3 handler, the kernel's int3 entry), writing (write system calls), encoder (planning chunks,
#     codec 10's pass, zstd, the CRC), heap stacks (allocation stacks' unwinding), trampolines+probes (a sample
#     in a plan's trampoline text or a stub page: anonymous or plan-mapped memory), signals (the kernel's
#     delivery and sigreturn of either signal), page faults, runtime other, program (the program's and its
#     libraries' own code), kernel other; `env` and the exec before the program are apart.
# Appends to bench/results/rewrite-split.md (BENCH_RESULTS=off: not).
# Usage: [BEFORE_RT=old/libmemtrace-rt.so] [RUNS=6] bench/rewrite-split.sh [sqlite3] [python3]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/scripts/env.sh"
memtrace_prereqs
command -v perf >/dev/null && command -v strace >/dev/null || { echo "rewrite-split.sh: needs perf and strace" >&2; exit 2; }
. "$root/bench/results.sh"
bench_results rewrite-split "$@"
out="$root/bench/out/rewrite-split"
mkdir -p "$out"
mt="$root/memtrace"
export MEMTRACE_CDS=off
"$mt" --version >/dev/null
make -s -C "$root/agent" OUT="$out/lib" "$out/lib/libmemtrace-rt.so"
rt="$out/lib/libmemtrace-rt.so"
before=${BEFORE_RT:-}
RUNS=${RUNS:-6}
. "$root/bench/tools/plans.sh"
[ -f "$out/sqlite3.sql" ] || awk 'BEGIN { print "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL);"; print "BEGIN;";
    for (i = 0; i < 500; i++) printf "INSERT INTO t(b, c) VALUES (%c%s%d%c, %d.5);\n", 39, "name", i * 7919 % 1000, 39, i;
    print "COMMIT;"; print "SELECT count(*), sum(c), max(b) FROM t WHERE c > 100;"; print "SELECT b, count(*) FROM t GROUP BY b ORDER BY 2 DESC LIMIT 3;" }' >"$out/sqlite3.sql"
py_full='import json, re
d = {str(i): [i, i * i, str(i)] for i in range(5000)}
s = json.dumps(d)
print(len(s), len(re.findall(r"\d+", s)), sum(v[0] for v in json.loads(s).values()))'

# cpu COMMAND...: user + system seconds of one run (its output discarded, its trace removed after)
cpu() {
  /usr/bin/python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=open(sys.argv[1], "w"))
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.4f" % (r.ru_utime + r.ru_stime), end="")' "$out/last.$$.stderr" "$@"
  rm -f "$out/trace.$$.mtr"*
}
stats() { tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { printf "%.4f / %.4f", (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[1] }'; }

progs=("$@")
[ ${#progs[@]} -gt 0 ] || progs=(sqlite3 python3)
for p in "${progs[@]}"; do
  case $p in
    sqlite3) a=(/usr/bin/sqlite3 :memory: -init "$out/sqlite3.sql" .quit) short=(/usr/bin/sqlite3 -version) ;;
    python3) a=(/usr/bin/python3 -c "$py_full") short=(/usr/bin/python3 -S -c pass) ;;
    *) echo "rewrite-split.sh: $p: only sqlite3 and python3" >&2; exit 2 ;;
  esac
  "$mt" run --mode rewrite -q -o /dev/null -- "${short[@]}" >/dev/null 2>&1 # plans made (once per machine), outside the timings
  all=$(plans "${a[0]}")
  rw=(env LD_PRELOAD="$rt" MEMTRACE_REWRITE_PLAN="$all" MEMTRACE_OUT="$out/trace.$$.mtr")
  n="" w="" b=""
  for _ in $(seq "$RUNS"); do
    n="$n $(cpu "${a[@]}")"
    w="$w $(cpu "${rw[@]}" "${a[@]}")"
    [ -z "$before" ] || b="$b $(cpu env LD_PRELOAD="$before" MEMTRACE_REWRITE_PLAN="$all" MEMTRACE_OUT="$out/trace.$$.mtr" "${a[@]}")"
  done
  echo "$p: CPU s, median / fastest of $RUNS interleaved: native $(stats <<<"$n"), rewritten to disk $(stats <<<"$w")${before:+, with BEFORE_RT $(stats <<<"$b")}"
  echo "$p: signals of a rewritten run: $(strace -f -qq -e trace=none -e signal=all "${rw[@]}" "${a[@]}" 2>&1 >/dev/null |
    awk '$2 == "SIGTRAP" { t++ } $2 == "SIGSEGV" { s++ } END { printf "%d int3 traps, %d full buffers (SIGSEGV)", t, s }')"
  rm -f "$out/trace.$$.mtr"*
  perf record -q -e cpu-clock -F 5000 -g -o "$out/$p.perf" -- "${rw[@]}" "${a[@]}" >/dev/null 2>&1
  rm -f "$out/trace.$$.mtr"*
  perf script -i "$out/$p.perf" -F comm,ip,sym,dso 2>/dev/null | python3 -c '
import collections, re, sys
START = ("rw_apply", "apply_at", "apply_one", "stub_page", "stub_plan", "stub_file", "stub_done", "pun_segment", "fill_text",
         "arm_text", "read_plan", "reserve_text", "check_plan", "rw_place")
ENC = re.compile(r"^(wr_encode|encode_buffer|fused_|pack|ZSTD_|HIST_|FSE_|HUF_|wr_plan|plan[0-9]|period_|transform|crc_|rt_crc|wr_write_queued|rt_file_queue)")
count, leaf, total = collections.Counter(), collections.defaultdict(collections.Counter), 0
for s in sys.stdin.read().split("\n\n"):
    frames = re.findall(r"^\s*(?:(\S+)\s+)?[0-9a-f]+ (.*) \((.*)\)$", s, re.M)
    if not frames: continue
    comm = s.split()[0]
    syms = [f[1].split("+")[0] for f in frames]
    dso = frames[0][2]
    if comm == "env" or any("execve" in x for x in syms): c = "env and exec"
    elif any(x.startswith(START) for x in syms): c = "start-up (rw_apply)"
    elif any(x in ("rw_trap", "exc_int3", "do_int3_user") for x in syms): c = "traps (int3 fallback)"
    elif any(x in ("__x64_sys_write", "__x64_sys_writev", "__x64_sys_pwrite64") for x in syms): c = "writing (write system calls)"
    elif any(ENC.match(x) for x in syms): c = "encoder"
    elif "mt_unwind" in syms: c = "heap stacks (mt_unwind)"
    elif dso.endswith(".plan") or dso.startswith("/memfd:") or dso == "[unknown]" and not syms[0].startswith("0xffff"): c = "trampolines+probes"
    elif "libmemtrace-rt" in dso: c = "runtime other"
    elif dso.startswith("[kernel"):
        if any("sigreturn" in x or "signal" in x for x in syms): c = "signals (delivery, sigreturn)"
        elif any("page_fault" in x for x in syms): c = "page faults"
        else: c = "kernel other"
    else: c = "program"
    total += 1
    count[c] += 1
    leaf[c][syms[0] if syms[0] != "[unknown]" else dso.split("/")[-1][:16]] += 1
for c, v in count.most_common():
    print("  %5.1f %%  %-30s %s" % (100.0 * v / total, c, ", ".join("%s %d" % t for t in leaf[c].most_common(3))))
print("  (%d samples at 5 kHz)" % total)'
done
echo "load: $(uptime | sed 's/.*load average/load average/')"
