# The lossless check of a full and a skeleton trace (sourced by bench/skeleton.sh and bench/corpus.sh; the
# sourcing script sets $mt, the memtrace launcher, and $out, where $out/P.full.mtr, $out/P.skel.mtr and the
# runs' outputs $out/P.full.stdout and $out/P.skel.stdout are). What it compares and why is in
# bench/skeleton.sh's header. It sets:
#   layout      link flags that place .data, the read-only segment and the relro sections at fixed addresses
#   tunables    GLIBC_TUNABLES for every run: malloc's mmap threshold at its maximum
#   fixed       the command prefix for traced runs: no address randomization, pid 1 where namespaces allow
#   lossless P  prints "equal", "stdout", "print-failed" or "line N" (the first line that differs); the two
#               prints' summaries (their stderr) are left in $out/P.full.summary and $out/P.skel.summary
# .tbss too: a memtrace cc build has one (__memtrace_cursor), and where the linker puts it by itself under
# these flags it may get a LOAD segment of its own over .data.rel.ro (lua 5.4 then ran luaopen_os as a constructor)
layout="-no-pie -Wl,-Tdata=0x10000000 -Wl,-Trodata-segment=0x8000000 -Wl,--section-start=.init_array=0x9000000 -Wl,--section-start=.tbss=0x9800000"
tunables=glibc.malloc.mmap_threshold=33554432
# Both traced runs without address randomization, so that the full and skeleton traces differ only by what
# the skeleton changes: with it, the addresses' varints change length from run to run and one program's
# full trace alone varies by tens of bytes (compute.c: 1,688 to 1,720 bytes in six runs).
# And with the same process id (1, in a PID namespace of their own) where namespaces are allowed: every
# event record carries the thread id, and another pid alone moves a trace by up to a few hundred bytes.
fixed=""
if setarch -R true 2>/dev/null; then fixed="setarch -R"; fi
if unshare --pid --fork true 2>/dev/null; then fixed="unshare --pid --fork $fixed"; fi
# the lines of `memtrace print --addresses both` (raw line, then its symbolic twin) as the lossless check
# compares them (bench/skeleton.sh's header), one line out for each line in
comparable() {
  awk '
    /^#/ { print "#"; next }
    /^[A-Z]#/ { raw = $0; next }
    /^[A-Z]\$/ {
      sym = $0
      # the code field: the instruction of a load or store, the caller of a block event (docs/trace-format.md)
      t = substr(sym, 1, 1)
      c = (t == "L" || t == "S") ? 3 : (t == "W" || t == "G") ? 4 : t == "Y" ? 6 : 0
      if (raw != "" && c > 0) {
        n = split(sym, s, ","); f = s[c]; sub(/\+[0-9]+$/, "", f)
        m = split(raw, r, ","); r[c] = f; s[c] = f
        # data without a symbol is named by its module and file offset, which the code before it moves
        # (the raw line keeps its address)
        for (i = 1; i < c; i += 2) {
          h = i == 1 ? substr(s[i], 1, index(s[i], ":")) : ""
          if (index(s[i], h s[i + 1] "+") == 1) s[i] = h s[i + 1] "+?"
        }
        raw = r[1]; for (i = 2; i <= m; i++) raw = raw "," r[i]
        sym = s[1]; for (i = 2; i <= n; i++) sym = sym "," s[i]
      }
      while (match(sym, /@[A-Za-z_][A-Za-z0-9_.]*\+[0-9]+>/)) {
        site = substr(sym, RSTART, RLENGTH); sub(/\+[0-9]+>$/, ">", site)
        sym = substr(sym, 1, RSTART - 1) site substr(sym, RSTART + RLENGTH)
      }
      print raw; print sym; raw = ""; next
    }
    { print }'
}

# The lines of `memtrace print` of a trace of several threads, thread by thread (before `comparable` or
# `raw_comparable`, which pair and normalize the lines this passes on). How the threads interleave changes
# from run to run, and with it three things that are not the program's: the global sequence numbers (left
# out); the stack numbers of allocation events (",sN": numbered by first use over all threads, so two threads'
# first allocations swap numbers: "s", the "# stack" lines are compared as "#" anyway); and the kernel's thread
# ids, which other runs (no PID namespace) give other values: each thread is named by its rank among the
# "# thread T start" lines (main first), in which one creating thread's threads come in the order it makes them
# (threads made by several threads at once can swap ranks: not handled). Each line is keyed by the tid field of
# its kind (docs/trace-format.md; the last field is the tid only for raw loads and stores: a block event ends
# with its "via", an allocation with its stack, a symbolic access with its source line), comment lines by "#",
# and sorted stably: each thread's own lines, raw and symbolic twins together, in their order.
per_thread() {
  awk -F, -v OFS=, '
    /^# thread [0-9]+ start/ { split($0, w, " "); if (!(w[3] in rank)) rank[w[3]] = n++ }
    /^#/ { print "#\t" $0; next }
    { t = substr($0, 1, 1)
      f = (t == "L" || t == "S" || t == "W" || t == "G") ? 5 : t == "Y" ? 7 : (t == "M" || t == "C" || t == "P" || t == "U") ? 3 \
        : (t == "R" || t == "E") ? 4 : t == "F" ? 2 : 0
      if (f == 0) { print "?\t" $0; next }
      sub(/^[A-Z][#$][0-9]*:/, substr($0, 1, 2) ":")
      k = ($f in rank) ? sprintf("%06d", rank[$f]) : "t" $f
      $f = k
      if ($NF ~ /^s[0-9]+$/) $NF = "s"
      print k "\t" $0 }' | LC_ALL=C sort -s -t "$(printf '\t')" -k1,1 | cut -f2-
}

# the lines of `memtrace print --addresses raw` with the code field (which the probes move) made "-": the
# cheaper check (LOSSLESS_ADDRESSES=raw), the same accesses in the same order without the names' check
raw_comparable() {
  awk -F, -v OFS=, '
    /^#/ { print "#"; next }
    { t = substr($0, 1, 1); c = (t == "L" || t == "S") ? 3 : (t == "W" || t == "G") ? 4 : t == "Y" ? 6 : 0
      if (c > 0) $c = "-"; print }'
}

# the number of threads whose chunks a .mtr holds (its chunk headers' thread ids; docs/compiled-in.md, "The
# .mtr file"), read without decoding a chunk
threads_of() {
  python3 - "$1" <<'PY'
import struct, sys
with open(sys.argv[1], 'rb') as f:
    head = f.read(16)
    checked = struct.unpack_from('<I', head, 8)[0] == 2
    at, tids = struct.unpack_from('<I', head, 12)[0], set()
    while True:
        f.seek(at)
        h = f.read(24)
        if len(h) < 24 or struct.unpack_from('<I', h, 0)[0] != 0x4b4e4843:
            break
        tids.add(struct.unpack_from('<I', h, 4)[0])
        at += (40 if checked else 32) + ((struct.unpack_from('<I', h, 16)[0] + 7) & ~7)
print(len(tids))
PY
}

# "equal", or where the full and skeleton traces of $1 first differ; prints of both stream through cmp
# (both raw and symbolic lines, or with LOSSLESS_ADDRESSES=raw the raw lines alone)
lossless() {
  local p=$1 c group=cat a=${LOSSLESS_ADDRESSES:-both} keep=comparable
  [ "$a" = both ] || keep=raw_comparable
  # several threads interleave differently from run to run (zstd -19's three: two runs of one full build
  # already print their thread events at other places from line 1,107 on): compared thread by thread
  [ "$p" != threads ] && [ "$(threads_of "$out/$p.full.mtr")" -le 1 ] || group=per_thread
  # threads' sum races with the other thread's stores by design: its output differs from run to run
  if [ "$p" != threads ] && ! cmp -s "$out/$p.full.stdout" "$out/$p.skel.stdout"; then echo stdout; return; fi
  c=$(cmp <({ "$mt" print --addresses "$a" "$out/$p.full.mtr" 2>"$out/$p.full.summary"; echo $? >"$out/$p.full.print"; } | $group | $keep) \
          <({ "$mt" print --addresses "$a" "$out/$p.skel.mtr" 2>"$out/$p.skel.summary"; echo $? >"$out/$p.skel.print"; } | $group | $keep) 2>&1) || true
  if [ -z "$c" ] && [ "$(cat "$out/$p.full.print")" = 0 ] && [ "$(cat "$out/$p.skel.print")" = 0 ]; then echo equal; return; fi
  [ -n "$c" ] || { echo "print-failed"; return; }
  # "… differ: byte B, line N" or "cmp: EOF on … after byte B, line N" (one trace is a prefix of the other)
  echo "line $(echo "$c" | sed -n 's/.*line \([0-9]*\).*/\1/p' | head -1)"
}

