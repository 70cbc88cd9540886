package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;

/** {@code memtrace run --report} makes, from the running trace, the report memtrace report makes from the saved stream. */
class ReportLiveTest {
    @TempDir Path dir;

    private static JsonNode data(Path html) throws Exception {
        String page = Files.readString(html);
        assertThat(page).doesNotContain("<malloc").contains("\\u003cmalloc");
        Matcher m = Pattern.compile("const DATA = (.*);\n</script>").matcher(page);
        assertThat(m.find()).isTrue();
        return new ObjectMapper().readTree(m.group(1));
    }

    @Test
    void liveAndOfflineReportsAgree() throws Exception {
        Path exe = Gcc.compile(dir, "reportwalk.c", "reportwalk", "-O1", "-g", "-no-pie");
        Path stream = dir.resolve("rw.stream"), live = dir.resolve("live.html"), offline = dir.resolve("offline.html");
        var r = Cli.run(dir, "run", "--mode", "fault", "-q", "-o", "/dev/null", "--save-stream", stream.toString(), "--report", live.toString(),
                "--", exe.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        r = Cli.run(dir, "report", stream.toString(), "-o", offline.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        JsonNode a = data(live), b = data(offline);
        for (String part : new String[] {"summary", "regions", "objects", "objectMaps", "instructions", "sites", "freedAccesses"})
            assertThat(a.get(part)).as(part).isEqualTo(b.get(part));
        assertThat(a.get("facts").get("command").asText()).isEqualTo(exe.toString());
        assertThat(a.get("freedAccessCount").asLong()).isEqualTo(2);
    }

    @Test
    void aReportThatIsTheProgramIsRefused() throws Exception {
        Path exe = Gcc.compile(dir, "reportwalk.c", "reportwalk", "-O1");
        var r = Cli.run(dir, "run", "--mode", "fault", "-q", "-o", "/dev/null", "--report", exe.toString(), "--", exe.toString());
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.stderr()).startsWith("memtrace: --report").contains("is the program");
    }
}
