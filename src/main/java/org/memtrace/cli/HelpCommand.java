package org.memtrace.cli;

import java.util.concurrent.Callable;
import org.memtrace.cc.CcPlan;
import org.memtrace.launch.LaunchException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code memtrace help [COMMAND]}: the same text as {@code memtrace COMMAND --help} (or {@code memtrace --help}). */
@Command(name = "help", description = "Shows the help of a command, the same as 'memtrace COMMAND --help'.")
final class HelpCommand implements Callable<Integer> {
    @Spec CommandLine.Model.CommandSpec spec;

    // `memtrace help --help` and `memtrace help help` answer as every other command's --help does
    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help message and exit.")
    boolean help;

    @Parameters(arity = "0..1", paramLabel = "COMMAND", description = "the command (all of them when left out)")
    String command;

    @Override
    public Integer call() throws LaunchException {
        CommandLine top = spec.commandLine().getParent();
        var out = spec.commandLine().getOut();
        if (command == null) {
            top.usage(out);
        } else if (command.equals("cc") || command.equals("c++")) {
            // the compiler drivers take gcc's arguments, so their help is their own text, not picocli's
            if (!(CcPlan.of(command.equals("c++"), java.util.List.of("--help"), java.util.Map.of()) instanceof CcPlan.Help help))
                throw new IllegalStateException("cc --help gave no help");
            out.print(help.text());
        } else {
            CommandLine sub = top.getSubcommands().get(command);
            if (sub == null)
                throw new CommandLine.ParameterException(spec.commandLine(), "no command '" + command + "' (commands: "
                        + String.join(", ", top.getSubcommands().keySet()) + ")");
            sub.usage(out);
        }
        out.flush();
        return 0;
    }
}
