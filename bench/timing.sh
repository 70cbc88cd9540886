# Timing for the bench scripts (sourced): `timed TAG COMMAND...` prints the seconds of the fastest of
# $REPEAT runs (default 3) of COMMAND, its stdout/stderr of the last run in $out/TAG.stdout and
# $out/TAG.stderr. The fastest, because runs of 10-100 ms on this shared 2-core machine swing by 2x with
# the load, and the load only ever adds time. REPEAT=1 for runs too long to repeat.
now() { date +%s.%N; }
timed() {
  local tag=$1 s t best= i
  shift
  for ((i = 0; i < ${REPEAT:-3}; i++)); do
    s=$(now); "$@" >"$out/$tag.stdout" 2>"$out/$tag.stderr" || true; t=$(echo "$(now) - $s" | bc -l)
    if [ -z "$best" ] || [ "$(echo "$t < $best" | bc)" = 1 ]; then best=$t; fi
  done
  echo "$best"
}

# `usage TAG COMMAND...`: "CPU WALL" seconds of one run of COMMAND, CPU the user+sys of the whole process and
# its children (wait4: a writer thread and a helping program thread included), its stdout and stderr in
# $out/TAG.stdout and $out/TAG.stderr
usage() {
  local tag=$1
  shift
  python3 - "$out/$tag" "$@" <<'PY'
import os, sys, time
base, argv = sys.argv[1], sys.argv[2:]
t = time.monotonic()
pid = os.fork()
if pid == 0:
    os.dup2(os.open(base + ".stdout", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 1)
    os.dup2(os.open(base + ".stderr", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 2)
    try:
        os.execvp(argv[0], argv)
    finally:
        os._exit(127)
_, status, ru = os.wait4(pid, 0)
print(f"{ru.ru_utime + ru.ru_stime:.4f} {time.monotonic() - t:.4f}")
PY
}
