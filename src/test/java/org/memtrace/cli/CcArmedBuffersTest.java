package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;

/**
 * A {@code memtrace cc} build armed for access stacks (agent/runtime/rt_ccarm.c) records the same accesses as
 * one that is not, whatever the buffers' size. skel_sites.c calls a thousand small functions whose probes
 * run armed for the first time all through the run, and some of them take a dead register for their cursor
 * and leave it there, pointing past the cursor once a recycled buffer is reused: the trap handler took such
 * a register for a loop's cursor and wrote the stack's record after a stretch of the buffer's stale slots,
 * which came back as records no site table describes and repeated allocations (print exit 1 at 16, 64 and
 * 256 KB). The handler now moves only the register a loop's probe keeps its cursor in (read from its code
 * at start) and writes a group probe's record at the cursor.
 */
class CcArmedBuffersTest {
    @TempDir static Path dir;
    static Path prog;

    @BeforeAll
    static void build() throws Exception {
        Path source = dir.resolve("skel_sites.c");
        try (InputStream in = CcArmedBuffersTest.class.getResourceAsStream("/c/skel_sites.c")) {
            Files.copy(in, source);
        }
        prog = dir.resolve("sites");
        List<String> cc = new ArrayList<>(Cli.command("cc"));
        cc.addAll(List.of("-O2", "-no-pie", "-o", prog.toString(), source.toString()));
        Gcc.run(cc);
    }

    /** A digest of the printed trace's accesses and events, without what two runs need not share (the stack's place, the tid). */
    private static String recorded(String name, int bufferKb, boolean armed) throws Exception {
        Path mtr = dir.resolve(name + ".mtr"), text = dir.resolve(name + ".trace");
        ProcessBuilder pb = new ProcessBuilder(prog.toString()).redirectOutput(ProcessBuilder.Redirect.DISCARD);
        pb.environment().clear();
        pb.environment().putAll(Map.of("MEMTRACE_OUT", mtr.toString(), "MEMTRACE_BUFFER_KB", "" + bufferKb));
        if (armed) pb.environment().put("MEMTRACE_ACCESS_STACKS", "1");
        assertThat(pb.start().waitFor()).isZero();
        Cli.Result printed = Cli.run(dir, "print", "-q", "-o", text.toString(), mtr.toString());
        assertThat(printed.status()).as(printed.stderr()).isZero();
        assertThat(printed.stderr()).isEmpty();
        MessageDigest digest = MessageDigest.getInstance("SHA-256");
        long lines = 0;
        try (BufferedReader r = Files.newBufferedReader(text)) {
            for (String l; (l = r.readLine()) != null;) {
                if (l.startsWith("#")) continue;
                digest.update(l.replaceAll("\\[stack\\]\\+[0-9]+", "[stack]").replaceAll(",[0-9]+(,s[0-9]+)?$", "$1").getBytes());
                lines++;
            }
        }
        Files.delete(text);
        assertThat(lines).as("accesses and events of " + name).isEqualTo(905_799);
        return HexFormat.of().formatHex(digest.digest());
    }

    @Test
    void armedBuildsRecordWhatUnarmedOnesDoAtEveryBufferSize() throws Exception {
        String plain = recorded("plain", 64, false);
        for (int kb : new int[] {16, 64, 256})
            assertThat(recorded("armed" + kb, kb, true)).as("armed, %d KB buffers", kb).isEqualTo(plain);
    }
}
