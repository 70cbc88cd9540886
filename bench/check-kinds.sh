# Sourced by the recall and false-positive benches (check-recall.sh, check-itc.sh, check-itc-fp.sh): how one
# run's stderr is read as a verdict, in one place so that every table counts a report the same way.
# The functions are exported for the benches' `xargs bash -c` workers.

# the first line of a report (agent/check/check_report.c's kinds); memtrace's notes (`the program was killed
# by ...`, `check summary:`, rewrite mode's `check: N memory instructions ... checked`) have the same shape
# and are not reports
report_re='^memtrace: (heap (overflow|underflow)|stack (overflow|underflow|use after (scope|return))|global (overflow|underflow)|use after free|double free|invalid free|allocator mismatch|intra-object overflow|overlapping copy|null dereference|wild access|leaks?): '
export report_re

# memtrace_kind ERR: the kind of memtrace's first report in ERR, or nothing
memtrace_kind() { grep -m1 -E "$report_re" "$1" | sed 's/^memtrace: \([^:]*\):.*/\1/' || true; }

# asan_kind ERR: AddressSanitizer's (or LeakSanitizer's, as `leak`) first error kind in ERR, or nothing
asan_kind() {
  grep -m1 -o 'ERROR: [A-Za-z]*Sanitizer: [A-Za-z-]*' "$1" | sed 's/.*LeakSanitizer: .*/leak/; s/.*Sanitizer: //' || true
}

# native_kind ERR STATUS: what glibc's own checks said when a plain run failed (or `status N`)
native_kind() {
  grep -m1 -o -E 'double free|free\(\): [a-z ]*|munmap_chunk\(\): [a-z ]*|stack smashing|buffer overflow detected|corrupted [a-z ]*|malloc\(\): [a-z ]*' "$1" ||
    echo "status $2"
}
export -f memtrace_kind asan_kind native_kind
