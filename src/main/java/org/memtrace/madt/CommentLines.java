package org.memtrace.madt;

import java.util.Locale;
import org.memtrace.event.Event;
import org.memtrace.event.Signals;
import org.memtrace.trace.Naming;

/**
 * The text trace's {@code #} comment lines (docs/trace-format.md): the events outside Table I (agent
 * hello, threads, start/stop, fork, exit, statistics, modules, mappings, traced ranges), one line each, code
 * addresses named when the trace is symbolic.
 */
final class CommentLines {
    private CommentLines() {
    }

    /** Appends {@code event}'s comment line, newline included; {@code sym}: code addresses by name. */
    static void append(StringBuilder text, Event event, boolean sym, Naming naming) {
        text.append("# ");
        switch (event) {
            case Event.Hello h -> text.append("agent pid=").append(h.pid()).append(" page-size=").append(h.pageSize())
                    .append(" regions=").append(h.regions());
            case Event.ThreadEvent t when t.started() -> text.append("thread ").append(t.tid()).append(" start parent=").append(t.value());
            case Event.ThreadEvent t -> text.append("thread ").append(t.tid()).append(" exit code=").append(t.value());
            case Event.Control c -> {
                text.append(c.start() ? "start" : "stop").append(" tid=").append(c.tid());
                if (c.caller() != 0) code(text.append(" caller="), sym, naming, c.caller());
            }
            case Event.Fork f -> text.append("fork tid=").append(f.tid()).append(" child=").append(f.childPid()).append(" (untraced)");
            case Event.Exit x -> {
                switch (x.kind()) {
                    case NORMAL -> text.append("exit status=").append(x.value());
                    case EXEC -> text.append("exec ").append(field(x.path()));
                    case EXEC_FAILED -> text.append("exec-failed ").append(field(x.path())).append(" errno=").append(x.value());
                    case SIGNAL -> {
                        text.append("fatal signal ").append(x.value()).append(" (").append(Signals.name(x.value())).append(") ip=");
                        code(text, sym, naming, x.ip());
                        // the faulting instruction's own line (not a return address's): where the program stopped
                        String line = sym ? naming.source(x.ip()) : null;
                        if (line != null) text.append('(').append(NameBytes.field(line)).append(')');
                        text.append(" addr=").append(hex(x.address()));
                    }
                }
                text.append(" tid=").append(x.tid());
            }
            case Event.Stats s -> text.append("stats faults=").append(s.faults()).append(" steps=").append(s.steps())
                    .append(" syscalls=").append(s.syscalls()).append(" windows-at-risk=").append(s.windowsAtRisk())
                    .append(" untraced-faults=").append(s.untracedFaults());
            case Event.Module m -> text.append("module ").append(field(m.path())).append(" bias=").append(hex(m.loadBias()))
                    .append(" build-id=").append(java.util.HexFormat.of().formatHex(m.buildId()));
            case Event.Mapping m -> {
                text.append("mapping ").append(hex(m.start())).append('-').append(hex(m.end()))
                        .append(' ').append(prot(m.prot())).append(" offset=").append(hex(m.offset()));
                if (m.traced()) text.append(" traced");
                if (!m.path().isEmpty()) text.append(' ').append(field(m.path()));
            }
            case Event.Range r -> text.append(r.added() ? "traced " : "untraced ").append(r.kind().name().toLowerCase(Locale.ROOT))
                    .append(' ').append(hex(r.start())).append('-').append(hex(r.end()))
                    .append(' ').append(prot(r.prot()));
            default -> throw new AssertionError("not a comment event: " + event);
        }
        text.append('\n');
    }

    private static String prot(int prot) {
        return ((prot & 1) != 0 ? "r" : "-") + ((prot & 2) != 0 ? "w" : "-") + ((prot & 4) != 0 ? "x" : "-");
    }

    private static StringBuilder code(StringBuilder sb, boolean sym, Naming naming, long ip) {
        return sb.append(sym ? NameBytes.field(naming.code(ip)) : MadtWriter.hex(ip));
    }

    private static String field(String name) {
        return NameBytes.field(name);
    }

    private static String hex(long v) {
        return MadtWriter.hex(v);
    }
}
