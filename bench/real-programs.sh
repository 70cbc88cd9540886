# The real programs of the benchmarks (sourced by bench/cc.sh and bench/skeleton.sh): gzip and sqlite3 from
# their Debian source packages, built by any compiler command, and the workload each runs.
# The sourcing script sets:
#   src          where the sources are unpacked (fetch_sources puts them there)
#   out          where builds and inputs go: $out/VARIANT/gzip, $out/VARIANT/sqlite3, $out/gzip.in, …
#   cc_for V     a function printing variant V's compiler command ("gcc", "$mt cc", …)
#   real_ldflags optional: flags added to both programs' link (a fixed layout for comparing two builds)

fetch_sources() {
  [ -d "$src/gzip-1.12" ] && [ -d "$src/sqlite3-3.40.1" ] && return 0
  if ! grep -rqs '^Types:.*deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null; then
    sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources >/etc/apt/sources.list.d/memtrace-bench-src.sources
  fi
  apt-get update -qq
  command -v tclsh >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tcl >/dev/null
  (cd "$src" && apt-get source -qq gzip sqlite3 >/dev/null 2>&1)
  # one timestamp for every file, or make wants to rerun autoconf on the patched tree
  find "$src/gzip-1.12" -exec touch -h -d '2020-01-01 00:00:00' {} +
}

build_gzip() { # variant
  local v=$1 d="$out/$1/gzip-build" ld=()
  [ -x "$d/gzip" ] && return 0
  [ -z "${real_ldflags:-}" ] || ld=(LDFLAGS="$real_ldflags")
  rm -rf "$d" && mkdir -p "$d"
  (cd "$d" && "$src/gzip-1.12/configure" -q CC=gcc CFLAGS="-O2 -g" >/dev/null && make -s CC="$(cc_for "$v")" "${ld[@]}" >/dev/null 2>"$d/build.log") \
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

# inputs of the real programs
make_inputs() {
  [ -f "$out/gzip.in" ] || awk 'BEGIN { srand(7); for (i = 0; i < 40000; i++) printf "line %d value %d %s\n", i, int(rand()*100000), (i % 7 ? "alpha" : "omega") }' >"$out/gzip.in"
  [ -f "$out/sqlite3.sql" ] || awk 'BEGIN { print "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL);"; print "BEGIN;";
      for (i = 0; i < 500; i++) printf "INSERT INTO t(b, c) VALUES (%c%s%d%c, %d.5);\n", 39, "name", i * 7919 % 1000, 39, i;
      print "COMMIT;"; print "SELECT count(*), sum(c), max(b) FROM t WHERE c > 100;"; print "SELECT b, count(*) FROM t GROUP BY b ORDER BY 2 DESC LIMIT 3;" }' >"$out/sqlite3.sql"
}

# the command line of one program run, the binary given as $2
workload() { # program binary
  case $1 in
    gzip) echo "$2 -c -6 $out/gzip.in" ;;
    sqlite3) echo "$2 :memory: -init $out/sqlite3.sql .quit" ;;
    *) echo "$2" ;;
  esac
}
