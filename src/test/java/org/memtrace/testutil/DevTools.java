package org.memtrace.testutil;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Headless chromium driven through the Chrome DevTools protocol, as a person's browser would be: real mouse
 * events (Input.dispatchMouseEvent), scripts evaluated in the page, screenshots, and every console message,
 * log entry and uncaught exception kept. The protocol runs over the JDK's own WebSocket client, to the page
 * target chromium lists on its debugging port (a random free one, bound to the loopback address).
 */
public final class DevTools implements AutoCloseable {
    /** Where Debian installs chromium; scripts/env.sh's memtrace_prereqs --with-test-tools puts it there. */
    public static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Process chromium;
    private final WebSocket socket;
    private final AtomicInteger ids = new AtomicInteger();
    private final Map<Integer, CompletableFuture<JsonNode>> pending = new ConcurrentHashMap<>();
    /** Every event the page sent, in order. */
    private final List<JsonNode> events = new CopyOnWriteArrayList<>();

    private DevTools(Process chromium, WebSocket.Builder builder, URI page) {
        this.chromium = chromium;
        this.socket = builder.buildAsync(page, new Listener()).join();
    }

    /** Starts chromium with an empty tab of {@code width} x {@code height} CSS pixels, its profile in {@code profile}. */
    public static DevTools start(Path profile, int width, int height) throws IOException, InterruptedException {
        Files.createDirectories(profile);
        Process p = new ProcessBuilder(CHROMIUM.toString(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", "--user-data-dir=" + profile,
                "--window-size=" + width + "," + height, "about:blank")
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        try {
            String port = listeningPort(p);
            HttpClient http = HttpClient.newHttpClient();
            HttpResponse<String> list = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/json/list"))
                    .timeout(TIMEOUT).build(), HttpResponse.BodyHandlers.ofString());
            String target = null;
            for (JsonNode t : JSON.readTree(list.body())) if (t.path("type").asText().equals("page")) target = t.path("webSocketDebuggerUrl").asText();
            if (target == null) throw new IOException("chromium lists no page: " + list.body());
            return new DevTools(p, http.newWebSocketBuilder().connectTimeout(TIMEOUT), URI.create(target));
        } catch (IOException | RuntimeException e) {
            p.destroyForcibly();
            throw e;
        }
    }

    /** Reads chromium's standard error up to "DevTools listening on ws://host:port/...", then keeps draining it. */
    private static String listeningPort(Process p) throws IOException {
        BufferedReader err = new BufferedReader(new InputStreamReader(p.getErrorStream(), StandardCharsets.UTF_8));
        Pattern listening = Pattern.compile("DevTools listening on ws://[^:]+:(\\d+)/");
        StringBuilder seen = new StringBuilder();
        CompletableFuture<String> port = CompletableFuture.supplyAsync(() -> {
            try {
                for (String line; (line = err.readLine()) != null; ) {
                    Matcher m = listening.matcher(line);
                    if (m.find()) return m.group(1);
                    seen.append(line).append('\n');
                }
                return null;
            } catch (IOException e) {
                return null;
            }
        });
        String found;
        try {
            found = port.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        } catch (Exception e) {
            found = null;
        }
        if (found == null) throw new IOException("chromium did not open its debugging port: " + seen);
        Thread drain = new Thread(() -> {
            try {
                while (err.readLine() != null) { /* a full pipe would stop chromium */ }
            } catch (IOException e) {
                // chromium ended
            }
        });
        drain.setDaemon(true);
        drain.start();
        return found;
    }

    /** Runs a protocol command and gives its result; a protocol error is an exception. */
    public JsonNode send(String method, Map<String, ?> params) {
        int id = ids.incrementAndGet();
        ObjectNode message = JSON.createObjectNode().put("id", id).put("method", method);
        message.set("params", JSON.valueToTree(params));
        CompletableFuture<JsonNode> reply = new CompletableFuture<>();
        pending.put(id, reply);
        socket.sendText(message.toString(), true).join();
        JsonNode r;
        try {
            r = reply.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException(method + ": no answer from chromium", e);
        }
        if (r.has("error")) throw new IllegalStateException(method + ": " + r.get("error"));
        return r.path("result");
    }

    public JsonNode send(String method) { return send(method, Map.of()); }

    /** The value of a script run in the page (a promise awaited); a script that throws is an exception. */
    public JsonNode evaluate(String expression) {
        JsonNode r = send("Runtime.evaluate", Map.of("expression", expression, "returnByValue", true, "awaitPromise", true));
        if (r.has("exceptionDetails")) throw new IllegalStateException(expression + ": " + r.get("exceptionDetails"));
        return r.path("result").path("value");
    }

    /** Loads {@code url} and returns once its load event fired. */
    public void navigate(URI url) throws InterruptedException {
        int before = events("Page.loadEventFired").size();
        JsonNode r = send("Page.navigate", Map.of("url", url.toString()));
        if (r.has("errorText")) throw new IllegalStateException("cannot load " + url + ": " + r.get("errorText"));
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (events("Page.loadEventFired").size() == before) {
            if (System.nanoTime() > deadline) throw new IllegalStateException(url + " did not finish loading");
            Thread.sleep(20);
        }
    }

    /** A mouse event at viewport coordinates: type mouseMoved, mousePressed or mouseReleased; {@code button} none or left. */
    public void mouse(String type, double x, double y, String button) {
        send("Input.dispatchMouseEvent", Map.of("type", type, "x", x, "y", y, "button", button,
                "buttons", button.equals("left") ? 1 : 0, "clickCount", type.equals("mouseMoved") ? 0 : 1));
    }

    /** A left click at viewport coordinates. */
    public void click(double x, double y) {
        mouse("mouseMoved", x, y, "none");
        mouse("mousePressed", x, y, "left");
        mouse("mouseReleased", x, y, "left");
    }

    /** The viewport as a PNG. */
    public byte[] screenshot() {
        return java.util.Base64.getDecoder().decode(send("Page.captureScreenshot", Map.of("format", "png")).path("data").asText());
    }

    /** The events of one method received so far (their params). */
    public List<JsonNode> events(String method) {
        List<JsonNode> found = new ArrayList<>();
        for (JsonNode e : events) if (e.path("method").asText().equals(method)) found.add(e.path("params"));
        return found;
    }

    @Override
    public void close() throws InterruptedException {
        // chromium's own processes (renderer, utility, zygote) may outlive the browser process for a moment and
        // still write the profile, which a test's temporary directory then fails to delete: wait for them too
        List<ProcessHandle> helpers = chromium.descendants().toList();
        socket.abort();
        chromium.destroy();
        if (!chromium.waitFor(20, TimeUnit.SECONDS)) chromium.destroyForcibly();
        for (ProcessHandle h : helpers) {
            h.destroy();
            try {
                h.onExit().get(20, TimeUnit.SECONDS);
            } catch (java.util.concurrent.TimeoutException | java.util.concurrent.ExecutionException e) {
                h.destroyForcibly();
            }
        }
    }

    /** Joins the parts of each message and hands it out: a reply to its command, an event to the list. */
    private final class Listener implements WebSocket.Listener {
        private final StringBuilder message = new StringBuilder();

        @Override
        public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
            message.append(data);
            if (last) {
                try {
                    JsonNode m = JSON.readTree(message.toString());
                    if (m.has("id")) {
                        CompletableFuture<JsonNode> reply = pending.remove(m.get("id").asInt());
                        if (reply != null) reply.complete(m);
                    } else {
                        events.add(m);
                    }
                } catch (IOException e) {
                    events.add(JSON.createObjectNode().put("method", "unreadable").put("text", message.toString()));
                }
                message.setLength(0);
            }
            webSocket.request(1);
            return null;
        }
    }
}
