# Shared by the rewrite mode's bench scripts (sourced; bench/rewrite.sh, run-read.sh, rewrite-omega.sh,
# run-check-modes.sh).
#
# cpu COMMAND...: the fastest CPU seconds (user + system, COMMAND and its children, getrusage) of $REPEAT runs
#   (default 1). With FAULT_LIMIT set, a run longer than that many seconds of wall clock is cut and the result
#   is ">LIMIT": the tools compared (fault mode, Lackey) can take minutes where the others take milliseconds.
# plans PROGRAM: the cached plans of PROGRAM and of the libraries its loader lists, ':' between them, as
#   `memtrace run --mode rewrite` would hand them to the runtime; the caller defines `key FILE` (the plan's
#   cache key: the planner version, the plan choice, the file's bytes) and sets $cache.
cpu() {
  python3 - "${REPEAT:-1}" "${FAULT_LIMIT:-0}" "$@" <<'PY'
import resource, subprocess, sys
repeat, limit, cmd = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3:]
best = None
for _ in range(repeat):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=limit if limit > 0 else None)
    except subprocess.TimeoutExpired:
        print(">%.0f" % limit); sys.exit()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    best = t if best is None else min(best, t)
print("%.3f" % best)
PY
}

plans() {
  local list="$cache/$(key "$1").plan" interp lib
  interp=$(readelf -l "$1" | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
  for lib in $("$interp" --list "$1" | sed -n 's/.*=> \(\/[^ ]*\) (0x.*/\1/p'); do
    [ -f "$cache/$(key "$lib").plan" ] && list="$list:$cache/$(key "$lib").plan"
  done
  printf '%s' "$list"
}
