package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.TraceFile;

/**
 * Every start-up module's trampoline text at its link-time place (docs/rewriting.md, "Placement within
 * ±2 GB"): mapped from its plan file where the plan says, relative to the module's load bias, so no page of
 * it is copied to move its rel32s. Before, a library's text was linked right below it, where the loader puts
 * the next library, and the plan files and the stub pages of the modules applied first took what was left:
 * sqlite3's libraries had 6 of 8 texts moved, 12 MB copied at each start. The trace's mappings show where
 * each text went (a plan file's r-x mapping); the plan's header says where it was linked and for which
 * build-id.
 */
class RewriteTextPlaceTest {
    @TempDir Path dir;

    private static final Pattern MODULE = Pattern.compile("module (\\S+) bias=0x([0-9a-f]+) build-id=([0-9a-f]+)");
    private static final Pattern TEXT = Pattern.compile("mapping 0x([0-9a-f]+)-0x[0-9a-f]+ r-x offset=0x1000 (\\S+\\.plan)");

    @Test
    void theExecutablesLibcsAndLdSosTextsAreAtTheirLinkTimePlaces() throws Exception {
        Path prog = Gcc.compile(dir, "rewrite_fixed_layout.c", "fixed", "-O1", "-g");
        for (int run = 0; run < 3; run++) { // three layouts
            Path trace = dir.resolve("run" + run + ".trace");
            var r = Cli.run(dir, "run", "--mode", "rewrite", "-o", trace.toString(), "--", prog.toString());
            assertThat(r.status()).as(r.stderr()).isZero();
            Map<String, Long> bias = new HashMap<>();
            Map<String, String> name = new HashMap<>();
            Map<String, Long> placed = new HashMap<>(); // build-id -> the text's run-time address less its link-time one
            for (String c : TraceFile.read(trace).comments()) {
                Matcher m = MODULE.matcher(c);
                if (m.find()) {
                    bias.put(m.group(3), Long.parseUnsignedLong(m.group(2), 16));
                    name.put(m.group(3), m.group(1));
                }
                Matcher t = TEXT.matcher(c);
                if (t.find()) {
                    ByteBuffer h = header(Path.of(t.group(2)));
                    long linked = h.getLong(16);
                    byte[] id = new byte[h.getInt(40)];
                    h.get(104, id);
                    placed.put(HexFormat.of().formatHex(id), Long.parseUnsignedLong(t.group(1), 16) - linked);
                }
            }
            Map<String, Long> shouldBe = new HashMap<>(), is = new HashMap<>();
            for (var e : placed.entrySet()) {
                String module = name.get(e.getKey());
                if (module == null || !(module.endsWith("/fixed") || module.contains("libc.so") || module.contains("ld-linux"))) continue;
                shouldBe.put(module, bias.get(e.getKey()));
                is.put(module, e.getValue());
            }
            assertThat(shouldBe).as("run %d: each text's place less its link-time address is its module's bias", run).hasSize(3);
            assertThat(is).as("run %d", run).isEqualTo(shouldBe);
        }
    }

    private static ByteBuffer header(Path plan) throws IOException {
        try (var in = Files.newInputStream(plan)) {
            return ByteBuffer.wrap(in.readNBytes(4096)).order(ByteOrder.LITTLE_ENDIAN);
        }
    }
}
