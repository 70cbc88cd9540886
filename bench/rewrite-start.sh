#!/bin/bash
# bench/rewrite-start.sh: what `memtrace run --mode rewrite` costs to start against `--mode fault`, cold (an
# empty cache: every module planned) and warm (every plan cached), on /bin/true and `python3 -S -c pass`.
# Each row is one launcher (a memtrace script: this checkout's, or another's given as LABEL=PATH, e.g. the
# build before a change), each cell the median of RUNS runs (cold: COLD_RUNS, each in a fresh cache) of
# /usr/bin/time: wall seconds and CPU seconds (user + system, the JVM, ld.so --list, as, ld and the program
# together). The JVM starts the same way in both modes (MEMTRACE_CDS=off here: no class-data archive is
# trained or used, so a fresh cache costs no training in the background); the difference between the modes
# is rewrite mode's own. CDS=on measures the launcher's default instead, with its AOT cache: the warm cells
# wait for the training the first run starts (the launcher's lock) and the cold cells are not run (a fresh
# cache would train in the background of the run measured). The trace goes to /dev/null (-q -o /dev/null).
#
#   bench/rewrite-start.sh [LABEL=PATH ...]   (default: now=./memtrace)
#   RUNS=5 COLD_RUNS=1 PROGRAMS=true,python bench/rewrite-start.sh before=/tmp/old/memtrace now=./memtrace
#   CDS=on RUNS=5 PROGRAMS=true bench/rewrite-start.sh now=./memtrace
#
# Writes bench/results/rewrite-start.md (OUT=FILE elsewhere). What it gets wrong: the machine's load moves
# wall clock most (the load average is noted before and after); a run past TIMEOUT (120) s of wall is stopped
# and its cell says so (fault mode on python3); a cold run counts the agent's extraction
# and, in rewrite mode, the planner's processes (as, ld, strip), which is what a user's first run pays.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUNS="${RUNS:-3}" COLD_RUNS="${COLD_RUNS:-1}" PROGRAMS="${PROGRAMS:-true,python}" TIMEOUT="${TIMEOUT:-120}"
FAULT="${FAULT:-yes}" # FAULT=no: rewrite mode's columns only (fault mode on python3 runs past any short TIMEOUT)
OUT="${OUT:-$root/bench/results/rewrite-start.md}"
[ $# -gt 0 ] || set -- "now=$root/memtrace"
work="$(mktemp -d /tmp/memtrace-rewrite-start.XXXXXX)"
trap 'rm -rf "$work"' EXIT
CDS="${CDS:-off}"
export MEMTRACE_CDS="$CDS"

# one run: "wall cpu" on stdout, the cache under $1; "timeout" when it ran past TIMEOUT seconds of wall
once() {
  local cache="$1" launcher="$2" mode="$3" status=0; shift 3
  mkdir -p "$cache"
  XDG_CACHE_HOME="$cache" /usr/bin/time -f '%e %U %S' -o "$work/time" timeout -s INT -k 10 "$TIMEOUT" \
    "$launcher" run --mode "$mode" -q -o /dev/null -- "$@" >/dev/null 2>"$work/err" || status=$?
  if [ "$status" = 124 ] || [ "$status" = 130 ] || [ "$status" = 137 ]; then echo timeout; return; fi
  if [ "$status" != 0 ]; then
    echo "rewrite-start: $launcher run --mode $mode -- $* failed (status $status):" >&2
    cat "$work/err" >&2
    exit 1
  fi
  tail -1 "$work/time" | awk '{printf "%.2f %.2f\n", $1, $2 + $3}'
}

# the median of the runs' walls and CPUs, "wall s / cpu s"
median() {
  sort -n -k1,1 "$1" | awk '{w[NR]=$1} END {printf "%.2f", w[int((NR+1)/2)]}'
  printf ' / '
  sort -n -k2,2 "$1" | awk '{c[NR]=$2} END {printf "%.2f", c[int((NR+1)/2)]}'
}

cell() { # cold|warm launcher mode program...
  local kind="$1" launcher="$2" mode="$3"; shift 3
  : >"$work/runs"
  if [ "$kind" = cold ]; then
    for _ in $(seq "$COLD_RUNS"); do
      rm -rf "$work/cold"
      once "$work/cold" "$launcher" "$mode" "$@" >>"$work/runs"
    done
  else
    once "$work/warm-$label" "$launcher" "$mode" "$@" >>"$work/runs" # fills the cache (plans, extracted agent)
    if [ "$CDS" != off ]; then # the AOT cache's training, started by that run: the lock is held until it ends
      flock "$work/warm-$label/memtrace/cds.lock" true
      once "$work/warm-$label" "$launcher" "$mode" "$@" >"$work/runs"
    fi
    if ! grep -q timeout "$work/runs"; then
      : >"$work/runs"
      for _ in $(seq "$RUNS"); do once "$work/warm-$label" "$launcher" "$mode" "$@" >>"$work/runs"; done
    fi
  fi
  if grep -q timeout "$work/runs"; then printf '> %s s wall' "$TIMEOUT"; else median "$work/runs"; fi
}

{
  echo "# rewrite mode's start-up against fault mode's (bench/rewrite-start.sh)"
  echo
  echo "$(date -u '+%a %d %b %Y %H:%M UTC'), $(nproc) CPUs, load average before: $(cut -d' ' -f1-3 /proc/loadavg);" \
       "RUNS=$RUNS (warm, median), COLD_RUNS=$COLD_RUNS (cold: an empty cache each), MEMTRACE_CDS=$CDS."
  echo "Each cell: wall s / CPU s (user + system of everything the run starts)."
  echo
  echo "| launcher | program | rewrite cold | rewrite warm | fault cold | fault warm | warm CPU, rewrite − fault |"
  echo "|---|---|---|---|---|---|---|"
} >"$OUT.tmp"
for spec in "$@"; do
  label="${spec%%=*}" launcher="${spec#*=}"
  for program in ${PROGRAMS//,/ }; do
    case "$program" in
      true) args=(/bin/true); name='/bin/true' ;;
      python) args=(/usr/bin/python3 -S -c pass); name='python3 -S -c pass' ;;
      *) echo "rewrite-start: unknown program $program (true, python)" >&2; exit 2 ;;
    esac
    rm -rf "$work/warm-$label"
    rc='not run'
    [ "$CDS" != off ] || rc="$(cell cold "$launcher" rewrite "${args[@]}")"
    rw="$(cell warm "$launcher" rewrite "${args[@]}")"
    fc='not run' fw='not run >'
    if [ "$FAULT" != no ]; then
      [ "$CDS" != off ] || fc="$(cell cold "$launcher" fault "${args[@]}")"
      fw="$(cell warm "$launcher" fault "${args[@]}")"
    fi
    diff=–
    case "$rw$fw" in *'>'*) ;; *) diff="$(awk -v a="${rw#*/ }" -v b="${fw#*/ }" 'BEGIN {printf "%+.2f", a - b}')" ;; esac
    echo "| $label | $name | $rc | $rw | $fc | ${fw% >} | $diff |" >>"$OUT.tmp"
    echo "rewrite-start: $label $name: rewrite $rc cold, $rw warm; fault $fc cold, $fw warm" >&2
  done
done
echo >>"$OUT.tmp"
echo "Load average after: $(cut -d' ' -f1-3 /proc/loadavg)." >>"$OUT.tmp"
mv "$OUT.tmp" "$OUT"
cat "$OUT"
