#!/usr/bin/env bash
# Skeleton traces (issue 10): for each program, the fastest of REPEAT (3) runs (bench/timing.sh) of
#   native     the plain gcc -O2 build
#   full       built by `memtrace cc`, the whole trace written to disk (MEMTRACE_OUT)
#   skeleton   built by `memtrace cc --skeleton`, trace to disk
# and prints seconds, slowdowns against native, the accesses of the trace, bytes per access on disk, the
# share of accesses the skeleton computed, how fast `memtrace print` replays the skeleton trace (accesses
# per second, text written to /dev/null, JVM start included), and how fast the reader alone replays it
# (org.memtrace.bench.ReplaySpeed, a test class: every access into a consumer that counts and sums them, no text, no
# names; millions of accesses per second by the wall clock, the reader and its two chunk decoders on
# threads of their own, first pass and best of the passes made in 3 s (at least three), JVM start excluded: the wall
# clock drifts with the shared machine's load, so the best pass is the reader's rate;
# fix1_ms and rest1_M/s split the first pass at its first access: ms before it, the rate after it;
# aot1_M/s and aotfix_ms are the first pass and its fixed ms run through the launcher (MEMTRACE_JAVA_MAIN):
# its JVM flags and AOT cache, as a user's `memtrace print` starts),
# and the skeleton trace as a C program (`memtrace skeleton --emit-c`, docs/skeleton-c.md): the size of the
# C file in KB, its input in bytes per access, and the seconds the program (gcc -O2) takes to print every
# access as a Lackey line into /dev/null.
# Last, `lossless`: the full and the skeleton trace printed raw and symbolic (`memtrace print --addresses
# both`) must be the same text line for line, but for what the two builds place differently: the code field
# (an access's instruction, a block event's caller) is reduced to its function (raw lines take it from their
# symbolic twin), a heap name's call site to its function, a symbolic address named by its module's file
# offset (data without a symbol) to the module (its raw address still counts), and comment lines (modules,
# build-ids, mappings) are left out. The column shows
# `equal`, or the first line that differs (`line N`, in either printed trace), or `stdout` when the two
# builds printed different output (not checked for threads, whose sum races by design); any of these makes
# the script exit 1 at the end.
# Programs: the kernels of bench/programs (disparity is the MadT paper's example at CIF size; threads runs two
# threads over one array, whose traces are compared thread by thread, without the global sequence numbers)
# and gzip, sqlite3 and bzip2 (-9 on 200 KB) built as bench/cc.sh builds them (bench/real-programs.sh,
# Debian sources in bench/out/src; their builds are kept in bench/out/skeleton/{plain,full,skel}: delete
# them after changing memtrace) on its inputs.
# Every build is -no-pie with .data, the read-only segment and the relro sections (.init_array first, then
# .data.rel.ro) at fixed addresses, so that the two traced builds differ only in their code, whose size the
# probes change (and .eh_frame's with it, which moved sqlite3's const tables of function pointers in
# .data.rel.ro, right after it, by 100 KB). Every run has malloc's mmap threshold at
# its maximum (32 MB): a larger block is mmapped at an address that depends on how many buffers the runtime
# has mapped by then, which differs with the trace's size (disparity's 405 KB images moved by 1 MB).
# Usage: bench/skeleton.sh [program ...]
#   (default: gemm stencil matmul disparity branchy compute heap blockops chase hash qsort threads gzip sqlite3
#   bzip2)
# Quote ratios from one run: the machine is shared and absolute times drift.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/scripts/env.sh"
memtrace_prereqs --with-bench-tools
. "$root/bench/results.sh"
bench_results skeleton "$@"
out="$root/bench/out/skeleton"
mkdir -p "$out"
mt="$root/memtrace"
"$mt" --version >/dev/null   # builds on first use, outside the timings
# a new build's first launch trains the launcher's AOT cache in the background, holding this lock until the
# archive is in place: the aot columns below are meant to use it
cds_lock="${XDG_CACHE_HOME:-$HOME/.cache}/memtrace/cds.lock"
if [ -e "$cds_lock" ]; then flock "$cds_lock" true 2>/dev/null || true; fi

. "$root/bench/timing.sh"
value() { grep -E "^  $2 " "$1" | awk '{print $NF}' | tr -d , || true; }

progs=("$@")
[ ${#progs[@]} -gt 0 ] || progs=(gemm stencil matmul disparity branchy compute heap blockops chase hash qsort threads gzip sqlite3 bzip2)
# layout, tunables, fixed, comparable, per_thread, lossless
. "$root/bench/lossless.sh"
src="$root/bench/out/src"
mkdir -p "$src"
cc_for() {
  case $1 in
    plain) echo "gcc" ;;
    full) echo "$mt cc" ;;
    skel) echo "$mt cc --skeleton" ;;
  esac
}
real_ldflags=$layout
# gzip, sqlite3, bzip2: fetch_sources, build_*, make_inputs, workload, is_real
. "$root/bench/real-programs.sh"
for p in "${progs[@]}"; do if is_real "$p"; then fetch_sources; break; fi; done
make_inputs
jar="$root/target/memtrace.jar"
failed=()
printf '%-9s %9s %9s %9s %8s %8s %12s %9s %9s %9s %12s %9s %9s %8s %9s %9s %8s %7s %9s %8s %s\n' program native_s full_s skel_s full_x skel_x accesses full_B/a skel_B/a computed print_a/s read1_M/s read_M/s fix1_ms rest1_M/s aot1_M/s aotfix_ms C_KB in_B/a C_s lossless
for p in "${progs[@]}"; do
    case $p in
      gzip|sqlite3|bzip2) for v in plain full skel; do "build_$p" "$v" 2>/dev/null; done ;;
      *)
        c="$root/bench/programs/$p.c"
        mkdir -p "$out/plain" "$out/full" "$out/skel"
        # shellcheck disable=SC2086 # the layout flags are words
        for v in plain full skel; do $(cc_for "$v") -O2 $layout -pthread -o "$out/$v/$p" "$c" -lm 2>/dev/null; done ;;
    esac
    rm -f "$out/$p".*.mtr
    # shellcheck disable=SC2046 # the workload is words
    tn=$(GLIBC_TUNABLES=$tunables timed "$p.native" $(workload "$p" "$out/plain/$p"))
    # shellcheck disable=SC2046
    tf=$(GLIBC_TUNABLES=$tunables MEMTRACE_OUT="$out/$p.full.mtr" timed "$p.full" $fixed $(workload "$p" "$out/full/$p"))
    # shellcheck disable=SC2046
    ts=$(GLIBC_TUNABLES=$tunables MEMTRACE_OUT="$out/$p.skel.mtr" timed "$p.skel" $fixed $(workload "$p" "$out/skel/$p"))
    tr=$(timed "$p.replay" "$mt" print -o /dev/null "$out/$p.skel.mtr")
    # at least 3 passes, and more for 3 s, so that a small trace is read often enough for the JIT to compile
    # the reader (matmul's 268 k accesses: about 20 passes before its rate settles)
    "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -cp "$jar:$root/target/test-classes" org.memtrace.bench.ReplaySpeed "$out/$p.skel.mtr" 3 3 \
        >"$out/$p.read.stdout"
    r1=$(sed -n 's/^pass 1: .*, \([0-9.]*\) M accesses\/s.*/\1/p' "$out/$p.read.stdout")
    rb=$(sed -n 's/^pass .*, \([0-9.]*\) M accesses\/s.*/\1/p' "$out/$p.read.stdout" | sort -g | tail -1)
    # the first pass split at its first access: the fixed cost before it (ms), the rate after it
    f1=$(sed -n 's/^pass 1: .*, fixed \([0-9.]*\) ms, rest \([0-9.]*\) M.*/\1/p' "$out/$p.read.stdout")
    q1=$(sed -n 's/^pass 1: .*, fixed \([0-9.]*\) ms, rest \([0-9.]*\) M.*/\2/p' "$out/$p.read.stdout")
    # the same first pass as a user's `memtrace print` starts: the launcher's JVM flags and its AOT cache
    MEMTRACE_JAVA_MAIN=org.memtrace.bench.ReplaySpeed "$mt" "$out/$p.skel.mtr" 1 >"$out/$p.read-aot.stdout"
    a1=$(sed -n 's/^pass 1: .*, \([0-9.]*\) M accesses\/s.*/\1/p' "$out/$p.read-aot.stdout")
    af=$(sed -n 's/^pass 1: .*, fixed \([0-9.]*\) ms, rest.*/\1/p' "$out/$p.read-aot.stdout")
    # a failure here shows as zeros (its message in $p.emit.stderr), and the lossless check still runs
    te=0; ck=0; ib=0
    if "$mt" skeleton --emit-c "$out/$p.skel.mtr" -o "$out/$p.skel.c" 2>"$out/$p.emit.stderr" \
        && gcc -O2 -o "$out/$p.skelc" "$out/$p.skel.c" 2>>"$out/$p.emit.stderr"; then
        # the program's lines go to /dev/null, not into timed's stdout file (gemm's are ~0.5 GB)
        te=$(timed "$p.skelc" sh -c '"$0" "$1" >/dev/null' "$out/$p.skelc" "$out/$p.skel.in")
        ck=$(stat -c %s "$out/$p.skel.c"); ib=$(stat -c %s "$out/$p.skel.in")
    fi
    s="$out/$p.replay.stderr"
    acc=$(value "$s" probes); comp=$(value "$s" computed)
    fb=$(stat -c %s "$out/$p.full.mtr"); sb=$(stat -c %s "$out/$p.skel.mtr")
    same=$(lossless "$p")
    [ "$same" = equal ] || failed+=("$p")
    printf '%-9s %9.3f %9.3f %9.3f %8.2f %8.2f %12d %9.4f %9.4f %8.1f%% %12.0f %9s %9s %8s %9s %9s %8s %7.1f %9.4f %8.3f %s\n' "$p" "$tn" "$tf" "$ts" \
        "$(echo "$tf / $tn" | bc -l)" "$(echo "$ts / $tn" | bc -l)" "$acc" "$(echo "$fb / $acc" | bc -l)" \
        "$(echo "$sb / $acc" | bc -l)" "$(echo "100 * ${comp:-0} / $acc" | bc -l)" "$(echo "$acc / $tr" | bc -l)" "$r1" "$rb" "$f1" "$q1" "$a1" "$af" \
        "$(echo "$ck / 1024" | bc -l)" "$(echo "$ib / $acc" | bc -l)" "$te" "$same"
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "bench: the skeleton trace is not the full trace for: ${failed[*]} (see the lossless column)" >&2
    exit 1
fi
