package org.memtrace.event;

/** Linux x86-64 signal names, for saying how a program ended. */
public final class Signals {
    private Signals() {}

    private static final String[] NAMES = {null, "SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGTRAP", "SIGABRT",
            "SIGBUS", "SIGFPE", "SIGKILL", "SIGUSR1", "SIGSEGV", "SIGUSR2", "SIGPIPE", "SIGALRM", "SIGTERM",
            "SIGSTKFLT", "SIGCHLD", "SIGCONT", "SIGSTOP", "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGURG", "SIGXCPU",
            "SIGXFSZ", "SIGVTALRM", "SIGPROF", "SIGWINCH", "SIGIO", "SIGPWR", "SIGSYS"};

    public static String name(long signal) {
        return signal > 0 && signal < NAMES.length ? NAMES[(int) signal] : "signal " + signal;
    }
}
