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
