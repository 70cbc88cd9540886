package org.memtrace.launch;

import static org.assertj.core.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Gcc;

class TargetTest {
    @TempDir Path dir;

    private static String refusal(String program) {
        return catchThrowableOfType(LaunchException.class, () -> Target.resolve(program)).getMessage();
    }

    @Test
    void acceptsADynamicProgramFoundOnPath() throws Exception {
        Target t = Target.resolve("true");
        assertThat(t.executable()).isAbsolute();
        assertThat(t.interpreters()).isEmpty();
    }

    @Test
    void aScriptIsTracedThroughItsInterpreter() throws Exception {
        Path script = Files.writeString(dir.resolve("s.sh"), "#!/bin/sh -e\necho hi\n");
        script.toFile().setExecutable(true);
        Target t = Target.resolve(script.toString());
        assertThat(t.traced()).isEqualTo(Path.of("/bin/sh"));
    }

    @Test
    void refusesWhatCannotBeTraced() throws Exception {
        assertThat(refusal(dir.resolve("none").toString())).endsWith("no such file");
        assertThat(refusal("no-such-command-xyz")).contains("not found on PATH");
        assertThat(refusal(dir.toString())).contains("is a directory");
        Path text = Files.writeString(dir.resolve("text"), "hello\n");
        assertThat(refusal(text.toString())).contains("not executable");
        text.toFile().setExecutable(true);
        assertThat(refusal(text.toString())).contains("not an ELF program");
        Path badScript = Files.writeString(dir.resolve("bad.sh"), "#!/no/such/interpreter\n");
        badScript.toFile().setExecutable(true);
        assertThat(refusal(badScript.toString())).contains("/no/such/interpreter: no such file");
    }

    @Test
    void refusesSetuidAndSetgidPrograms() throws Exception {
        Path copy = Files.copy(Path.of("/bin/true"), dir.resolve("true"));
        Files.setPosixFilePermissions(copy, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.setAttribute(copy, "unix:mode", 04755);
        assertThat(refusal(copy.toString())).contains("setuid", "LD_PRELOAD");
        Files.setAttribute(copy, "unix:mode", 02755);
        assertThat(refusal(copy.toString())).contains("setgid");
    }

    @Test
    void refusesAStaticallyLinkedProgram() throws Exception {
        Assumptions.assumeTrue(Gcc.staticLibcAvailable(), "libc.a (libc6-dev) is not installed");
        Path prog = Gcc.compile(dir, "static_prog.c", "static", "-O1", "-g", "-static");
        assertThat(refusal(prog.toString())).contains("LD_PRELOAD cannot work on a statically linked program");
    }
}
