# Sourced by the bench scripts after $root is set: `bench_results NAME "$@"` appends everything the script
# prints on standard output from then on to bench/results/NAME.md, under a heading that gives the command,
# the date, the commit and the load average at the start (and a last line with the load at the end), so
# that every run of a bench is on the record next to the earlier ones. The output still reaches the
# terminal as before. BENCH_RESULTS=off leaves the record alone (a trial run). It sets an EXIT trap that
# runs bench_results_end; a script with an EXIT trap of its own calls bench_results_end from it.
bench_results_file=
bench_results() {
  local name=$1
  shift
  [ "${BENCH_RESULTS:-on}" != off ] || return 0
  bench_results_file="$root/bench/results/$name.md"
  mkdir -p "$root/bench/results"
  [ -f "$bench_results_file" ] ||
    printf '# bench/%s.sh\n\nEvery run of the bench appends its output here, newest last.\n' "$name" >"$bench_results_file"
  # the tree's state before this run's heading is appended: the heading itself is a change of the tree
  local commit changes
  commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
  changes=$(git -C "$root" diff --quiet HEAD 2>/dev/null || echo ' with local changes')
  {
    printf '\n## %s: `bench/%s.sh%s`\n\n' "$(date -u '+%Y-%m-%d %H:%M UTC')" "$name" "${*:+ $*}"
    printf 'Commit %s%s; load average %s at the start (%s cores).\n\n```\n' \
      "$commit" "$changes" "$(cut -d' ' -f1-3 /proc/loadavg)" "$(nproc)"
  } >>"$bench_results_file"
  exec 8>&1
  exec > >(tee -a "$bench_results_file")
  bench_results_tee=$!
  trap bench_results_end EXIT
}

# Closes the record: the end of the output's block and the load now; waits until tee has written it all.
bench_results_end() {
  [ -n "$bench_results_file" ] || return 0
  printf '```\n\nLoad average at the end: %s.\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
  exec >&8 8>&-
  wait "$bench_results_tee" 2>/dev/null || true
  bench_results_file=
}
