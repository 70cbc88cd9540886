#!/bin/bash
# skeleton-sections.sh OUTDIR [CHECKOUT]: builds bench/programs/*.c with `memtrace cc --skeleton` at -O1, -O2
# and -Os from CHECKOUT (default: this one) and writes each binary's memtrace_skel and memtrace_sites sections
# into OUTDIR as NAME-OPT.skel and NAME-OPT.sites. A change to the rewriter that must not change its output
# leaves two runs' directories equal: `diff -r before after`. Use copies of the tree (cp -a) for before and
# after: the launcher rebuilds a checkout whose sources are newer than its jar.
set -u
out=$(realpath -m "$1"); mkdir -p "$out"
cd "${2:-$(dirname "$0")/..}"
export MEMTRACE_CDS=off MEMTRACE_CC_SERVER=off
for c in bench/programs/*.c; do
  n=$(basename "$c" .c)
  for o in -O1 -O2 -Os; do
    b="$out/$n$o"
    if ! ./memtrace cc --skeleton $o -o "$b" "$c" -lm -lpthread >"$b.log" 2>&1; then echo "FAIL $n $o (log: $b.log)"; continue; fi
    rm -f "$b.log"
    objcopy -O binary --only-section=memtrace_skel "$b" "$b.skel"
    objcopy -O binary --only-section=memtrace_sites "$b" "$b.sites"
    rm -f "$b"
  done
done
echo "$(ls "$out"/*.skel | wc -l) programs' sections in $out"
