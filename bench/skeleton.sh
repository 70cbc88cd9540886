#!/usr/bin/env bash
# Skeleton traces (issue 10): for each kernel of bench/programs, the fastest of REPEAT (3) runs (bench/timing.sh) of
#   native     the plain gcc -O2 build
#   full       built by `memtrace cc`, the whole trace written to disk (MEMTRACE_OUT)
#   skeleton   built by `memtrace cc --skeleton`, trace to disk
# and prints seconds, slowdowns against native, the accesses of the trace, bytes per access on disk, the
# share of accesses the skeleton computed, how fast `memtrace print` replays the skeleton trace (accesses
# per second, text written to /dev/null, JVM start included), and how fast the reader alone replays it
# (org.memtrace.mtr.ReplaySpeed: every access into a consumer that counts and sums them, no text, no
# names; millions of accesses per second of the reading thread's CPU time, first pass and best of three,
# JVM start excluded; CPU time because the machine is shared and the wall clock drifts with its load),
# and the skeleton trace as a C program (`memtrace skeleton --emit-c`, docs/skeleton-c.md): the size of the
# C file in KB, its input in bytes per access, and the seconds the program (gcc -O2) takes to print every
# access as a Lackey line into /dev/null.
# Usage: bench/skeleton.sh [program ...]   (default: gemm stencil matmul branchy compute heap chase hash qsort)
# Quote ratios from one run: the machine is shared and absolute times drift.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/scripts/env.sh"
memtrace_prereqs
out="$root/bench/out/skeleton"
mkdir -p "$out"
mt="$root/memtrace"
"$mt" --version >/dev/null   # builds on first use, outside the timings

. "$root/bench/timing.sh"
value() { grep -E "^  $2 " "$1" | awk '{print $NF}' | tr -d , || true; }

progs=("$@")
[ ${#progs[@]} -gt 0 ] || progs=(gemm stencil matmul branchy compute heap chase hash qsort)
jar="$root/target/memtrace.jar"
# Both traced runs without address randomization, so that the full and skeleton traces differ only by what
# the skeleton changes: with it, the addresses' varints change length from run to run and one program's
# full trace alone varies by tens of bytes (compute.c: 1,688 to 1,720 bytes in six runs).
# And with the same process id (1, in a PID namespace of their own) where namespaces are allowed: every
# event record carries the thread id, and another pid alone moves a trace by up to a few hundred bytes.
fixed=""
if setarch -R true 2>/dev/null; then fixed="setarch -R"; fi
if unshare --pid --fork true 2>/dev/null; then fixed="unshare --pid --fork $fixed"; fi
printf '%-9s %9s %9s %9s %8s %8s %12s %9s %9s %9s %12s %9s %9s %7s %9s %8s\n' program native_s full_s skel_s full_x skel_x accesses full_B/a skel_B/a computed print_a/s read1_M/s read_M/s C_KB in_B/a C_s
for p in "${progs[@]}"; do
    c="$root/bench/programs/$p.c"
    gcc -O2 -o "$out/$p.native" "$c" -lm
    "$mt" cc -O2 -o "$out/$p.full" "$c" -lm 2>/dev/null
    "$mt" cc --skeleton -O2 -o "$out/$p.skel" "$c" -lm 2>/dev/null
    rm -f "$out/$p".*.mtr
    tn=$(timed "$p.native" "$out/$p.native")
    tf=$(MEMTRACE_OUT="$out/$p.full.mtr" timed "$p.full" $fixed "$out/$p.full")
    ts=$(MEMTRACE_OUT="$out/$p.skel.mtr" timed "$p.skel" $fixed "$out/$p.skel")
    tr=$(timed "$p.replay" "$mt" print -o /dev/null "$out/$p.skel.mtr")
    "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -cp "$jar" org.memtrace.mtr.ReplaySpeed "$out/$p.skel.mtr" 3 \
        >"$out/$p.read.stdout"
    r1=$(sed -n 's/^pass 1: .*, \([0-9.]*\) M accesses\/cpu-s.*/\1/p' "$out/$p.read.stdout")
    rb=$(sed -n 's/^pass .*, \([0-9.]*\) M accesses\/cpu-s.*/\1/p' "$out/$p.read.stdout" | sort -g | tail -1)
    "$mt" skeleton --emit-c "$out/$p.skel.mtr" -o "$out/$p.skel.c" 2>"$out/$p.emit.stderr"
    gcc -O2 -o "$out/$p.skelc" "$out/$p.skel.c"
    # the program's lines go to /dev/null, not into timed's stdout file (gemm's are ~0.5 GB)
    te=$(timed "$p.skelc" sh -c '"$0" "$1" >/dev/null' "$out/$p.skelc" "$out/$p.skel.in")
    ck=$(stat -c %s "$out/$p.skel.c"); ib=$(stat -c %s "$out/$p.skel.in")
    s="$out/$p.replay.stderr"
    acc=$(value "$s" probes); comp=$(value "$s" computed)
    fb=$(stat -c %s "$out/$p.full.mtr"); sb=$(stat -c %s "$out/$p.skel.mtr")
    printf '%-9s %9.3f %9.3f %9.3f %8.2f %8.2f %12d %9.4f %9.4f %8.1f%% %12.0f %9s %9s %7.1f %9.4f %8.3f\n' "$p" "$tn" "$tf" "$ts" \
        "$(echo "$tf / $tn" | bc -l)" "$(echo "$ts / $tn" | bc -l)" "$acc" "$(echo "$fb / $acc" | bc -l)" \
        "$(echo "$sb / $acc" | bc -l)" "$(echo "100 * ${comp:-0} / $acc" | bc -l)" "$(echo "$acc / $tr" | bc -l)" "$r1" "$rb" \
        "$(echo "$ck / 1024" | bc -l)" "$(echo "$ib / $acc" | bc -l)" "$te"
done
