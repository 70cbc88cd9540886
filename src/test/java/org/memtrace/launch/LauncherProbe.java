package org.memtrace.launch;

/** The whole program of the stand-in jar that LauncherCdsTest starts through the real launcher script. */
public final class LauncherProbe {
    private LauncherProbe() {}

    public static void main(String[] args) {
        System.out.println("probe " + String.join(" ", args));
    }
}
