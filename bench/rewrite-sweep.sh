#!/usr/bin/env bash
# Rewrite mode (memtrace run's default) on real, unmodified programs of the system, each compared with its
# native run: standard output byte for byte, standard error (memtrace's own "memtrace:" lines and summary
# left out), and the exit status must be equal. One row per program: native and rewritten status, whether
# stdout/stderr are equal, the events `memtrace run` wrote to the trace (-o FILE, its "(N events)"), the
# modules it rewrote, and CPU seconds (user + system of the process tree) natively and for the whole
# `memtrace run` (JVM, cached plans, the run, the MadT text). A program's first rewrite run plans it (libc
# ~13 s of CPU once per machine); run twice to see warm figures. A row that differs is a defect: a program
# must behave under memtrace as it does natively. Sources of the three built programs are in bench/sweep/
# (C++ exceptions and threads, C signals/longjmp/contexts/vfork/dlopen, a crash reporter's backtrace(), a
# python3 script).
# Appends to bench/results/rewrite-sweep.md (BENCH_RESULTS=off: not). LIMIT: seconds of wall clock per
# rewritten run (default 300), cut runs show "timeout". Known differences (docs/rewriting.md, "Real programs"):
# proc-fds (the trace's descriptor 1023) and crash-backtrace (no unwind information for trampolines);
# fd-inherit checks that descriptors above 2 the shell passed reach the program (docs/trust.md, "Descriptors").
# Usage: bench/rewrite-sweep.sh [name ...]   (default: every row; names as in the table)
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/bench/results.sh"
out="$root/bench/out/rewrite-sweep"
mkdir -p "$out/data"
mt="$root/memtrace"
export MEMTRACE_CDS=${MEMTRACE_CDS:-off}
LIMIT=${LIMIT:-300}
"$mt" --version >/dev/null # builds on first use, outside the timings
py=$(command -v python3)
case "$py" in */shims/*) py=/usr/bin/python3 ;; esac # a pyenv shim is a script: trace the interpreter
# inputs, made natively
d="$out/data"
cd "$d"
seq 1 20000 | awk '{ printf "%d line %x %s\n", ($1 * 7919) % 1000, $1, ($1 % 3 ? "alpha" : "beta") }' >text.txt
head -c 300000 text.txt >small.txt
printf 'a.out: main.o util.o\n\t@echo link $^\nmain.o util.o:\n\t@echo cc $@\n' >Makefile
mkdir -p tree/sub && cp small.txt tree/a.txt && seq 100 >tree/sub/b.txt && touch -d @1000000000 tree tree/sub tree/*.txt tree/sub/*
printf 'create table t(k integer primary key, v text);\n' >db.sql
for i in $(seq 1 200); do printf "insert into t values(%d, 'v%d');\n" "$i" $((i * 37 % 101)); done >>db.sql
printf 'select count(*), sum(k), max(v) from t where v like %s;\nselect v, count(*) from t group by v order by 2 desc, 1 limit 3;\n' "'v1%'" >>db.sql
gzip -9c small.txt >small.gz
tar czf small.tar.gz tree
xz -c small.txt >small.xz
for s in exceptions.cpp signals.c backtrace.c; do
  case $s in
    *.cpp) g++ -O2 -g -pthread -o "${s%.*}" "$root/bench/sweep/$s" ;;
    *) gcc -O1 -g -rdynamic -o "${s%.*}" "$root/bench/sweep/$s" -ldl ;;
  esac
done
cp "$root/bench/sweep/sweep.py" .
# gpg makes its home and keybox on first use and says so: made here, so both runs find them
mkdir -p -m 700 gnupg && gpg --homedir gnupg --print-md SHA256 /dev/null >/dev/null 2>&1
seq 1 300 | awk '{ printf "%s{\"k\":%d,\"v\":\"%x\"}", (NR > 1 ? "," : "["), $1, $1 * 4099 } END { print "]" }' >db.json
printf 'scale=40\n4*a(1)\ne(1)\nsqrt(2)^2\nfor (i = 0; i < 200; i++) s += i^3\ns\nquit\n' >bc.in
printf 'proc fib {n} { if {$n < 2} { return $n }; expr {[fib [expr {$n-1}]] + [fib [expr {$n-2}]]} }\nputs [fib 15]\nputs [lsort -integer {5 3 11 1}]\nif {[catch {error boom} m]} { puts "caught $m" }\nexit 2\n' >tcl.in

bench_results rewrite-sweep "$@"
cpu() { tail -1 "$1" | awk '{ printf "%.2f", $1 + $2 }'; }
printf '| program | native status | rewrite status | stdout | stderr | events | modules rewritten | CPU native s | CPU rewrite s |\n'
printf '|---|---|---|---|---|---|---|---|---|\n'
bad=0
# row NAME STDIN PROGRAM ARGS...: one program, native then rewritten
row() {
  local name=$1 in=$2
  shift 2
  if [ -n "$only" ] && [[ " $only " != *" $name "* ]]; then return; fi
  local n="$out/$name"
  rm -rf tree.out x.tar.gz && mkdir -p tree.out
  /usr/bin/time -o "$n.ntime" -f '%U %S' "$@" <"$in" >"$n.nout" 2>"$n.nerr"
  local ns=$?
  rm -rf tree.out x.tar.gz && mkdir -p tree.out
  /usr/bin/time -o "$n.rtime" -f '%U %S' timeout "$LIMIT" "$mt" run --no-progress -o "$out/x.mtr" -- "$@" \
    <"$in" >"$n.rout" 2>"$n.rall"
  local rs=$?
  grep -v '^memtrace: \|^memtrace summary$\|^  ' "$n.rall" >"$n.rerr"
  local o=equal e=equal
  cmp -s "$n.nout" "$n.rout" || o=DIFFERS
  cmp -s "$n.nerr" "$n.rerr" || e=DIFFERS
  [ $rs = 124 ] && o=timeout e=timeout
  local ev rw
  ev=$(sed -n 's/^memtrace: trace written to .* (\([0-9]*\) events).*/\1/p' "$n.rall" | tail -1)
  rw=$(grep -c '^memtrace: rewrite: [0-9].* rewritten' "$n.rall")
  [ "$ns" = "$rs" ] && [ $o = equal ] && [ $e = equal ] || bad=$((bad + 1))
  printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$ns" "$rs" "$o" "$e" "${ev:--}" "$rw" \
    "$(cpu "$n.ntime")" "$(cpu "$n.rtime")"
}
only="$*"
T=text.txt S=small.txt N=/dev/null
row ls-l "$N" ls -l --time-style=+%s tree tree/sub
row sort "$S" sort -k2
row sort-n "$S" sort -n -s
row uniq "$N" uniq -c tree/sub/b.txt
row wc "$N" wc text.txt small.txt
row md5sum "$N" md5sum text.txt
row sha256sum "$N" sha256sum text.txt
row cut "$S" cut -d' ' -f2,3
row tr "$S" tr a-z A-Z
row od "$N" od -A x -t x1z -N 4096 text.txt
row base64 "$N" base64 small.txt
row seq "$N" seq -f %.3f 1 0.5 5000
row date "$N" date -u -d @1700000000 '+%F %T %j %A'
row stat "$N" stat -c '%n %s %F %a %Y' text.txt tree
row grep-E "$N" grep -E -c 'beta|^9[0-9]+ ' text.txt
row grep-P "$N" grep -P -o '\b[0-9a-f]{3}(?= beta)' small.txt
row sed "$S" sed -E 's/([0-9]+) line/<\1>/; /alpha/d'
row mawk "$N" mawk '{ s[$3] += $1 } END { for (k in s) print k, s[k] }' text.txt
row tar-czf "$N" tar czf - tree
row tar-xzf "$N" tar xzf small.tar.gz -C tree.out
row gzip "$S" gzip -6c
row gunzip "$N" gzip -dc small.gz
row bzip2 "$S" bzip2 -9c
row xz-T2 "$S" xz -T2 -3c
row unxz "$N" xz -dc small.xz
row find "$N" find tree -name '*.txt' -size -400k
row diff "$N" diff small.txt tree/sub/b.txt
row perl "$N" perl -e 'my %h; $h{$_ % 7} += $_ for 1..20000; print join(",", map {"$_=$h{$_}"} sort keys %h), "\n"; eval { die "boom\n" }; print "caught $@"; exit 6'
row python3 "$N" "$py" sweep.py
row sqlite3 db.sql sqlite3
row bash-pipe "$N" bash -c 'seq 1 3000 | sort -r | head -3; for i in 1 2 3; do (echo sub $i); done | tr a-z A-Z; exit 7'
row make "$N" make -s -f Makefile
row gawk "$N" gawk -F' ' '{ s[$3] += $1; n++ } END { PROCINFO["sorted_in"] = "@ind_str_asc"; for (k in s) printf "%s %d %.3f\n", k, s[k], s[k] / n }' text.txt
row sort-parallel "$N" sort --parallel=2 -S 2M -k3,3 -k1n text.txt
row sigpipe "$N" bash -c 'seq 1 200000 | head -2; echo "${PIPESTATUS[@]}"'
row openssl-dgst "$N" openssl dgst -sha256 -sha512 text.txt
row openssl-enc "$S" openssl enc -aes-256-cbc -K 000102030405060708090a0b0c0d0e0f000102030405060708090a0b0c0d0e0f -iv 0f0e0d0c0b0a09080706050403020100
row zstd-T2 "$S" zstd -T2 -3 -c
row lz4 "$S" lz4 -c
row jq "$N" jq -c '[.[] | select(.k % 3 == 0) | .v] | length, (map(length) | add)' db.json
row bc "$N" bc -l -q bc.in
row file "$N" file text.txt small.gz small.xz exceptions Makefile
row xxd "$N" xxd -l 2048 small.gz
row zip "$N" zip -X -q -D - Makefile tree/sub/b.txt
row gpg-md "$N" gpg --homedir gnupg --print-md SHA256 text.txt
row git "$N" git hash-object text.txt small.txt
row tclsh "$N" tclsh tcl.in
row curl-file "$N" curl -s file://$d/tree/sub/b.txt
row proc-fds "$N" ls /proc/self/fd
row fd-inherit "$N" cat /dev/fd/3 3<Makefile
row exceptions "$N" ./exceptions
row signals "$N" ./signals
row crash-backtrace "$N" ./backtrace
printf '\n%s rows differ from native\n' "$bad"
