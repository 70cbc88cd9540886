package org.memtrace.testutil;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import org.memtrace.select.ElfText;
import org.memtrace.select.FunctionSymbol;
import org.memtrace.x86.Decoder;

/** {@code memtrace analyze --json}'s selection in a form that a build's layout does not change. */
public final class Selections {
    private Selections() {}

    /** The JSON that {@code memtrace ARGS} (an {@code analyze --json}) prints in {@code dir}; the command must succeed. */
    public static JsonNode json(Path dir, String... args) throws Exception {
        Cli.Result r = Cli.run(dir, args);
        assertThat(r.status()).as(r.stderr()).isZero();
        return new ObjectMapper().readTree(r.stdout());
    }

    /**
     * The selected instructions of the functions {@code functions} accepts, in order, each as its function, its
     * mnemonic and the accesses it stands for: addresses differ between a plain and a cc-built file, these do not.
     */
    public static List<String> describe(JsonNode run, Path file, Predicate<String> functions) throws Exception {
        ElfText elf = ElfText.read(file);
        Decoder decoder = new Decoder();
        List<String> result = new ArrayList<>();
        for (JsonNode s : run.get("selected")) {
            String name = s.get("function").asText();
            if (!functions.test(name)) continue;
            long address = s.get("address").asLong();
            FunctionSymbol f = elf.functions().stream().filter(x -> x.name().equals(name)).findFirst().orElseThrow();
            String mnemonic = decoder.decode(elf.text(), elf.offsetOf(f) + (int) (address - f.address()), address).orElseThrow().mnemonic();
            result.add(name + " " + mnemonic + " ma " + s.get("ma") + " aia " + s.get("aia") + " class " + s.get("class").size()
                    + " associated " + s.get("associated").size());
        }
        return result;
    }
}
