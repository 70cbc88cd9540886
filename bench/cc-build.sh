#!/usr/bin/env bash
# The cost of `memtrace cc` under a build system (issue 24): gzip's `./configure` and `make` from Debian's
# source package, once per compiler, each in a fresh build directory, timed by the wall clock and by the CPU
# time of the build's processes (the compile server is no child of the build: its CPU time is read from
# /proc and listed apart).
# Usage: bench/cc-build.sh [VARIANT ...]   (default: gcc server)
#   gcc      CC=gcc
#   server   CC="memtrace cc", with the compile server (a fresh one: its start is in the figures)
#   j2       as server, with make -j2 (two compiles at a time through one server)
#   zlib-gcc, zlib-server  zlib's CMake build (cmake -G Ninja, then ninja): -DCMAKE_C_COMPILER=gcc against
#            the single-path driver memtrace-cc (columns conf = cmake, make = ninja)
# memtrace is installed (make install) into a temporary PREFIX first.
# Sources go to ${SRC:-/tmp/memtrace-bench-src} (a deb-src entry is added next to debian.sources when none is there).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/scripts/env.sh"
memtrace_prereqs
src=${SRC:-/tmp/memtrace-bench-src}
work=$(mktemp -d /tmp/memtrace-cc-build-XXXXXX)
# the output goes on the record too, bench/results/cc-build.md (bench/results.sh)
. "$root/bench/results.sh"
bench_results cc-build "$@"
trap 'bench_results_end; rm -rf "$work"' EXIT
mkdir -p "$src"
if [ ! -d "$src/gzip-1.12" ]; then
  if ! grep -rqs '^Types:.*deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null; then
    sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources >/etc/apt/sources.list.d/memtrace-bench-src.sources
  fi
  apt-get update -qq
  (cd "$src" && apt-get source -qq gzip >/dev/null 2>&1)
  # one timestamp for every file, or make wants to rerun autoconf on the patched tree
  find "$src/gzip-1.12" -exec touch -h -d '2020-01-01 00:00:00' {} +
fi
case " $* " in
  *" zlib-"*)
    if [ ! -d "$src/zlib-1.2.13.dfsg" ]; then
      apt-get update -qq
      (cd "$src" && apt-get source -qq zlib >/dev/null 2>&1)
    fi
    # Debian's tarball drops win32/, which zlib's CMakeLists.txt names even on Linux (where it is not built)
    for z in "$src"/zlib-1.2.13*/; do mkdir -p "$z/win32" && touch "$z/win32/zlib1.rc"; done ;;
esac
# an installed memtrace (make install), as a user's build would run it; building it is outside the timings
MEMTRACE_CDS=off make -s -C "$root" install PREFIX="$work/prefix" >/dev/null
mt="$work/prefix/bin"

# server_cpu DIR: the CPU seconds of the compile servers whose sockets are in DIR, with those of the
# assemblers they ran (their waited-for children)
server_cpu() {
  local total=0 pid t
  for pid in $(pgrep -f "org.memtrace.cc.CcServer $1/" || true); do
    t=$(awk '{ print ($14 + $15 + $16 + $17) / 100 }' "/proc/$pid/stat" 2>/dev/null || echo 0)
    total=$(echo "$total + $t" | bc -l)
  done
  echo "$total"
}

# step NAME COMMAND...: runs COMMAND, prints "NAME wall user+sys"
step() {
  local name=$1 t
  shift
  TIMEFORMAT='%R %U %S'
  t=$( { time "$@" >"$work/$name.log" 2>&1; } 2>&1 ) || { tail -n 20 "$work/$name.log" >&2; echo "bench: $name failed" >&2; exit 1; }
  read -r wall user sys <<<"$t"
  printf '%s %.2f %.2f' "$name" "$wall" "$(echo "$user + $sys" | bc -l)"
}

printf '%-11s %10s %9s %10s %9s %11s\n' variant conf_wall conf_cpu make_wall make_cpu server_cpu
n=0
for v in "${@:-gcc server}"; do
  for v1 in $v; do
    # every run in a directory of its own: its own build tree and its own (new) compile server
    n=$((n + 1))
    d="$work/$n-$v1"
    mkdir -p "$d/build" "$d/run"
    chmod 700 "$d/run"
    # a fresh socket directory: the server starts during the build, as on a first build
    export XDG_RUNTIME_DIR="$d/run"
    jobs=1
    case $v1 in
      gcc|zlib-gcc) cc=gcc ;;
      server) cc="$mt/memtrace cc" ;;
      zlib-server) cc="$mt/memtrace-cc" ;;
      j2) cc="$mt/memtrace cc"; jobs=2 ;;
      *) echo "bench: unknown variant $v1" >&2; exit 2 ;;
    esac
    cd "$d/build"
    if [[ $v1 == zlib-* ]]; then
      c=($(step conf cmake -G Ninja -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=Release "$src"/zlib-1.2.13*/))
      m=($(step make ninja -j1))
    else
      c=($(step conf "$src/gzip-1.12/configure" -q CC="$cc" CFLAGS="-O2 -g"))
      m=($(step make make -s -j"$jobs"))
    fi
    printf '%-11s %10s %9s %10s %9s %11s\n' "$v1" "${c[1]}" "${c[2]}" "${m[1]}" "${m[2]}" "$(server_cpu "$d/run")"
    if [[ $v1 == zlib-* ]]; then ./example >/dev/null; else ./gzip --version >/dev/null; fi
    cd "$root"
  done
done
