package org.memtrace.check;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * _FORTIFY_SOURCE's line readers given a size larger than the buffer (check_io.c's __fgets_chk and kin):
 * fortify_room.c's {@code fgets(b, 64, f)} into {@code char b[8]}, built -O2 -g -D_FORTIFY_SOURCE=2 and =3 by
 * {@code memtrace cc --check} and by gcc. glibc 2.36 fails only on a line that does not fit, so the twin whose lines
 * fit runs silently with the native output (it once was reported as a 64-byte write), under {@code memtrace run
 * --check} too, and a size of 1 returns NULL as glibc's does; a line one byte too long is the plain fgets's overflow, naming the array, where the native build
 * dies of glibc's "buffer overflow detected".
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CheckFortifyRoomTest {
    static final List<String> LEVELS = List.of("2", "3");
    Path dir;
    Path source;

    @BeforeAll
    void build(@TempDir Path tmp) throws Exception {
        dir = tmp;
        source = CheckBuilds.fixture(dir, "fortify_room.c");
        for (String f : LEVELS) {
            CheckBuilds.build(dir, false, true, "-O2", "-g", "-D_FORTIFY_SOURCE=" + f, "-o", "room-check" + f, "fortify_room.c");
            Process p = new ProcessBuilder("gcc", "-O2", "-g", "-D_FORTIFY_SOURCE=" + f, "-o", "room-native" + f, "fortify_room.c")
                    .directory(dir.toFile()).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            assertThat(p.waitFor()).as(out).isZero();
        }
    }

    @Test
    void linesThatFitRunSilentlyWithTheNativeOutput() throws Exception {
        for (String f : LEVELS) {
            CheckBuilds.Run nat = CheckBuilds.run(dir, Map.of(), "./room-native" + f, "all", "good");
            assertThat(nat.status()).as(nat.stderr()).isZero();
            assertThat(nat.stdout()).isEqualTo("[ab\n][abcdef\n][abcdefg]".repeat(3) + "[NULL zz]\ndone 78\n");
            CheckBuilds.Run r = CheckBuilds.run(dir, Map.of(), "./room-check" + f, "all", "good");
            assertThat(r.stderr()).as(f).isEmpty();
            assertThat(r.stdout()).as(f).isEqualTo(nat.stdout());
            assertThat(r.status()).as(f).isZero();
        }
        CheckBuilds.Run nat = CheckBuilds.run(dir, Map.of(), "./room-native2", "all", "good");
        for (String mode : List.of("fault", "rewrite")) {
            CheckBuilds.Run r = CheckBuilds.runCheck(dir, List.of("--mode", mode), Map.of(), "./room-native2", "all", "good");
            assertThat(r.stderr()).as(mode).isEmpty();
            assertThat(r.stdout()).as(mode).isEqualTo(nat.stdout());
            assertThat(r.status()).as(mode).isZero();
        }
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "fgets          | stack overflow: <stack:b@fgets_room>+8 (a variable of 8 bytes, declared at line {B} of fgets_room) written 9 bytes by fgets, 0 bytes past its end, at fortify_room.c:{FGETS} (fgets_room+N) | FGETS | fgets_room",
        "fgets_unlocked | stack overflow: <stack:u@fgets_unlocked_room>+8 (a variable of 8 bytes, declared at line {U} of fgets_unlocked_room) written 9 bytes by fgets, 0 bytes past its end, at fortify_room.c:{FGETS_UNLOCKED} (fgets_unlocked_room+N) | FGETS_UNLOCKED | fgets_unlocked_room",
        "fgetws         | stack overflow: <stack:w@fgetws_room>+32 (a variable of 32 bytes, declared at line {W} of fgetws_room) written 36 bytes by fgetws, 0 bytes past its end, at fortify_room.c:{FGETWS} (fgetws_room+N) | FGETWS | fgetws_room",
    })
    void aLineTooLongIsTheOverflowOfTheArray(String name, String report, String call, String function) throws Exception {
        String at = CheckBuilds.reportPattern(source, "    #0 fortify_room.c:{" + call + "} (" + function + "+N) in " + name + " (inlined)");
        String caller = CheckBuilds.reportPattern(source, "    #1 fortify_room.c:{" + call + "} (" + function + "+N) in " + function);
        for (String f : LEVELS) {
            CheckBuilds.Run nat = CheckBuilds.run(dir, Map.of(), "./room-native" + f, name, "bad");
            assertThat(nat.status()).as(f).isEqualTo(134);
            assertThat(nat.stderr()).as(f).isEqualTo("*** buffer overflow detected ***: terminated\n");
            CheckBuilds.Run r = CheckBuilds.run(dir, Map.of(), "./room-check" + f, name, "bad");
            assertThat(r.status()).as(f + " " + r.stderr()).isEqualTo(1);
            List<String> lines = r.stderr().lines().toList();
            assertThat(lines).as(f).hasSize(3);
            assertThat(lines.get(0)).as(f).matches("memtrace: " + CheckBuilds.reportPattern(source, report) + ", thread \\d+");
            assertThat(lines.get(1)).as(f).matches(at);
            assertThat(lines.get(2)).as(f).matches(caller);
            assertThat(r.stdout()).as(f).isEqualTo("[ab\n]"); // the line before, then stopped at the report
        }
    }
}
