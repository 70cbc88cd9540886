package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code memtrace help CMD} is {@code memtrace CMD --help}; the command list says each summary whole. */
class HelpTest {
    record Outcome(int status, String out, String err) {}

    static Outcome memtrace(String... args) {
        var out = new StringWriter();
        var err = new StringWriter();
        int status = Main.execute(new PrintWriter(out), new PrintWriter(err), args);
        return new Outcome(status, out.toString(), err.toString());
    }

    @Test
    void helpOfACommandIsItsOwnHelp() {
        for (Class<?> c : Main.COMMANDS) {
            for (String name : Main.names(c)) {
                Outcome help = memtrace("help", name);
                Outcome own = memtrace(name, "--help");
                assertThat(help.status()).as(name).isZero();
                assertThat(help.out()).as(name).isNotBlank().isEqualTo(own.out());
            }
        }
        assertThat(memtrace("help").out()).isEqualTo(memtrace("--help").out());
    }

    /** help has a help of its own, as every command: it was "Unknown option: '--help'" and "no command 'help'". */
    @Test
    void helpExplainsItself() {
        Outcome own = memtrace("help", "--help");
        assertThat(own.status()).isZero();
        assertThat(own.err()).isEmpty();
        assertThat(own.out()).startsWith("Usage: memtrace help [-h] [COMMAND]\n")
                .contains("Shows the help of a command, the same as 'memtrace COMMAND --help'.", "-h, --help");
        Outcome named = memtrace("help", "help");
        assertThat(named.status()).isZero();
        assertThat(named.out()).isEqualTo(own.out());
    }

    @Test
    void anUnknownCommandIsOneLineAndStatusTwo() {
        Outcome o = memtrace("help", "frobnicate");
        assertThat(o.status()).isEqualTo(2);
        assertThat(o.err().lines().toList()).singleElement().asString().startsWith("memtrace: no command 'frobnicate'")
                .contains("run", "cc", "skeleton");
    }

    /** Every summary in the command list is a whole sentence: it ends with a full stop, nothing cut after it. */
    @Test
    void theCommandListCutsNoSummary() {
        String help = memtrace("--help").out();
        List<String> summaries = new ArrayList<>();
        boolean inCommands = false;
        for (String line : help.lines().toList()) {
            if (line.equals("Commands:")) {
                inCommands = true;
            } else if (inCommands && line.matches("  \\S.*")) {
                summaries.add(line.substring(12).strip());
            } else if (inCommands && line.startsWith("     ") && !summaries.isEmpty()) {
                summaries.set(summaries.size() - 1, summaries.getLast() + " " + line.strip());
            }
        }
        assertThat(summaries).hasSize(Main.COMMANDS.size() + 1);
        assertThat(summaries).allSatisfy(s -> assertThat(s).endsWith("."));
        assertThat(summaries).anySatisfy(s -> assertThat(s).isEqualTo("Writes one self-contained HTML page about a trace."));
    }

    /**
     * Each paragraph of a command's description is whole: picocli starts every element of a description on
     * a line of its own, so an element that ends mid-sentence breaks the text where the reader is.
     */
    @Test
    void everyDescriptionParagraphIsWhole() {
        picocli.CommandLine cl = Main.commandLine(new PrintWriter(new StringWriter()), new PrintWriter(new StringWriter()), null);
        for (var sub : cl.getSubcommands().entrySet()) {
            for (String paragraph : sub.getValue().getCommandSpec().usageMessage().description())
                assertThat(paragraph).as(sub.getKey()).matches("(?s).*[.:)]$");
        }
    }
    /**
     * picocli wraps at 80 columns and may break after a full stop inside a word, which cut a file name in two
     * ("docs/cachesim." / "md"): a line that ends in a word's full stop is never followed by a lower-case word.
     */
    @Test
    void noWordIsBrokenAtAFullStop() {
        List<String> helps = new ArrayList<>(List.of(memtrace("--help").out()));
        for (Class<?> c : Main.COMMANDS)
            helps.add(memtrace(Main.names(c).getFirst(), "--help").out());
        for (String help : helps) {
            List<String> lines = help.lines().toList();
            for (int i = 0; i + 1 < lines.size(); i++) {
                String end = lines.get(i).strip();
                String last = end.substring(end.lastIndexOf(' ') + 1);
                boolean wordStop = last.matches("[^.]*[A-Za-z0-9]\\.");
                String next = lines.get(i + 1);
                boolean newEntry = next.matches("  \\S.*");
                assertThat(wordStop && !newEntry && next.strip().matches("[a-z].*"))
                        .as("%s%n%s", lines.get(i), lines.get(i + 1)).isFalse();
            }
        }
    }
}
