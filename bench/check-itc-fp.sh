#!/usr/bin/env bash
# False positives of the checker on the Toyota ITC benchmarks' no-defect twins (02.wo_Defects: every function
# there is meant to be correct code), and what it says on the defect half's classes it does not claim.
# ITC is not in the project: extract it yourself, e.g.
#   git --git-dir=<mirror of github.com/regehr/itc-benchmarks> archive HEAD | tar x -C /tmp/itc
# and pass ITC=/tmp/itc. Its driver: `prog N` runs file F = N/1000's case v = N%1000; v = 888 runs every case
# of the file. One build of the whole suite each:
#   plain-O0  gcc -O0 -g              (native, and what run --check runs)
#   asan-O0   gcc -O0 -g -fsanitize=address   (the reference: a report ASan makes too is a bug in ITC's code)
#   check-O0, check-O2   memtrace cc --check -O0|-O2 -g
# (all with -fcommon: ITC defines the same tentative globals in several files). Every case runs natively,
# under ASan and both --check builds; `memtrace run --check` (default rewrite mode) and `--mode fault` run
# each file's cases at once (N = F*1000+888) with MEMTRACE_CHECK=continue, a JVM each (PER_CASE=on runs them
# case by case instead: a JVM per case). A run is "quiet" when it prints no `memtrace:` line, exits as the
# native run and prints what it printed (thread ids and addresses masked: they differ between any two runs);
# a report is a line of one of the checker's kinds (report_re, bench/check-kinds.sh), not memtrace's notes.
# Writes bench/results/check-itc-fp.md (BENCH_RESULTS=off for a trial run).
# Usage: ITC=/tmp/itc bench/check-itc-fp.sh   (SUITE=01.w_Defects FILES="data_overflow race_condition" runs
# those files of the defect half; JOBS=N, default 2; TOOLS="check-O0 rewrite" only those columns;
# REUSE=on keeps the last builds; TABLES_ONLY=on tabulates the last run's results.tsv again; OUT=DIR work
# directory, default bench/out/check-itc-fp-SUITE)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
: "${ITC:?ITC=<an extracted checkout of github.com/regehr/itc-benchmarks>}"
SUITE=${SUITE:-02.wo_Defects}
src="$ITC/$SUITE"
out=${OUT:-$root/bench/out/check-itc-fp-$SUITE}
JOBS=${JOBS:-2}
tools=${TOOLS:-check-O0 check-O2 rewrite fault}
export MT="$root/memtrace"
TABLES_ONLY=${TABLES_ONLY:-off}
[ "${REUSE:-off}" = on ] || [ "$TABLES_ONLY" = on ] || rm -rf "$out"
mkdir -p "$out/runs"
cd "$out"
if [ "$TABLES_ONLY" != on ]; then
"$MT" --version >/dev/null   # builds the jar and runtimes first if the sources changed

# the whole suite in one program per configuration
flags="-g -w -fcommon -pthread -I$ITC/include"
build() {
  [ -x "$1" ] && [ "${REUSE:-off}" = on ] && return 0
  case $1 in
    plain-O0) cc="gcc -O0" ;;
    asan-O0) cc="gcc -O0 -fsanitize=address" ;;
    check-O0|check-O2) cc="$MT cc --check -${1#check-}" ;;
  esac
  # shellcheck disable=SC2086
  $cc $flags -o "$1" "$src"/*.c -lm >"build-$1.log" 2>&1 || { echo "build failed: $1 (build-$1.log)" >&2; exit 1; }
}
export -f build; export flags src REUSE=${REUSE:-off}
printf '%s\n' plain-O0 asan-O0 $(for t in $tools; do case $t in check-*) echo "$t" ;; esac; done) |
  xargs -P "$JOBS" -I{} bash -c 'build {}'

# the cases: the number main.c gives each file, times 1000, plus each `vflag == v` of the file
rm -f filecases.txt
awk '/vflag_file *== *[0-9]+/ { match($0, /== *[0-9]+/); n = substr($0, RSTART + 2) + 0 }
     /_main *\(\)/ && n { gsub(/[ \t;()]/, ""); print n, $0; n = 0 }' "$src/main.c" >files.txt
for f in "$src"/*.c; do
  name=$(basename "$f" .c)
  [ "$name" != main ] || continue
  if [ -n "${FILES:-}" ]; then case " $FILES " in *" $name "*) ;; *) continue ;; esac; fi
  fn=$(sed -n 's/^void \([a-z_0-9]*_main\) *(.*/\1/p' "$f" | head -1)
  n=$(awk -v m="$fn" '$2 == m { print $1 }' files.txt)
  [ -n "$n" ] || continue
  for v in $(grep -o 'vflag *== *[0-9]*' "$f" | grep -o '[0-9]*$' | grep -v '^888$' | sort -n -u); do
    echo "$name $((n * 1000 + v))"
  done
  echo "$name $((n * 1000 + 888))" >>filecases.txt
done >cases.txt

# one run: TOOL NAME N -> "tool name N status native-status same-output first-memtrace-line"
one() {
  local tool=$1 name=$2 num=$3 st=0 tag=runs/$1-$3
  case $tool in
    native) timeout 60 ./plain-O0 "$num" ;;
    asan-O0) ASAN_OPTIONS=detect_leaks=1 timeout 60 ./asan-O0 "$num" ;;
    check-O0|check-O2) env -u MEMTRACE_CHECK timeout 60 "./$tool" "$num" ;;
    rewrite) MEMTRACE_CHECK=continue timeout 300 "$MT" run --check -- ./plain-O0 "$num" ;;
    fault) MEMTRACE_CHECK=continue timeout 300 "$MT" run --check --mode fault -- ./plain-O0 "$num" ;;
  esac >"$tag.out" 2>"$tag.err" </dev/null || st=$?
  sed -i 's/0x[0-9a-f]\+/ADDR/g; s/[0-9]\{6,\}/ID/g' "$tag.out"
  local rep same=no
  if [ "$tool" = asan-O0 ]; then rep=$(grep -m1 -o 'ERROR: [A-Za-z]*Sanitizer: [A-Za-z-]*' "$tag.err" || true)
  else rep=$(grep -m1 -E "$report_re" "$tag.err" | cut -c1-300 || true); fi
  [ "$tool" = native ] || cmp -s "$tag.out" "runs/native-$num.out" && same=yes
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$tool" "$name" "$num" "$st" "$(cat "runs/native-$num.st" 2>/dev/null || echo -)" \
    "$same" "${rep:--}"
  [ "$tool" != native ] || echo "$st" >"runs/native-$num.st"
}
. "$root/bench/check-kinds.sh"
export -f one
{ cat cases.txt; [ "${PER_CASE:-off}" = on ] || cat filecases.txt; } | sed 's/^/native /' |
  xargs -P "$JOBS" -L 1 bash -c 'one "$@"' _ >results.tsv
for t in asan-O0 $tools; do
  case $t in rewrite|fault) [ "${PER_CASE:-off}" = on ] && sed "s/^/$t /" cases.txt || sed "s/^/$t /" filecases.txt ;;
             *) sed "s/^/$t /" cases.txt ;; esac
done | xargs -P "$JOBS" -L 1 bash -c 'one "$@"' _ >>results.tsv
fi

. "$root/bench/results.sh"
bench_results check-itc-fp "$@"
echo "ITC $SUITE, $(wc -l <cases.txt) cases in $(wc -l <filecases.txt) files${FILES:+ ($FILES)}; gcc $(gcc -dumpfullversion);"
echo "run --check modes ran ${PER_CASE:+case by case}$( [ "${PER_CASE:-off}" = on ] || echo 'a file at a time (N*1000+888), MEMTRACE_CHECK=continue')."
echo
echo "| mode | runs | quiet | reports | of them ASan reports too (a file's run: on one of its cases) | other status than native | other output |"
echo "|---|---|---|---|---|---|---|"
awk -F'\t' '
  $1 == "asan-O0" && $7 != "-" { asan[$3] = 1; asan[$2] = 1 }
  { file[$3] = $2; tools[$1] = 1; order[$1] = order[$1] ? order[$1] : ++n; runs[$1]++
    rep = ($1 != "native" && $7 != "-"); diff = ($1 != "native" && $4 != $5); out = ($6 == "no")
    if (!rep && !diff && !out) quiet[$1]++
    if (rep) { reps[$1]++; if ($1 != "asan-O0") { r[$1, $3] = 1 } }
    if (diff) st[$1]++; if (out) o[$1]++ }
  END { for (t in tools) byorder[order[t]] = t
        for (i = 1; i <= n; i++) { t = byorder[i]; both = 0
          for (k in r) { split(k, p, SUBSEP); if (p[1] == t && asan[p[2] % 1000 == 888 ? file[p[2]] : p[2]]) both++ }
          printf "| %s | %d | %d | %d | %s | %d | %d |\n", t, runs[t], quiet[t], reps[t],
            (t == "native" || t == "asan-O0" ? "-" : both), st[t], o[t] } }' results.tsv
echo
echo "Every run that was not quiet (a file's N*1000+888 run stands for all its cases; ASan's verdict on it is on the"
echo "asan-O0 row of its cases):"
echo
echo "| mode | case | status (native) | same output | first report |"
echo "|---|---|---|---|---|"
awk -F'\t' -v src="$src/" '$1 != "native" && ($7 != "-" || $4 != $5 || $6 == "no") {
  rep = $7; gsub(/\|/, "/", rep)
  while ((i = index(rep, src)) > 0) rep = substr(rep, 1, i - 1) substr(rep, i + length(src))
  printf "| %s | %s %s | %s (%s) | %s | %s |\n", $1, $2, $3, $4, $5, $6, rep }' results.tsv | sort -t'|' -k3,3 -k2,2
