package org.memtrace.symbols;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Gcc;

/** The inlined calls of a -O2 program from DWARF 4 and 5, and corrupt sections reported, never thrown past the reader. */
class DwarfInlinesTest {
    @TempDir Path dir;

    private static ByteBuffer section(ElfFile elf, String name) throws Exception {
        return elf.section(name).isPresent() ? elf.contentsOf(elf.section(name).get()) : ByteBuffer.allocate(0);
    }

    /** The link-time address of the n-th call to malloc in main (the return address less one). */
    private static long mallocCall(Path exe, int n) throws Exception {
        String dump = Gcc.run(List.of("objdump", "-d", "--no-show-raw-insn", exe.toString()));
        List<String> calls = dump.lines().filter(l -> l.contains("call") && l.contains("<malloc@plt>")).toList();
        String line = calls.get(n).strip();
        String next = dump.lines().dropWhile(l -> !l.strip().equals(line)).skip(1).findFirst().orElseThrow().strip();
        return Long.parseLong(next.substring(0, next.indexOf(':')), 16) - 1;
    }

    @Test
    void theChainAtEachMallocCallIsMakeInPushTwo() throws Exception {
        for (String dwarf : List.of("-gdwarf-4", "-gdwarf-5")) {
            Path exe = Gcc.compile(dir, "inline_alloc.c", "inline" + dwarf, "-O2", dwarf);
            DwarfInlines inlines = DwarfInlines.read(ElfFile.read(exe), Demangler.none());
            assertThat(inlines.problem()).as(dwarf).isEmpty();
            String file = dir.resolve("inline_alloc.c").toString();
            assertThat(inlines.chain(mallocCall(exe, 0))).as(dwarf).containsExactly(
                    new DwarfInlines.Inlined("make", file, 16), new DwarfInlines.Inlined("push_two", file, 22));
            assertThat(inlines.chain(mallocCall(exe, 1))).as(dwarf).containsExactly(
                    new DwarfInlines.Inlined("make", file, 17), new DwarfInlines.Inlined("push_two", file, 22));
            // main's own code outside the loop: no inlined call
            long main = Long.parseLong(Gcc.run(List.of("nm", exe.toString())).lines().filter(l -> l.endsWith(" T main"))
                    .findFirst().orElseThrow().split(" ")[0], 16);
            assertThat(inlines.chain(main)).isEmpty();
        }
    }

    /**
     * The table the check reports read (agent/check/check_inline.h, docs/check.md "Inlined frames"), decoded here as
     * the C side decodes it: the same chain at every malloc call, none at main's own code, and nothing for a module
     * without inlined calls.
     */
    @Test
    void theEncodedTableGivesTheSameChains() throws Exception {
        Path exe = Gcc.compile(dir, "inline_alloc.c", "inline-enc", "-O2", "-gdwarf-5");
        DwarfInlines inlines = DwarfInlines.read(ElfFile.read(exe), Demangler.none());
        ByteBuffer t = ByteBuffer.wrap(inlines.encode()).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        assertThat(new String(t.array(), 0, 8, java.nio.charset.StandardCharsets.US_ASCII)).isEqualTo("MTINLIN1");
        int nseg = t.getInt(8), ncall = t.getInt(12), nstr = t.getInt(16);
        assertThat(t.limit()).isEqualTo(20 + nseg * 16 + ncall * 16 + nstr);
        assertThat(ncall).isEqualTo(inlines.size());
        long main = Long.parseLong(Gcc.run(List.of("nm", exe.toString())).lines().filter(l -> l.endsWith(" T main"))
                .findFirst().orElseThrow().split(" ")[0], 16);
        for (long at : List.of(mallocCall(exe, 0), mallocCall(exe, 1), main)) {
            int seg = -1;
            for (int i = 0; i < nseg && t.getLong(20 + i * 16) <= at; i++) seg = i;
            List<DwarfInlines.Inlined> decoded = new java.util.ArrayList<>();
            int strings = 20 + nseg * 16 + ncall * 16;
            for (int c = seg < 0 ? -1 : t.getInt(20 + seg * 16 + 8); c >= 0; c = t.getInt(20 + nseg * 16 + c * 16 + 12)) {
                int base = 20 + nseg * 16 + c * 16, file = t.getInt(base + 4);
                decoded.add(new DwarfInlines.Inlined(cString(t, strings + t.getInt(base)), file == -1 ? null : cString(t, strings + file),
                        t.getInt(base + 8)));
                assertThat(t.getInt(base + 12)).isLessThan(c); // an enclosing call comes first: no cycle
            }
            assertThat(decoded).as("at 0x%x", at).isEqualTo(inlines.chain(at));
        }
        assertThat(DwarfInlines.none(null).encode()).isNull();
    }

    private static String cString(ByteBuffer b, int at) {
        int end = at;
        while (b.get(end) != 0) end++;
        return new String(b.array(), at, end - at, java.nio.charset.StandardCharsets.UTF_8);
    }

    @Test
    void corruptSectionsGiveProblemsNotCrashes() throws Exception {
        Path exe = Gcc.compile(dir, "inline_alloc.c", "inline5", "-O2", "-gdwarf-5");
        ElfFile elf = ElfFile.read(exe);
        ByteBuffer info = section(elf, ".debug_info"), abbrev = section(elf, ".debug_abbrev"), str = section(elf, ".debug_str"),
                lineStr = section(elf, ".debug_line_str"), line = section(elf, ".debug_line"), rnglists = section(elf, ".debug_rnglists"),
                empty = ByteBuffer.allocate(0);
        long call = mallocCall(exe, 0);
        assertThat(DwarfInlines.parse(new DwarfSections(info, abbrev, str, lineStr, empty, empty), line, empty, rnglists).chain(call)).hasSize(2);
        for (int cut = 1; cut < info.limit(); cut += 5) {
            ByteBuffer shortInfo = info.slice(0, cut);
            assertThatThrownBy(() -> DwarfInlines.parse(new DwarfSections(shortInfo, abbrev, str, lineStr, empty, empty), line, empty, rnglists))
                    .isInstanceOf(DwarfException.class);
        }
        // range lists cut anywhere: the inlined calls' lists come first, the unit's own (not read) may come last
        assertThatThrownBy(() -> DwarfInlines.parse(new DwarfSections(info, abbrev, str, lineStr, empty, empty), line, empty, empty))
                .isInstanceOf(DwarfException.class);
        for (int cut = 0; cut < rnglists.limit(); cut++) {
            try {
                DwarfInlines.parse(new DwarfSections(info, abbrev, str, lineStr, empty, empty), line, empty, rnglists.slice(0, cut)).chain(call);
            } catch (DwarfException expected) {
                assertThat(expected.getMessage()).isNotBlank();
            }
        }
        java.util.Random random = new java.util.Random(11);
        for (int at = 0; at < info.limit(); at++) {
            ByteBuffer damaged = ByteBuffer.allocate(info.limit());
            damaged.put(info.duplicate().clear()).flip();
            damaged.put(at, (byte) (damaged.get(at) ^ (1 + random.nextInt(255))));
            try {
                DwarfInlines.parse(new DwarfSections(damaged, abbrev, str, lineStr, empty, empty), line, empty, rnglists).chain(call);
            } catch (DwarfException expected) {
                assertThat(expected.getMessage()).isNotBlank();
            }
        }
    }
}
