#!/usr/bin/env bash
# Rewrite mode side by side with the other ways in (issue 22's closing bench): the bench kernels (gemm,
# stencil, hash, chase, heap, qsort, threads of bench/programs, built gcc -O2 -g and, for the cc column,
# memtrace cc -O2 -g) and the system's own, unmodified gzip, sqlite3, python3 and bzip2, each run once per
# column, one after the other, so that the ratios of a row come from one run of the machine. Columns (CPU = user + system of the process and its children; wall
# clock apart), each "CPU s (x native) / wall s":
#   native        the program alone
#   rw-discard    the program with memtrace's runtime preloaded and the cached plans of the executable, its
#                 libraries and ld.so applied (as `memtrace run --mode rewrite` hands them over), trace
#                 discarded (MEMTRACE_OUT unset: probes store into the buffers, nothing is encoded), no JVM
#   rw-disk       the same, the .mtr trace written to disk (MEMTRACE_OUT), no JVM
#   rw-run        `memtrace run --mode rewrite -o /dev/null` whole: JVM start, plans from the cache, the run,
#                 the JVM reading every event and formatting the MadT text (to /dev/null)
#   cc-disk       the `memtrace cc -O2 -g` build, trace to disk, no JVM: for a kernel always (its native is
#                 the gcc -O2 -g build that the rewrite columns run, so native-src is native); for gzip,
#                 sqlite3 and bzip2 where Debian's sources are here (gzip 1.12, sqlite3 3.40.1, bzip2 1.0.8:
#                 bench/real-programs.sh builds them; CC_PROGRAMS chooses, default "gzip sqlite3 bzip2",
#                 empty: none), its ratio to the gcc -O2 -g build of the same source (native-src), not to the
#                 system's binary; python3: none
#   fault         `memtrace run --mode fault -o /dev/null` whole
#   lackey        Valgrind's Lackey, `--trace-mem=yes`, its log to /dev/null
# Each system program runs a full workload (gzip -9c of 1 MB of text, sqlite3 on 500 inserts and two queries,
# python3 on a script that builds, dumps and parses a 5,000-entry JSON, bzip2 -9c of 200 KB) and a small one
# (8 KB; 20 inserts; python3 -S printing a sum; 8 KB) on which fault mode and Lackey finish: they run on the
# small workload only (shown "-" on the full one). A kernel runs once, at its built-in size (threads with 2
# threads), every column. A run longer than LIMIT seconds of wall clock (default 90; fault mode and Lackey:
# SLOW_LIMIT, default LIMIT) is cut and shows ">CPU (>Nx) / >LIMIT", the CPU it had used a lower bound. After the
# small rows, the accesses each way recorded (its summary's loads + stores), so what rewrite mode traces
# compares with fault mode's. Then warm start-up: an empty C program (bench/programs/empty.c) whole.
# REPEAT (default 2) runs of the cheap columns (native, rw-*, cc-disk), the fastest kept; the others once.
# Appends to bench/results/rewrite-side.md (BENCH_RESULTS=off: not).
# Usage: bench/rewrite-side.sh [program ...]   (default: gemm stencil hash chase heap qsort threads gzip
#        sqlite3 python3 bzip2)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/scripts/env.sh"
memtrace_prereqs --with-bench-tools
. "$root/bench/results.sh"
bench_results rewrite-side "$@"
out="$root/bench/out/rewrite-side"
src="$root/bench/out/src"
mkdir -p "$out/plain" "$out/full" "$src"
mt="$root/memtrace"
export MEMTRACE_CDS=off
"$mt" --version >/dev/null   # builds on first use, outside the timings
make -s -C "$root/agent" OUT="$out/lib" "$out/lib/libmemtrace-rt.so" # this checkout's runtime, as the jar holds it
rt="$out/lib/libmemtrace-rt.so"
LIMIT=${LIMIT:-90}
SLOW_LIMIT=${SLOW_LIMIT:-$LIMIT}
REPEAT=${REPEAT:-2}
last="$out/last.$$.stderr"
. "$root/bench/tools/plans.sh"

# the Debian builds (gcc and memtrace cc) and their inputs: bench/real-programs.sh
cc_for() { case $1 in plain) echo gcc ;; full) echo "$root/memtrace-cc" ;; esac; }
. "$root/bench/real-programs.sh"
make_inputs
head -c 1048576 "$out/gzip.in" >"$out/gzip-1m.in"
head -c 8192 "$out/gzip.in" >"$out/gzip-8k.in"
head -c 8192 "$out/bzip2.in" >"$out/bzip2-8k.in"
head -n 22 "$out/sqlite3.sql" | sed '$a COMMIT;\nSELECT count(*), sum(c) FROM t;' >"$out/sqlite3-small.sql"
CC_PROGRAMS=${CC_PROGRAMS-gzip sqlite3 bzip2}
[ -z "$CC_PROGRAMS" ] || fetch_sources
for p in $CC_PROGRAMS; do for v in plain full; do "build_$p" $v; done; done
gcc -O2 -o "$out/empty" "$root/bench/programs/empty.c"
# a kernel of bench/programs: its gcc build (what the rewrite columns run) and its memtrace cc build
kernel() { [ "$1" != empty ] && [ -f "$root/bench/programs/$1.c" ]; }
build_kernel() { # variant program
  # shellcheck disable=SC2046 # the compiler command is words
  [ -x "$out/$1/$2" ] && [ "$out/$1/$2" -nt "$root/bench/programs/$2.c" ] || $(cc_for "$1") -O2 -g -pthread -o "$out/$1/$2" "$root/bench/programs/$2.c"
}

# t COMMAND...: "CPU WALL" of the fastest (by CPU) of $REPEAT runs, or ">CPU >LIMIT" when cut; the last
# run's stderr in $last (one per bench process: two benches at once must not share it). The whole process
# group goes when cut (a JVM and its program).
t() {
  python3 - "${REPEAT}" "$LIMIT" "$last" "$@" <<'PY'
import os, resource, signal, subprocess, sys, time
repeat, limit, err, cmd = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4:]
best = None
for _ in range(repeat):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    with open(err, "w") as e:
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=e, start_new_session=True)
        try:
            p.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            # cut: the CPU the direct child had used, a lower bound (a JVM's traced program is not ours to reap)
            os.killpg(p.pid, signal.SIGKILL); p.wait()
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            print(">%.3f >%.0f" % (cpu, limit)); sys.exit()
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if best is None or cpu < best[0]: best = (cpu, wall)
print("%.3f %.3f" % best)
PY
}
# cell "CPU WALL" BASE-CPU: "CPU (Nx) / WALL"; a cut run ">CPU (>Nx) / >LIMIT", its CPU a lower bound
cell() {
  local c=${1% *} w=${1#* } cut=
  case $c in '>'*) cut='>' c=${c#>} w=${w#>} ;; esac
  awk -v c="$c" -v w="$w" -v b="$2" -v cut="$cut" 'BEGIN { r = b > 0 ? c / b : 0
    printf (r < 10 ? "%s%.3f (%s%.1fx) / " : "%s%.3f (%s%.0fx) / "), cut, c, cut, r
    printf (cut ? ">%.0f" : "%.2f"), w }'
}
# accesses FILE: loads + stores of a summary on FILE
accesses() { awk '/^  loads / || /^  stores / { v = $2; gsub(",", "", v); n += v; s = 1 } END { print s ? n : "- (cut: no summary)" }' "$1"; }

args_of() { # program size: the command line's arguments after the binary
  case $1/$2 in
    gzip/full) echo "-9c $out/gzip-1m.in" ;;
    gzip/small) echo "-9c $out/gzip-8k.in" ;;
    sqlite3/full) echo ":memory: -init $out/sqlite3.sql .quit" ;;
    sqlite3/small) echo ":memory: -init $out/sqlite3-small.sql .quit" ;;
    bzip2/full) echo "-9c $out/bzip2.in" ;;
    bzip2/small) echo "-9c $out/bzip2-8k.in" ;;
    threads/kernel) echo 2 ;;
  esac
}
py_full='import json, re
d = {str(i): [i, i * i, str(i)] for i in range(5000)}
s = json.dumps(d)
print(len(s), len(re.findall(r"\d+", s)), sum(v[0] for v in json.loads(s).values()))'

progs=("$@")
[ ${#progs[@]} -gt 0 ] || progs=(gemm stencil hash chase heap qsort threads gzip sqlite3 python3 bzip2)
printf '| program | native | rw-discard | rw-disk | rw-run | native-src | cc-disk | fault | lackey |\n'
printf '|---|---|---|---|---|---|---|---|---|\n'
notes=()
for p in "${progs[@]}"; do
  bin=/usr/bin/$p sizes="small full"
  if kernel "$p"; then
    for v in plain full; do build_kernel $v "$p"; done
    bin=$out/plain/$p sizes=kernel
  fi
  for size in $sizes; do
    if [ $p = python3 ]; then
      if [ $size = full ]; then a=(-c "$py_full"); else a=(-S -c "print(sum(range(1000)))"); fi
    else
      read -r -a a <<<"$(args_of $p $size)"
    fi
    if [ $size != full ]; then # plans made (once per machine) outside the timings; its rewrite lines kept
      REPEAT=1 LIMIT=900 t "$mt" run --mode rewrite -o /dev/null -- "$bin" "${a[@]}" >/dev/null
      cp "$last" "$out/$p.plan.stderr"
    fi
    all=$(plans "$bin")
    n=$(t "$bin" "${a[@]}")
    nc=${n% *}
    d=$(t env LD_PRELOAD="$rt" MEMTRACE_REWRITE_PLAN="$all" "$bin" "${a[@]}")
    w=$(t env LD_PRELOAD="$rt" MEMTRACE_REWRITE_PLAN="$all" MEMTRACE_OUT="$out/$p.rw.mtr" "$bin" "${a[@]}")
    rm -f "$out/$p.rw.mtr"*
    r=$(REPEAT=1 t "$mt" run --mode rewrite -o /dev/null -- "$bin" "${a[@]}")
    cp "$last" "$out/$p-$size.rw.stderr"
    ns=- cs=-
    if [ -x "$out/plain/$p" ] && [ -x "$out/full/$p" ]; then
      ns=$(t "$out/plain/$p" "${a[@]}")
      cs=$(cell "$(t env MEMTRACE_OUT="$out/$p.cc.mtr" "$out/full/$p" "${a[@]}")" "${ns% *}")
      rm -f "$out/$p.cc.mtr"*
      ns=$(cell "$ns" "${ns% *}")
    fi
    f=- l=-
    if [ $size != full ]; then
      f=$(cell "$(REPEAT=1 LIMIT=$SLOW_LIMIT t "$mt" run --mode fault -o /dev/null -- "$bin" "${a[@]}")" "$nc")
      cp "$last" "$out/$p-$size.fault.stderr"
      l=$(cell "$(REPEAT=1 LIMIT=$SLOW_LIMIT t valgrind --tool=lackey --trace-mem=yes --log-file=/dev/null "$bin" "${a[@]}")" "$nc")
      notes+=("$p $size: accesses recorded, rewrite mode $(accesses "$out/$p-$size.rw.stderr"), fault mode $(accesses "$out/$p-$size.fault.stderr")")
    fi
    printf '| %s %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$p" "$size" "$(cell "$n" "$nc")" "$(cell "$d" "$nc")" \
      "$(cell "$w" "$nc")" "$(cell "$r" "$nc")" "$ns" "$cs" "$f" "$l"
  done
done
echo
for s in "${notes[@]}"; do echo "- $s"; done
# warm start-up: the plans of empty and libc cached
REPEAT=1 t "$mt" run --mode rewrite -q -o /dev/null -- "$out/empty" >/dev/null
n=$(t "$out/empty"); r=$(REPEAT=3 t "$mt" run --mode rewrite -q -o /dev/null -- "$out/empty")
f=$(REPEAT=3 t "$mt" run --mode fault -q -o /dev/null -- "$out/empty")
echo "- start-up, an empty program whole (fastest of 3): native $(cell "$n" "${n% *}"), rewrite mode (plans cached) $(cell "$r" "${n% *}"), fault mode $(cell "$f" "${n% *}")"
for p in "${progs[@]}"; do
  echo "- $p: $(grep -h 'memory instructions of /usr/bin\|memory instructions of /bin\|memory instructions of [^ ]*/plain/' "$out/$p.plan.stderr" | head -1 | sed 's/^memtrace: //')"
done
echo "load: $(uptime | sed 's/.*load average/load average/')"
