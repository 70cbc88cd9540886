# Sourced by bench/rewrite-side.sh and bench/rewrite-split.sh after $root is set: `plans PROGRAM` prints the
# rewrite plans memtrace run has cached for PROGRAM, its libraries and its loader, ':' between them, in
# RewriteMode's order (the executable's first), so a bench can hand them to the runtime without the JVM.
# A plan's name is the sha256 of the planner's version and the file's bytes (ModuleRewrite's key); a module
# with no cached plan is left out (run memtrace run on the program once first).
plans_version=$(sed -n 's/.*PLANNER_VERSION = "\(.*\)";/\1/p' "$root/src/main/java/org/memtrace/rewrite/ModuleRewrite.java")
plans_cache="${XDG_CACHE_HOME:-$HOME/.cache}/memtrace/rewrite"
plans_key() { { printf '%s' "$plans_version"; cat "$1"; } | sha256sum | cut -d' ' -f1; }
plans() {
  local list="$plans_cache/$(plans_key "$1").plan" interp lib
  interp=$(readelf -l "$1" | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
  for lib in $("$interp" --list "$1" | sed -n 's/.*=> \(\/[^ ]*\) (0x.*/\1/p') "$interp"; do
    [ -f "$plans_cache/$(plans_key "$lib").plan" ] && list="$list:$plans_cache/$(plans_key "$lib").plan"
  done
  printf '%s' "$list"
}
