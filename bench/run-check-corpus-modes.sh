#!/usr/bin/env bash
# `memtrace run --check` in fault mode and in rewrite mode on the bug corpus (src/test/resources/c/check/corpus,
# the cases of bench/check-corpus.sh), case by case, to choose run --check's default mode from counts (issue 23).
# Builds the corpus with plain gcc|g++ at LEVELS (default O0: -O0 -g; O2: -O2 -g), runs every bad case under
# `memtrace run --check --mode fault` and `--mode rewrite`, and each build's twins in one run (`all good`, as
# bench/check-corpus.sh does; a twin run must say nothing and print what the plain build prints). A bug is found
# when a `memtrace: KIND: ` report line is printed (not memtrace run's note of a crash) and the status is not 0.
# Appends a table per class and per case to bench/results/run-check-corpus-modes.md (BENCH_RESULTS=off: a trial).
# Usage: bench/run-check-corpus-modes.sh  (JOBS=N runs at once, default 2; LEVELS="O0 O2"; MODES="fault rewrite";
# CASES=REGEX only the cases whose name matches, e.g. CASES='stack' on this loaded machine, where each run takes
# tens of seconds; TABLES_ONLY=on tabulates the last run's results.tsv again, all of it or as far as it got, with
# the number of runs it holds)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
src="$root/src/test/resources/c/check/corpus"
out="$root/bench/out/run-check-corpus-modes"
JOBS=${JOBS:-2}
LEVELS=${LEVELS:-O0}
MODES=${MODES:-fault rewrite}
CASES=${CASES:-.}
if [ "${TABLES_ONLY:-off}" != on ]; then
rm -rf "$out"; mkdir -p "$out"; cp "$src"/* "$out"/
cd "$out"
"$root/memtrace" cc --help >/dev/null 2>&1 || true   # builds the jar first if the sources changed
cfiles=$(sed 's/CASE(\(.*\))/\1.c/' cases_c.def | tr '\n' ' ')
cxxfiles=$(sed 's/CASE(\(.*\))/\1.cc/' cases_cxx.def | tr '\n' ' ')
for level in $LEVELS; do
  # shellcheck disable=SC2086
  gcc -$level -g -w -o "plain-c-$level" main.c corpus_io.c $cfiles
  # shellcheck disable=SC2086
  g++ -$level -g -w -o "plain-cxx-$level" main.cc corpus_io.c $cxxfiles
done
fi
cd "$out"
report_re='^memtrace: (heap (overflow|underflow)|stack (overflow|underflow|use after (scope|return))|global (overflow|underflow)|use after free|double free|invalid free|allocator mismatch|intra-object overflow|overlapping copy|null dereference|wild access|leaks?): '
# one run: MODE LEVEL LANG CASE bad|good -> "mode level case bad|good found kind same-output status"
one() {
  local mode=$1 level=$2 lang=$3 name=$4 what=$5 st=0 kind same=-
  local tag="$mode-$level-$name-$what"
  timeout 180 "$MT" run --check --mode "$mode" -- "./plain-$lang-$level" "$name" "$what" </dev/null >"$tag.out" 2>"$tag.err" || st=$?
  kind=$(grep -m1 -E "$report_re" "$tag.err" | sed 's/^memtrace: \([^:]*\):.*/\1/' || true)
  local found=no
  [ -n "$kind" ] && [ "$st" -ne 0 ] && found=yes
  if [ "$what" = good ]; then
    "./plain-$lang-$level" "$name" good >"$tag.native" 2>/dev/null </dev/null || true
    same=no; cmp -s "$tag.out" "$tag.native" && same=yes
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$mode" "$level" "$name" "$what" "$found" "${kind:--}" "$same" "$st"
}
export -f one
export MT="$root/memtrace" report_re
if [ "${TABLES_ONLY:-off}" != on ]; then
{
  for level in $LEVELS; do for lang in c cxx; do
    for name in $(sed 's/CASE(\(.*\))/\1/' "cases_$lang.def" | grep -E "$CASES"); do for mode in $MODES; do
      echo "$mode $level $lang $name bad"
    done; done
    for mode in $MODES; do echo "$mode $level $lang all good"; done
  done; done
} | xargs -P "$JOBS" -L 1 bash -c 'one "$@"' _ >results.tsv
fi

. "$root/bench/results.sh"
bench_results run-check-corpus-modes "$@"
echo "gcc $(gcc -dumpfullversion); of $(wc -l <cases_c.def) C and $(wc -l <cases_cxx.def) C++ cases those matching '$CASES'; levels: $LEVELS; $(wc -l <results.tsv) runs"
echo
awk -F'\t' -v modes="$MODES" -v levels="$LEVELS" '
function cls(n) {
  if (n ~ /^(heap_|realloc_shrink|cxx_new_array_overflow|cxx_vector|cxx_string_copy)/) return "heap overflow/underflow"
  if (n ~ /^(stack_|cxx_stack_)/) return (n ~ /use_after/ ? "stack use after return/scope" : "stack overflow/underflow")
  if (n ~ /^global_/) return "global overflow/underflow"
  if (n ~ /^(uaf_|cxx_use_after|cxx_uaf)/) return "use after free"
  if (n ~ /^(double_free|cxx_double|free_|cxx_delete_)/) return "double/invalid free"
  if (n ~ /^cxx_(new_array_delete|malloc_delete|new_free|new_delete_array)/) return "allocator mismatch"
  if (n ~ /^null_/) return "NULL dereference"
  if (n ~ /leak/) return "leak"
  return "other" }
$4 == "bad" { c = cls($3); classes[c] = 1; k = $1 "-" $2; cols[k] = 1; if ($1 == first) total[c]++; if ($5 == "yes") found[c, k]++ }
$4 == "good" { k = $1 "-" $2; runs[k]++; if ($5 == "yes" || $6 != "-") fp[k]++; if ($7 == "no") diff[k]++ }
BEGIN { split(modes, m, " "); first = m[1] }
END {
  nm = split(modes, m, " "); nl = split(levels, l, " "); nk = 0
  for (j = 1; j <= nl; j++) for (i = 1; i <= nm; i++) key[++nk] = m[i] "-" l[j]
  printf "| class | cases"; for (i = 1; i <= nk; i++) printf " | %s", key[i]; printf " |\n|---|---"
  for (i = 1; i <= nk; i++) printf "|---"; printf "|\n"
  nc = 0; for (c in classes) sorted[++nc] = c
  for (i = 2; i <= nc; i++) { v = sorted[i]; for (j = i - 1; j > 0 && sorted[j] > v; j--) sorted[j + 1] = sorted[j]; sorted[j + 1] = v }
  for (a = 1; a <= nc; a++) { c = sorted[a]; printf "| %s | %d", c, total[c] / nl; g += total[c] / nl
    for (i = 1; i <= nk; i++) { printf " | %d", found[c, key[i]]; all[key[i]] += found[c, key[i]] }; printf " |\n" }
  printf "| **all** | %d", g; for (i = 1; i <= nk; i++) printf " | **%d**", all[key[i]]
  printf " |\n| twin runs reporting | -"; for (i = 1; i <= nk; i++) printf " | %d of %d", fp[key[i]], runs[key[i]]
  printf " |\n| twin runs printing other than native | -"; for (i = 1; i <= nk; i++) printf " | %d of %d", diff[key[i]], runs[key[i]]
  printf " |\n" }' results.tsv
echo
echo "Per case: the kind reported (- none)."
echo
awk -F'\t' -v modes="$MODES" -v levels="$LEVELS" '
$4 == "bad" { k[$3, $1 "-" $2] = ($5 == "yes" ? $6 : "-"); if (!($3 in seen)) { seen[$3] = 1; order[++n] = $3 } }
END { nm = split(modes, m, " "); nl = split(levels, l, " "); nk = 0
  for (j = 1; j <= nl; j++) for (i = 1; i <= nm; i++) key[++nk] = m[i] "-" l[j]
  printf "| case"; for (i = 1; i <= nk; i++) printf " | %s", key[i]; printf " |\n|---"
  for (i = 1; i <= nk; i++) printf "|---"; printf "|\n"
  for (a = 1; a <= n; a++) { printf "| %s", order[a]; for (i = 1; i <= nk; i++) printf " | %s", k[order[a], key[i]]; printf " |\n" } }' \
  <(sort -t$'\t' -k3,3 -s results.tsv)
