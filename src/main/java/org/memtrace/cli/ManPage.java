package org.memtrace.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.memtrace.launch.LaunchException;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Model.PositionalParamSpec;

/**
 * A command's man page in roff (man(7) macros), written from the same model as its {@code --help}: the
 * summary, the synopsis, the description, every option and parameter with its description and default, the
 * exit statuses. The compiler drivers' page is their help text as it is. {@code man -l} renders it.
 */
final class ManPage {
    private ManPage() {}

    static String of(String command, CommandSpec spec) throws LaunchException {
        String page = InstallFiles.pageName(command);
        var out = new StringBuilder();
        out.append(".\\\" generated from memtrace's help by org.memtrace.cli.InstallFiles: edit the commands, not this\n");
        out.append(".TH ").append(page.toUpperCase(java.util.Locale.ROOT)).append(" 1 \"\" \"")
                .append(new Main.Version().getVersion()[0]).append("\" \"memtrace manual\"\n");
        out.append(".SH NAME\n").append(text(page)).append(" \\- ").append(text(InstallFiles.summary(spec))).append('\n');
        if (command.equals("cc")) {
            out.append(".SH SYNOPSIS\n.B memtrace cc\n[MEMTRACE OPTIONS] [GCC ARGUMENTS]\n.br\n.B memtrace c++\n")
                    .append("[MEMTRACE OPTIONS] [G++ ARGUMENTS]\n.br\n.B memtrace-cc\n.br\n.B memtrace-c++\n");
            out.append(".SH DESCRIPTION\n.nf\n");
            for (String line : InstallFiles.ccHelp(false).lines().skip(1).toList()) out.append(text(line)).append('\n');
            out.append(".fi\n");
            out.append(".PP\n.B memtrace-cc\nand\n.B memtrace-c++\nare the same drivers as single commands, for build systems "
                    + "that take the compiler as one path (CMake's \\-DCMAKE_C_COMPILER=memtrace\\-cc).\n");
        } else {
            out.append(".SH SYNOPSIS\n.nf\n");
            String synopsis = new CommandLine.Help(spec).synopsis(0).replaceFirst("^Usage: ", "").stripTrailing();
            for (String line : synopsis.lines().toList()) out.append(text(line.strip())).append('\n');
            out.append(".fi\n");
            String[] description = spec.usageMessage().description();
            out.append(".SH DESCRIPTION\n");
            for (String line : description) out.append(text(line)).append('\n');
            if (command.isEmpty()) commands(out, spec);
            options(out, spec);
            exitStatus(out, spec.usageMessage().exitCodeList());
        }
        out.append(".SH SEE ALSO\n");
        out.append(command.isEmpty() ? ".BR memtrace\\-run (1),\n.BR memtrace\\-cc (1),\n" : ".BR memtrace (1),\n");
        out.append("the documents in the docs/ directory of memtrace's sources (docs/install.md among them).\n");
        return out.toString();
    }

    private static void commands(StringBuilder out, CommandSpec spec) {
        out.append(".SH COMMANDS\n");
        for (var e : spec.subcommands().entrySet()) {
            CommandSpec sub = e.getValue().getCommandSpec();
            if (!e.getKey().equals(sub.name())) continue;
            out.append(".TP\n.B ").append(text(String.join(", ", e.getValue().getCommandSpec().names()))).append('\n')
                    .append(text(InstallFiles.summary(sub))).append(" See\n.BR ")
                    .append(text(InstallFiles.pageName(sub.name()))).append(" (1).\n");
        }
    }

    private static void options(StringBuilder out, CommandSpec spec) {
        List<String> items = new ArrayList<>();
        for (PositionalParamSpec p : spec.positionalParameters()) {
            if (p.hidden()) continue;
            items.add(".TP\n.I " + text(p.paramLabel()) + "\n" + text(description(p.description(), p.defaultValueString(), p)) + "\n");
        }
        for (OptionSpec o : spec.options()) {
            if (o.hidden()) continue;
            var head = new StringBuilder(".TP\n");
            List<String> names = new ArrayList<>();
            for (String n : o.names()) names.add("\\fB" + text(n).replace("-", "\\-") + "\\fR");
            head.append(String.join(", ", names));
            if (o.arity().max() > 0) head.append("=\\fI").append(text(o.paramLabel())).append("\\fR");
            items.add(head + "\n" + text(description(o.description(), o.defaultValueString(), o)) + "\n");
        }
        if (items.isEmpty()) return;
        out.append(".SH OPTIONS\n");
        items.forEach(out::append);
    }

    private static String description(String[] lines, String defaultValue, CommandLine.Model.ArgSpec arg) {
        List<String> candidates = new ArrayList<>();
        if (arg.completionCandidates() != null) arg.completionCandidates().forEach(candidates::add);
        return String.join(" ", lines).replace("${DEFAULT-VALUE}", String.valueOf(defaultValue))
                .replace("${COMPLETION-CANDIDATES}", String.join(", ", candidates)).replace("%n", " ");
    }

    private static void exitStatus(StringBuilder out, Map<String, String> codes) {
        if (codes.isEmpty()) return;
        out.append(".SH EXIT STATUS\n");
        codes.forEach((code, meaning) -> out.append(".TP\n.B ").append(text(code.strip())).append('\n')
                .append(text(meaning)).append('\n'));
    }

    /** Text as roff reads it literally: backslashes escaped, no line taken for a request. */
    static String text(String s) {
        String t = s.replace("\\", "\\e");
        return t.startsWith(".") || t.startsWith("'") ? "\\&" + t : t;
    }
}
