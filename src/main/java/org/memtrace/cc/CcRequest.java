package org.memtrace.cc;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One request to the compile server, as the shell client writes it with {@code printf '%s\0'}: NUL-terminated
 * fields {@code memtrace-cc-1 KIND CWD N NAME=VALUE... M ARG...} (docs/compiled-in.md, "The compile server").
 * KIND is {@code ping}, {@code plan} (ARGs: {@code cc} or {@code c++}, then the driver's arguments) or
 * {@code as} (ARGs: the real assembler, then its arguments, as the gcc wrapper received them).
 */
public record CcRequest(Kind kind, String cwd, Map<String, String> environment, List<String> arguments) {
    public static final String MAGIC = "memtrace-cc-1";

    public enum Kind { PING, PLAN, AS }

    /** The request in {@code bytes}, or an IllegalArgumentException saying what is wrong with it. */
    public static CcRequest parse(byte[] bytes) {
        List<String> fields = new ArrayList<>();
        int start = 0;
        for (int i = 0; i < bytes.length; i++) {
            if (bytes[i] == 0) {
                fields.add(new String(bytes, start, i - start, StandardCharsets.UTF_8));
                start = i + 1;
            }
        }
        if (start != bytes.length) throw new IllegalArgumentException("the last field is not NUL-terminated");
        if (fields.size() < 5 || !fields.get(0).equals(MAGIC)) throw new IllegalArgumentException("not a " + MAGIC + " request");
        Kind kind = switch (fields.get(1)) {
            case "ping" -> Kind.PING;
            case "plan" -> Kind.PLAN;
            case "as" -> Kind.AS;
            default -> throw new IllegalArgumentException("unknown request kind " + fields.get(1));
        };
        String cwd = fields.get(2);
        if (!cwd.startsWith("/")) throw new IllegalArgumentException("the working directory is not absolute");
        int at = 3;
        int envCount = count(fields, at++);
        Map<String, String> env = new LinkedHashMap<>();
        for (int i = 0; i < envCount; i++) {
            String entry = field(fields, at++);
            int eq = entry.indexOf('=');
            if (eq <= 0) throw new IllegalArgumentException("an environment entry without a name: " + entry);
            env.put(entry.substring(0, eq), entry.substring(eq + 1));
        }
        int argCount = count(fields, at++);
        if (at + argCount != fields.size()) throw new IllegalArgumentException("the argument count does not match the fields");
        return new CcRequest(kind, cwd, env, List.copyOf(fields.subList(at, at + argCount)));
    }

    private static String field(List<String> fields, int i) {
        if (i >= fields.size()) throw new IllegalArgumentException("the request ends early");
        return fields.get(i);
    }

    private static int count(List<String> fields, int i) {
        String f = field(fields, i);
        if (!f.matches("[0-9]{1,6}")) throw new IllegalArgumentException("not a count: " + f);
        return Integer.parseInt(f);
    }

    /** The request as the client writes it (tests speak the protocol with it). */
    public byte[] encode() {
        var out = new ByteArrayOutputStream();
        List<String> fields = new ArrayList<>(List.of(MAGIC, kind.name().toLowerCase(java.util.Locale.ROOT), cwd,
                Integer.toString(environment.size())));
        environment.forEach((k, v) -> fields.add(k + "=" + v));
        fields.add(Integer.toString(arguments.size()));
        fields.addAll(arguments);
        for (String f : fields) {
            out.writeBytes(f.getBytes(StandardCharsets.UTF_8));
            out.write(0);
        }
        return out.toByteArray();
    }
}
