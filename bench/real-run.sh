#!/usr/bin/env bash
# Robustness sweep of `memtrace run` on real, unmodified programs: each program with real arguments runs
# natively, then under three memtrace runs, and every run must behave as the native one (issue 22: "output
# and exit status equal native everywhere"; issue 23: `run --check` reports nothing on a correct program):
#   null   memtrace run -q -o /dev/null                     (the trace thrown away)
#   trace  memtrace run -q -o T.trace --save-stream T.mtr, then memtrace print T.mtr must give T.trace again
#   check  memtrace run --check                             (any memtrace line on standard error is a report)
# A cell is "ok" when the exit status, standard output (byte for byte) and standard error (memtrace's own
# "memtrace:" lines left out) equal native's; otherwise it names what differs: "st N" (the status), "out",
# "err", "timeout", "java" (a Java stack trace on standard error), "print" (the printed stream differs from
# the trace), "N reports" (check lines), "leak" (the check lines are all leak lines; their status 23,
# LeakSanitizer's, is then not counted as a difference). CPU seconds (user + system of the process tree) natively and of each
# whole memtrace run (JVM included), measured one program after the other, interleaved.
# Sources of the programs built here are in bench/sweep/. Appends to bench/results/real-run.md
# (BENCH_RESULTS=off: not). LIMIT: seconds of wall clock per memtrace run (default 300). OUT: the scratch
# directory (default bench/out/real-run), so that two sweeps can run side by side.
# Usage: bench/real-run.sh [name ...]   (default: every row; names as in the table)
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/bench/results.sh"
out="${OUT:-$root/bench/out/real-run}"
mkdir -p "$out/data"
mt="${MEMTRACE:-$root/memtrace}" # MEMTRACE: an installed copy, so that editing the checkout while it runs changes nothing
export MEMTRACE_CDS=${MEMTRACE_CDS:-off}
LIMIT=${LIMIT:-300}
"$mt" --version >/dev/null # builds on first use, outside the timings
py=$(command -v python3)
case "$py" in */shims/*) py=/usr/bin/python3 ;; esac # a pyenv shim is a script: trace the interpreter
d="$out/data"
cd "$d"
# inputs, made natively
seq 1 5000 | awk '{ printf "%d line %x %s\n", ($1 * 7919) % 1000, $1, ($1 % 3 ? "alpha" : "beta") }' >text.txt
head -c 60000 text.txt >small.txt
sort -k1,1 small.txt >a.sorted && awk '{ print $1, NR }' small.txt | sort -k1,1 >b.sorted
seq 1 2 400 >odd.txt && seq 1 3 400 >three.txt
printf 'col\tx\ty\n' >tabs.txt && seq 1 50 | awk '{ printf "%d\t%s\t%d\n", $1, substr("abcdefghij", $1 % 10 + 1, 3), $1 * $1 }' >>tabs.txt
printf 'a.out: main.o util.o\n\tcc -o $@ $^\nmain.o util.o: %%.o: %%.c\n\tcc -c $<\n' >Makefile
mkdir -p tree/sub && cp small.txt tree/a.txt && seq 100 >tree/sub/b.txt && touch -d @1000000000 tree tree/sub tree/*.txt tree/sub/*
printf 'create table t(k integer primary key, v text);\n' >db.sql
for i in $(seq 1 200); do printf "insert into t values(%d, 'v%d');\n" "$i" $((i * 37 % 101)); done >>db.sql
printf 'select count(*), sum(k), max(v) from t where v like %s;\nselect v, count(*) from t group by v order by 2 desc, 1 limit 3;\n' "'v1%'" >>db.sql
gzip -9c small.txt >small.gz && bzip2 -c small.txt >small.bz2 && xz -c small.txt >small.xz
tar czf small.tar.gz tree
printf '#!/bin/sh\nset -e\nn=0\nfor f in tree/a.txt tree/sub/b.txt; do n=$((n + $(wc -l <"$f"))); done\necho "lines $n"\n(cd tree && ls | sort)\nx=$(echo inner | tr a-z A-Z); echo "$x"\ncase "$x" in IN*) echo matched ;; esac\nexit 3\n' >script.sh
for s in exceptions.cpp signals.c spawn.c; do
  case $s in
    *.cpp) g++ -O2 -g -pthread -o "${s%.*}" "$root/bench/sweep/$s" ;;
    *) gcc -O1 -g -rdynamic -o "${s%.*}" "$root/bench/sweep/$s" -ldl ;;
  esac
done
cp "$root/bench/sweep/sweep.py" .

bench_results real-run "$@"
cpu() { tail -1 "$1" | awk '{ printf "%.2f", $1 + $2 }'; }
printf '| program | native status | null | trace | check | CPU native s | CPU null s | CPU trace s | CPU check s |\n'
printf '|---|---|---|---|---|---|---|---|---|\n'
bad=0
# mode NAME MODE STDIN PROGRAM ARGS...: one memtrace run, compared with $n.n*; prints its cell
mode() {
  local n=$1 m=$2 in=$3
  shift 3
  local opts=()
  case $m in
    null) opts=(-q -o /dev/null) ;;
    trace) opts=(-q -o "$out/t.trace" --save-stream "$out/t.mtr") ;;
    check) opts=(--check) ;;
  esac
  rm -rf tree.out split.* && mkdir -p tree.out
  /usr/bin/time -o "$n.$m.time" -f '%U %S' timeout "$LIMIT" "$mt" run --no-progress "${opts[@]}" -- "$@" \
    <"$in" >"$n.$m.out" 2>"$n.$m.all"
  local s=$? cell=()
  grep -v '^memtrace: ' "$n.$m.all" >"$n.$m.err"
  local r=0 leak=
  if [ "$m" = check ]; then
    r=$(grep -c '^memtrace: ' "$n.$m.all")
    # leak lines alone: LeakSanitizer's status 23 is what a leak gives, not a difference
    [ "$r" != 0 ] && ! grep '^memtrace: ' "$n.$m.all" | grep -qv '^memtrace: leaks\?: ' && leak=1
  fi
  if [ $s = 124 ]; then cell+=(timeout); else
    [ "$s" = "$ns" ] || { [ -n "$leak" ] && [ "$s" = 23 ]; } || cell+=("st $s")
    cmp -s "$n.nout" "$n.$m.out" || cell+=(out)
    cmp -s "$n.nerr" "$n.$m.err" || cell+=(err)
  fi
  grep -q '^	at [a-z].*(.*\.java:[0-9]*)\|^Exception in thread\|^java\.' "$n.$m.all" && cell+=(java)
  if [ -n "$leak" ]; then cell+=(leak); elif [ "$r" != 0 ]; then cell+=("$r reports"); fi
  if [ "$m" = trace ] && [ $s != 124 ]; then
    timeout "$LIMIT" "$mt" print -o "$out/t.print" "$out/t.mtr" >/dev/null 2>"$n.print.err" && cmp -s "$out/t.trace" "$out/t.print" \
      || cell+=(print)
  fi
  rm -f "$out/t.trace" "$out/t.mtr" "$out/t.print"
  [ ${#cell[@]} = 0 ] && echo ok || { local IFS=,; echo "${cell[*]}"; }
}
# row NAME STDIN PROGRAM ARGS...: one program natively, then under the three memtrace runs
row() {
  local name=$1 in=$2
  shift 2
  if [ -n "$only" ] && [[ " $only " != *" $name "* ]]; then return; fi
  local n="$out/$name"
  rm -rf tree.out split.* && mkdir -p tree.out
  /usr/bin/time -o "$n.ntime" -f '%U %S' "$@" <"$in" >"$n.nout" 2>"$n.nerr"
  ns=$?
  local a b c
  a=$(mode "$n" null "$in" "$@")
  b=$(mode "$n" trace "$in" "$@")
  c=$(mode "$n" check "$in" "$@")
  [ "$a$b$c" = okokok ] || bad=$((bad + 1))
  printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$ns" "$a" "$b" "$c" \
    "$(cpu "$n.ntime")" "$(cpu "$n.null.time")" "$(cpu "$n.trace.time")" "$(cpu "$n.check.time")"
}
only="$*"
T=text.txt S=small.txt N=/dev/null
row ls-root "$N" ls /
row sort "$S" sort -k2
row sort-n "$S" sort -n -s -k1,1
row uniq "$N" uniq -c -w3 a.sorted
row wc "$N" wc text.txt small.txt
row cut "$S" cut -d' ' -f2,3
row tr "$S" tr -s 'a-z' 'A-Z'
row od "$N" od -A x -t x1z -N 2048 text.txt
row md5sum "$N" md5sum text.txt small.txt
row sha256sum "$N" sha256sum text.txt
row tac "$S" tac
row paste "$N" paste -d, odd.txt three.txt
row join "$N" join a.sorted b.sorted
row comm "$N" comm -3 odd.txt three.txt
row fold "$S" fold -w 17 -s
row expand "$N" expand -t 5 tabs.txt
row split "$S" split -l 300 -d - split.
row cmp "$N" cmp small.txt text.txt
row cmp-differ "$N" cmp text.txt tree/sub/b.txt
row diff "$N" diff -u odd.txt three.txt
row sed "$S" sed -E 's/([0-9]+) line/<\1>/; /alpha/d'
row mawk "$N" mawk '{ s[$3] += $1 } END { for (k in s) print k, s[k] }' text.txt
row gawk "$N" gawk '{ s[$3] += $1; n++ } END { PROCINFO["sorted_in"] = "@ind_str_asc"; for (k in s) printf "%s %d %.3f\n", k, s[k], s[k] / n }' text.txt
row grep-E "$N" grep -E -c 'beta|^9[0-9]+ ' text.txt
row grep-F "$N" grep -F -n -e 'ff beta' -e '10 line' text.txt
row grep-P "$N" grep -P -o '\b[0-9a-f]{3}(?= beta)' small.txt
row grep-none "$N" grep -q nothing-like-this small.txt
row find "$N" find tree -name '*.txt' -size -400k
row xargs "$N" sh -c 'find tree -type f | sort | xargs -n 1 wc -c'
row tar-czf "$N" tar czf - --mtime=@0 --owner=0 --group=0 tree
row tar-xzf "$N" tar xzf small.tar.gz -C tree.out
row gzip "$S" gzip -6c
row gunzip "$N" gzip -dc small.gz
row bzip2 "$S" bzip2 -9c
row bunzip2 "$N" bzip2 -dc small.bz2
row xz "$S" xz -3c
row unxz "$N" xz -dc small.xz
row zstd "$S" zstd -T2 -3 -c
row perl "$N" perl -e 'my %h; $h{$_ % 7} += $_ for 1..20000; print join(",", map {"$_=$h{$_}"} sort keys %h), "\n"; eval { die "boom\n" }; print "caught $@"; warn "to stderr\n"; exit 6'
row python3 "$N" "$py" sweep.py
row sqlite3 db.sql sqlite3
row file "$N" file text.txt small.gz small.xz exceptions Makefile
row readelf "$N" readelf -h -S -d exceptions
row objdump "$N" objdump -d --no-show-raw-insn spawn
row make-n "$N" make -n -f Makefile
row bash-pipe "$N" bash -c 'seq 1 3000 | sort -r | head -3; for i in 1 2 3; do (echo sub $i); done | tr a-z A-Z; echo "${PIPESTATUS[@]}"; exit 7'
row sh-script "$N" sh script.sh
row exceptions "$N" ./exceptions
row signals "$N" ./signals
row spawn "$N" ./spawn
printf '\n%s rows differ from native\n' "$bad"
