#!/bin/bash
# bench/rewrite-plan.sh: cold planning (an empty plan cache) of MODULES by two builds, its CPU, and whether the
# plans and trampoline files come out the same byte for byte. Each build is a checkout whose target/classes is
# compiled (`mvn -o -q compile`; `before` e.g. a `git worktree` of the older commit); both run this checkout's
# org.memtrace.bench.PlanModules (target/test-classes) with the JVM flags `memtrace run` uses, one after the
# other, into cache directories whose paths have the same length (a plan names its trampoline file by path:
# the directory is the one thing in which the two may differ, and is masked before the comparison).
#
#   bench/rewrite-plan.sh BEFORE-CHECKOUT AFTER-CHECKOUT [MODULE ...]   (default: libc, libm)
#
# Prints per build its /usr/bin/time (wall, user and system seconds of the JVM and the as, ld and strip it
# starts) and per module PlanModules' line, then one line per file: identical or DIFFERENT; exits 1 when one
# differs. What it gets wrong: CPU seconds move with the machine's load (the load average is printed); a
# module planned by both builds is compared whatever each planned (the files are named by content key).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ $# -ge 2 ] || { echo "usage: bench/rewrite-plan.sh BEFORE-CHECKOUT AFTER-CHECKOUT [MODULE ...]" >&2; exit 2; }
before="$(cd "$1" && pwd)" after="$(cd "$2" && pwd)"; shift 2
[ $# -gt 0 ] || set -- /usr/lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libm.so.6
for c in "$before" "$after" "$root"; do
  [ -d "$c/target/classes" ] || { echo "rewrite-plan: $c/target/classes is missing: compile it first" >&2; exit 2; }
done
[ -f "$root/target/test-classes/org/memtrace/bench/PlanModules.class" ] || { echo "rewrite-plan: compile this checkout's tests first" >&2; exit 2; }
java="${JAVA_HOME:+$JAVA_HOME/bin/}java"
work="$(mktemp -d /tmp/memtrace-rewrite-plan.XXXXXX)"
trap 'rm -rf "$work"' EXIT
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for build in before after; do
  classes="$before/target/classes"; [ "$build" = before ] || classes="$after/target/classes"
  dir="$work/before"; [ "$build" = before ] || dir="$work/after_" # names of one length
  /usr/bin/time -f "$build: %e s wall, %U s user, %S s system" "$java" --enable-native-access=ALL-UNNAMED -XX:+UseSerialGC \
    -XX:TieredStopAtLevel=1 -cp "$classes:$root/target/test-classes" org.memtrace.bench.PlanModules "$dir" "$@"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
status=0
for f in "$work"/before/*.plan "$work"/before/*.elf; do
  name="${f##*/}"
  if cmp -s <(LC_ALL=C sed "s|$work/before/|$work/CACHE_/|g" "$f") <(LC_ALL=C sed "s|$work/after_/|$work/CACHE_/|g" "$work/after_/$name" 2>/dev/null); then
    echo "$name: identical"
  else
    echo "$name: DIFFERENT"; status=1
  fi
done
exit $status
