package org.memtrace.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.memtrace.launch.LaunchException;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * bash and zsh completion for memtrace, written from the commands' models: the command names after
 * {@code memtrace} (and after {@code memtrace help}), each command's options after a {@code -}, the values an
 * option lists (e.g. {@code convert --to}), file names elsewhere. The compiler drivers complete their
 * memtrace options (read from their help) and file names; gcc's own options are gcc's business.
 */
final class Completion {
    private Completion() {}

    static String bash(Map<String, CommandSpec> commands) throws LaunchException {
        var out = new StringBuilder();
        out.append("# bash completion for memtrace, generated from its commands by org.memtrace.cli.InstallFiles\n");
        out.append("_memtrace() {\n");
        out.append("  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd= opts= i\n");
        out.append("  for ((i = 1; i < COMP_CWORD; i++)); do\n");
        out.append("    case ${COMP_WORDS[i]} in -*) ;; *) cmd=${COMP_WORDS[i]}; break ;; esac\n");
        out.append("  done\n");
        out.append("  case $cmd in\n");
        List<String> names = new ArrayList<>(commandNames(commands));
        out.append("    '') opts=\"").append(String.join(" ", names)).append(" ")
                .append(String.join(" ", InstallFiles.optionNames(commands.get("")))).append("\"\n");
        out.append("        COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\")); return ;;\n");
        out.append("    help) COMPREPLY=($(compgen -W \"").append(String.join(" ", names.stream().filter(n -> !n.equals("help")).toList()))
                .append("\" -- \"$cur\")); return ;;\n");
        out.append("    cc|c++) opts=\"--help ").append(String.join(" ", InstallFiles.ccOptions())).append("\" ;;\n");
        for (var e : commands.entrySet()) {
            if (e.getKey().isEmpty() || e.getKey().equals("cc") || e.getKey().equals("help")) continue;
            CommandSpec spec = e.getValue();
            out.append("    ").append(e.getKey()).append(")\n");
            out.append("      opts=\"").append(String.join(" ", InstallFiles.optionNames(spec))).append("\"\n");
            out.append("      case $prev in\n");
            for (OptionSpec o : spec.options()) {
                List<String> values = candidates(o);
                if (values.isEmpty()) continue;
                out.append("        ").append(String.join("|", o.names())).append(") COMPREPLY=($(compgen -W \"")
                        .append(String.join(" ", values)).append("\" -- \"$cur\")); return ;;\n");
            }
            out.append("      esac ;;\n");
        }
        out.append("  esac\n");
        out.append("  if [[ $cur == -* ]]; then\n");
        out.append("    COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n");
        out.append("  else\n");
        out.append("    COMPREPLY=($(compgen -f -- \"$cur\"))\n");
        out.append("  fi\n");
        out.append("}\n");
        out.append("complete -o filenames -F _memtrace memtrace\n");
        return out.toString();
    }

    static String zsh(Map<String, CommandSpec> commands) throws LaunchException {
        var out = new StringBuilder();
        out.append("#compdef memtrace\n");
        out.append("# zsh completion for memtrace, generated from its commands by org.memtrace.cli.InstallFiles\n");
        out.append("_memtrace() {\n");
        out.append("  local -a commands\n");
        out.append("  commands=(\n");
        for (var e : commands.entrySet()) {
            if (e.getKey().isEmpty()) continue;
            for (String name : e.getValue().names())
                out.append("    ").append(quote(name.replace(":", "\\:") + ":" + InstallFiles.summary(e.getValue()))).append('\n');
        }
        out.append("  )\n");
        out.append("  if (( CURRENT == 2 )); then\n    _describe -t commands 'memtrace command' commands\n    return\n  fi\n");
        out.append("  local cmd=$words[2]\n  shift words\n  (( CURRENT-- ))\n");
        out.append("  case $cmd in\n");
        out.append("    help) _describe -t commands 'memtrace command' commands ;;\n");
        out.append("    cc|c++) _arguments -s '--help[the help of memtrace cc]'");
        for (String o : InstallFiles.ccOptions()) out.append(" ").append(quote(o + "[memtrace cc option]"));
        out.append(" '*:file:_files' ;;\n");
        for (var e : commands.entrySet()) {
            if (e.getKey().isEmpty() || e.getKey().equals("cc") || e.getKey().equals("help")) continue;
            out.append("    ").append(e.getKey()).append(") _arguments -s");
            for (OptionSpec o : e.getValue().options()) {
                if (o.hidden()) continue;
                String description = bracketFree(String.join(" ", o.description()));
                for (String name : o.names()) {
                    String spec = name + (o.arity().max() > 0 ? (name.startsWith("--") ? "=" : "+") : "")
                            + "[" + description + "]";
                    if (o.arity().max() > 0) {
                        List<String> values = candidates(o);
                        spec += ":" + bracketFree(o.paramLabel()).replace(":", " ") + ":"
                                + (values.isEmpty() ? "_files" : "(" + String.join(" ", values) + ")");
                    }
                    out.append(" ").append(quote(spec));
                }
            }
            out.append(" '*:file:_files' ;;\n");
        }
        out.append("  esac\n}\n");
        out.append("_memtrace \"$@\"\n");
        return out.toString();
    }

    private static List<String> commandNames(Map<String, CommandSpec> commands) {
        List<String> names = new ArrayList<>();
        for (var e : commands.entrySet()) if (!e.getKey().isEmpty()) names.addAll(e.getValue().names());
        return names;
    }

    private static List<String> candidates(OptionSpec o) {
        List<String> values = new ArrayList<>();
        if (o.completionCandidates() != null) o.completionCandidates().forEach(v -> values.add(v.toLowerCase(java.util.Locale.ROOT)));
        return values;
    }

    /** Text for inside a zsh option spec's brackets: without brackets, without ${...} placeholders. */
    private static String bracketFree(String s) {
        return s.replaceAll("\\$\\{[A-Z-]+\\}", "").replace('[', '(').replace(']', ')').replace("%n", " ");
    }

    /** One word in single quotes for the shell. */
    private static String quote(String s) { return "'" + s.replace("'", "'\\''") + "'"; }
}
