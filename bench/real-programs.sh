# The real programs of the benchmarks (sourced by bench/cc.sh and bench/skeleton.sh): gzip, sqlite3 and bzip2
# from their Debian source packages, built by any compiler command, and the workload each runs.
# The sourcing script sets:
#   src          where the sources are unpacked (fetch_sources puts them there)
#   out          where builds and inputs go: $out/VARIANT/gzip, $out/VARIANT/sqlite3, $out/gzip.in, …
#   cc_for V     a function printing variant V's compiler command ("gcc", "$mt cc", …)
#   real_ldflags optional: flags added to both programs' link (a fixed layout for comparing two builds)

# their names, for the benches' "is this one of them" tests
real_programs=" gzip sqlite3 bzip2 "

# is_real P: whether program P is one of the real programs (else a kernel of bench/programs)
is_real() { case $real_programs in *" $1 "*) return 0 ;; esac; return 1; }

# debian_sources PACKAGE[=VERSION]...: `apt-get source` into $src, after adding deb-src twins of Debian's
# entries when there are none (and updating the lists once)
debian_sources() {
  if ! grep -rqs '^Types:.*deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null; then
    sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources >/etc/apt/sources.list.d/memtrace-bench-src.sources
    debian_sources_updated=
  fi
  [ -n "${debian_sources_updated:-}" ] || { apt-get update -qq; debian_sources_updated=1; }
  (cd "$src" && apt-get source -qq "$@" >/dev/null 2>&1) || { echo "bench: apt-get source $* failed" >&2; return 1; }
}

fetch_sources() {
  local want=()
  [ -d "$src/gzip-1.12" ] || want+=(gzip)
  [ -d "$src/sqlite3-3.40.1" ] || want+=(sqlite3)
  [ -d "$src/bzip2-1.0.8" ] || want+=(bzip2)
  [ ${#want[@]} -gt 0 ] || return 0
  debian_sources "${want[@]}"
  command -v tclsh >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tcl >/dev/null
  # one timestamp for every file, or make wants to rerun autoconf on the patched tree
  [ ! -d "$src/gzip-1.12" ] || find "$src/gzip-1.12" -exec touch -h -d '2020-01-01 00:00:00' {} +
}

build_gzip() { # variant
  local v=$1 d="$out/$1/gzip-build" ld=()
  [ -x "$d/gzip" ] && return 0
  [ -z "${real_ldflags:-}" ] || ld=(LDFLAGS="$real_ldflags")
  rm -rf "$d"
  # configured once (by gcc, whatever the variant: minutes on a loaded machine), copied for each variant
  if [ ! -f "$out/gzip-configured/config.status" ]; then
    rm -rf "$out/gzip-configured" && mkdir -p "$out/gzip-configured"
    (cd "$out/gzip-configured" && "$src/gzip-1.12/configure" -q CC=gcc CFLAGS="-O2 -g" >/dev/null) \
      || { echo "bench: configuring gzip failed" >&2; return 1; }
  fi
  cp -a "$out/gzip-configured" "$d"
  (cd "$d" && make -s CC="$(cc_for "$v")" "${ld[@]}" >/dev/null 2>"$d/build.log") \
    || { tail -n 5 "$d/build.log" >&2; echo "bench: building gzip ($v) failed" >&2; return 1; }
  cp "$d/gzip" "$out/$v/gzip"
}

build_sqlite3() { # variant
  local v=$1 a="$src/sqlite3-3.40.1/bld"
  if [ ! -f "$a/sqlite3.c" ]; then
    mkdir -p "$a" && (cd "$a" && ../configure -q --disable-tcl >/dev/null && make -s sqlite3.c shell.c >/dev/null 2>&1)
  fi
  [ -x "$out/$v/sqlite3" ] && return 0
  mkdir -p "$out/$v"
  # shellcheck disable=SC2046,SC2086 # the compiler command and the flags are words
  $(cc_for "$v") -O2 -g -DSQLITE_THREADSAFE=0 -DSQLITE_OMIT_LOAD_EXTENSION -I"$a" ${real_ldflags:-} -o "$out/$v/sqlite3" "$a/sqlite3.c" "$a/shell.c" -lm
}

build_bzip2() { # variant
  local v=$1 b="$src/bzip2-1.0.8"
  [ -x "$out/$v/bzip2" ] && return 0
  mkdir -p "$out/$v"
  # the compiler and the flags of bzip2's Makefile, without its static library
  # shellcheck disable=SC2046,SC2086 # the compiler command and the flags are words
  (cd "$b" && $(cc_for "$v") -O2 -g -D_FILE_OFFSET_BITS=64 ${real_ldflags:-} -o "$out/$v/bzip2" \
      blocksort.c huffman.c crctable.c randtable.c compress.c decompress.c bzlib.c bzip2.c)
}

# inputs of the real programs
make_inputs() {
  [ -f "$out/gzip.in" ] || awk 'BEGIN { srand(7); for (i = 0; i < 40000; i++) printf "line %d value %d %s\n", i, int(rand()*100000), (i % 7 ? "alpha" : "omega") }' >"$out/gzip.in"
  # bzip2 -9 sorts its whole block: 200 KB of gzip's input are 27 M accesses already
  [ -f "$out/bzip2.in" ] || head -c 200000 "$out/gzip.in" >"$out/bzip2.in"
  [ -f "$out/sqlite3.sql" ] || awk 'BEGIN { print "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL);"; print "BEGIN;";
      for (i = 0; i < 500; i++) printf "INSERT INTO t(b, c) VALUES (%c%s%d%c, %d.5);\n", 39, "name", i * 7919 % 1000, 39, i;
      print "COMMIT;"; print "SELECT count(*), sum(c), max(b) FROM t WHERE c > 100;"; print "SELECT b, count(*) FROM t GROUP BY b ORDER BY 2 DESC LIMIT 3;" }' >"$out/sqlite3.sql"
}

# the command line of one program run, the binary given as $2
workload() { # program binary
  case $1 in
    gzip) echo "$2 -c -6 $out/gzip.in" ;;
    sqlite3) echo "$2 :memory: -init $out/sqlite3.sql .quit" ;;
    bzip2) echo "$2 -c -9 $out/bzip2.in" ;;
    threads) echo "$2 2" ;;   # bench/programs/threads.c with two threads
    *) echo "$2" ;;
  esac
}
