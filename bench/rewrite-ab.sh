#!/usr/bin/env bash
# Two planner versions of rewrite mode side by side (issue 22): the program alone, memtrace's runtime preloaded
# with the cached plans of the executable, its libraries and ld.so, trace to disk (bench/rewrite-side.sh's
# rw-disk column), each version's run alternating with the other's ROUNDS times (default 5), so both see the
# same load. Prints per program the fastest CPU (user + sys) of each version, its ratio to native (run in the
# same rounds). Both versions' plans must be in
# the cache (a `memtrace run` of each program with each version made them); the runtime is this checkout's,
# for both versions unless OLD_RT names one built from the old version's commit (a plan file of another
# format: rewrite-21 maps the text from the plan, version 5). RUN=1 adds a column: the whole `memtrace run -o
# /dev/null` of this checkout (the JVM reading the stream included), CPU of it and its children.
# Appends to bench/results/rewrite-ab.md (BENCH_RESULTS=off: not).
# Usage: OLD=rewrite-19-tail-branches [OLD_RT=lib.so] [NEW=version, default this checkout's] [RUN=1] bench/rewrite-ab.sh [program ...]
#        (default: python3-json python3-small sqlite3 gzip)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/bench/results.sh"
bench_results rewrite-ab "$@"
out="$root/bench/out/rewrite-ab"
mkdir -p "$out"
make -s -C "$root/agent" OUT="$out/lib" "$out/lib/libmemtrace-rt.so"
rt="$out/lib/libmemtrace-rt.so"
old_rt=${OLD_RT:-$rt}
: "${OLD:?OLD=the planner version to compare with}"
NEW=${NEW:-$(sed -n 's/.*PLANNER_VERSION = "\(.*\)";/\1/p' "$root/src/main/java/org/memtrace/rewrite/ModuleRewrite.java")}
ROUNDS=${ROUNDS:-5}
cache="${XDG_CACHE_HOME:-$HOME/.cache}/memtrace/rewrite"
key() { { printf '%s' "$1"; cat "$2"; } | sha256sum | cut -d' ' -f1; }
plans() { # version binary: the plan list, ':' between (the executable's first)
  local list="$cache/$(key "$1" "$2").plan" interp lib
  [ -f "$list" ] || { echo "no $1 plan of $2 in $cache (run memtrace run once with that version)" >&2; exit 2; }
  interp=$(readelf -l "$2" | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
  for lib in $("$interp" --list "$2" | sed -n 's/.*=> \(\/[^ ]*\) (0x.*/\1/p') "$interp"; do
    [ -f "$cache/$(key "$1" "$lib").plan" ] && list="$list:$cache/$(key "$1" "$lib").plan"
  done
  printf '%s' "$list"
}
awk 'BEGIN { srand(7); for (i = 0; i < 40000; i++) printf "line %d value %d %s\n", i, int(rand()*100000), (i % 7 ? "alpha" : "omega") }' >"$out/gzip.all"
head -c 1048576 "$out/gzip.all" >"$out/gzip.in"
awk 'BEGIN { print "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL);"; print "BEGIN;";
  for (i = 0; i < 500; i++) printf "INSERT INTO t(b, c) VALUES (%c%s%d%c, %d.5);\n", 39, "name", i * 7919 % 1000, 39, i;
  print "COMMIT;"; print "SELECT count(*), sum(c), max(b) FROM t WHERE c > 100;" }' >"$out/sqlite3.sql"
cat >"$out/dumps.py" <<'PY'
import json, re
d = {str(i): [i, i * i, str(i)] for i in range(5000)}
s = json.dumps(d)
print(len(s), len(re.findall(r"\d+", s)), sum(v[0] for v in json.loads(s).values()))
PY
cmd_of() { # program: the command line
  case $1 in
    python3-json) echo "/usr/bin/python3 $out/dumps.py" ;;
    python3-small) echo "/usr/bin/python3 -S -c print(sum(range(1000)))" ;;
    sqlite3) echo "/usr/bin/sqlite3 :memory: -init $out/sqlite3.sql .quit" ;;
    gzip) echo "/usr/bin/gzip -6c $out/gzip.in" ;;
  esac
}
cpu() { # runtime, plan-list (empty: native), command...: the CPU of one run, its stderr in $out/err
  local r=$1 p=$2; shift 2
  /usr/bin/time -f '%U %S' -o "$out/time" env ${p:+LD_PRELOAD=$r MEMTRACE_REWRITE_PLAN=$p MEMTRACE_OUT=$out/t.mtr} "$@" >/dev/null 2>"$out/err"
  rm -f "$out"/t.mtr*
  awk '{ printf "%.3f", $1 + $2 }' "$out/time"
}
min() { printf '%s\n' "$@" | sort -g | head -1; }
progs=("$@")
[ ${#progs[@]} -gt 0 ] || progs=(python3-json python3-small sqlite3 gzip)
run_cpu() { # command...: the CPU of one whole `memtrace run -o /dev/null` and its children
  /usr/bin/time -f '%U %S' -o "$out/time" "$root/memtrace" run -o /dev/null -- "$@" >/dev/null 2>"$out/err"
  awk '{ printf "%.3f", $1 + $2 }' "$out/time"
}
echo "OLD=$OLD OLD_RT=$old_rt NEW=$NEW ROUNDS=$ROUNDS RUN=${RUN:-0}; load: $(uptime | sed 's/.*load average/load average/')"
echo
if [ "${RUN:-0}" = 1 ]; then
  printf '| program | native | %s | %s | memtrace run -o /dev/null (%s) |\n|---|---|---|---|---|\n' "$OLD" "$NEW" "$NEW"
else
  printf '| program | native | %s | %s |\n|---|---|---|---|\n' "$OLD" "$NEW"
fi
for p in "${progs[@]}"; do
  read -r -a c <<<"$(cmd_of "$p")"
  po=$(plans "$OLD" "${c[0]}") pn=$(plans "$NEW" "${c[0]}")
  n=() o=() w=() m=()
  for _ in $(seq "$ROUNDS"); do
    n+=("$(cpu '' '' "${c[@]}")")
    o+=("$(cpu "$old_rt" "$po" "${c[@]}")")
    w+=("$(cpu "$rt" "$pn" "${c[@]}")")
    [ "${RUN:-0}" = 1 ] && m+=("$(run_cpu "${c[@]}")")
  done
  nb=$(min "${n[@]}") ob=$(min "${o[@]}") wb=$(min "${w[@]}")
  ratio() { awk -v a="$1" -v b="$nb" 'BEGIN{ if (b > 0) printf "%.1fx", a/b; else print "-" }'; }
  row="| $p | $nb | $ob ($(ratio "$ob")) | $wb ($(ratio "$wb")) |"
  if [ "${RUN:-0}" = 1 ]; then mb=$(min "${m[@]}"); row="$row $mb ($(ratio "$mb")) |"; fi
  echo "$row"
done
echo
echo "load: $(uptime | sed 's/.*load average/load average/')"
