#!/usr/bin/env bash
# Compiled-in tracing benchmark (issue 7, paper 001's Fig. 3 measure): for each program, in one run,
#   native           the plain gcc build
#   discarded        built by `memtrace cc`, records written to the thread buffers and thrown away
#   full             built by `memtrace cc`, the whole trace written to disk (MEMTRACE_OUT)
#   omega .25 / .1   built by `memtrace cc --omega W`, trace discarded (the paper's Fig. 3: probe cost alone)
#                    and trace to disk
#   fault            the plain build under `memtrace run` (page faults)
#   lackey           the plain build under valgrind --tool=lackey --trace-mem=yes
# and prints seconds, slowdowns against native, the accesses of the full trace, bytes per access on disk,
# the entropy bound of the full trace in bytes per access (src/test/java/org/memtrace/bench/EntropyBound.java:
# per site, its address differences' empirical entropy, plus the next site's; "-" without the test classes,
# `mvn test-compile`), how long the program waited for the writer in the full run (ms, its summary), and the
# MA/AIA the selective builds report. Real programs come from Debian source packages (gzip,
# sqlite3; bzip2 when named), fetched into bench/out/src by this script (deb-src entries are added when missing).
# Usage: bench/cc.sh [program ...]   (default: compute heap blockops gemm stencil gzip sqlite3)
# FAULT_LIMIT=N cuts the fault-mode run off after N seconds (default 120; the table then shows ">").
# CC_ONLY=1 skips the fault-mode and Lackey runs (their columns show "-"): they take most of the time.
# REPEAT=N (default 3) times the native and memtrace cc runs N times each and keeps the fastest
# (bench/timing.sh); the fault-mode and Lackey runs are timed once.
# Quote ratios from one run: the machine is shared and absolute times drift.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/scripts/env.sh"
memtrace_prereqs --with-bench-tools
. "$root/bench/results.sh"
bench_results cc "$@"
out="$root/bench/out/cc"
src="$root/bench/out/src"
mkdir -p "$out" "$src"
mt="$root/memtrace"
FAULT_LIMIT=${FAULT_LIMIT:-120}
CC_ONLY=${CC_ONLY:-0}
"$mt" --version >/dev/null   # builds on first use, outside the timings

. "$root/bench/timing.sh"
# summary_value, bound_of, writer_wait
. "$root/bench/trace-figures.sh"
ratio() { echo "$1 / $2" | bc -l; }

# build VARIANT into $out/VARIANT/: plain | full | w25 | w10
cc_for() {
  case $1 in
    plain) echo "gcc" ;;
    full) echo "$mt cc" ;;
    w25) echo "$mt cc --omega 0.25" ;;
    w10) echo "$mt cc --omega 0.1" ;;
  esac
}

build_small() { # program variant
  local p=$1 v=$2 cc
  cc=$(cc_for "$v")
  mkdir -p "$out/$v"
  $cc -O2 -g -no-pie -o "$out/$v/$p" "$root/bench/programs/$p.c"
}

# gzip, sqlite3, bzip2: fetch_sources, build_*, make_inputs, workload, is_real
. "$root/bench/real-programs.sh"

progs=("$@")
[ ${#progs[@]} -gt 0 ] || progs=(compute heap blockops gemm stencil gzip sqlite3)
for p in "${progs[@]}"; do if is_real "$p"; then fetch_sources; break; fi; done
make_inputs

printf '%-9s %9s %8s %8s %8s %8s %8s %8s %8s %8s %12s %8s %8s %8s %15s %15s\n' program native_s discard_x d25_x d10_x full_x w25_x w10_x fault_x lackey_x accesses B/access bound wait_ms MA/AIA.25 MA/AIA.1
for p in "${progs[@]}"; do
  for v in plain full w25 w10; do
    case $p in
      gzip) build_gzip "$v" ;;
      sqlite3) build_sqlite3 "$v" ;;
      bzip2) build_bzip2 "$v" ;;
      *) build_small "$p" "$v" ;;
    esac
  done
  # shellcheck disable=SC2046 # the workload is words
  tn=$(timed "$p.native" $(workload "$p" "$out/plain/$p"))
  td=$(timed "$p.discard" env -u MEMTRACE_OUT $(workload "$p" "$out/full/$p"))
  td25=$(timed "$p.d25" env -u MEMTRACE_OUT $(workload "$p" "$out/w25/$p"))
  td10=$(timed "$p.d10" env -u MEMTRACE_OUT $(workload "$p" "$out/w10/$p"))
  rm -f "$out/$p.full.mtr" "$out/$p.w25.mtr" "$out/$p.w10.mtr"
  tf=$(timed "$p.full" env MEMTRACE_OUT="$out/$p.full.mtr" $(workload "$p" "$out/full/$p"))
  t25=$(timed "$p.w25" env MEMTRACE_OUT="$out/$p.w25.mtr" $(workload "$p" "$out/w25/$p"))
  t10=$(timed "$p.w10" env MEMTRACE_OUT="$out/$p.w10.mtr" $(workload "$p" "$out/w10/$p"))
  fault_x=-; lackey_x=-; fault_mark=" "
  if [ "$CC_ONLY" != 1 ]; then
    # fault mode costs microseconds per access: cut it off after $FAULT_LIMIT seconds (then ">" marks a lower bound)
    tfault=$(REPEAT=1 timed "$p.fault" timeout -k 10 "$FAULT_LIMIT" "$mt" run --mode fault -q -o "$out/$p.fault.trace" -- $(workload "$p" "$out/plain/$p"))
    [ "$(echo "$tfault >= $FAULT_LIMIT" | bc)" = 1 ] && fault_mark=">"
    tl=$(REPEAT=1 timed "$p.lackey" valgrind --tool=lackey --trace-mem=yes --log-file="$out/$p.lackey" $(workload "$p" "$out/plain/$p"))
    fault_x=$(printf '%.0f' "$(ratio "$tfault" "$tn")"); lackey_x=$(printf '%.0f' "$(ratio "$tl" "$tn")")
  fi
  # the program's output must not depend on the build
  cmp -s "$out/$p.native.stdout" "$out/$p.full.stdout" || echo "  ($p: output of the memtrace cc build differs from the plain build!)"
  "$mt" print -o /dev/null "$out/$p.full.mtr" 2>"$out/$p.full.summary" || true
  "$mt" print -o /dev/null "$out/$p.w25.mtr" 2>"$out/$p.w25.summary" || true
  "$mt" print -o /dev/null "$out/$p.w10.mtr" 2>"$out/$p.w10.summary" || true
  loads=$(summary_value "$out/$p.full.summary" loads); stores=$(summary_value "$out/$p.full.summary" stores)
  acc=$(( ${loads:-0} + ${stores:-0} ))
  bytes=$(stat -c %s "$out/$p.full.mtr" 2>/dev/null || echo 0)
  bpa=$(echo "if ($acc > 0) $bytes / $acc else 0" | bc -l)
  bound=$(bound_of "$out/$p.full.mtr"); [ -n "$bound" ] || bound=-
  wait_ms=$(writer_wait "$out/$p.full.summary")
  acc25="$(summary_value "$out/$p.w25.summary" "accuracy ma")/$(summary_value "$out/$p.w25.summary" "accuracy aia")"
  acc10="$(summary_value "$out/$p.w10.summary" "accuracy ma")/$(summary_value "$out/$p.w10.summary" "accuracy aia")"
  printf '%-9s %9.3f %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f %s%7s %8s %12d %8.3f %8s %8s %15s %15s\n' "$p" "$tn" \
    "$(ratio "$td" "$tn")" "$(ratio "$td25" "$tn")" "$(ratio "$td10" "$tn")" "$(ratio "$tf" "$tn")" "$(ratio "$t25" "$tn")" "$(ratio "$t10" "$tn")" \
    "$fault_mark" "$fault_x" "$lackey_x" "$acc" "$bpa" "$bound" "${wait_ms:--}" "$acc25" "$acc10"
done
