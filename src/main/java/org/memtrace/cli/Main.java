package org.memtrace.cli;

import java.io.PrintWriter;
import org.memtrace.launch.LaunchException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * The {@code memtrace} command. Every error is one line on stderr starting with {@code memtrace: };
 * usage errors exit with 2, and no stack trace ever reaches the user.
 */
@Command(name = "memtrace", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = "Records the data memory accesses of native Linux x86-64 programs and names every address.",
        synopsisSubcommandLabel = "COMMAND")
public final class Main implements Runnable {
    static final int USAGE = 2;
    static final int INTERNAL = 70;

    @Spec CommandSpec spec;

    public static void main(String[] args) {
        System.exit(execute(new PrintWriter(System.out, true), new PrintWriter(System.err, true), args));
    }

    public static int execute(PrintWriter out, PrintWriter err, String... args) {
        return commandLine(out, err).execute(args);
    }

    static CommandLine commandLine(PrintWriter out, PrintWriter err) {
        CommandLine cl = new CommandLine(new Main());
        // Subcommands are registered here.
        cl.addSubcommand(new RunCommand());
        cl.addSubcommand(new AnalyzeCommand());
        cl.addSubcommand(new PrintCommand());
        cl.addSubcommand(new CcCommand());
        cl.addSubcommand(new CacheSimCommand());
        cl.addSubcommand(new ConvertCommand());
        cl.addSubcommand(new ReportCommand());
        // Every command answers --version the same way, whether or not it names a version provider.
        for (CommandLine sub : cl.getSubcommands().values())
            if (sub.getCommandSpec().versionProvider() == null) sub.getCommandSpec().versionProvider(new Version());
        // The program's own options follow its name: `memtrace run ./prog -v` must not parse -v.
        cl.getSubcommands().get("run").setStopAtPositional(true);
        // Everything after `memtrace cc` belongs to memtrace's option splitter and then to gcc, @files included.
        CommandLine cc = cl.getSubcommands().get("cc");
        cc.setUnmatchedOptionsArePositionalParams(true);
        cc.setExpandAtFiles(false);
        cl.setOut(out);
        cl.setErr(err);
        cl.setCaseInsensitiveEnumValuesAllowed(true);
        cl.setParameterExceptionHandler(Main::usageError);
        cl.setExecutionExceptionHandler(Main::failure);
        return cl;
    }

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "missing a command (" + String.join(", ",
                spec.subcommands().keySet()) + ")");
    }

    private static int usageError(CommandLine.ParameterException e, String[] args) {
        CommandLine cl = e.getCommandLine();
        cl.getErr().println("memtrace: " + oneLine(e.getMessage()) + " (see '" + cl.getCommandSpec().qualifiedName() + " --help')");
        cl.getErr().flush();
        return USAGE;
    }

    private static int failure(Exception e, CommandLine cl, CommandLine.ParseResult parsed) {
        PrintWriter err = cl.getErr();
        int status;
        if (e instanceof LaunchException le) {
            err.println("memtrace: " + oneLine(le.getMessage()));
            status = le.usage() ? USAGE : 1;
        } else {
            err.println("memtrace: internal error: " + oneLine(String.valueOf(e)));
            status = INTERNAL;
        }
        err.flush();
        return status;
    }

    static String oneLine(String s) { return s == null ? "" : s.replaceAll("\\s*\\R\\s*", " ").strip(); }

    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = Main.class.getPackage().getImplementationVersion();
            return new String[] {"memtrace " + (v != null ? v : "0.1.0-SNAPSHOT")};
        }
    }
}
