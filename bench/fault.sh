#!/usr/bin/env bash
# Fault mode's cost per access next to the bare fault round trip, in one run (issue 8, item 2).
# Usage: bench/fault.sh [program ...]   (default: compute heap matmul)
# A program is a bench/programs/NAME.c (built gcc -O2 -g -no-pie) or one of issue 8's real-program set:
#   sort     /usr/bin/sort of 10,000 lines          gzip     /usr/bin/gzip -c of 100 KB of text
#   sqlite3  500 rows inserted and summed (:memory:) python3  /usr/bin/python3 -c 'sum(range(10**5))'
#   threads2, threads4  bench/programs/threads.c with 2 and 4 threads sharing one array
#   real     all six of them
# For each program: wall time natively, under `memtrace run` and under Lackey; the accesses memtrace
# recorded (loads + stores of its summary) and the windows at risk it reported; us_per_access = (memtrace - native - fixed start-up cost) / accesses; bare_us = the bare fault
# round trip of bench/fault/bare_fault.c (fault + 2 mprotect + sigreturn) measured right after; x_bare their
# ratio (target <= 1.3); fonly_us = bench/fault/fault_only.c (fault + sigreturn, no mprotect: the floor of
# the redirected route, which opens nothing) and x_fonly the ratio to it; then `strace -f -c` of a second memtrace run: system calls per recorded access
# (the program and memtrace's JVM together: futex is the consumer's).
# STRACE=no skips the strace run (its columns print 0): under strace a long program takes many times longer.
# MEMTRACE="java -jar other.jar" compares another build (the launcher is the default).
# The machine is shared: quote ratios from one run.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/scripts/env.sh"
memtrace_prereqs --with-bench-tools
. "$root/bench/results.sh"
bench_results fault "$@"
command -v strace >/dev/null || { echo "bench/fault.sh: needs strace (apt-get install strace)" >&2; exit 2; }
out="$root/bench/out"
mkdir -p "$out"
mt=(${MEMTRACE:-"$root/memtrace"})
"${mt[@]}" --version >/dev/null   # builds on first use, outside the timings

now() { date +%s.%N; }
elapsed() { local s; s=$(now); "$@" >/dev/null 2>&1 || true; echo "$(now) - $s" | bc -l; }

gcc -O2 -o "$out/bare_fault" "$root/bench/fault/bare_fault.c"
gcc -O2 -o "$out/fault_only" "$root/bench/fault/fault_only.c"
gcc -O2 -o "$out/empty" "$root/bench/programs/empty.c"
fixed=$(elapsed "${mt[@]}" run --mode fault --quiet -o "$out/empty.trace" -- "$out/empty")
lackey_fixed=$(elapsed valgrind --tool=lackey --trace-mem=yes --log-file="$out/empty.lackey" "$out/empty")
echo "memtrace fixed cost (empty program): ${fixed} s; Lackey's: ${lackey_fixed} s"

# The command line of program $1, in the array cmd; inputs are made once, deterministically, in bench/out/fault-in.
in="$out/fault-in"
mkdir -p "$in"
command_of() {
  case "$1" in
    sort)
      [ -f "$in/lines.txt" ] || awk 'BEGIN { srand(7); for (i = 0; i < 10000; i++) printf "%08d line %d\n", int(rand() * 1e8), i }' >"$in/lines.txt"
      cmd=(/usr/bin/sort "$in/lines.txt") ;;
    gzip)
      # written whole, then cut: a generator piped into head dies of SIGPIPE, which pipefail makes fatal
      [ -f "$in/text.txt" ] || { for i in $(seq 1 3000); do echo "line $i of the gzip input, $((i * 7919 % 1000)) words"; done >"$in/text.full"; head -c 102400 "$in/text.full" >"$in/text.txt"; rm "$in/text.full"; }
      cmd=(/usr/bin/gzip -c "$in/text.txt") ;;
    sqlite3)
      command -v sqlite3 >/dev/null || { echo "bench/fault.sh: sqlite3 needs the sqlite3 package" >&2; exit 2; }
      [ -f "$in/rows.sql" ] || { echo "create table t(id integer primary key, name text, v real); begin;"
        for i in $(seq 1 500); do echo "insert into t(name, v) values ('row $i', $i * 1.5);"; done
        echo "commit; select count(*), sum(v) from t;"; } >"$in/rows.sql"
      cmd=(/usr/bin/sqlite3 :memory: ".read $in/rows.sql") ;;
    python3)
      cmd=(/usr/bin/python3 -c 'print(sum(range(10**5)))') ;;
    threads2|threads4)
      gcc -O2 -g -no-pie -pthread -o "$out/threads" "$root/bench/programs/threads.c"
      cmd=("$out/threads" "${1#threads}") ;;
    *)
      [ -f "$root/bench/programs/$1.c" ] || { echo "bench/fault.sh: no program $1 (see the usage at the top)" >&2; exit 2; }
      gcc -O2 -g -no-pie -o "$out/$1" "$root/bench/programs/$1.c"
      cmd=("$out/$1") ;;
  esac
}
summary() { awk -v k="$1" 'index($0, "  " k " ") == 1 { gsub(",", "", $NF); print $NF }' "$2" | head -1; }

progs=()
for a in "$@"; do
  if [ "$a" = real ]; then progs+=(sort gzip sqlite3 python3 threads2 threads4); else progs+=("$a"); fi
done
[ ${#progs[@]} -gt 0 ] || progs=(compute heap matmul)
printf '%-9s %9s %10s %9s %9s %9s %8s %6s %8s %7s %9s | per access: %8s %8s %8s %8s\n' program native_s memtrace_s lackey_s \
  accesses us_access bare_us x_bare fonly_us x_fonly at_risk mprotect sigmask sigret futex
for p in "${progs[@]}"; do
  command_of "$p"
  tn=$(elapsed "${cmd[@]}")
  s=$(now)
  "${mt[@]}" run --mode fault -o "$out/$p.trace" -- "${cmd[@]}" >/dev/null 2>"$out/$p.summary" || true
  tm=$(echo "$(now) - $s" | bc -l)
  bare=$("$out/bare_fault" 100000 | awk '{print $4}')
  fonly=$("$out/fault_only" 100000 | awk '{print $4}')
  tl=$(elapsed valgrind --tool=lackey --trace-mem=yes --log-file="$out/$p.lackey" "${cmd[@]}")
  acc=$(( $(summary loads "$out/$p.summary") + $(summary stores "$out/$p.summary") ))
  risk=$(summary "windows at risk" "$out/$p.summary")
  per=$(echo "if ($acc > 0) ($tm - $tn - $fixed) * 1000000 / $acc else 0" | bc -l)
  : >"$out/$p.strace"
  [ "${STRACE:-yes}" = no ] || strace -f -c -o "$out/$p.strace" "${mt[@]}" run --mode fault --quiet -o /dev/null -- "${cmd[@]}" >/dev/null 2>&1 || true
  calls() { awk -v s="$1" '$NF == s { print $4 }' "$out/$p.strace" | head -1; }
  ratio() { local n; n=$(calls "$1"); echo "if ($acc > 0) ${n:-0} / $acc else 0" | bc -l; }
  printf '%-9s %9.3f %10.3f %9.3f %9d %9.2f %8.2f %6.2f %8.2f %7.2f %9d | %20.2f %8.2f %8.2f %8.2f\n' "$p" "$tn" "$tm" "$tl" "$acc" \
    "$per" "$bare" "$(echo "$per / $bare" | bc -l)" "$fonly" "$(echo "$per / $fonly" | bc -l)" "${risk:-0}" "$(ratio mprotect)" "$(ratio rt_sigprocmask)" \
    "$(ratio rt_sigreturn)" "$(ratio futex)"
done
