package org.memtrace.testutil;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;

/** A MadT text trace read back for assertions, checking every line against docs/trace-format.md ({@link MadtGrammar}). */
public record TraceFile(List<Line> lines, List<String> comments) {

    /** One numbered line: {@code type}, raw or symbolic, its sequence number and its fields. */
    public record Line(char type, boolean raw, long sequence, List<String> fields) {
        public String field(int i) { return fields.get(i); }

        public long number(int i) { return Long.parseUnsignedLong(field(i).substring(2), 16); }

        public boolean access() { return type == 'L' || type == 'S'; }
    }

    private static final Pattern NUMBERED = Pattern.compile("([LSYWGMCPREFU])([#$])(\\d+):(.*)");

    public static TraceFile read(Path file) throws IOException {
        return parse(Files.readAllLines(file));
    }

    public static TraceFile parse(List<String> all) {
        var lines = new java.util.ArrayList<Line>();
        var comments = new java.util.ArrayList<String>();
        for (String text : all) {
            assertThat(MadtGrammar.check(text)).as("grammar of trace line: %s", text).isNull();
            if (text.startsWith("# ")) {
                comments.add(text.substring(2));
                continue;
            }
            var m = NUMBERED.matcher(text);
            assertThat(m.matches()).as("well-formed trace line: %s", text).isTrue();
            char type = m.group(1).charAt(0);
            lines.add(new Line(type, m.group(2).equals("#"), Long.parseLong(m.group(3)), List.of(m.group(4).split(",", -1))));
        }
        for (int i = 1; i < lines.size(); i++)
            assertThat(lines.get(i).sequence()).as("sequence numbers never go back").isGreaterThanOrEqualTo(lines.get(i - 1).sequence());
        return new TraceFile(List.copyOf(lines), List.copyOf(comments));
    }

    public List<Line> of(char type) { return lines.stream().filter(l -> l.type() == type).toList(); }
}
