# The corpus of real programs (sourced by bench/corpus.sh): Debian source packages beyond bench/real-programs.sh's
# gzip, sqlite3 and bzip2, each built -O2 -g by any compiler, and the workload each runs. Sourced after
# bench/real-programs.sh (whose fetch_sources, build_* and make_inputs it extends), with the same variables:
#   src, out     where the sources are unpacked and where builds and inputs go ($out/VARIANT/PROGRAM)
#   cc_for V     variant V's compiler as ONE path (configure and cmake take no compiler with options)
#   real_ldflags optional: flags added to every link (bench/lossless.sh's fixed layout)
# Programs, what they are and their workload (sized to about 0.05 s natively: the lossless check prints every access of two traces):
#   xz       xz-utils 5.4.1, LZMA2: xz -6 -T1 of 80 KB of C source (sqlite's)
#   zstd     zstd 1.5.4, zstd -19 of the same text; built without its hand-written x86 decoder (.S), whose
#            accesses memtrace cc cannot see
#   lua      lua 5.4.4, the interpreter running bench/corpus/tables.lua (tables, strings, closures, sort), its
#            string hashes seeded by a constant (build_lua) and its argv[0] "./lua" whichever build runs
#   cjpeg    libjpeg-turbo 2.1.5 without SIMD (no nasm; its SIMD is assembly): a 1600x1200 picture to JPEG
#   djpeg    the same library: that JPEG back to PPM
#   pngtest  libpng 1.6.39's own test program, reading and rewriting a 320x240 RGB PNG (zlib is the system's,
#            not traced)
#   picosat  the SAT solver (CDCL, watched literals): a random 3-SAT formula at the hard ratio
#   glpsol   GLPK 5.0's solver (MathProg translator, sparse LU, simplex, branch and bound) on the Food
#            Manufacture 2 model of its examples (Williams' textbook: 204 rows, 30 binaries; 3,660 simplex
#            iterations), its clock stopped (bench/corpus/stopped-clock.c, preloaded in every build's runs): GLPK
#            prints progress lines, and computes what they say, when its clock says so, so that a slower build
#            would do other work than the plain one and two traced runs other work than each other
# Every source package is pinned to the version this snapshot of Debian serves (newer security updates are not on
# every mirror).
# each source package's directory and its package=version
corpus_sources=("xz-utils-5.4.1 xz-utils=5.4.1-1+deb12u2" "libzstd-1.5.4+dfsg2 zstd=1.5.4+dfsg2-5"
  "lua5.4-5.4.4 lua5.4=5.4.4-3+deb12u1" "libjpeg-turbo-2.1.5 libjpeg-turbo=1:2.1.5-2"
  "libpng1.6-1.6.39 libpng1.6=1.6.39-2+deb12u5" "picosat-965 picosat=965-2" "glpk-5.0 glpk=5.0-1")
corpus_programs=" xz zstd lua cjpeg djpeg pngtest picosat glpsol "

fetch_corpus() {
  local want=() e d p
  fetch_sources
  for e in "${corpus_sources[@]}"; do
    read -r d p <<<"$e"
    [ -d "$src/$d" ] || want+=("$p")
  done
  [ ${#want[@]} -gt 0 ] || return 0
  debian_sources "${want[@]}"
  # one timestamp for every file, or make wants to rerun autoconf on the patched trees
  for d in xz-utils-5.4.1 glpk-5.0; do find "$src/$d" -exec touch -h -d '2020-01-01 00:00:00' {} +; done
}

# make_build VARIANT NAME SRCDIR BINARY [configure options]: an autotools package configured by gcc and made by
# the variant's compiler in $out/VARIANT/NAME-build; BINARY (a path in the build) copied to $out/VARIANT/NAME
make_build() {
  local v=$1 n=$2 s=$3 b=$4 d="$out/$1/$2-build"
  shift 4
  [ -x "$out/$v/$n" ] && return 0
  rm -rf "$d" && mkdir -p "$d"
  (cd "$d" && "$s/configure" -q CC=gcc CFLAGS="-O2 -g" --disable-shared "$@" >/dev/null 2>"$d/build.log" \
     && make -s -j2 CC="$(cc_for "$v")" LDFLAGS="${real_ldflags:-}" >/dev/null 2>>"$d/build.log") \
    || { tail -n 5 "$d/build.log" >&2; echo "bench: building $n ($v) failed" >&2; return 1; }
  cp "$d/$b" "$out/$v/$n"
}

build_xz() {
  make_build "$1" xz "$src/xz-utils-5.4.1" src/xz/xz --disable-nls --disable-xzdec --disable-lzmadec --disable-lzmainfo \
    --disable-lzma-links --disable-scripts --disable-doc
}

build_glpsol() { make_build "$1" glpsol "$src/glpk-5.0" examples/glpsol; }

# one_build VARIANT NAME DIR FILE...: the files compiled and linked in one compiler command, run in DIR
one_build() {
  local v=$1 n=$2 d=$3
  shift 3
  [ -x "$out/$v/$n" ] && return 0
  mkdir -p "$out/$v"
  # shellcheck disable=SC2086 # the link flags are words
  (cd "$d" && "$(cc_for "$v")" -O2 -g ${real_ldflags:-} -o "$out/$v/$n" "$@") >"$out/$v/$n.log" 2>&1 \
    || { tail -n 5 "$out/$v/$n.log" >&2; echo "bench: building $n ($v) failed" >&2; return 1; }
}

build_zstd() {
  local z="$src/libzstd-1.5.4+dfsg2"
  one_build "$1" zstd "$z" -DZSTD_DISABLE_ASM -DZSTD_MULTITHREAD -DZSTD_LEGACY_SUPPORT=0 -Ilib -Ilib/common \
    "$z"/lib/common/*.c "$z"/lib/compress/*.c "$z"/lib/decompress/*.c "$z"/lib/dictBuilder/*.c "$z"/programs/*.c -pthread
}

build_lua() {
  local l="$src/lua5.4-5.4.4/src" f
  local files=()
  for f in "$l"/*.c; do [ "${f##*/}" = luac.c ] || files+=("${f##*/}"); done
  # Debian's patch to luaconf.h includes the header its rules write
  [ -f "$l/lua5.4-deb-multiarch.h" ] || echo '#define DEB_HOST_MULTIARCH "x86_64-linux-gnu"' >"$l/lua5.4-deb-multiarch.h"
  # a fixed string-hash seed: lstate.c's luai_makeseed mixes time(NULL) and &lua_newstate (which each build
  # places elsewhere) into it, so every run, and every build, hashes strings into other slots of the string
  # and table arrays: two runs of one build already read other heap addresses from line 442 of the print
  one_build "$1" lua "$l" -DLUA_COMPAT_5_3 -DLUA_USE_LINUX '-Dluai_makeseed(L)=0x2545f491u' "${files[@]}" -lm -ldl
}

build_pngtest() {
  local p="$src/libpng1.6-1.6.39"
  [ -f "$p/pnglibconf.h" ] || cp "$p/scripts/pnglibconf.h.prebuilt" "$p/pnglibconf.h"
  one_build "$1" pngtest "$p" png.c pngerror.c pngget.c pngmem.c pngpread.c pngread.c pngrio.c pngrtran.c pngrutil.c \
    pngset.c pngtrans.c pngwio.c pngwrite.c pngwtran.c pngwutil.c pngtest.c -lz -lm
}

build_picosat() {
  local p="$src/picosat-965"
  [ -f "$p/config.h" ] || printf '#define PICOSAT_CC "gcc"\n#define PICOSAT_CFLAGS "-O2 -g -DNDEBUG"\n#define PICOSAT_VERSION "965"\n' >"$p/config.h"
  one_build "$1" picosat "$p" -DNDEBUG main.c app.c picosat.c version.c
}

# cjpeg and djpeg: one cmake build of libjpeg-turbo per variant
build_jpeg() {
  local v=$1 d="$out/$1/jpeg-build"
  [ -x "$out/$v/cjpeg" ] && [ -x "$out/$v/djpeg" ] && return 0
  rm -rf "$d" && mkdir -p "$d"
  (cd "$d" && cmake -G "Unix Makefiles" -DCMAKE_C_COMPILER="$(cc_for "$v")" -DCMAKE_BUILD_TYPE=Release \
       -DCMAKE_C_FLAGS_RELEASE="-O2 -g" -DWITH_SIMD=0 -DENABLE_SHARED=0 -DWITH_TURBOJPEG=0 \
       -DCMAKE_EXE_LINKER_FLAGS="${real_ldflags:-}" \
       "$src/libjpeg-turbo-2.1.5" >"$d/build.log" 2>&1 \
     && make -s -j2 cjpeg-static djpeg-static >>"$d/build.log" 2>&1) \
    || { tail -n 5 "$d/build.log" >&2; echo "bench: building libjpeg-turbo ($v) failed" >&2; return 1; }
  cp "$d/cjpeg-static" "$out/$v/cjpeg" && cp "$d/djpeg-static" "$out/$v/djpeg"
}
build_cjpeg() { build_jpeg "$1"; }
build_djpeg() { build_jpeg "$1"; }

# build_program PROGRAM VARIANT
build_program() { "build_$1" "$2"; }

# the inputs of the corpus, made once in $out (djpeg's is made by the plain cjpeg, so after its build)
corpus_inputs() {
  make_inputs
  # cat is stopped by head's end (SIGPIPE), which pipefail made the script's exit on a first run
  [ -f "$out/text.in" ] || { cat "$src"/sqlite3-3.40.1/src/*.c || true; } | head -c 80000 >"$out/text.in"
  [ -f "$out/picture.ppm" ] || python3 "$root/bench/corpus/pictures.py" ppm 1600 1200 "$out/picture.ppm"
  [ -f "$out/picture.png" ] || python3 "$root/bench/corpus/pictures.py" png 320 240 "$out/picture.png"
  # only when cjpeg or djpeg is run (their build makes both): a run of other programs has no plain cjpeg
  [ -f "$out/picture.jpg" ] || [ ! -x "$out/plain/cjpeg" ] || "$out/plain/cjpeg" -quality 85 -outfile "$out/picture.jpg" "$out/picture.ppm"
  [ -f "$out/stopped-clock.so" ] || gcc -O2 -shared -fPIC -o "$out/stopped-clock.so" "$root/bench/corpus/stopped-clock.c"
  [ -f "$out/sat.cnf" ] || awk -v n=170 'BEGIN { srand(11); m = int(n * 4.26); print "p cnf", n, m
      for (i = 0; i < m; i++) { for (j = 0; j < 3; j++) printf "%d ", (rand() < .5 ? -1 : 1) * (1 + int(rand() * n)); print 0 } }' >"$out/sat.cnf"
}

# the command line of one run of PROGRAM, the binary given as $2
corpus_workload() { # program binary
  case $1 in
    xz) echo "$2 -c -6 -T1 $out/text.in" ;;
    zstd) echo "$2 -c -19 $out/text.in" ;;
    # lua interns its own path (arg[-1]): run from the build's directory, every build's strings are the same
    lua) echo "env -C ${2%/*} ./${2##*/} $root/bench/corpus/tables.lua" ;;
    cjpeg) echo "$2 -quality 85 $out/picture.ppm" ;;
    djpeg) echo "$2 -ppm $out/picture.jpg" ;;
    pngtest) echo "$2 $out/picture.png $out/pngtest.out.png" ;;
    picosat) echo "$2 $out/sat.cnf" ;;
    glpsol) echo "env LD_PRELOAD=$out/stopped-clock.so $2 --math $src/glpk-5.0/examples/food2.mod" ;;
    sqlite3) echo "$2 :memory: -init $root/bench/corpus/sqlite.sql .quit" ;;
    *) workload "$@" ;;
  esac
}
