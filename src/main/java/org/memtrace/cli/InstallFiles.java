package org.memtrace.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.memtrace.cc.CcPlan;
import org.memtrace.launch.LaunchException;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * What {@code make install} puts next to the jar (docs/install.md), written from the commands' own models so
 * that the help text stays the one source: a man page per command ({@code memtrace.1}, {@code memtrace-run.1},
 * …, roff), bash and zsh completion, and the native files the jar carries (the agent, the runtime, the check runtime and the gcc
 * wrapper), which an installed memtrace uses in place instead of extracting them.
 * {@code java -cp memtrace.jar org.memtrace.cli.InstallFiles DIR} writes DIR/man/, DIR/bash/memtrace,
 * DIR/zsh/_memtrace and DIR/lib/.
 */
public final class InstallFiles {
    private InstallFiles() {}

    static final List<String> NATIVE = List.of("libmemtrace-agent.so", "libmemtrace-rt.so", "libmemtrace-check.so", "memtrace-cc-wrapper");

    public static void main(String[] args) throws IOException, LaunchException {
        if (args.length != 1) {
            System.err.println("memtrace: usage: InstallFiles DIR");
            System.exit(2);
        }
        write(Path.of(args[0]));
    }

    static void write(Path dir) throws IOException, LaunchException {
        Map<String, CommandSpec> commands = commands();
        Files.createDirectories(dir.resolve("man"));
        for (var e : commands.entrySet())
            Files.writeString(dir.resolve("man").resolve(pageName(e.getKey()) + ".1"), ManPage.of(e.getKey(), e.getValue()));
        Files.createDirectories(dir.resolve("bash"));
        Files.writeString(dir.resolve("bash/memtrace"), Completion.bash(commands));
        Files.createDirectories(dir.resolve("zsh"));
        Files.writeString(dir.resolve("zsh/_memtrace"), Completion.zsh(commands));
        Files.createDirectories(dir.resolve("lib"));
        for (String name : NATIVE) {
            try (InputStream in = org.memtrace.launch.NativeFiles.class.getResourceAsStream(name)) {
                if (in == null) throw new IOException(name + " is missing from the jar");
                Files.write(dir.resolve("lib").resolve(name), in.readAllBytes());
            }
        }
    }

    /** The top-level command (key "") and every command by its name, aliases left out, in help's order. */
    static Map<String, CommandSpec> commands() {
        var quiet = new PrintWriter(new StringWriter());
        CommandLine top = Main.commandLine(quiet, quiet, null);
        Map<String, CommandSpec> all = new LinkedHashMap<>();
        all.put("", top.getCommandSpec());
        for (var e : top.getSubcommands().entrySet())
            if (e.getKey().equals(e.getValue().getCommandSpec().name())) all.put(e.getKey(), e.getValue().getCommandSpec());
        return all;
    }

    static String pageName(String command) { return command.isEmpty() ? "memtrace" : "memtrace-" + command; }

    /** The summary: the first line of the description. */
    static String summary(CommandSpec spec) {
        String[] d = spec.usageMessage().description();
        return d.length == 0 ? "" : d[0];
    }

    /** The compiler drivers' help, which is their own text (they take gcc's arguments), not picocli's. */
    static String ccHelp(boolean cxx) throws LaunchException {
        if (CcPlan.of(cxx, List.of("--help"), Map.of()) instanceof CcPlan.Help help) return help.text();
        throw new IllegalStateException("cc --help gave no help");
    }

    /** The options a compiler driver's help lists (its lines "  --name ..."). */
    static List<String> ccOptions() throws LaunchException {
        List<String> names = new ArrayList<>();
        Matcher m = Pattern.compile("(?m)^  (--[a-z-]+)").matcher(ccHelp(false));
        while (m.find()) if (!m.group(1).equals("--")) names.add(m.group(1));
        return names;
    }

    /** Every name of every option of a command, long and short. */
    static List<String> optionNames(CommandSpec spec) {
        List<String> names = new ArrayList<>();
        for (OptionSpec o : spec.options()) if (!o.hidden()) names.addAll(List.of(o.names()));
        return names;
    }
}
