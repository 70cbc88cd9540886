#!/usr/bin/env bash
# The lossless check between two codecs: runs a `memtrace cc` binary twice under `setarch -R` (the same
# addresses every run), writing MEMTRACE_CODEC=A then B, prints both traces with `memtrace print`, drops
# comment lines and replaces the thread id and pid (they differ from run to run), and compares the lines.
# Usage: bench/codec-equal.sh BINARY [A B] [ARG ...]   (default codecs 6 and 7). Prints one line per run:
# the lines and an md5 of each print, and the file sizes; exits 1 when the prints differ.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ $# -ge 1 ] || { echo "usage: bench/codec-equal.sh BINARY [A B] [ARG ...]" >&2; exit 2; }
bin=$1; shift
a=${1:-6}; b=${2:-7}; [ $# -ge 2 ] && shift 2 || shift $#
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
for c in "$a" "$b"; do
  MEMTRACE_CODEC=$c MEMTRACE_OUT="$work/$c.mtr" setarch "$(uname -m)" -R "$bin" "$@" >/dev/null
  # the first thread id a comment names is the main thread's: every field equal to it becomes T
  "$root/memtrace" print "$work/$c.mtr" 2>/dev/null \
    | awk -F, -v OFS=, '/^#/ { if (!tid && match($0, /tid=[0-9]+/)) tid = substr($0, RSTART + 4, RLENGTH - 4); next }
                        { for (i = 1; i <= NF; i++) if ($i == tid) $i = "T" } 1' \
    | sed 's/pid=[0-9]*/pid=P/g; s/tid=[0-9]*/tid=T/g' | tee >(wc -l >"$work/$c.lines") | md5sum | cut -c1-32 >"$work/$c.md5"
done
sleep 1 # the line counts' subshells
printf '%s: codec %s %s lines %s %s bytes; codec %s %s lines %s %s bytes\n' "$(basename "$bin")" \
  "$a" "$(cat "$work/$a.lines")" "$(cat "$work/$a.md5")" "$(stat -c %s "$work/$a.mtr")" \
  "$b" "$(cat "$work/$b.lines")" "$(cat "$work/$b.md5")" "$(stat -c %s "$work/$b.mtr")"
cmp -s "$work/$a.md5" "$work/$b.md5"
