#!/usr/bin/env bash
# Detection recall on a real public suite: the memory-class defect files of the Toyota ITC benchmarks
# (github.com/regehr/itc-benchmarks, 01.w_Defects; the suite is fetched at run time, never kept in the project).
# Each file's NAME_main() runs the defect function chosen by the global `vflag` (ITC's own driver takes
# FILE*1000+N); this bench links each file with a driver of its own that sets vflag from its argument and
# calls that file's main, so `./FILE N` runs defect function N alone: one case.
# Builds every file
#   plain   gcc -O0 -g                  (native, and what run --check runs)
#   asan    gcc -O0 -g and -O2 -g -fsanitize=address   (the reference; gcc -O2 deletes some bugs outright)
#   check   memtrace cc --check -O0 -g and -O2 -g
# and runs each case under each, plus `memtrace run --check` (rewrite, the default mode) and `--mode fault` on
# the plain build. A case is found as in bench/check-recall.sh: memtrace, a report line (agent/check's kinds)
# and a non-zero status; ASan, an ERROR line (SEGV included: ASan's report of a wild or NULL access); native,
# a non-zero status. No twins here (02.wo_Defects: see the false-positive bench).
# Writes bench/results/check-itc.md (BENCH_RESULTS=off for a trial run).
# Usage: bench/check-itc.sh   ITC_DIR=DIR an extracted copy of the suite (else `git clone` of ITC_URL at
# ITC_COMMIT into bench/out); JOBS=N (default 2); FILES="double_free return_local" only those files;
# TOOLS="check-O0 rewrite" only those columns; REUSE=on keeps the last run's builds; TABLES_ONLY=on
# tabulates the last run's results.tsv again.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$root/bench/out/check-itc"
mt="$root/memtrace"
JOBS=${JOBS:-2}
ITC_URL=${ITC_URL:-https://github.com/regehr/itc-benchmarks}
ITC_COMMIT=${ITC_COMMIT:-7bfb56a}
tools=${TOOLS:-native asan-O0 asan-O2 check-O0 check-O2 rewrite fault}
# the memory-class files, by the class the table counts them in
files=${FILES:-buffer_overrun_dynamic buffer_underrun_dynamic littlemem_st overrun_st underrun_st double_free
free_nondynamic_allocated_memory invalid_memory_access memory_leak return_local null_pointer ow_memcpy
uninit_pointer st_overflow}

if [ "${TABLES_ONLY:-off}" != on ]; then
  [ "${REUSE:-off}" = on ] || rm -rf "$out"
  mkdir -p "$out"
  if [ -z "${ITC_DIR:-}" ]; then
    ITC_DIR="$out/itc"
    if [ ! -d "$ITC_DIR/01.w_Defects" ]; then
      git clone -q "$ITC_URL" "$ITC_DIR" && git -C "$ITC_DIR" checkout -q "$ITC_COMMIT" ||
        { echo "check-itc: cannot fetch $ITC_URL (set ITC_DIR to an extracted copy)" >&2; exit 2; }
    fi
  fi
  [ -f "$ITC_DIR/01.w_Defects/double_free.c" ] && [ -f "$ITC_DIR/include/HeaderFile.h" ] ||
    { echo "check-itc: $ITC_DIR is not the ITC suite (no 01.w_Defects/double_free.c, include/HeaderFile.h)" >&2; exit 2; }
  "$mt" cc --help >/dev/null 2>&1 || true   # builds the jar first if the sources changed
fi
cd "$out"
export ITC_DIR MT="$mt" REUSE=${REUSE:-off}

# one build: CONFIG FILE; the driver calls the file's own NAME_main (not always FILE_main)
build() {
  local config=$1 file=$2 cc fn
  [ -x "$config-$file" ] && [ "$REUSE" = on ] && return 0
  fn=$(sed -n 's/^void \([a-z_]*_main\) *(.*/\1/p' "$ITC_DIR/01.w_Defects/$file.c" | tail -1)
  printf '%s\n' '#include <stdio.h>' '#include <stdlib.h>' 'volatile int vflag; int idx, sink; double dsink; void *psink;' \
    "void $fn(void);" \
    'int main(int argc, char **argv) { if (argc != 2) return 2; vflag = atoi(argv[1]); '"$fn"'(); printf("done\n"); return 0; }' \
    >"driver-$config-$file.c"   # one per build: the builds of a file run in parallel
  case $config in
    plain-O0) cc="gcc -O0 -g -w" ;;
    asan-O0|asan-O2) cc="gcc -${config#asan-} -g -w -fsanitize=address" ;;
    check-O0|check-O2) cc="$MT cc --check -${config#check-} -g -w" ;;
  esac
  # shellcheck disable=SC2086
  $cc -pthread -I"$ITC_DIR/include" -o "$config-$file" "driver-$config-$file.c" "$ITC_DIR/01.w_Defects/$file.c" -lm \
    >"build-$config-$file.log" 2>&1 || echo "build failed: $config $file" >&2
}

. "$root/bench/check-kinds.sh"

# one run: TOOL FILE N -> "tool case found kind status"
one() {
  local tool=$1 file=$2 n=$3 st kind found tag="$1-$2-$3"
  run_case "$tool" "$file" "$n" "$tag"
  kind=${kind:--}
  printf '%s\t%s_%03d\t%s\t%s\t%s\n' "$tool" "$file" "$n" "$found" "${kind// /_}" "$st"
}
export -f build one

if [ "${TABLES_ONLY:-off}" != on ]; then
  configs="plain-O0"
  for t in $tools; do case $t in asan-O0|asan-O2|check-O0|check-O2) configs="$configs $t" ;; esac; done
  for f in $files; do for c in $configs; do echo "$c $f"; done; done | xargs -P "$JOBS" -L 1 bash -c 'build "$@"' _
  # the cases: every `vflag == N` of the file's main, but memory_leak_001, which allocates in an endless loop
  # (natively it ran into the timeout with 5 GB resident, and would exhaust the machine's memory)
  for f in $files; do
    for n in $(sed -n 's/.*vflag *== *\([0-9]*\) *||.*/\1/p' "$ITC_DIR/01.w_Defects/$f.c"); do
      [ "$f $n" != "memory_leak 1" ] || continue
      for t in $tools; do echo "$t $f $n"; done
    done
  done | xargs -P "$JOBS" -L 1 bash -c 'one "$@"' _ >results.tsv 2>runs.log   # bash's "Aborted" lines
fi

. "$root/bench/results.sh"
bench_results check-itc "$@"
echo "ITC $(git -C "${ITC_DIR:-$out/itc}" rev-parse --short HEAD 2>/dev/null || echo "at $ITC_DIR") 01.w_Defects; gcc $(gcc -dumpfullversion); $(cut -f2 results.tsv | sort -u | wc -l) cases; tools: $tools"
echo
awk -F'\t' -v tools="$tools" '
function cls(n) {
  if (n ~ /^buffer_overrun_dynamic/) return "heap overflow (buffer_overrun_dynamic)"
  if (n ~ /^buffer_underrun_dynamic/) return "heap underflow (buffer_underrun_dynamic)"
  if (n ~ /^littlemem_st/) return "stack/global overflow, struct on a small buffer (littlemem_st)"
  if (n ~ /^overrun_st/) return "stack/global overflow (overrun_st)"
  if (n ~ /^underrun_st/) return "stack/global underflow (underrun_st)"
  if (n ~ /^double_free/) return "double free"
  if (n ~ /^free_nondynamic/) return "invalid free (free_nondynamic_allocated_memory)"
  if (n ~ /^invalid_memory_access/) return "use after free (invalid_memory_access)"
  if (n ~ /^memory_leak/) return "leak (memory_leak)"
  if (n ~ /^return_local/) return "stack address returned (return_local)"
  if (n ~ /^null_pointer/) return "NULL dereference (null_pointer)"
  if (n ~ /^ow_memcpy/) return "overlapping memcpy (ow_memcpy)"
  if (n ~ /^uninit_pointer/) return "uninitialised pointer (uninit_pointer; not in issue 23)"
  if (n ~ /^st_overflow/) return "stack exhaustion (st_overflow; not in issue 23)"
  return "other" }
{ c = cls($2); classes[c] = 1; if (!seen[$2]++) total[c]++; if ($3 == "yes") found[c, $1]++ }
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
  printf "| **all** | %d", grand; for (j = 1; j <= nt; j++) printf " | **%d**", all[cols[j]]; printf " |\n" }' results.tsv
echo
echo "Per case where a tool differs from ASan: the kind each reported (- none)."
echo
awk -F'\t' -v tools="$tools" '
{ if (!($2 in seen)) { seen[$2] = 1; order[++n] = $2 }; k[$2, $1] = ($3 == "yes" ? $4 : "-") }
END { nt = split(tools, cols, " ")
  printf "| case"; for (j = 1; j <= nt; j++) printf " | %s", cols[j]; printf " |\n|---"
  for (j = 1; j <= nt; j++) printf "|---"; printf "|\n"
  for (i = 1; i <= n; i++) { c = order[i]; a = (k[c, "asan-O0"] != "-"); differs = 0
    for (j = 1; j <= nt; j++) if (cols[j] !~ /^(native|asan)/ && (k[c, cols[j]] != "-") != a) differs = 1
    if (!differs) continue
    printf "| %s", c
    for (j = 1; j <= nt; j++) { v = k[c, cols[j]]; gsub("_", " ", v); printf " | %s", (v == "" ? "-" : v) }
    printf " |\n" } }' <(sort -t$'\t' -k2,2 -s results.tsv)
