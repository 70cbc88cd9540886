package org.memtrace.symbols;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Gcc;

/** The line-program reader on units built byte by byte, and on real units cut and damaged. */
class DwarfLinesTest {

    private static final ByteBuffer NONE = ByteBuffer.allocate(0);

    /** A line program, opcode by opcode, for a unit with line base -5, line range 14, opcode base 13. */
    static final class Program {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();

        Program setAddress(long address) {
            out.write(0);
            uleb(out, 9);
            out.write(2);
            u64(out, address);
            return this;
        }

        Program endSequence() {
            out.write(0);
            uleb(out, 1);
            out.write(1);
            return this;
        }

        Program defineFile(String name, int directory) {
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            body.write(3);
            cString(body, name);
            uleb(body, directory);
            uleb(body, 0);
            uleb(body, 0);
            out.write(0);
            uleb(out, body.size());
            out.writeBytes(body.toByteArray());
            return this;
        }

        /** A special opcode: address += {@code address} (0 to 17), line += {@code line} (-5 to 8), then a row. */
        Program special(int address, int line) {
            out.write(13 + (line + 5) + 14 * address);
            return this;
        }

        Program copy() {
            out.write(1);
            return this;
        }

        Program advancePc(int delta) {
            out.write(2);
            uleb(out, delta);
            return this;
        }

        Program advanceLine(int delta) {
            out.write(3);
            sleb(out, delta);
            return this;
        }

        Program setFile(int file) {
            out.write(4);
            uleb(out, file);
            return this;
        }

        Program raw(int... bytes) {
            for (int b : bytes) out.write(b);
            return this;
        }

        byte[] bytes() {
            return out.toByteArray();
        }
    }

    /** A DWARF 4 unit: include directories 1…, files numbered from 1. */
    static byte[] v4(List<String> directories, List<String> files, List<Integer> fileDirectories, byte[] program, int opcodeBase,
                     int... extraOpcodeLengths) {
        ByteArrayOutputStream header = new ByteArrayOutputStream();
        parameters(header, opcodeBase, extraOpcodeLengths);
        for (String d : directories) cString(header, d);
        header.write(0);
        for (int i = 0; i < files.size(); i++) {
            cString(header, files.get(i));
            uleb(header, fileDirectories.get(i));
            uleb(header, 0);
            uleb(header, 0);
        }
        header.write(0);
        return unit(4, header.toByteArray(), program, new byte[0]);
    }

    /**
     * A DWARF 5 unit as gcc 12 writes it: directories as line_strp, files as (line_strp path, udata directory,
     * data16 MD5); {@code lineStr} receives the strings.
     */
    static byte[] v5(List<String> directories, List<String> files, List<Integer> fileDirectories, byte[] program,
                     ByteArrayOutputStream lineStr) {
        ByteArrayOutputStream header = new ByteArrayOutputStream();
        parameters(header, 13);
        header.write(1);
        uleb(header, 1);
        uleb(header, 0x1f);
        uleb(header, directories.size());
        for (String d : directories) u32(header, string(lineStr, d));
        header.write(3);
        uleb(header, 1);
        uleb(header, 0x1f);
        uleb(header, 2);
        uleb(header, 0x0f);
        uleb(header, 5);
        uleb(header, 0x1e);
        uleb(header, files.size());
        for (int i = 0; i < files.size(); i++) {
            u32(header, string(lineStr, files.get(i)));
            uleb(header, fileDirectories.get(i));
            for (int k = 0; k < 16; k++) header.write(0xa0 + k);
        }
        return unit(5, header.toByteArray(), program, new byte[] {8, 0});
    }

    private static void parameters(ByteArrayOutputStream header, int opcodeBase, int... extraOpcodeLengths) {
        header.write(1);
        header.write(1);
        header.write(1);
        header.write(-5 & 0xff);
        header.write(14);
        header.write(opcodeBase);
        int[] standard = {0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1};
        for (int i = 1; i < opcodeBase; i++) header.write(i <= 12 ? standard[i - 1] : extraOpcodeLengths[i - 13]);
    }

    private static byte[] unit(int version, byte[] header, byte[] program, byte[] addressFields) {
        ByteArrayOutputStream u = new ByteArrayOutputStream();
        u32(u, 2 + addressFields.length + 4 + header.length + program.length);
        u.write(version);
        u.write(0);
        u.writeBytes(addressFields);
        u32(u, header.length);
        u.writeBytes(header);
        u.writeBytes(program);
        return u.toByteArray();
    }

    private static int string(ByteArrayOutputStream table, String s) {
        int offset = table.size();
        cString(table, s);
        return offset;
    }

    static void cString(ByteArrayOutputStream out, String s) {
        out.writeBytes(s.getBytes(StandardCharsets.UTF_8));
        out.write(0);
    }

    static void uleb(ByteArrayOutputStream out, long v) {
        do {
            int b = (int) (v & 0x7f);
            v >>>= 7;
            out.write(v != 0 ? b | 0x80 : b);
        } while (v != 0);
    }

    static void sleb(ByteArrayOutputStream out, long v) {
        while (true) {
            int b = (int) (v & 0x7f);
            v >>= 7;
            boolean done = (v == 0 && (b & 0x40) == 0) || (v == -1 && (b & 0x40) != 0);
            out.write(done ? b : b | 0x80);
            if (done) return;
        }
    }

    static void u32(ByteArrayOutputStream out, long v) {
        for (int i = 0; i < 4; i++) out.write((int) (v >>> (8 * i)));
    }

    static void u64(ByteArrayOutputStream out, long v) {
        for (int i = 0; i < 8; i++) out.write((int) (v >>> (8 * i)));
    }

    static LineTable parse(byte[] line) {
        return parse(line, NONE);
    }

    static LineTable parse(byte[] line, ByteBuffer lineStr) {
        return DwarfLines.parse(ByteBuffer.wrap(line), lineStr, NONE, a -> a != 0);
    }

    static SourceLine at(LineTable t, long address) {
        return t.lineOf(address).orElse(null);
    }

    static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) out.writeBytes(p);
        return out.toByteArray();
    }

    @Test
    void rowsCoverUpToTheNextRowAndSequencesEndInGaps() {
        byte[] program = new Program()
                .setAddress(0x1000).advanceLine(9).copy()        // 0x1000 line 10
                .special(4, 1)                                    // 0x1004 line 11
                .special(0, 2)                                    // 0x1004 line 13: the last row at an address wins
                .special(6, -3)                                   // 0x100a line 10
                .advancePc(6).endSequence()                       // ends at 0x1010
                .setAddress(0x2000).advanceLine(99).copy()       // 0x2000 line 100
                .advancePc(0x20).endSequence()
                .bytes();
        LineTable t = parse(v4(List.of("inc"), List.of("a.c", "b.h"), List.of(0, 1), program, 13));
        assertThat(t.problem()).isEmpty();
        assertThat(at(t, 0xfff)).isNull();
        assertThat(at(t, 0x1000)).isEqualTo(new SourceLine("a.c", 10));
        assertThat(at(t, 0x1003)).isEqualTo(new SourceLine("a.c", 10));
        assertThat(at(t, 0x1004)).isEqualTo(new SourceLine("a.c", 13));
        assertThat(at(t, 0x100a)).isEqualTo(new SourceLine("a.c", 10));
        assertThat(at(t, 0x100f)).isEqualTo(new SourceLine("a.c", 10));
        assertThat(at(t, 0x1010)).isNull();
        assertThat(at(t, 0x1fff)).isNull();
        assertThat(at(t, 0x201f)).isEqualTo(new SourceLine("a.c", 100));
        assertThat(at(t, 0x2020)).isNull();
        assertThat(at(t, Long.MIN_VALUE)).isNull();
        assertThat(at(t, Long.MAX_VALUE)).isNull();
    }

    @Test
    void dwarf4FilesJoinTheirIncludeDirectoryAndDefineFileAddsOne() {
        byte[] program = new Program()
                .setAddress(0x400).setFile(2).advanceLine(4).copy()
                .setFile(3).special(3, 1)
                .defineFile("late.c", 1).setFile(4).special(3, 1)
                .advancePc(1).endSequence()
                .bytes();
        LineTable t = parse(v4(List.of("inc", "/usr/include"), List.of("a.c", "b.h", "stdio.h"), List.of(0, 1, 2), program, 13));
        assertThat(at(t, 0x400)).isEqualTo(new SourceLine("inc/b.h", 5));
        assertThat(at(t, 0x403)).isEqualTo(new SourceLine("/usr/include/stdio.h", 6));
        assertThat(at(t, 0x406)).isEqualTo(new SourceLine("inc/late.c", 7));
        assertThat(t.location("inc/b.h")).as("DWARF 4's line table does not hold the compilation directory").isEmpty();
    }

    @Test
    void dwarf5FilesCountFromZeroAndAreNamedRelativeToTheCompilationDirectory() {
        ByteArrayOutputStream lineStr = new ByteArrayOutputStream();
        byte[] program = new Program()
                .setAddress(0x1100).copy()                       // file register 1: the header
                .setFile(0).special(2, 4)                        // file 0: the primary source file
                .setFile(2).special(2, 1)
                .advancePc(2).endSequence()
                .bytes();
        byte[] unit = v5(List.of("/home/me/proj", "src", "inc", "/usr/include"), List.of("main.c", "util.h", "./sub/../x.c"),
                List.of(1, 2, 0), program, lineStr);
        LineTable t = parse(unit, ByteBuffer.wrap(lineStr.toByteArray()));
        assertThat(t.problem()).isEmpty();
        assertThat(at(t, 0x1100)).isEqualTo(new SourceLine("inc/util.h", 1));
        assertThat(at(t, 0x1102)).isEqualTo(new SourceLine("src/main.c", 5));
        assertThat(at(t, 0x1104)).isEqualTo(new SourceLine("x.c", 6));
        // where they lie: joined with the compilation directory, as addr2line prints them
        assertThat(t.location("inc/util.h")).contains("/home/me/proj/inc/util.h");
        assertThat(t.location("src/main.c")).contains("/home/me/proj/src/main.c");
        assertThat(t.location("x.c")).contains("/home/me/proj/x.c");
    }

    @Test
    void aRelativeCompilationDirectoryIsJoinedSoThatNamesArePathsInTheSourceTree() {
        // As in Debian's libc: DW_AT_comp_dir ./libio after -fdebug-prefix-map, headers in ../include.
        ByteArrayOutputStream lineStr = new ByteArrayOutputStream();
        byte[] program = new Program().setAddress(0x80000).setFile(0).copy().setFile(1).special(1, 1).advancePc(1).endSequence().bytes();
        byte[] unit = v5(List.of("./libio", "../include"), List.of("fileops.c", "stdio.h"), List.of(0, 1), program, lineStr);
        LineTable t = parse(unit, ByteBuffer.wrap(lineStr.toByteArray()));
        assertThat(at(t, 0x80000)).isEqualTo(new SourceLine("libio/fileops.c", 1));
        assertThat(at(t, 0x80001)).isEqualTo(new SourceLine("include/stdio.h", 2));
        assertThat(t.location("libio/fileops.c")).isEmpty();
    }

    @Test
    void unknownStandardOpcodesAreSkippedByTheirDeclaredOperandCount() {
        // Opcode base 14: opcode 13 is a vendor's standard opcode with two operands, 14 the first special one.
        byte[] program = new Program().setAddress(0x500).raw(13, 0x81, 0x01, 0x05).raw(14 + 5 + 14 * 2).advancePc(1).endSequence().bytes();
        LineTable t = parse(v4(List.of(), List.of("a.c"), List.of(0), program, 14, 2));
        assertThat(at(t, 0x502)).isEqualTo(new SourceLine("a.c", 1));
        assertThat(at(t, 0x501)).isNull();
    }

    @Test
    void sequencesAreSortedAndThoseAtZeroOrOverlappingALowerOneAreDropped() {
        byte[] program = new Program()
                .setAddress(0x3000).advanceLine(29).copy().advancePc(0x10).endSequence()   // line 30 at 0x3000-0x3010
                .setAddress(0).advanceLine(1).copy().advancePc(0x10).endSequence()          // a discarded function
                .setAddress(0x1000).advanceLine(9).copy().advancePc(0x10).endSequence()    // line 10 at 0x1000-0x1010
                .setAddress(0x1008).advanceLine(19).copy().advancePc(0x10).endSequence()   // overlaps the one above
                .setAddress(0x1010).advanceLine(39).copy().advancePc(0x10).endSequence()   // starts where it ends
                .bytes();
        LineTable t = parse(v4(List.of(), List.of("a.c"), List.of(0), program, 13));
        assertThat(at(t, 0)).isNull();
        assertThat(at(t, 0x1008)).isEqualTo(new SourceLine("a.c", 10));
        assertThat(at(t, 0x1010)).isEqualTo(new SourceLine("a.c", 40));
        assertThat(at(t, 0x101f)).isEqualTo(new SourceLine("a.c", 40));
        assertThat(at(t, 0x1020)).isNull();
        assertThat(at(t, 0x3000)).isEqualTo(new SourceLine("a.c", 30));
    }

    @Test
    void rowsFarApartAreFoundAsWellAsDenseOnes() {
        // Few rows over a huge range: the bucket index widens its buckets instead of growing.
        Program p = new Program().setAddress(0x1000);
        for (int i = 0; i < 50; i++) p.special(1 + i % 3, 1);
        p.advancePc(1).endSequence().setAddress(0x7f0000000000L).advanceLine(499).copy().advancePc(0x10).endSequence();
        LineTable t = parse(v4(List.of(), List.of("a.c"), List.of(0), p.bytes(), 13));
        long address = 0x1000;
        for (int i = 0; i < 50; i++) {
            address += 1 + i % 3;
            assertThat(at(t, address)).isEqualTo(new SourceLine("a.c", 2 + i));
        }
        assertThat(at(t, address + 1)).isNull();
        assertThat(at(t, 0x7effffffffffL)).isNull();
        assertThat(at(t, 0x7f0000000000L)).isEqualTo(new SourceLine("a.c", 500));
        assertThat(at(t, 0x7f000000000fL)).isEqualTo(new SourceLine("a.c", 500));
        assertThat(at(t, 0x7f0000000010L)).isNull();
    }

    @Test
    void rowsOfLineZeroHaveNoLine() {
        byte[] program = new Program().setAddress(0x700).advanceLine(4).copy().advanceLine(-5).special(4, 0).special(4, 3).advancePc(1).endSequence().bytes();
        LineTable t = parse(v4(List.of(), List.of("a.c"), List.of(0), program, 13));
        assertThat(at(t, 0x703)).isEqualTo(new SourceLine("a.c", 5));
        assertThat(at(t, 0x704)).isNull();
        assertThat(at(t, 0x708)).isEqualTo(new SourceLine("a.c", 3));
    }

    @Test
    void flawsGiveAnEmptyTableWithTheirReason() {
        byte[] good = new Program().setAddress(0x500).copy().advancePc(1).endSequence().bytes();
        byte[] unknownFile = new Program().setAddress(0x500).setFile(7).copy().advancePc(1).endSequence().bytes();
        byte[] open = new Program().setAddress(0x500).copy().bytes();
        List<String> one = List.of("a.c");
        List<Integer> zero = List.of(0);
        assertThat(parse(v4(List.of(), one, zero, good, 13)).problem()).isEmpty();
        assertThat(parse(v4(List.of(), one, zero, unknownFile, 13)).problem().orElseThrow()).contains("offset 0x0").contains("file 7");
        assertThat(parse(v4(List.of(), one, zero, open, 13)).problem().orElseThrow()).contains("inside a sequence");
        byte[] twoUnits = concat(v4(List.of(), one, zero, good, 13), v4(List.of(), one, zero, unknownFile, 13));
        LineTable t = parse(twoUnits);
        assertThat(t.isEmpty()).isTrue();
        assertThat(t.problem().orElseThrow()).startsWith(".debug_line unit at offset 0x" + Integer.toHexString(v4(List.of(), one, zero, good, 13).length));
        byte[] version9 = v4(List.of(), one, zero, good, 13);
        version9[4] = 9;
        assertThat(parse(version9).problem().orElseThrow()).contains("version 9");
        ByteArrayOutputStream lineStr = new ByteArrayOutputStream();
        byte[] v5 = v5(List.of("/d"), one, zero, good, lineStr);
        assertThat(parse(v5, NONE).problem().orElseThrow()).contains("outside .debug_line_str");
    }

    @Test
    void everyCutOfARealTableAndRandomDamageEndInAReasonNeverInAnException(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("f.c"), "int f(int x) {\n  int y = x * 3;\n  return y + 1;\n}\nint main(void) { return f(2); }\n");
        for (String dwarf : List.of("-gdwarf-4", "-gdwarf-5")) {
            Path prog = dir.resolve("f" + dwarf);
            Gcc.run(List.of("gcc", "-g", "-O1", dwarf, "-o", prog.toString(), dir.resolve("f.c").toString()));
            ElfFile elf = ElfFile.read(prog);
            ByteBuffer line = elf.contentsOf(elf.section(".debug_line").orElseThrow());
            Optional<ElfSection> strSection = elf.section(".debug_line_str");
            ByteBuffer lineStr = strSection.isPresent() ? elf.contentsOf(strSection.get()) : NONE;
            byte[] bytes = new byte[line.remaining()];
            line.get(bytes);
            LineTable whole = DwarfLines.parse(ByteBuffer.wrap(bytes), lineStr, NONE, a -> true);
            assertThat(whole.problem()).isEmpty();
            assertThat(whole.isEmpty()).isFalse();
            Set<Integer> unitEnds = new HashSet<>();
            ByteBuffer le = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
            for (int end = 0; end < bytes.length; ) unitEnds.add(end += 4 + le.getInt(end));
            for (int cut = 1; cut < bytes.length; cut++) {
                LineTable t = DwarfLines.parse(ByteBuffer.wrap(bytes, 0, cut).slice(), lineStr, NONE, a -> true);
                if (!unitEnds.contains(cut)) assertThat(t.problem()).as("cut at %d of %d", cut, bytes.length).isPresent();
                if (t.problem().isPresent()) assertThat(t.isEmpty()).isTrue();
            }
            // Damage anywhere: the reader must come back, and a table it calls flawed must be empty.
            Random random = new Random(dwarf.hashCode());
            int flawed = 0;
            for (int round = 0; round < 3000; round++) {
                byte[] damaged = bytes.clone();
                for (int k = 1 + random.nextInt(4); k > 0; k--) damaged[random.nextInt(damaged.length)] = (byte) random.nextInt(256);
                LineTable t = DwarfLines.parse(ByteBuffer.wrap(damaged), lineStr, NONE, a -> true);
                if (t.problem().isPresent()) {
                    assertThat(t.isEmpty()).isTrue();
                    flawed++;
                }
            }
            assertThat(flawed).isGreaterThan(100);
        }
    }

    @Test
    void aCorruptCompressedSectionIsAReasonToo(@TempDir Path dir) throws Exception {
        // Enough lines that compression pays: the linker leaves a section that would not shrink as it is.
        StringBuilder source = new StringBuilder();
        for (int i = 0; i < 200; i++) source.append("int f").append(i).append("(int x) {\n  return x * ").append(i).append(";\n}\n");
        Files.writeString(dir.resolve("g.c"), source + "int main(void) { return f7(1); }\n");
        Path prog = dir.resolve("g");
        Gcc.run(List.of("gcc", "-g", "-gz=zlib", "-o", prog.toString(), dir.resolve("g.c").toString()));
        byte[] image = Files.readAllBytes(prog);
        ElfSection section = ElfFile.read(prog).section(".debug_line").orElseThrow();
        assertThat(section.isCompressed()).isTrue();
        for (int i = 24; i < Math.min(section.size(), 40); i++) image[(int) section.offset() + i] ^= 0x5a;
        ElfFile elf = ElfFile.parse("damaged", image);
        LineTable t = DwarfLines.read(elf, elf.loadSegments());
        assertThat(t.isEmpty()).isTrue();
        assertThat(t.problem().orElseThrow()).contains(".debug_line");
    }

    @Test
    void aCompressedSectionClaimingMoreThanDeflateCanHoldIsRefusedWithoutAllocatingIt(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("h.c"), "int main(void) { return 0; }\n");
        Path prog = dir.resolve("h");
        Gcc.run(List.of("gcc", "-g", "-o", prog.toString(), dir.resolve("h.c").toString()));
        ElfFile elf = ElfFile.read(prog);
        ElfSection plain = elf.section(".debug_line").orElseThrow();
        // The section's own bytes read as an Elf64_Chdr: type 1 (zlib), inflated size 2^31 - 16.
        byte[] image = Files.readAllBytes(prog);
        ByteBuffer header = ByteBuffer.wrap(image, (int) plain.offset(), 24).order(ByteOrder.LITTLE_ENDIAN);
        header.putInt(1).putInt(0).putLong(Integer.MAX_VALUE - 16).putLong(1);
        ElfSection claimed = new ElfSection(plain.name(), plain.type(), plain.flags() | ElfSection.SHF_COMPRESSED, plain.address(),
                plain.offset(), plain.size(), plain.link(), plain.info(), plain.entrySize());
        ElfFile damaged = ElfFile.parse("claimed", image);
        assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> damaged.contentsOf(claimed)))
                .isInstanceOf(ElfFormatException.class).hasMessageContaining("inflated size");
    }

    @Test
    void pathsAreCleanedLexically() {
        assertThat(DwarfLines.normalize("./csu/../sysdeps/x86/abi-note.c")).isEqualTo("sysdeps/x86/abi-note.c");
        assertThat(DwarfLines.normalize("../a/./b//c.h")).isEqualTo("../a/b/c.h");
        assertThat(DwarfLines.normalize("../../x.c")).isEqualTo("../../x.c");
        assertThat(DwarfLines.normalize("/usr/include/../include/stdio.h")).isEqualTo("/usr/include/stdio.h");
        assertThat(DwarfLines.normalize("/../x")).isEqualTo("/x");
    }
}
