#!/usr/bin/env bash
# The compiled-in runtime's encoder, per access (issue 27: <= 2 ns of CPU per access beyond native, full trace
# <= 5x native): each program built once by `memtrace cc -O2 -g -no-pie` (and by gcc for native), then run
#   native        the gcc build
#   probes        the memtrace cc build, trace discarded (MEMTRACE_OUT unset)
#   full BEFORE   trace to disk with the runtime of commit $BEFORE (only when BEFORE is set)
#   full          trace to disk with this checkout's runtime (agent/, built here)
# CPU time is user+sys of the whole process from wait4 (the writer thread and a helping program thread
# included), the fastest of REPEAT (3) runs, the variants interleaved run by run. Prints seconds, x native,
# ns per access beyond native ((full - native) / accesses, accesses from the trace's end record) and bytes
# per access on disk, against the trace's entropy bound in bytes per access (bench/trace-figures.sh's bound_of:
# per site, its address differences' empirical entropy, plus the next site's; "-" without the test classes,
# `mvn test-compile`; of the first codec's trace with CODECS). The runtime is swapped under the same binaries by LD_LIBRARY_PATH (it comes before
# their RUNPATH). Programs: kernels of bench/programs (default spmv chase hash stencil gemm smooth) and
# `gzip` (gzip -6 of about 1.3 MB of text, from Debian's source package, as bench/cc.sh builds it).
#
#     BEFORE=COMMIT bench/encoder.sh [program ...]
#     CODECS="7 8" bench/encoder.sh [program ...]   (this checkout's runtime, one full column per codec)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/scripts/env.sh"
memtrace_prereqs
. "$root/bench/results.sh"
. "$root/bench/trace-figures.sh" # bound_of
bench_results encoder "$@"
out="$root/bench/out/encoder"
src="$root/bench/out/src"
mkdir -p "$out" "$src"
mt="$root/memtrace"
"$mt" --version >/dev/null   # builds on first use, outside the timings
REPEAT=${REPEAT:-3}
programs=("$@")
[ ${#programs[@]} -gt 0 ] || programs=(spmv chase hash stencil gemm smooth gzip)

make -s -C "$root/agent" OUT="$out/rt-after" "$out/rt-after/libmemtrace-rt.so" >/dev/null
if [ -n "${BEFORE:-}" ]; then
  rm -rf "$out/before-src" && mkdir -p "$out/before-src"
  git -C "$root" archive "$BEFORE" agent | tar -x -C "$out/before-src"
  make -s -C "$out/before-src/agent" OUT="$out/rt-before" "$out/rt-before/libmemtrace-rt.so" >/dev/null
fi

cc_for() { case $1 in plain) echo gcc ;; full) echo "$mt cc" ;; esac; }
. "$root/bench/real-programs.sh"
command_of() { # variant program: the command line
  if [ "$2" = gzip ]; then echo "$out/$1/gzip -c -6 $out/gzip.in"; else echo "$out/$1/$2"; fi
}
for p in "${programs[@]}"; do
  if [ "$p" = gzip ]; then
    [ -d "$src/gzip-1.12" ] || fetch_sources
    make_inputs
    build_gzip plain && build_gzip full
  else
    for v in plain full; do
      mkdir -p "$out/$v"
      [ -x "$out/$v/$p" ] || $(cc_for $v) -O2 -g -no-pie -o "$out/$v/$p" "$root/bench/programs/$p.c"
    done
  fi
done

# cpu LIBDIR TRACE COMMAND...: user+sys seconds of one run (LIBDIR "-": the binary's own runtime; TRACE "-": none)
cpu() {
  python3 - "$@" <<'EOF'
import os, sys
lib, trace, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
env = dict(os.environ)
env.pop("MEMTRACE_OUT", None)
if lib != "-": env["LD_LIBRARY_PATH"] = lib
if trace != "-":
    env["MEMTRACE_OUT"] = trace
    if os.path.exists(trace): os.unlink(trace)
pid = os.fork()
if pid == 0:
    fd = os.open(os.devnull, os.O_WRONLY); os.dup2(fd, 1); os.dup2(fd, 2)
    os.execve(argv[0], argv, env)
_, status, ru = os.wait4(pid, 0)
print(f"{ru.ru_utime + ru.ru_stime:.4f}")
EOF
}
accesses() { python3 -c 'import struct,sys; d=open(sys.argv[1],"rb").read()[-32:]; print(struct.unpack("<IIQQQ",d)[3])' "$1"; }
min() { awk -v a="$1" -v b="$2" 'BEGIN{print (b == "" || a < b) ? a : b}'; }

if [ -n "${CODECS:-}" ]; then # this checkout's runtime writing each codec in turn (MEMTRACE_CODEC), interleaved
  read -r -a codecs <<<"$CODECS"
  printf '| program | accesses | native | probes |'; for c in "${codecs[@]}"; do printf ' full, codec %s | ns/access beyond native | bytes/access |' "$c"; done; echo ' bound B/access |'
  printf '|---|---|---|---|'; for c in "${codecs[@]}"; do printf -- '---|---|---|'; done; echo '---|'
  for p in "${programs[@]}"; do
    read -r -a nat <<<"$(command_of plain "$p")"
    read -r -a ful <<<"$(command_of full "$p")"
    tn="" tp=""; declare -A tc=()
    for ((i = 0; i < REPEAT; i++)); do
      tn=$(min "$(cpu - - "${nat[@]}")" "$tn")
      tp=$(min "$(cpu "$out/rt-after" - "${ful[@]}")" "$tp")
      for c in "${codecs[@]}"; do tc[$c]=$(min "$(MEMTRACE_CODEC=$c cpu "$out/rt-after" "$out/codec$c.mtr" "${ful[@]}")" "${tc[$c]:-}"); done
    done
    n=$(accesses "$out/codec${codecs[0]}.mtr")
    printf '| %s | %s | %.3f s | %.3f s (%.1fx) |' "$p" "$n" "$tn" "$tp" "$(awk -v t="$tp" -v nt="$tn" 'BEGIN{print t / nt}')"
    for c in "${codecs[@]}"; do
      awk -v t="${tc[$c]}" -v nt="$tn" -v n="$n" -v s="$(stat -c %s "$out/codec$c.mtr")" \
        'BEGIN{printf " %.3f s (%.1fx) | %.2f | %.3f |", t, t / nt, (t - nt) * 1e9 / n, s / n}'
    done
    bound=$(bound_of "$out/codec${codecs[0]}.mtr"); echo " ${bound:--} |"
    unset tc
  done
  exit 0
fi
printf '| program | accesses | native | probes | %sfull | ns/access beyond native | bytes/access | bound B/access |\n' "${BEFORE:+full before | }"
printf '|---|---|---|---|%s---|---|---|---|\n' "${BEFORE:+---|}"
for p in "${programs[@]}"; do
  read -r -a nat <<<"$(command_of plain "$p")"
  read -r -a ful <<<"$(command_of full "$p")"
  tn="" tp="" tb="" ta=""
  for ((i = 0; i < REPEAT; i++)); do
    tn=$(min "$(cpu - - "${nat[@]}")" "$tn")
    tp=$(min "$(cpu "$out/rt-after" - "${ful[@]}")" "$tp")
    [ -z "${BEFORE:-}" ] || tb=$(min "$(cpu "$out/rt-before" "$out/before.mtr" "${ful[@]}")" "$tb")
    ta=$(min "$(cpu "$out/rt-after" "$out/after.mtr" "${ful[@]}")" "$ta")
  done
  n=$(accesses "$out/after.mtr")
  ns() { awk -v t="$1" -v nt="$tn" -v n="$n" 'BEGIN{printf "%.2f", (t - nt) * 1e9 / n}'; }
  x() { awk -v t="$1" -v nt="$tn" 'BEGIN{printf "%.3f s (%.1fx)", t, t / nt}'; }
  bpa() { awk -v s="$(stat -c %s "$1")" -v n="$n" 'BEGIN{printf "%.3f", s / n}'; }
  bound=$(bound_of "$out/after.mtr"); bound=${bound:--}
  if [ -n "${BEFORE:-}" ]; then
    printf '| %s | %s | %.3f s | %s | %s | %s | %s → %s | %s → %s | %s |\n' "$p" "$n" "$tn" "$(x "$tp")" "$(x "$tb")" "$(x "$ta")" \
      "$(ns "$tb")" "$(ns "$ta")" "$(bpa "$out/before.mtr")" "$(bpa "$out/after.mtr")" "$bound"
  else
    printf '| %s | %s | %.3f s | %s | %s | %s | %s | %s |\n' "$p" "$n" "$tn" "$(x "$tp")" "$(x "$ta")" "$(ns "$ta")" "$(bpa "$out/after.mtr")" "$bound"
  fi
done
