# Sourced by the launcher for `memtrace cc` and `memtrace c++`: the client of the compile server
# (org.memtrace.cc.CcServer; docs/compiled-in.md, "The compile server"). One JVM per user and memtrace build
# plans every compile's gcc command line and runs its rewriter's as steps; this client asks it for the plan,
# runs gcc itself (with the caller's stdin, stdout, stderr and signals) and cleans up. It starts the server
# on first use. When anything is missing or fails (no socat, a socket directory that is not safely ours, a
# server that does not answer) memtrace_cc_client returns and the launcher runs `memtrace cc` in a JVM of its
# own, as without a server: slower, never a failed build. MEMTRACE_CC_SERVER=off skips it.
# Needs: JAVA_HOME, the jar in $jar, the Java options in $memtrace_cc_java_options (an array).

# The directory of the sockets: the user's runtime directory, else ${TMPDIR:-/tmp}/memtrace-cc-UID; made
# 0700 and then checked (a real directory, not a link, ours, mode 700, under directories no one else can
# change: memtrace_safe_above): anyone else able to write there could put a server of theirs in the path of
# our compiles. Sets memtrace_cc_dir and memtrace_cc_key (the jar's
# identity, below) from one stat, or says why not and returns 1. A compile pays for every process it starts
# here (configure runs hundreds of them), hence builtins wherever they do.
memtrace_cc_socket_dir() {
  local dir facts
  if [ -n "${XDG_RUNTIME_DIR:-}" ] && [ -d "$XDG_RUNTIME_DIR" ] && [ ! -L "$XDG_RUNTIME_DIR" ]; then
    dir="$XDG_RUNTIME_DIR/memtrace"
  else
    dir="${TMPDIR:-/tmp}/memtrace-cc-$EUID"
  fi
  if ! memtrace_safe_above "$dir"; then
    echo "memtrace cc: note: compile server off: a directory above $dir is a link or others can write it" >&2
    return 1
  fi
  [ -e "$dir" ] || [ -L "$dir" ] || mkdir -m 0700 "$dir" 2>/dev/null
  facts=$(stat -L -c '%u %a %Y %s %i' -- "$dir" "$jar" 2>/dev/null) || facts=
  if [ -d "$dir" ] && [ ! -L "$dir" ] && [[ $facts == "$EUID 700 "* ]]; then
    memtrace_cc_dir=$dir
    # one server per memtrace build and JDK: a rebuilt jar gets a server of its own, the old one goes idle
    memtrace_cc_hash "$jar ${facts#*$'\n'} $JAVA_HOME"
  else
    echo "memtrace cc: note: compile server off: $dir must be a directory of uid $EUID with mode 0700" >&2
    return 1
  fi
}

# memtrace_cc_hash TEXT: memtrace_cc_key becomes a 32-bit FNV-1a hash of TEXT's characters, by bash alone
memtrace_cc_hash() {
  local text=$1 h=2166136261 i c
  for ((i = 0; i < ${#text}; i++)); do
    printf -v c '%d' "'${text:i:1}"
    h=$(((h ^ c) * 16777619 & 0xffffffff))
  done
  memtrace_cc_key=$h
}

# memtrace_cc_request KIND ARGS...: the request on stdout, NUL-terminated fields (org.memtrace.cc.CcRequest)
memtrace_cc_request() {
  local kind=$1
  shift
  printf '%s\0' memtrace-cc-1 "$kind" "$PWD" 3 "MEMTRACE_CC_FLAGS=${MEMTRACE_CC_FLAGS:-}" \
    "MEMTRACE_GCC=${MEMTRACE_GCC:-gcc}" "MEMTRACE_CXX=${MEMTRACE_CXX:-g++}" "$#" "$@"
}

# Starts a server on socket $1 unless one answers, under the directory's lock so that the compiles of a
# parallel build start one between them; waits until it listens (its first start loads a JVM: a second or so),
# as long as it runs: a server that ended at its start (its log says why) is given up at once, status 1, and
# the compile goes to the launcher's own JVM (it was waited for 30 s before).
memtrace_cc_start_server() {
  local sock=$1 lock="${1%/*}/cc.lock" i pid up=1
  { exec 8>>"$lock"; } 2>/dev/null || return 1
  if ! flock -w 60 8; then exec 8>&-; return 1; fi
  if [ "$(memtrace_cc_request ping | socat -t 10 - "UNIX-CONNECT:$sock" 2>/dev/null)" != "ok 0" ]; then
    up=0
    # setsid: the server outlives this build's process group (make's ^C stops the build, not the server);
    # without job control the job is no group leader, so setsid execs the JVM in place: $! is the server
    setsid "$JAVA_HOME/bin/java" "${memtrace_cc_java_options[@]}" -cp "$jar" org.memtrace.cc.CcServer "$sock" \
      "${MEMTRACE_CC_SERVER_IDLE:-300}" </dev/null >>"${sock%.sock}.log" 2>&1 8>&- &
    pid=$!
    for ((i = 0; i < 600; i++)); do
      if [ -S "$sock" ] && [ "$(memtrace_cc_request ping | socat -t 10 - "UNIX-CONNECT:$sock" 2>/dev/null)" = "ok 0" ]; then
        up=1
        break
      fi
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.05
    done
    [ "$up" = 1 ] || echo "memtrace cc: note: the compile server did not start (${sock%.sock}.log says why); compiling without it" >&2
  fi
  exec 8>&-
  [ "$up" = 1 ]
}

# memtrace_cc_client cc|c++ ARGS...: runs the compile through the server and exits with gcc's status, or
# returns (status 0) to leave the compile to the launcher's in-process path.
memtrace_cc_client() {
  [ "${MEMTRACE_CC_SERVER:-on}" != off ] || return 0
  command -v socat >/dev/null 2>&1 || return 0
  local sock attempt reply=() memtrace_cc_dir memtrace_cc_key
  memtrace_cc_socket_dir || return 0
  sock="$memtrace_cc_dir/cc-$memtrace_cc_key.sock"
  for attempt in 1 2; do
    mapfile -d '' -t reply < <(memtrace_cc_request plan "$@" | socat -t 86400 - "UNIX-CONNECT:$sock" 2>/dev/null)
    # a whole answer: exit with its 5 fields, exec with its variables and a command; else the connection
    # failed or closed early (no server, one exiting or dying): a fresh server, or the launcher's own JVM
    case "${reply[0]:-}/${#reply[@]}/${reply[4]:-x}" in
      exit/5/*) break ;;
      exec/*/[0-9]*) [[ ${reply[4]} =~ ^[0-9]+$ ]] && [ "${#reply[@]}" -gt $((5 + reply[4])) ] && break ;;
    esac
    reply=()
    [ "$attempt" = 1 ] && { memtrace_cc_start_server "$sock" || return 0; }
  done
  case "${reply[0]:-}" in
    exit)
      printf '%s' "${reply[2]}"
      printf '%s' "${reply[3]}" >&2
      exit "${reply[1]}" ;;
    exec) ;;
    *) return 0 ;;
  esac
  printf '%s' "${reply[3]}" >&2
  local n=${reply[4]} i entry state
  for ((i = 5; i < 5 + n; i++)); do
    entry=${reply[i]}
    if [[ $entry == *=* ]]; then export "${entry%%=*}=${entry#*=}"; else unset "$entry"; fi
  done
  # in the checked directory: a hostile TMPDIR's would let others swap the lists of outputs gcc's steps read
  state=$(mktemp -d "$memtrace_cc_dir/state-XXXXXX") || return 0
  export MEMTRACE_CC_STATE="$state" MEMTRACE_CC_SOCKET="$sock"
  # the state directory goes when this script ends, however it ends (exit runs the EXIT trap)
  trap 'rm -rf "$state"' EXIT
  trap 'rm -rf "$state"; trap - INT EXIT; kill -INT $$' INT
  trap 'rm -rf "$state"; trap - TERM EXIT; kill -TERM $$' TERM
  # gcc gets the user's JAVA_HOME (or none), as the launcher's JVM does (docs/trust.md)
  if [ -n "${user_java_home_set:-}" ]; then export JAVA_HOME="${user_java_home:-}"; else unset JAVA_HOME; fi
  set +e
  "${reply[@]:5+n}"
  exit $?
}
