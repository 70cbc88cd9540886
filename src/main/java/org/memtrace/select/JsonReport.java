package org.memtrace.select;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.io.Writer;
import java.util.List;
import java.util.Optional;

/**
 * The selection as JSON, the input of selective instrumentation: for every selected instruction its
 * address and the accesses it stands for under MA and under AIA. The schema is in
 * docs/selective-instrumentation.md.
 */
public final class JsonReport {
    public static final int SCHEMA_VERSION = 1;
    private static final ObjectMapper MAPPER = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT)
            .configure(JsonGenerator.Feature.AUTO_CLOSE_TARGET, false);

    private JsonReport() {
    }

    public static void write(Writer out, ElfText elf, AnalysisOptions options, List<FunctionModel> models,
                             List<Double> omegas, Optional<BuildCheck> build) throws IOException {
        ObjectNode root = MAPPER.createObjectNode();
        root.put("schema", SCHEMA_VERSION);
        root.put("file", elf.path().toString());
        root.put("kind", elf.kind());
        root.put("chunk", options.chunkSize());
        ArrayNode scores = root.putArray("scores");
        scores.add(options.scores().s1()).add(options.scores().s2()).add(options.scores().s3());
        root.put("includeStack", options.includeStack());
        build.ifPresent(b -> {
            ObjectNode cc = root.putObject("memtraceCc");
            ArrayNode recorded = cc.putArray("options");
            b.options().forEach(recorded::add);
            cc.put("probeSites", b.probeSites());
            cc.put("instrumented", b.instrumented());
            cc.put("functionsWithoutProbes", b.unprobed());
            b.comparison().ifPresent(d -> {
                cc.put("selectedWithoutProbe", d.selectedWithoutProbe());
                cc.put("probedNotSelected", d.probedNotSelected());
            });
        });
        ArrayNode runs = root.putArray("runs");
        for (double omega : omegas) {
            ObjectNode run = runs.addObject();
            run.put("omega", omega);
            run.set("summary", MAPPER.valueToTree(AnalysisSummary.of(models, omega)));
            ArrayNode selected = run.putArray("selected");
            for (FunctionModel f : models) {
                for (BlockModel b : f.blocks()) {
                    for (Selection.Choice c : b.select(omega).knapsack()) {
                        ObjectNode s = selected.addObject();
                        s.put("address", c.candidate().representative().address());
                        s.put("function", f.function().name());
                        s.put("block", b.block().start());
                        s.put("ma", c.maWeight());
                        s.put("aia", c.aiaWeight());
                        ArrayNode members = s.putArray("class");
                        c.candidate().equivalenceClass().members().forEach(r -> members.add(r.address()));
                        ArrayNode associated = s.putArray("associated");
                        c.associated().forEach(a -> a.equivalenceClass().members().forEach(r -> associated.add(r.address())));
                    }
                }
            }
        }
        MAPPER.writeValue(out, root);
    }
}
