package org.memtrace.symbols;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Gcc;

/** Field and index names of the globals of fields.c, read from the DWARF gcc 12 writes, and corrupt input. */
class DwarfTypesTest {
    @TempDir Path dir;

    private static String variable(ModuleImage image, Map<String, Long> starts, String symbol, long offset) {
        return image.variable(starts.get(symbol) + offset);
    }

    private static Map<String, Long> starts(ModuleImage image) {
        return image.symbols().objects().stream()
                .collect(Collectors.toMap(SymbolIndex.Symbol::name, SymbolIndex.Symbol::start, (a, b) -> a, TreeMap::new));
    }

    @ParameterizedTest
    @ValueSource(strings = {"-gdwarf-4", "-gdwarf-5", "-gdwarf-5 -gz=zlib"})
    void everyShapeIsNamedDownToTheByte(String flags) throws Exception {
        Path exe = Gcc.compile(dir, "fields.c", "fields", flags.split(" "));
        ModuleImage image = ModuleImage.load(exe.toString(), DebugFiles.system());
        assertThat(image.types().problem()).isEmpty();
        Map<String, Long> s = starts(image);
        String remembered = s.keySet().stream().filter(n -> n.startsWith("remembered.")).findFirst().orElseThrow();

        Map<String, String> expected = new java.util.LinkedHashMap<>();
        expected.put("table+28", "table[3].value+0");
        expected.put("table+30", "table[3].value+2");
        expected.put("table+0", "table[0].key+0");
        expected.put("grid+84", "grid[2][5]+0");
        expected.put("grid+86", "grid[2][5]+2");
        expected.put("grid+127", "grid[3][7]+3");
        expected.put("cfg+0", "cfg.tag+0");
        expected.put("cfg+1", "cfg+1");                      // padding after tag: no member holds it
        expected.put("cfg+8", "cfg.inner.flags+0");
        expected.put("cfg+6", "cfg.inner+2");                // padding inside inner
        expected.put("cfg+23", "cfg.tail+7");
        expected.put("u+0", "u.asInt+0");                    // a union names its first member
        expected.put("u+4", "u.asDouble+4");                 // ... that covers the byte
        expected.put("bf+0", "bf.lo+0");                     // lo, mid share byte 0: the first field wins
        expected.put("bf+1", "bf.mid+1");
        expected.put("bf+2", "bf.hi+1");
        expected.put("bf+4", "bf.after+0");
        expected.put("an+0", "an.x+0");
        expected.put("an+4", "an.i+0");                      // anonymous union: its members are the struct's
        expected.put("an+10", "an.q+0");                     // anonymous struct
        expected.put("qualified+8", "qualified[1].key+0");   // volatile const typedef of a typedef
        expected.put("qualified+12", "qualified[1].value+0");
        expected.put("rows+34", "rows[1].name[2]+0");
        expected.put("rows+28", "rows[1].cells[2]+0");
        expected.put("rows+37", "rows[1]+17");               // tail padding of the struct
        expected.put("counter_s+0", "counter_s+0");
        expected.put("counter_s+3", "counter_s+3");
        expected.put("padded_end+8", "padded_end[2]+0");
        expected.put(remembered + "+4", remembered + ".value+0");  // a static local, ELF name kept
        expected.forEach((where, name) -> {
            int plus = where.lastIndexOf('+');
            assertThat(variable(image, s, where.substring(0, plus), Long.parseLong(where.substring(plus + 1))))
                    .as(where + " " + flags).isEqualTo(name);
        });
    }

    @Test
    void withoutDebugInformationNamesStayAsToday() throws Exception {
        Path exe = Gcc.compile(dir, "fields.c", "fields-nog");
        ModuleImage image = ModuleImage.load(exe.toString(), DebugFiles.system());
        Map<String, Long> s = starts(image);
        assertThat(image.types().problem()).hasValueSatisfying(p -> assertThat(p).contains("no .debug_info"));
        assertThat(variable(image, s, "table", 28)).isEqualTo("table+28");
        assertThat(variable(image, s, "grid", 84)).isEqualTo("grid+84");
    }

    /** A unit cut anywhere, or an abbreviation table cut anywhere, is reported, never thrown past the reader. */
    @Test
    void corruptSectionsGiveProblemsNotCrashes() throws Exception {
        Path exe = Gcc.compile(dir, "fields.c", "fields5", "-gdwarf-5");
        ElfFile elf = ElfFile.read(exe);
        ByteBuffer info = elf.contentsOf(elf.section(".debug_info").orElseThrow());
        ByteBuffer abbrev = elf.contentsOf(elf.section(".debug_abbrev").orElseThrow());
        ByteBuffer str = elf.contentsOf(elf.section(".debug_str").orElseThrow());
        long[] variables = starts(ModuleImage.load(exe.toString(), DebugFiles.system())).values().stream().mapToLong(Long::longValue).toArray();
        assertThat(DwarfTypes.parse(info, abbrev, str).variables()).isEqualTo(11);

        for (int cut = 1; cut < info.limit(); cut += 7) {
            ByteBuffer shortInfo = info.slice(0, cut);
            assertThatThrownBy(() -> DwarfTypes.parse(shortInfo, abbrev, str)).isInstanceOf(DwarfException.class);
        }
        for (int cut = 0; cut < abbrev.limit() - 1; cut += 3) {
            ByteBuffer shortAbbrev = abbrev.slice(0, cut);
            assertThatThrownBy(() -> DwarfTypes.parse(info, shortAbbrev, str)).isInstanceOf(DwarfException.class);
        }
        // Every byte flipped in turn: the reader answers (names or not) and never throws anything but its own.
        java.util.Random random = new java.util.Random(9);
        for (int at = 0; at < info.limit(); at++) {
            ByteBuffer damaged = ByteBuffer.allocate(info.limit());
            damaged.put(info.duplicate().clear()).flip();
            damaged.put(at, (byte) (damaged.get(at) ^ (1 + random.nextInt(255))));
            try {
                DwarfTypes t = DwarfTypes.parse(damaged, abbrev, str);
                for (long v : variables) for (int off = 0; off < 64; off += 3) assertThat(t.path(v, off)).isEqualTo(t.walkPath(v, off));
            } catch (DwarfException expected) {
                assertThat(expected.getMessage()).isNotBlank();
            }
        }
    }

    /**
     * Arrays are named by arithmetic (indices, then the element's path from a table): every byte of every
     * global of array_shapes.c, and bytes past the end, is named exactly as the walk over the types names it,
     * first with the table empty and again with it filled; a few names are spelled out.
     */
    @ParameterizedTest
    @ValueSource(strings = {"-gdwarf-4", "-gdwarf-5"})
    void arraysByArithmeticEqualTheWalk(String flags) throws Exception {
        Path exe = Gcc.compile(dir, "array_shapes.c", "array_shapes", flags);
        ModuleImage image = ModuleImage.load(exe.toString(), DebugFiles.system());
        DwarfTypes types = image.types();
        assertThat(types.problem()).isEmpty();
        int compared = 0;
        for (int round = 0; round < 2; round++) {
            for (SymbolIndex.Symbol o : image.symbols().objects()) {
                if (!types.typed(o.start())) continue;
                long size = o.end() - o.start();
                for (long off = -2; off < size + 48; off++) {
                    assertThat(types.path(o.start(), off)).as(o.name() + "+" + off).isEqualTo(types.walkPath(o.start(), off));
                    compared++;
                }
                for (long far : new long[] {size * 2, 1L << 40, Long.MAX_VALUE}) {
                    assertThat(types.path(o.start(), far)).as(o.name() + "+" + far).isEqualTo(types.walkPath(o.start(), far));
                }
            }
        }
        assertThat(compared).isGreaterThan(2 * 10_000);
        Map<String, Long> s = starts(image);
        Map<String, String> expected = new java.util.LinkedHashMap<>();
        expected.put("padded+96", "padded[4].c+0");
        expected.put("padded+101", "padded[4]+5");            // padding after c
        expected.put("padded+112", "padded[4].s+0");           // the last element's last member
        expected.put("padded+119", "padded[4]+23");            // the last byte: tail padding
        expected.put("cube+472", "cube[2][3][4]+0");
        expected.put("cube+479", "cube[2][3][4]+7");
        expected.put("rows_of_rows+92", "rows_of_rows[3][5]+0"); // a typedef'd row: an array of arrays
        expected.put("nests+114", "nests[2][1].pair[1][2]+0"); // 20-byte elements, pair at 4
        expected.put("nests+116", "nests[2][1].tag+0");
        expected.put("nests+119", "nests[2][1]+19");          // tail padding of the last element
        expected.put("unions+27", "unions[3].i+3");            // a union names its first member covering the byte
        expected.put("unions+28", "unions[3].bytes[4]+0");
        expected.put("unions+31", "unions[3]+7");
        expected.put("bitses+9", "bitses[2].b+1");             // byte 1 of a and b's storage: b's
        expected.put("bitses+11", "bitses[2].after+0");
        expected.put("bigs+10020", "bigs[1].tail[2]+0");      // an element past the table: walked
        expected.put("bigs+5004", "bigs[0].tail[1]+0");
        expected.put("bigs+4999", "bigs[0].head[4999]+0");
        expected.put("fam+0", "fam.n+0");
        expected.put("fam+12", "fam+12");                      // the flexible member has no size: outside the struct
        expected.put("fams+4", "fams[1].n+0");
        expected.put("one+0", "one[0]+0");
        expected.put("last+48", "last[6]+0");
        expected.put("last+55", "last[6]+7");
        expected.forEach((where, name) -> {
            int plus = where.lastIndexOf('+');
            assertThat(variable(image, s, where.substring(0, plus), Long.parseLong(where.substring(plus + 1))))
                    .as(where + " " + flags).isEqualTo(name);
        });
        assertThat(types.path(s.get("padded"), 120)).isNull();    // one past the end: the caller's plain name
        // gcc gives a zero-length array no count: indexed as one of unknown length (no ELF size covers it anyway)
        assertThat(types.path(s.get("zero"), 8)).isEqualTo("[2]+0");
        assertThat(types.path(s.get("inner_zero"), 0)).isNull();   // strides of 0: the walk names no byte either
    }
}
