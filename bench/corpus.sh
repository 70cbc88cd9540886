#!/usr/bin/env bash
# The corpus of real programs (issue 27): Debian source packages no one here wrote, fetched by `apt-get source`
# into bench/out/src (bench/real-programs.sh, bench/corpus-programs.sh: what each program is and runs), each
# built -O2 -g three times, by gcc (native), by `memtrace cc` and by `memtrace cc --skeleton`, then run
#   native     the gcc build
#   probes     the memtrace cc build with the trace discarded (MEMTRACE_OUT unset: records are stored into the
#              thread buffers and thrown away)
#   full       the memtrace cc build, the whole trace to disk
#   skeleton   the --skeleton build, its trace to disk
# interleaved, REPEAT times (default 3), keeping each variant's fastest CPU time (user+sys of the whole process,
# the writer thread included) and, apart, its fastest wall time. Prints per program the native seconds and
# each variant's x native (CPU, then wall), the accesses, bytes per access of both traces on disk, the entropy
# bound of the full trace in bytes per access (bench/trace-figures.sh's bound_of: "-" without the test classes),
# the ms the program waited for the writer (full, skeleton: their summaries), and the lossless check
# (bench/lossless.sh: the full and skeleton traces print the same accesses, thread by thread when there are
# several, and the two builds print the same
# output; "equal" or where they first differ; raw lines with the code field left out, unless
# LOSSLESS_ADDRESSES=both, which also compares the symbolic lines at twice the cost), then geomean rows. The
# native output must also be the full build's, else a note says so. Every build has bench/lossless.sh's fixed
# layout and every run its tunables and fixed pid and addresses, so the checks compare like with like.
# Traces are deleted after each program (a few hundred MB each); builds stay in bench/out/corpus/{plain,full,
# skel}: delete them after changing memtrace. Appends to bench/results/corpus.md (BENCH_RESULTS=off: not).
# Usage: bench/corpus.sh [program ...]
#   (default: xz zstd lua cjpeg djpeg pngtest picosat glpsol gzip sqlite3 bzip2)
# Quote ratios from one run: the machine is shared and absolute times drift.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/scripts/env.sh"
memtrace_prereqs --with-bench-tools
. "$root/bench/results.sh"
bench_results corpus "$@"
out="$root/bench/out/corpus"
src="$root/bench/out/src"
mkdir -p "$out/bin" "$src"
mt="$root/memtrace"
"$mt" --version >/dev/null   # builds on first use, outside the timings
REPEAT=${REPEAT:-3}
. "$root/bench/timing.sh"
# summary_value, bound_of, writer_wait
. "$root/bench/trace-figures.sh"
# layout, tunables, fixed, lossless
. "$root/bench/lossless.sh"
LOSSLESS_ADDRESSES=${LOSSLESS_ADDRESSES:-raw}

# configure and cmake want the compiler as one path: --skeleton's is a script of its own
# (written only when it changes: a build of another run of this script may be running it)
skel_cc=$(printf '#!/bin/sh\nexec "%s" cc --skeleton "$@"' "$mt")
[ "$(cat "$out/bin/memtrace-cc-skeleton" 2>/dev/null)" = "$skel_cc" ] || {
  printf '%s\n' "$skel_cc" >"$out/bin/memtrace-cc-skeleton.new" && chmod +x "$out/bin/memtrace-cc-skeleton.new" \
    && mv "$out/bin/memtrace-cc-skeleton.new" "$out/bin/memtrace-cc-skeleton"; }
cc_for() {
  case $1 in
    plain) echo gcc ;;
    full) echo "$root/memtrace-cc" ;;
    skel) echo "$out/bin/memtrace-cc-skeleton" ;;
  esac
}
real_ldflags=$layout
. "$root/bench/real-programs.sh"
. "$root/bench/corpus-programs.sh"

progs=("$@")
[ ${#progs[@]} -gt 0 ] || progs=(xz zstd lua cjpeg djpeg pngtest picosat glpsol gzip sqlite3 bzip2)
fetch_corpus
for p in "${progs[@]}"; do build_program "$p" plain; done
corpus_inputs

x() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a < b) ? a : b }'; }
failed=()
declare -A cpu wall   # variant (n p f s) -> fastest seconds
declare -A logsum=()   # column -> sum of the logs of its ratios, for the geomean rows
printf '%-8s %8s %7s %7s %7s %8s %7s %7s %7s %11s %8s %8s %7s %8s %8s %s\n' program native_s probes_x full_x skel_x \
  wall_s w_prb_x w_full_x w_skel_x accesses full_B/a skel_B/a bound wait_ms skwait_ms lossless
for p in "${progs[@]}"; do
  for v in full skel; do
    build_program "$p" "$v" || { printf '%-8s build failed (%s)\n' "$p" "$v"; failed+=("$p"); continue 2; }
  done
  read -r -a nat <<<"$(corpus_workload "$p" "$out/plain/$p")"
  read -r -a ful <<<"$(corpus_workload "$p" "$out/full/$p")"
  read -r -a skl <<<"$(corpus_workload "$p" "$out/skel/$p")"
  cpu=() wall=()
  for ((i = 0; i < REPEAT; i++)); do
    rm -f "$out/$p.full.mtr" "$out/$p.skel.mtr"
    # shellcheck disable=SC2086 # the prefix is words
    {
      read -r c w <<<"$(usage "$p.native" env GLIBC_TUNABLES=$tunables $fixed "${nat[@]}")"; cpu[n]=$(min "$c" "${cpu[n]:-}"); wall[n]=$(min "$w" "${wall[n]:-}")
      read -r c w <<<"$(usage "$p.probes" env -u MEMTRACE_OUT GLIBC_TUNABLES=$tunables $fixed "${ful[@]}")"; cpu[p]=$(min "$c" "${cpu[p]:-}"); wall[p]=$(min "$w" "${wall[p]:-}")
      read -r c w <<<"$(usage "$p.full" env MEMTRACE_OUT="$out/$p.full.mtr" GLIBC_TUNABLES=$tunables $fixed "${ful[@]}")"; cpu[f]=$(min "$c" "${cpu[f]:-}"); wall[f]=$(min "$w" "${wall[f]:-}")
      read -r c w <<<"$(usage "$p.skel" env MEMTRACE_OUT="$out/$p.skel.mtr" GLIBC_TUNABLES=$tunables $fixed "${skl[@]}")"; cpu[s]=$(min "$c" "${cpu[s]:-}"); wall[s]=$(min "$w" "${wall[s]:-}")
    }
  done
  # a traced build that does not do the program's work (it crashed) has no ratios to give
  if ! cmp -s "$out/$p.native.stdout" "$out/$p.full.stdout" || ! cmp -s "$out/$p.native.stdout" "$out/$p.skel.stdout"; then
    printf '%-8s %8.3f  the memtrace cc build'"'"'s output differs from the plain build'"'"'s: %s\n' "$p" "${cpu[n]}" \
      "$(tail -n 1 "$out/$p.full.stderr" "$out/$p.skel.stderr" 2>/dev/null | tr '\n' ' ' | cut -c1-120)"
    failed+=("$p"); rm -f "$out/$p.full.mtr" "$out/$p.skel.mtr"; continue
  fi
  same=$(lossless "$p")
  [ "$same" = equal ] || failed+=("$p")
  loads=$(summary_value "$out/$p.full.summary" loads); stores=$(summary_value "$out/$p.full.summary" stores)
  acc=$(( ${loads:-0} + ${stores:-0} ))
  fb=$(stat -c %s "$out/$p.full.mtr" 2>/dev/null || echo 0); sb=$(stat -c %s "$out/$p.skel.mtr" 2>/dev/null || echo 0)
  bound=$(bound_of "$out/$p.full.mtr"); [ -n "$bound" ] || bound=-
  row=("$(x "${cpu[p]}" "${cpu[n]}")" "$(x "${cpu[f]}" "${cpu[n]}")" "$(x "${cpu[s]}" "${cpu[n]}")"
       "$(x "${wall[p]}" "${wall[n]}")" "$(x "${wall[f]}" "${wall[n]}")" "$(x "${wall[s]}" "${wall[n]}")")
  for k in 0 1 2 3 4 5; do logsum[$k]=$(awk -v s="${logsum[$k]:-0}" -v r="${row[$k]}" 'BEGIN { print s + log(r) }'); done
  printf '%-8s %8.3f %7s %7s %7s %8.3f %7s %7s %7s %11d %8.3f %8.3f %7s %8s %8s %s\n' "$p" "${cpu[n]}" "${row[0]}" "${row[1]}" "${row[2]}" \
    "${wall[n]}" "${row[3]}" "${row[4]}" "${row[5]}" "$acc" "$(awk -v b="$fb" -v a="$acc" 'BEGIN { print a ? b / a : 0 }')" \
    "$(awk -v b="$sb" -v a="$acc" 'BEGIN { print a ? b / a : 0 }')" "$bound" "$(writer_wait "$out/$p.full.summary")" \
    "$(writer_wait "$out/$p.skel.summary")" "$same"
  rm -f "$out/$p.full.mtr" "$out/$p.skel.mtr"
  ok=$(( ${ok:-0} + 1 ))
done
if [ "${ok:-0}" -gt 0 ]; then
  g() { awk -v s="${logsum[$1]}" -v n="$ok" 'BEGIN { printf "%.2f", exp(s / n) }'; }
  printf '%-8s %8s %7s %7s %7s %8s %7s %7s %7s\n' geomean - "$(g 0)" "$(g 1)" "$(g 2)" - "$(g 3)" "$(g 4)" "$(g 5)"
fi
if [ ${#failed[@]} -gt 0 ]; then
  echo "bench: failed or not lossless: ${failed[*]} (see the build message or the lossless column)" >&2
  exit 1
fi
