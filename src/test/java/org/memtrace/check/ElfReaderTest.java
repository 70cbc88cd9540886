package org.memtrace.check;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.memtrace.testutil.Gcc;

/**
 * agent/common/mt_elf.c, the one ELF reader of the check runtime and the agent, on files an attacker may hand a
 * root memtrace: the reader built with AddressSanitizer and its copies taken from malloc (elf_read.c), so that
 * a read past any part it copied is an ASan report, on the intact file, on truncated copies and on copies with
 * one section header field corrupted, each with its exact result; then `memtrace run --check` on a runnable
 * copy whose section headers lie past its end: fault mode's leak report is the intact file's, rewrite mode
 * refuses it in one line.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ElfReaderTest {
    private static final int SHT_SYMTAB = 2;
    Path dir, reader, target;
    byte[] file;
    String helper, twice, main;

    @BeforeAll
    void build(@TempDir Path tmp) throws Exception {
        dir = tmp;
        Path agent = Path.of("agent").toAbsolutePath();
        for (String f : List.of("elf_read.c", "elf_target.c")) {
            try (var in = ElfReaderTest.class.getResourceAsStream("/c/elf/" + f)) {
                Files.copy(in, dir.resolve(f));
            }
        }
        reader = dir.resolve("elf_read");
        Gcc.run(List.of("gcc", "-O1", "-g", "-D_GNU_SOURCE", "-fsanitize=address", "-I" + agent.resolve("include"), "-I" + agent.resolve("common"),
                "-o", reader.toString(), dir.resolve("elf_read.c").toString(), agent.resolve("common/mt_elf.c").toString()));
        target = dir.resolve("target");
        Gcc.run(List.of("gcc", "-O0", "-g", "-o", target.toString(), dir.resolve("elf_target.c").toString()));
        file = Files.readAllBytes(target);
        String nm = Gcc.run(List.of("nm", target.toString()));
        helper = address(nm, "helper");
        twice = address(nm, "twice");
        main = address(nm, "main");
    }

    private static String address(String nm, String name) {
        return "0x" + nm.lines().filter(l -> l.endsWith(" " + name)).findFirst().orElseThrow().split(" ")[0].replaceFirst("^0+", "");
    }

    /** elf_read on bytes written to a file: its output lines; ASan's report or a crash fails the test. */
    private List<String> read(byte[] bytes, String name) throws Exception {
        Path p = dir.resolve(name);
        Files.write(p, bytes);
        List<String> command = new ArrayList<>(List.of(reader.toString(), p.toString(), helper, twice, main));
        return Gcc.run(command, Map.of("ASAN_OPTIONS", "detect_leaks=1")).lines().toList();
    }

    private ByteBuffer le(byte[] b) { return ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN); }

    /** The offset of the first section header of this type in the file. */
    private int header(int type) {
        ByteBuffer b = le(file);
        long shoff = b.getLong(0x28);
        int shnum = b.getShort(0x3c) & 0xffff;
        for (int i = 0; i < shnum; i++) {
            int at = (int) shoff + 64 * i;
            if (b.getInt(at + 4) == type) return at;
        }
        throw new AssertionError("no section of type " + type);
    }

    private String intactHead() throws Exception {
        return read(file, "intact").getFirst();
    }

    @Test
    void theIntactFileNamesItsFunctions() throws Exception {
        List<String> out = read(file, "intact");
        assertThat(out.getFirst()).matches("sections \\d+, named \\d+, \\.symtab \\d+, in a section \\d+, functions \\d+");
        assertThat(out.subList(1, out.size())).containsExactly(helper + " helper", twice + " twice", main + " main");
    }

    /** The section headers are the file's last bytes: any cut loses them, and nothing else is read. */
    @ParameterizedTest
    @ValueSource(ints = {0, 4, 63, 64, -1, -64, -65, -4096})
    void aTruncatedCopyIsNotRead(int cut) throws Exception {
        int length = cut >= 0 ? cut : file.length + cut;
        assertThat(read(Arrays.copyOf(file, length), "cut")).containsExactly("not read");
    }

    @Test
    void sectionHeadersPastTheEndAreNotRead() throws Exception {
        byte[] c = file.clone();
        le(c).putLong(0x28, file.length - 64 * 3); // e_shoff: the headers run 33 past the end
        assertThat(read(c, "shoff")).containsExactly("not read");
        le(c).putLong(0x28, -64); // wraps around: offset + size overflows
        assertThat(read(c, "wrap")).containsExactly("not read");
    }

    /** .symtab's offset, size or link corrupted: that table is dropped whole, .dynsym (no functions) taken. */
    @ParameterizedTest
    @ValueSource(strings = {"offset", "size", "link", "entsize"})
    void aCorruptedSymtabHeaderDropsTheTable(String field) throws Exception {
        byte[] c = file.clone();
        ByteBuffer b = le(c);
        int at = header(SHT_SYMTAB);
        switch (field) {
            case "offset" -> b.putLong(at + 24, 0x7fff_ffff_ffff_fff0L);
            case "size" -> b.putLong(at + 32, b.getLong(at + 32) + file.length);
            case "link" -> b.putInt(at + 40, 0xffff);
            default -> b.putLong(at + 56, 16);
        }
        List<String> out = read(c, field);
        assertThat(out.getFirst()).matches("sections \\d+, named \\d+, \\.dynsym \\d+, in a section \\d+, functions 0");
        assertThat(out.subList(1, out.size())).containsExactly(helper + " -", twice + " -", main + " -");
    }

    /** A string table whose last byte is no NUL (its size cut by one) is not used: no section names. */
    @Test
    void sectionNamesThatDoNotEndInANulAreDropped() throws Exception {
        byte[] c = file.clone();
        ByteBuffer b = le(c);
        int at = (int) b.getLong(0x28) + 64 * (b.getShort(0x3e) & 0xffff);
        b.putLong(at + 32, b.getLong(at + 32) - 1);
        List<String> out = read(c, "shstr");
        assertThat(out.getFirst()).isEqualTo(intactHead().replaceFirst("named \\d+", "named 0"));
        assertThat(out.subList(1, out.size())).containsExactly(helper + " helper", twice + " twice", main + " main");
    }

    /**
     * A program still runs with its section headers gone: fault mode checks it as the intact one, naming what it
     * can; rewrite mode, whose planner reads the section headers, refuses it in one line.
     */
    @ParameterizedTest
    @ValueSource(strings = {"rewrite", "fault"})
    void aRunnableCopyWithoutItsSectionHeaders(String mode) throws Exception {
        byte[] c = file.clone();
        le(c).putLong(0x28, file.length + 4096L);
        Path broken = dir.resolve("broken");
        Files.write(broken, c);
        assertThat(broken.toFile().setExecutable(true)).isTrue();
        CheckBuilds.Run r = CheckBuilds.runCheck(dir, List.of("--mode", mode), Map.of(), broken.toString());
        assertThat(r.stdout()).isEmpty();
        if (mode.equals("rewrite")) {
            assertThat(r.status()).isEqualTo(2);
            assertThat(r.stderr()).isEqualTo("memtrace: cannot rewrite " + broken + ": " + broken + " is not an ELF file: " + broken
                    + ": section header 0 at offset " + (file.length + 4096) + " length 64 lies outside the file (" + file.length + " bytes)\n");
            return;
        }
        CheckBuilds.Run intact = CheckBuilds.runCheck(dir, List.of("--mode", mode), Map.of(), target.toString());
        assertThat(r.status()).as(r.stderr()).isEqualTo(23);
        // without section headers neither .symtab nor DWARF is found: the copy is named module+offset, the intact
        // program by function and line
        assertThat(intact.stderr().lines().toList()).hasSize(2).first().asString()
                .matches("memtrace: leak: <malloc0001@lose\\+\\d+> \\(a block of 16 bytes, allocated at .*elf_target\\.c:\\d+\\) unreachable at exit");
        assertThat(r.stderr().lines().toList()).hasSize(2).first().asString()
                .matches("memtrace: leak: <malloc0001@broken\\+\\d+> \\(a block of 16 bytes, allocated at broken\\+\\d+\\) unreachable at exit");
    }
}
