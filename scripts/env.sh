# Sourced by the launcher and the set-up scripts: picks a JDK 25 and installs what the project needs from
# Debian's packages when it is missing (the machine is Debian 12 and we run as root there).

# memtrace_release_is_25 FILE: whether a JDK's release file says version 25 or newer, read by bash alone (the
# launcher runs once per compile under `memtrace cc`: a grep there is a process per compile)
memtrace_release_is_25() {
  local line
  while IFS= read -r line; do
    [[ $line =~ ^JAVA_VERSION=\"(2[5-9]|[3-9][0-9]) ]] && return 0
  done <"$1"
  return 1
}

# memtrace_safe_above DIR: whether DIR is absolute and every directory above it that exists is a directory
# (not a link) of root's or the user's that no one else can write unless it is sticky (/tmp), as
# launch/OwnedPaths.java asks of the agent's: otherwise someone else could rename DIR away between our check
# of it and its use, and put their own AOT cache or compile server in its place. One stat for the lot.
memtrace_safe_above() {
  local d=$1 above=() uid mode
  [[ $d == /* ]] || return 1
  while d=${d%/*}; [ -n "$d" ]; do { [ -e "$d" ] || [ -L "$d" ]; } && above+=("$d"); done
  above+=(/)
  while read -r uid mode; do
    mode=$((16#$mode))
    [ "$uid" = 0 ] || [ "$uid" = "$EUID" ] || return 1
    (( (mode & 8#170000) == 8#040000 )) || return 1
    (( (mode & 8#022) == 0 || (mode & 8#1000) )) || return 1
  done < <(stat -c '%u %f' -- "${above[@]}" 2>/dev/null || echo "-1 0")
}

# memtrace_inherited_fds: sets MEMTRACE_INHERITED_FDS to the descriptors above 2 this shell has and would
# pass on to a program it execs ("3 5"), for the JVM to hand to the traced program
# (launch/InheritedDescriptors.java; docs/trust.md, "Descriptors"). The glob's own directory descriptor is
# closed by the time each is tested, and close-on-exec ones (bash's script, which never reach an exec'd
# program) are left out by their flags in /proc/$$/fdinfo.
memtrace_inherited_fds() {
  local link number flags key value
  MEMTRACE_INHERITED_FDS=""
  for link in /proc/$$/fd/*; do
    number="${link##*/}"
    [[ "$number" =~ ^[0-9]+$ ]] && [ "$number" -gt 2 ] && [ -L "$link" ] || continue
    flags=0
    { while read -r key value; do if [ "$key" = flags: ]; then flags="$value"; fi; done <"/proc/$$/fdinfo/$number"; } 2>/dev/null || continue
    (( 8#$flags & 8#2000000 )) || MEMTRACE_INHERITED_FDS+="${MEMTRACE_INHERITED_FDS:+ }$number"
  done
}

memtrace_find_jdk() {
  local cand
  for cand in "${JAVA_HOME:-}" /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/*; do
    [ -n "$cand" ] && [ -x "$cand/bin/java" ] || continue
    # A JDK's release file names its version: reading it costs nothing, starting `java -version` costs a
    # JVM start (0.2-0.4 s on a loaded machine) on every launch.
    if { [ -f "$cand/release" ] && memtrace_release_is_25 "$cand/release"; } ||
       { [ ! -f "$cand/release" ] && "$cand/bin/java" -version 2>&1 | head -n 1 | grep -Eq 'version "(2[5-9]|[3-9][0-9])'; }; then
      export JAVA_HOME="$cand"
      return 0
    fi
  done
  echo "memtrace: no JDK 25 or newer found (set JAVA_HOME or install one under /usr/lib/jvm)" >&2
  return 1
}

# Debian packages the build, the tracer and the tests rely on: gcc/make build the agent, libzstd-dev lets
# the compiled-in runtime (libmemtrace-rt.so) compress its chunks, libzydis4.0 is the x86 decoder, binutils
# (as, readelf) and valgrind serve the tests and the benchmark, libzydis-dev's headers let a test check the
# decoder binding's structure layouts, the zstd command decompresses .mtr chunks in the runtime's tests.
# --with-bench-tools: the test tools and perf (bench/skeleton-cpu.sh counts CPU time with `perf stat`).
memtrace_prereqs() {
  local missing=()
  command -v gcc >/dev/null 2>&1 || missing+=(gcc)
  command -v make >/dev/null 2>&1 || missing+=(make)
  command -v mvn >/dev/null 2>&1 || missing+=(maven)
  command -v as >/dev/null 2>&1 || missing+=(binutils)
  [ -e /usr/include/zstd.h ] || missing+=(libzstd-dev)
  # socat: the shell client of memtrace cc's compile server (scripts/cc-client.sh); without it every compile
  # starts JVMs of its own
  command -v socat >/dev/null 2>&1 || missing+=(socat)
  [ -e /usr/lib/x86_64-linux-gnu/libZydis.so.4.0 ] || [ -e /usr/lib/x86_64-linux-gnu/libZydis.so.4 ] || missing+=(libzydis4.0)
  if [ "${1:-}" = "--with-bench-tools" ]; then
    command -v perf >/dev/null 2>&1 || missing+=(linux-perf)
  fi
  if [ "${1:-}" = "--with-test-tools" ] || [ "${1:-}" = "--with-bench-tools" ]; then
    command -v valgrind >/dev/null 2>&1 || missing+=(valgrind)
    # strace: RewriteLackeyTest logs the mappings of memtrace's run with it (Valgrind logs its own)
    command -v strace >/dev/null 2>&1 || missing+=(strace)
    command -v bc >/dev/null 2>&1 || missing+=(bc)
    # libc's separate debug symbols: the tests check that libc internals are named through them
    dpkg -s libc6-dbg >/dev/null 2>&1 || missing+=(libc6-dbg)
    [ -e /usr/include/Zydis/Zydis.h ] || missing+=(libzydis-dev)
    command -v zstd >/dev/null 2>&1 || missing+=(zstd)
    # memtrace report's test loads the page in a real browser
    command -v chromium >/dev/null 2>&1 || missing+=(chromium)
    # InstallTest loads the zsh completion in zsh
    command -v zsh >/dev/null 2>&1 || missing+=(zsh)
    # RewriteLackeyTest compares rewrite mode with Lackey on the system's sqlite3, gzip and python3
    command -v sqlite3 >/dev/null 2>&1 || missing+=(sqlite3)
    command -v gzip >/dev/null 2>&1 || missing+=(gzip)
    [ -x /usr/bin/python3 ] || missing+=(python3)
  fi
  if [ ${#missing[@]} -gt 0 ]; then
    echo "memtrace: installing Debian packages: ${missing[*]}" >&2
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >&2 \
      || { echo "memtrace: could not install ${missing[*]}; install them and retry" >&2; return 1; }
  fi
  memtrace_find_jdk
}
