#!/usr/bin/env bash
# Detection recall on bench/check-recall/: standalone bug programs in the styles of the public suites
# (Juliet CWE-121/122/124/126/127/401/415/416/590/761/762, Toyota ITC, ASan's and memcheck's tests), written
# apart from the test corpus (src/test/resources/c/check/corpus) to measure what it does not: fgets/read/fread
# into heap, stack and global buffers, an overflow landing inside another live block, a struct field into the
# next, stack use after return, C++ use after delete, alloca, VLAs, every allocator. Each file is one program:
# `./case bad` runs the bug, `./case good` its twin (must stay silent, print what the plain build prints).
# Builds every case
#   plain   gcc|g++ -O0 -g                        (native, and what run --check runs)
#   asan    gcc|g++ -fsanitize=address -O0 -g and -O2 -g
#   check   memtrace cc|c++ --check -O0 -g and -O2 -g
# and runs bad and good under each, plus `memtrace run --check --mode fault` and `--mode rewrite` on the plain
# build. A bug is found when the tool reports it (memtrace: a `memtrace: KIND:` line and a non-zero status;
# ASan: an ERROR line; native: a non-zero status, glibc's own aborts); the table gives the kind reported.
# A twin is a false positive when it reports anything or prints other than the plain build.
# Writes bench/results/check-recall.md (BENCH_RESULTS=off for a trial run).
# Usage: bench/check-recall.sh   (JOBS=N parallel jobs, default 2; RUNCHECK=off skips the run --check columns;
# REUSE=on keeps the last run's builds; CASES="a b" runs only those cases; TOOLS="check-O0 check-O2" only those
# columns; RUNCHECK_TWINS=off runs the twins natively, under --check and ASan, not under run --check (a JVM
# each); TABLES_ONLY=on tabulates the last run's results.tsv again; CHECK_LIB_DIR=DIR runs the --check builds with the check runtime of DIR, e.g. an older one, to
# compare runtimes on the same binaries)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
src="$root/bench/check-recall"
out="$root/bench/out/check-recall"
mt="$root/memtrace"
JOBS=${JOBS:-2}
RUNCHECK=${RUNCHECK:-on}
RUNCHECK_TWINS=${RUNCHECK_TWINS:-on}
if [ "${REUSE:-off}" != on ] && [ "${TABLES_ONLY:-off}" != on ]; then
  rm -rf "$out"
  mkdir -p "$out"
fi
cd "$out"
if [ "${TABLES_ONLY:-off}" != on ]; then
  cp "$src"/* "$out"/
  "$mt" cc --help >/dev/null 2>&1 || true
fi
true   # builds the jar first if the sources changed
cases=${CASES:-$(ls "$src" | sed -n 's/^\([a-z][a-z_0-9]*\)\.\(c\|cc\)$/\1/p' | grep -v '^rc_' | sort)}

# one build: CONFIG CASE
build() {
  local config=$1 name=$2 file cc lang
  if [ -f "$name.cc" ]; then file=$name.cc; lang=cxx; else file=$name.c; lang=c; fi
  [ -x "$config-$name" ] && [ "${REUSE:-off}" = on ] && return 0
  case $config in
    plain-O0) cc="gcc -O0 -g -w"; [ $lang = c ] || cc="g++ -O0 -g -w" ;;
    asan-O0|asan-O2) cc="gcc -${config#asan-} -g -w -fsanitize=address"; [ $lang = c ] || cc="g++ -${config#asan-} -g -w -fsanitize=address" ;;
    check-O0|check-O2) cc="$MT cc --check -${config#check-} -g -w"; [ $lang = c ] || cc="$MT c++ --check -${config#check-} -g -w" ;;
  esac
  # shellcheck disable=SC2086
  $cc -o "$config-$name" "$file" "rc-$config-$lang.a" >>"build-$config-$name.log" 2>&1 || echo "build failed: $config $name" >&2
}

# the helpers, once per build and language: CONFIG LANG
helpers() {
  local config=$1 lang=$2 cc
  case $config in
    plain-O0) cc="gcc -O0 -g -w" ;;
    asan-O0|asan-O2) cc="gcc -${config#asan-} -g -w -fsanitize=address" ;;
    check-O0|check-O2) cc="$MT cc --check -${config#check-} -g -w" ;;
  esac
  [ "$lang" = c ] || cc="${cc/gcc/g++}"; [ "$lang" = c ] || cc="${cc/ cc / c++ }"
  mkdir -p "obj-$config-$lang"
  # shellcheck disable=SC2086
  (cd "obj-$config-$lang" && $cc -c ../rc_io.c ../rc_main.c && ar rc "../rc-$config-$lang.a" rc_io.o rc_main.o) ||
    echo "build failed: helpers $config $lang" >&2
}

. "$root/bench/check-kinds.sh"

# one run: TOOL CASE bad|good -> "tool case mode found kind same-output status"
one() {
  local tool=$1 name=$2 mode=$3 st kind found tag="$1-$2-$3"
  run_case "$tool" "$name" "$mode" "$tag"
  [ -n "$kind" ] || kind=-
  local same=-
  if [ "$mode" = good ] && [ "$tool" != native ]; then
    same=no
    cmp -s "$tag.out" "native-$name-good.out" && same=yes
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$tool" "$name" "$mode" "$found" "${kind// /_}" "$same" "$st"
}
export -f build helpers one
export RUNCHECK_TWINS MT="$mt" REUSE=${REUSE:-off} CHECK_LIB_DIR=${CHECK_LIB_DIR:-}

tools="native check-O0 check-O2 asan-O0 asan-O2"
[ "$RUNCHECK" = off ] || tools="$tools fault rewrite"
tools=${TOOLS:-$tools}
if [ "${TABLES_ONLY:-off}" != on ]; then
for config in plain-O0 asan-O0 asan-O2 check-O0 check-O2; do for lang in c cxx; do
  [ -f "rc-$config-$lang.a" ] || echo "$config $lang"
done; done | xargs -r -P "$JOBS" -L 1 bash -c 'helpers "$@"' _
configs="plain-O0 asan-O0 asan-O2"
for t in $tools; do case $t in check-O0|check-O2) configs="$configs $t" ;; esac; done
for name in $cases; do for config in $configs; do echo "$config $name"; done; done |
  xargs -P "$JOBS" -L 1 bash -c 'build "$@"' _
for name in $cases; do echo "native $name good"; done | xargs -P "$JOBS" -L 1 bash -c 'one "$@"' _ >results.tsv
for name in $cases; do for mode in bad good; do for tool in $tools; do
  [ "$tool $mode" != "native good" ] || continue
  case "$tool $mode" in fault\ good|rewrite\ good) [ "$RUNCHECK_TWINS" = on ] || continue ;; esac
  echo "$tool $name $mode"
done; done; done | xargs -P "$JOBS" -L 1 bash -c 'one "$@"' _ >>results.tsv
fi

. "$root/bench/results.sh"
bench_results check-recall "$@"
echo "gcc $(gcc -dumpfullversion); $(echo "$cases" | wc -w) cases; tools: $tools${CHECK_LIB_DIR:+; --check builds run with the check runtime of $CHECK_LIB_DIR}"
echo
awk -F'\t' -v tools="$tools" '
function cls(n) {
  if (n ~ /^if_free_offset/) return "CWE-761 free of a block middle"
  if (n ~ /^(if_|cxx_delete_member)/) return "CWE-590 free of non-heap"
  if (n ~ /^(df_|cxx_double)/) return "CWE-415 double free"
  if (n ~ /^(uaf_|cxx_uaf)/) return "CWE-416 use after free"
  if (n ~ /leak/) return "CWE-401 leak"
  if (n ~ /^cxx_(new_array_delete|malloc_delete|strdup_delete)/) return "CWE-762 allocator mismatch"
  if (n ~ /^s_use_after_return/) return "stack use after return"
  if (n ~ /^s_struct_field_next/) return "intra-object overflow (stretch)"
  if (n ~ /^(h_|cxx_new_array_overflow|cxx_heap)/) {
    if (n ~ /under(write|read)/) return "CWE-124/127 heap underflow"; if (n ~ /overread/) return "CWE-126 heap overread"
    return "CWE-122 heap overflow" }
  if (n ~ /^(s_|cxx_stack)/) {
    if (n ~ /under/) return "CWE-124/127 stack underflow"; if (n ~ /overread/) return "CWE-126 stack overread"
    return "CWE-121 stack overflow" }
  if (n ~ /^g_/) return "global overflow/underflow"
  return "other" }
BEGIN { split(tools, first, " ") }
{ c = cls($2)
  if ($3 == "bad") { classes[c] = 1; if ($1 == first[1]) total[c]++; if ($4 == "yes") found[c, $1]++ }
  else if ($1 != "native") { twins[$1]++; if ($4 == "yes" || $5 != "-") fp[$1]++; if ($6 == "no") diff[$1]++ } }
END {
  nt = split(tools, cols, " ")
  printf "| class | cases"; for (j = 1; j <= nt; j++) printf " | %s", cols[j]; printf " |\n|---|---"
  for (j = 1; j <= nt; j++) printf "|---"; printf "|\n"
  nc = 0; for (c in classes) sorted[++nc] = c
  for (i = 2; i <= nc; i++) { v = sorted[i]; for (j = i - 1; j > 0 && sorted[j] > v; j--) sorted[j + 1] = sorted[j]; sorted[j + 1] = v }
  for (i = 1; i <= nc; i++) {
    c = sorted[i]; printf "| %s | %d", c, total[c]; grand += total[c]
    for (j = 1; j <= nt; j++) { printf " | %d", found[c, cols[j]]; all[cols[j]] += found[c, cols[j]] }
    printf " |\n" }
  printf "| **all** | %d", grand; for (j = 1; j <= nt; j++) printf " | **%d**", all[cols[j]]
  printf " |\n| twins reporting (false positives) | %d", grand
  for (j = 1; j <= nt; j++) printf " | %s", (cols[j] == "native" || !twins[cols[j]] ? "-" : fp[cols[j]] + 0)
  printf " |\n| twins printing other than native | %d", grand
  for (j = 1; j <= nt; j++) printf " | %s", (cols[j] == "native" || !twins[cols[j]] ? "-" : diff[cols[j]] + 0)
  printf " |\n" }' results.tsv
echo
echo "Per case: the kind each tool reported for the bug (- none); a twin that reported or printed otherwise is"
echo "marked FP:kind after it. A \`-\` in the twins' rows: that tool did not run the twins (RUNCHECK_TWINS=off)."
echo
awk -F'\t' -v tools="$tools" '
{ if (!($2 in seen)) { seen[$2] = 1; order[++n] = $2 }
  if ($3 == "bad") k[$2, $1] = ($4 == "yes" ? $5 : "-")
  else if ($1 != "native" && ($4 == "yes" || $5 != "-" || $6 == "no")) fp[$2, $1] = " FP:" $5 }
END { nt = split(tools, cols, " ")
  printf "| case"; for (j = 1; j <= nt; j++) printf " | %s", cols[j]; printf " |\n|---"
  for (j = 1; j <= nt; j++) printf "|---"; printf "|\n"
  for (i = 1; i <= n; i++) { printf "| %s", order[i]
    for (j = 1; j <= nt; j++) { v = k[order[i], cols[j]] fp[order[i], cols[j]]; gsub("_", " ", v); printf " | %s", (v == "" ? "-" : v) }
    printf " |\n" } }' <(sort -t$'\t' -k2,2 -s results.tsv)
