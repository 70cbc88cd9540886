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

# run_case TOOL NAME ARG TAG: runs NAME's build for TOOL (./plain-O0-NAME natively and under `run --check`,
# ./TOOL-NAME for the other builds) with ARG, its output in TAG.out and TAG.err; sets the caller's st (the
# status), kind (what the tool said, or nothing) and found (yes when the tool detected something)
run_case() {
  local tool=$1 name=$2 arg=$3 tag=$4
  st=0 kind= found=no
  case $tool in
    native) timeout 60 "./plain-O0-$name" "$arg" >"$tag.out" 2>"$tag.err" </dev/null || st=$?
            [ "$st" -eq 0 ] || kind=$(native_kind "$tag.err" "$st") ;;   # glibc's own aborts, or a crash
    check-O0|check-O2)
            env -u MEMTRACE_CHECK ${CHECK_LIB_DIR:+LD_LIBRARY_PATH=$CHECK_LIB_DIR} timeout 60 "./$tool-$name" "$arg" \
              >"$tag.out" 2>"$tag.err" </dev/null || st=$?
            kind=$(memtrace_kind "$tag.err") ;;
    rewrite|fault)
            timeout 180 "$MT" run --check --mode "$tool" -- "./plain-O0-$name" "$arg" </dev/null >"$tag.out" 2>"$tag.err" || st=$?
            kind=$(memtrace_kind "$tag.err") ;;
    asan-O0|asan-O2)
            timeout 60 "./$tool-$name" "$arg" >"$tag.out" 2>"$tag.err" </dev/null || st=$?
            kind=$(asan_kind "$tag.err") ;;
  esac
  case $tool in
    native) [ "$st" -ne 0 ] && found=yes ;;
    asan*) [ -n "$kind" ] && found=yes ;;
    *) [ -n "$kind" ] && [ "$st" -ne 0 ] && found=yes ;;
  esac
  return 0
}
export -f memtrace_kind asan_kind native_kind run_case
