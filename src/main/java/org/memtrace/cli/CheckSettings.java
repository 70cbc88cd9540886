package org.memtrace.cli;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.memtrace.launch.LaunchException;

/**
 * {@code run --check}'s settings that the check runtime reads from the environment (agent/check/check_outcome.c,
 * mc_init_report; docs/check.md, "Settings"), refused here before the program starts: the runtime would refuse
 * them too, with the same line and status 2, but only after the program had started, and memtrace would then
 * add a second line guessing why nothing was recorded. The words and messages are the runtime's; the test
 * (CheckSettingsTest) runs the runtime on each refused value so that the two stay the same.
 */
final class CheckSettings {
    /** MEMTRACE_CHECK's words, as mc_init_report knows them. */
    static final List<String> WORDS = List.of("continue", "stop", "summary", "noleaks", "mangled", "globals", "noreturn");

    private CheckSettings() {}

    static void refuseBad(Map<String, String> env) throws LaunchException {
        String mode = env.get("MEMTRACE_CHECK");
        if (mode != null)
            for (String w : mode.split(",")) // strtok_r: empty words are skipped
                if (!w.isEmpty() && !WORDS.contains(w))
                    throw LaunchException.usage("check: MEMTRACE_CHECK: unknown word '" + w + "' (" + String.join(", ", WORDS) + ")");
        String code = env.get("MEMTRACE_CHECK_EXITCODE");
        if (code != null && !code.isEmpty() && !(code.matches("\\s*[+-]?\\d{1,9}") && Integer.parseInt(code.strip()) >= 0
                && Integer.parseInt(code.strip()) <= 255))
            throw LaunchException.usage("check: MEMTRACE_CHECK_EXITCODE must be 0..255");
        String quarantine = env.get("MEMTRACE_CHECK_QUARANTINE");
        if (quarantine != null && !quarantine.isEmpty() && !quarantine.matches("\\s*[+-]?\\d+"))
            throw LaunchException.usage("check: MEMTRACE_CHECK_QUARANTINE must be a number of bytes");
        for (String log : List.of("MEMTRACE_CHECK_JSON", "MEMTRACE_CHECK_SARIF")) {
            String file = env.get(log);
            if (file != null && !file.isEmpty() && Files.exists(Path.of(file), LinkOption.NOFOLLOW_LINKS))
                throw LaunchException.usage("check: cannot create " + file
                        + ": File exists (memtrace writes no log over an existing file: name a new one)");
        }
    }
}
