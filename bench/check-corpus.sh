#!/usr/bin/env bash
# Detection on the bug corpus (issue 23): src/test/resources/c/check/corpus, 54 C and 14 C++ small programs in
# the style of the public suites (Juliet CWE-121/122/124/126/127/401/415/416/476/590/761/762, ASan's and
# memcheck's tests), each case a bad() with one bug and a good() twin. Builds the corpus
#   check       memtrace cc|c++ --check, -O0 -g, -O2 -g, -O2 -g -D_FORTIFY_SOURCE=2
#   plain       gcc|g++ at the same levels (what run --check, memcheck and the native runs use)
#   asan        gcc|g++ -fsanitize=address at the same levels (gcc's libasan, its default options)
# then runs every bad case under `memtrace cc --check` (the checked build), `memtrace run --check` (plain,
# -O0), ASan, and valgrind --tool=memcheck --leak-check=full (plain -O0), and every twin
# under all of them (each must say nothing and print what the plain build prints). A bug is detected by a
# tool when it reports it (memtrace: a `memtrace: ` line and a non-zero status; ASan: an ERROR line;
# memcheck: an error, status 99); the kind is the tool's first word for it. Under run --check and memcheck
# the twins of a build run in one process (`corpus all good`), so their column counts runs, not twins. Prints a table per class and one
# per case, appended to bench/results/check-corpus.md (bench/results.sh; BENCH_RESULTS=off for a trial run).
# CORPUS=corpus2 runs the second corpus (src/test/resources/c/check/corpus2: 33 C and 10 C++ cases written as an
# outside judge would, with the first corpus's driver and a shared data file, corpus2_data.c) into
# bench/results/check-corpus2.md.
# Usage: bench/check-corpus.sh  (JOBS=N runs N cases at once, default 2; MEMCHECK=off, RUNCHECK=off skip those;
# TABLES_ONLY=on tabulates the results.tsv of the last run again; SLOW_LEVELS="O0 O2" the levels run --check and memcheck run at, default O0 (each run of either costs
# seconds: a JVM, a valgrind); REUSE=on keeps the builds of the last run when they are there)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CORPUS=${CORPUS:-corpus}
src="$root/src/test/resources/c/check/$CORPUS"
out="$root/bench/out/check-$CORPUS"
mt="$root/memtrace"
JOBS=${JOBS:-2}
MEMCHECK=${MEMCHECK:-on}
RUNCHECK=${RUNCHECK:-on}
SLOW_LEVELS=${SLOW_LEVELS:-O0}
if [ "${REUSE:-off}" != on ] || [ ! -x "$out/asan-cxx-O2F" ]; then
  rm -rf "$out"
  mkdir -p "$out"
  cp "$src/../corpus/"{main.c,main.cc,corpus_io.c,corpus.h} "$out"/   # the driver every corpus shares
  cp "$src"/* "$out"/
  REUSE=off
fi
cd "$out"
if [ "${TABLES_ONLY:-off}" != on ]; then
rm -f ./*.err ./*.out ./*.native results.tsv
"$mt" cc --help >/dev/null 2>&1 || true   # builds the jar first if the sources changed
cfiles="$(sed 's/CASE(\(.*\))/\1.c/' cases_c.def | tr '\n' ' ') $(ls ./*_data.c 2>/dev/null | tr '\n' ' ')"
cxxfiles=$(sed 's/CASE(\(.*\))/\1.cc/' cases_cxx.def | tr '\n' ' ')
declare -A flags=([O0]="-O0 -g" [O2]="-O2 -g" [O2F]="-O2 -g -D_FORTIFY_SOURCE=2")
for level in O0 O2 O2F; do
  [ "$REUSE" != on ] || break
  # shellcheck disable=SC2086
  {
    "$mt" cc --check ${flags[$level]} -o "check-c-$level" main.c corpus_io.c $cfiles
    "$mt" c++ --check ${flags[$level]} -o "check-cxx-$level" main.cc corpus_io.c $cxxfiles
    gcc ${flags[$level]} -w -o "plain-c-$level" main.c corpus_io.c $cfiles
    g++ ${flags[$level]} -w -o "plain-cxx-$level" main.cc corpus_io.c $cxxfiles
    gcc ${flags[$level]} -w -fsanitize=address -o "asan-c-$level" main.c corpus_io.c $cfiles
    g++ ${flags[$level]} -w -fsanitize=address -o "asan-cxx-$level" main.cc corpus_io.c $cxxfiles
  } 2>>build.log
done

# one run: TOOL LEVEL LANG CASE bad|good -> "tool level case mode detected kind same-output"
one() {
  local tool=$1 level=$2 lang=$3 name=$4 mode=$5 st=0 kind=-
  local tag="$tool-$level-$name-$mode"
  case $tool in
    check) env -u MEMTRACE_CHECK timeout 60 "./check-$lang-$level" "$name" "$mode" >"$tag.out" 2>"$tag.err" || st=$?
           kind=$(sed -n '1s/^memtrace: \([^:]*\):.*/\1/p' "$tag.err") ;;
    run)   timeout 120 "$MT" run --check -- "./plain-$lang-$level" "$name" "$mode" </dev/null >"$tag.out" 2>"$tag.err" || st=$?
           # a report, not memtrace run's note that the program crashed (as it would natively)
           kind=$(grep -m1 '^memtrace: [a-z ]*: ' "$tag.err" | grep -v '^memtrace: the program' | sed 's/^memtrace: \([^:]*\):.*/\1/' || true) ;;
    asan)  timeout 60 "./asan-$lang-$level" "$name" "$mode" >"$tag.out" 2>"$tag.err" || st=$?
           kind=$(grep -m1 -o 'ERROR: [A-Za-z]*Sanitizer: [A-Za-z-]*' "$tag.err" | sed 's/.*LeakSanitizer: .*/leak/; s/.*Sanitizer: //') ;;
    memcheck) timeout 120 valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect \
                --errors-for-leak-kinds=definite,indirect "./plain-$lang-$level" "$name" "$mode" >"$tag.out" 2>"$tag.err" || st=$?
           kind=$(grep -m1 -o -E '(Invalid (read|write|free)|Mismatched free|Conditional jump|Source and destination overlap|Syscall param|[a-z]+ lost)' "$tag.err" || true) ;;
  esac
  local found=no
  case $tool in
    check|run) [ -n "$kind" ] && [ "$st" -ne 0 ] && found=yes ;;
    asan) [ -n "$kind" ] && found=yes ;;
    memcheck) [ "$st" -eq 99 ] && found=yes ;;
  esac
  [ -n "$kind" ] || kind=-
  local same=-
  if [ "$mode" = good ]; then
    timeout 60 "./plain-$lang-$level" "$name" "$mode" >"$tag.native" 2>/dev/null || true
    same=no
    cmp -s "$tag.out" "$tag.native" && same=yes
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$tool" "$level" "$name" "$mode" "$found" "${kind// /_}" "$same" "$st"
}
export -f one
export MT="$mt"
{
  for lang in c cxx; do
    for name in $(sed 's/CASE(\(.*\))/\1/' "cases_$lang.def"); do
      for mode in bad good; do
        for level in O0 O2 O2F; do
          echo "check $level $lang $name $mode"
          echo "asan $level $lang $name $mode"
        done
        [ "$mode" = bad ] || continue
        for level in $SLOW_LEVELS; do
          [ "$RUNCHECK" = off ] || echo "run $level $lang $name $mode"
          [ "$MEMCHECK" = off ] || echo "memcheck $level $lang $name $mode"
        done
      done
    done
    # the twins under the slow tools: all of a build's in one run (as Juliet's main runs every good())
    for level in $SLOW_LEVELS; do
      [ "$RUNCHECK" = off ] || echo "run $level $lang all good"
      [ "$MEMCHECK" = off ] || echo "memcheck $level $lang all good"
    done
  done
} | xargs -P "$JOBS" -L 1 bash -c 'one "$@"' _ >results.tsv
fi

. "$root/bench/results.sh"
bench_results "check-$CORPUS" "$@"
echo "gcc $(gcc -dumpfullversion), $(valgrind --version 2>/dev/null || echo 'no valgrind'); $(wc -l <cases_c.def) C and $(wc -l <cases_cxx.def) C++ cases"
echo
# the class of a case, by its name
awk -F'\t' '
function cls(n) {
  if (n ~ /^(heap_|realloc_shrink|cxx_new_array_overflow|cxx_vector|cxx_string_copy|cxx_heap_)/) {
    if (n ~ /underwrite/) return "CWE-124 heap underwrite"; if (n ~ /underread/) return "CWE-127 heap underread";
    if (n ~ /overread/) return "CWE-126 heap overread"; return "CWE-122 heap overflow" }
  if (n ~ /^(stack_|cxx_stack_)/) {
    if (n ~ /use_after/) return "stack use after return/scope"
    if (n ~ /underwrite/) return "CWE-124 stack underwrite"; if (n ~ /underread/) return "CWE-127 stack underread";
    if (n ~ /overread/) return "CWE-126 stack overread"; return "CWE-121 stack overflow" }
  if (n ~ /^global_/) return "global overflow/underflow"
  if (n ~ /^(uaf_|cxx_use_after|cxx_uaf)/) return "CWE-416 use after free"
  if (n ~ /^(double_free|cxx_double)/) return "CWE-415 double free"
  if (n ~ /^free_middle/) return "CWE-761 free of a block middle"
  if (n ~ /^(free_|cxx_delete_)/) return "CWE-590 free of non-heap"
  if (n ~ /^cxx_(new_array_delete|malloc_delete|new_free|new_delete_array)/) return "CWE-762 allocator mismatch"
  if (n ~ /^null_/) return "CWE-476 NULL dereference"
  if (n ~ /^overlap_/) return "overlapping copy"
  if (n ~ /^intra_/) return "intra-object overflow"
  if (n ~ /leak/) return "CWE-401 leak"
  return "other" }
$6 ~ /^memtrace:_the_program/ { $5 = "no"; $6 = "-" }
{ c = cls($3); key = $1 "-" $2
  if ($4 == "bad") { ran[key] = 1; cases[c, key]++; if ($5 == "yes") found[c, key]++; n[c] = n[c]; if (key == "check-O0") total[c]++ }
  else { twins[key]++; if ($5 == "yes" || $6 != "-") fp[key]++; if ($7 == "no") diff[key]++ }
  if ($4 == "bad") classes[c] = 1 }
END {
  split("check-O0 check-O2 check-O2F run-O0 run-O2 asan-O0 asan-O2 asan-O2F memcheck-O0 memcheck-O2", cols, " ")
  printf "| class | cases | cc --check -O0 | -O2 | -O2 fortify | run --check -O0 | -O2 | ASan -O0 | -O2 | -O2 fortify | memcheck -O0 | -O2 |\n"
  printf "|---|---|---|---|---|---|---|---|---|---|---|---|\n"
  nc = 0; for (c in classes) sorted[++nc] = c   # sorted by name (mawk has no asorti)
  for (i = 2; i <= nc; i++) { v = sorted[i]; for (j = i - 1; j > 0 && sorted[j] > v; j--) sorted[j + 1] = sorted[j]; sorted[j + 1] = v }
  for (i = 1; i <= nc; i++) {
    c = sorted[i]; printf "| %s | %d", c, total[c]
    for (j = 1; j <= 10; j++) { k = cols[j]; if ((c, k) in cases) printf " | %d", found[c, k]; else printf " | -" }
    printf " |\n"; for (j = 1; j <= 10; j++) { all[cols[j]] += found[c, cols[j]] }; grand += total[c] }
  printf "| **all** | %d", grand
  for (j = 1; j <= 10; j++) if (ran[cols[j]]) printf " | **%d**", all[cols[j]]; else printf " | -"
  printf " |\n| twins reporting (false positives) | %d", grand
  for (j = 1; j <= 10; j++) if (ran[cols[j]]) printf " | %d", fp[cols[j]]; else printf " | -"
  printf " |\n| twins printing other than native | %d", grand
  for (j = 1; j <= 10; j++) if (ran[cols[j]]) printf " | %d", diff[cols[j]]; else printf " | -"
  printf " |\n" }' results.tsv
echo
echo "Per case: the kind each tool reported for the bug (- none). Columns as above."
echo
echo "| case | cc --check -O0 | -O2 | -O2F | run --check -O0 | -O2 | ASan -O0 | -O2 | -O2F | memcheck -O0 | -O2 |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
awk -F'\t' '$6 ~ /^memtrace:_the_program/ { $5 = "no" } $4 == "bad" { k[$3, $1 "-" $2] = ($5 == "yes" ? $6 : "-"); if (!($3 in seen)) { seen[$3] = 1; order[++n] = $3 } }
END { split("check-O0 check-O2 check-O2F run-O0 run-O2 asan-O0 asan-O2 asan-O2F memcheck-O0 memcheck-O2", cols, " ")
  for (i = 1; i <= n; i++) { printf "| %s", order[i]; for (j = 1; j <= 10; j++) { v = k[order[i], cols[j]]; gsub("_", " ", v); printf " | %s", (v == "" ? "-" : v) }; printf " |\n" } }' \
  <(sort -t$'\t' -k3,3 -s results.tsv)
