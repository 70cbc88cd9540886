package org.memtrace.instrument;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.memtrace.select.ElfText;
import org.memtrace.select.FunctionSymbol;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.x86.Decoder;
import org.memtrace.x86.Instruction;
import org.memtrace.x86.MemoryOperand;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * For ω &lt; 1 the rewriter instruments exactly the instructions that {@code memtrace analyze} selects on
 * the plain object assembled from the same .s: both run the select package on the same decoded code.
 */
class SelectionMatchTest {
    @TempDir
    Path dir;

    @ParameterizedTest
    @CsvSource({"mix,0.1,false", "mix,0.25,false", "mix,0.5,false", "mix,0.75,false", "mix,0.5,true",
            "chain,0.3,false", "chain,0.6,true"})
    void instrumentedInstructionsAreTheSelectedOnes(String function, double omega, boolean stack) throws Exception {
        Path s = Instrumented.assembly(dir, "rw_select.c", "sel", List.of("-O2"));
        Path plain = dir.resolve("plain.o");
        Gcc.run(List.of("as", "--64", "-o", plain.toString(), s.toString()));

        var words = new ArrayList<>(List.of("--omega", Double.toString(omega)));
        if (!stack) words.add("--no-stack");
        Path mt = dir.resolve("sel.mt.s");
        Rewriter.Result result = Instrumented.rewrite(s, mt, CcOptions.parse(words));
        assertThat(result.warnings()).isEmpty();
        Path instrumented = dir.resolve("sel.mt.o");
        Gcc.run(List.of("as", "--64", "--keep-locals", "-o", instrumented.toString(), mt.toString()));

        var args = new ArrayList<>(List.of("analyze", "--json", "--omega", Double.toString(omega), "--function", function));
        if (stack) args.add("--stack");
        args.add(plain.toString());
        var r = Cli.run(dir, args.toArray(String[]::new));
        assertThat(r.status()).as(r.stderr()).isZero();
        JsonNode selected = new ObjectMapper().readTree(r.stdout()).get("runs").get(0).get("selected");
        List<Instruction> plainCode = code(plain, function);
        Set<Integer> expected = new TreeSet<>();
        for (JsonNode n : selected) {
            long address = n.get("address").asLong();
            int position = 0;
            while (plainCode.get(position).address() != address) position++;
            expected.add(position);
        }
        assertThat(expected).as("analyze selects something").isNotEmpty();
        assertThat(probedPositions(code(instrumented, function), instructionLabels(instrumented))).isEqualTo(expected);
    }

    private static List<Instruction> code(Path object, String function) throws Exception {
        ElfText elf = ElfText.read(object);
        FunctionSymbol f = elf.functions().stream().filter(x -> x.name().equals(function)).findFirst().orElseThrow();
        return new Decoder().decodeAll(elf.text(), elf.offsetOf(f), Math.toIntExact(f.size()), f.address());
    }

    /** Where the rewriter's instruction labels are: the instructions whose records a probe (of their group) writes. */
    private static Set<Long> instructionLabels(Path object) throws Exception {
        Set<Long> result = new java.util.HashSet<>();
        for (var symbol : org.memtrace.symbols.ElfFile.read(object).symtab()) {
            if (symbol.name().startsWith(ProbeWriter.INSTRUCTION_LABEL)) result.add(symbol.value());
        }
        return result;
    }

    /** Positions, among the program's own instructions (probe code skipped), of the labeled ones. */
    private static Set<Integer> probedPositions(List<Instruction> code, Set<Long> labels) {
        Set<Integer> result = new TreeSet<>();
        int position = 0;
        boolean inProbe = false;
        for (Instruction insn : code) {
            if (isRspStep(insn, -128)) {
                inProbe = true;
                continue;
            }
            if (inProbe) {
                if (isRspStep(insn, 128)) inProbe = false;
                continue;
            }
            if (labels.contains(insn.address())) result.add(position);
            position++;
        }
        return result;
    }

    private static boolean isRspStep(Instruction insn, long displacement) {
        return insn.mnemonic().equals("lea") && insn.operands().size() == 2
                && insn.operands().get(1) instanceof MemoryOperand m && m.base().isStackPointer()
                && m.displacement() == displacement;
    }
}
