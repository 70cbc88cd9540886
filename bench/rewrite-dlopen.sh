#!/usr/bin/env bash
# Rewrite mode on a dlopen-heavy program (docs/rewriting.md, "Libraries opened by dlopen"): python3 importing
# C extension modules, each opened by dlopen and rewritten inside it. CPU time (user + system, memtrace's JVM
# and the program together, fastest of $REPEAT runs, default 3; the cold run once) of
#   native       python3 -c 'import <modules>'
#   rw-pass      memtrace run --mode rewrite -o /dev/null -- python3 -c pass   (warm: what start-up costs)
#   rw-cold      the imports, with the extension modules' plans not cached yet (planned while the program
#                waits in dlopen; the start-up modules' plans cached)
#   rw-warm      the imports again, every plan cached
# The cold run uses a copy of the cache without the plans of the libraries the imports add (found in
# /proc/self/maps of a native run). Usage: bench/rewrite-dlopen.sh [module ...]  (default: json _decimal)
#   PYTHON=/path/to/python3 (default: python3 on the PATH, resolved; a PIE is needed: a fixed-address
#   executable leaves no room below its code for the trampolines)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mt="$root/memtrace"
REPEAT=${REPEAT:-3}
export MEMTRACE_CDS=off
python=${PYTHON:-$(python3 -c 'import sys; print(sys.executable)')}
python=$(readlink -f "$python")
modules=("$@")
[ ${#modules[@]} -gt 0 ] || modules=(json _decimal)
imports="import $(IFS=,; echo "${modules[*]}")"
"$mt" --version >/dev/null   # builds on first use, outside the timings
cache="${XDG_CACHE_HOME:-$HOME/.cache}/memtrace/rewrite"
version=$(sed -n 's/.*PLANNER_VERSION = "\(.*\)";/\1/p' "$root/src/main/java/org/memtrace/rewrite/ModuleRewrite.java")

cpu() {
  python3 - "$1" "${@:2}" <<'PY'
import resource, subprocess, sys
repeat, cmd = int(sys.argv[1]), sys.argv[2:]
best = None
for _ in range(repeat):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    best = t if best is None or t < best else best
print(f"{best:.3f}")
PY
}

libs() { "$python" -c "$1; import re; print('\n'.join(sorted(set(re.findall(r' (/\S+\.so[.\d]*)\n', open('/proc/self/maps').read())))))"; }
added=$(comm -13 <(libs pass) <(libs "$imports"))
# start-up plans cached (untimed), then a copy of the cache without the added libraries' plans
"$mt" run --mode rewrite -q -o /dev/null -- "$python" -c pass >/dev/null
cold=$(mktemp -d)
trap 'rm -rf "$cold"' EXIT
mkdir -p "$cold/memtrace" && chmod 700 "$cold" "$cold/memtrace" && cp -a "$cache" "$cold/memtrace/rewrite"
for lib in $added; do
  key=$(python3 -c 'import hashlib,sys; print(hashlib.sha256(sys.argv[1].encode()+open(sys.argv[2],"rb").read()).hexdigest())' "$version" "$lib")
  rm -f "$cold/memtrace/rewrite/$key.plan" "$cold/memtrace/rewrite/$key.elf"
done

echo "python: $python; imports: $imports; libraries it adds: $(echo $added | wc -w)"
echo "| native | rw-pass | rw-cold | rw-warm |"
echo "|---|---|---|---|"
n=$(cpu "$REPEAT" "$python" -c "$imports")
p=$(cpu "$REPEAT" "$mt" run --mode rewrite -q -o /dev/null -- "$python" -c pass)
c=$(XDG_CACHE_HOME="$cold" cpu 1 "$mt" run --mode rewrite -q -o /dev/null -- "$python" -c "$imports")
w=$(cpu "$REPEAT" "$mt" run --mode rewrite -q -o /dev/null -- "$python" -c "$imports")
echo "| $n | $p | $c | $w |"
