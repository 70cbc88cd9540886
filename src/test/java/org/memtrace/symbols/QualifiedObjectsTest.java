package org.memtrace.symbols;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Gcc;

/**
 * Objects of one module that share a name are qualified (docs/naming.md, "Objects with one name"): a
 * global keeps its name, a local gets its STT_FILE's name, and the link-time address when two files share
 * a name.
 */
class QualifiedObjectsTest {
    @TempDir Path dir;

    @Test
    void localsThatShareANameGetTheirFileAndWhenNeededTheirAddress() throws Exception {
        Files.writeString(dir.resolve("g1.c"), "int table[4];\nstatic int count[2];\nint *g1(void) { return count; }\n");
        Files.writeString(dir.resolve("s1.c"), "static int table[8];\nstatic int count[3];\n"
                + "int *s1(void) { return table; }\nint *s1c(void) { return count; }\n");
        Files.createDirectories(dir.resolve("other"));
        Files.writeString(dir.resolve("other/s1.c"), "static int count[5];\nstatic int alone[6];\n"
                + "int *o1(void) { return count; }\nint *o2(void) { return alone; }\n");
        Path lib = dir.resolve("libq.so");
        Gcc.run(List.of("gcc", "-O0", "-shared", "-fPIC", "-nostdlib", "-o", lib.toString(), dir.resolve("g1.c").toString(),
                dir.resolve("s1.c").toString(), dir.resolve("other/s1.c").toString()));
        ElfFile elf = ElfFile.read(lib);
        SymbolIndex index = SymbolIndex.of(elf, null);
        Map<String, String> bySize = new TreeMap<>();
        for (ElfSymbol s : elf.symtab()) {
            if (s.isObject() && s.isDefined()) bySize.put(s.name() + s.size(), index.object(s.value() + 4));
        }
        String otherCount = "0x" + Long.toHexString(elf.symtab().stream()
                .filter(s -> s.name().equals("count") && s.size() == 20).findFirst().orElseThrow().value());
        String s1Count = "0x" + Long.toHexString(elf.symtab().stream()
                .filter(s -> s.name().equals("count") && s.size() == 12).findFirst().orElseThrow().value());
        assertThat(bySize).containsEntry("table16", "table+4").containsEntry("table32", "table@s1.c+4")
                .containsEntry("count8", "count@g1.c+4").containsEntry("count12", "count@s1.c@" + s1Count + "+4")
                .containsEntry("count20", "count@s1.c@" + otherCount + "+4").containsEntry("alone24", "alone+4");
        assertThat(index.objectAt(elf.symtab().stream().filter(s -> s.name().equals("table") && s.size() == 32)
                .findFirst().orElseThrow().value())).satisfies(s -> {
                    assertThat(s.name()).isEqualTo("table");
                    assertThat(s.qualifier()).isEqualTo("@s1.c");
                    assertThat(s.unique()).isEqualTo("table@s1.c");
                });
    }
}
