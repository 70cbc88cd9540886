package org.memtrace.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.memtrace.launch.Checkpoints;
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
        Checkpoints.mark("main");
        if (args.length == 2 && args[0].equals(StartUpTraining.ARGUMENT)) System.exit(startUpTraining(args[1]));
        if (args.length > 0 && args[0].equals("run")) WarmUp.start(args);
        int status = execute(new PrintWriter(System.out, true), new PrintWriter(System.err, true), args);
        Checkpoints.mark("exit");
        System.exit(status);
    }

    private static int startUpTraining(String scratch) {
        try {
            return StartUpTraining.train(Path.of(scratch));
        } catch (IOException | InterruptedException | RuntimeException e) {
            System.err.println("memtrace: start-up training: " + e.getMessage());
            return INTERNAL;
        }
    }

    public static int execute(PrintWriter out, PrintWriter err, String... args) {
        try {
            return commandLine(out, err, args.length > 0 ? args[0] : null).execute(args);
        } catch (OutOfMemoryError e) {
            // picocli hands only exceptions to the handlers: an error would end the JVM with a stack trace
            err.println("memtrace: out of memory: " + e.getMessage());
            err.flush();
            return 1;
        }
    }

    /** Every command, in the order help lists them; register a new command here. */
    static final List<Class<?>> COMMANDS = List.of(RunCommand.class, AnalyzeCommand.class, PrintCommand.class,
            CcCommand.class, CacheSimCommand.class, ConvertCommand.class, ReportCommand.class, SkeletonCommand.class);

    /**
     * The command line for arguments that start with {@code first}. When it names a command, that command is
     * the only one registered: picocli builds each command's model by reflection, and building all of them
     * cost {@code memtrace run} 0.3-0.6 s of its start (docs/madt.md, "Start-up"). Anything else (no
     * command, --help, a typo) gets them all, so help and errors list every command.
     */
    static CommandLine commandLine(PrintWriter out, PrintWriter err, String first) {
        CommandLine cl = new CommandLine(new Main());
        List<Class<?>> named = COMMANDS.stream().filter(c -> names(c).contains(first)).toList();
        for (Class<?> c : named.isEmpty() ? COMMANDS : named) cl.addSubcommand(c);
        if (named.isEmpty()) cl.addSubcommand(HelpCommand.class);
        // Every command answers --version the same way, whether or not it names a version provider.
        for (CommandLine sub : cl.getSubcommands().values())
            if (sub.getCommandSpec().versionProvider() == null) sub.getCommandSpec().versionProvider(new Version());
        // The program's own options follow its name: `memtrace run ./prog -v` must not parse -v.
        CommandLine run = cl.getSubcommands().get("run");
        if (run != null) run.setStopAtPositional(true);
        // Everything after `memtrace cc` belongs to memtrace's option splitter and then to gcc, @files included.
        CommandLine cc = cl.getSubcommands().get("cc");
        if (cc != null) {
            cc.setUnmatchedOptionsArePositionalParams(true);
            cc.setExpandAtFiles(false);
        }
        // a file name that is not UTF-8 comes from the launcher as its bytes (RawPaths)
        cl.registerConverter(Path.class, RawPaths::path);
        cl.setOut(out);
        cl.setErr(err);
        cl.setCaseInsensitiveEnumValuesAllowed(true);
        cl.setParameterExceptionHandler(Main::usageError);
        cl.setExecutionExceptionHandler(Main::failure);
        return cl;
    }

    /** A command's name and aliases, read from its annotation without building its model. */
    static List<String> names(Class<?> command) {
        Command c = command.getAnnotation(Command.class);
        return Stream.concat(Stream.of(c.name()), Arrays.stream(c.aliases())).toList();
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
