package org.memtrace.instrument;

import java.io.BufferedReader;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Walks a compiler's .s file statement by statement and tells a {@link Listener} what each one is, with
 * the state the rewriter needs: the section (and whether it holds code), the function an instruction
 * belongs to, and whether the call frame address is currently rsp-based. Both passes of the rewriter walk
 * the same file with a fresh walker, so an instruction's index is the same in both.
 *
 * <p>Instructions are numbered only where the rewriter may touch them: in executable sections, outside
 * inline assembly ({@code #APP} … {@code #NO_APP}, whose author may rely on anything) and outside macro and
 * repetition bodies (which are not instructions until expanded).
 */
final class AsmWalker {

    interface Listener {
        /** A line without statements (blank, comment, {@code #APP}): to be copied as it is. */
        void rawLine(String line) throws IOException;

        /** A label, directive or instruction the rewriter does not number: to be copied as it is. */
        void statement(String text) throws IOException;

        /** A numbered instruction of function {@code function}; {@code cfaOnRsp}: CFI rules use rsp here. */
        void instruction(int index, int function, AsmSyntax.Instruction instruction, boolean cfaOnRsp)
                throws IOException;
    }

    private static final int DWARF_RSP = 7;

    private record Section(String name, boolean executable) {
    }

    private final Listener listener;
    private Section section = new Section(".text", true);
    private Section previous = section;
    private final Deque<Section[]> pushed = new ArrayDeque<>();
    private final Set<String> functionTypes = new HashSet<>();
    private final Map<String, Integer> openFunction = new HashMap<>();
    private final List<String> functions = new ArrayList<>();
    private final Map<String, Integer> pseudoFunctions = new HashMap<>();
    private boolean inApp;
    private int macroDepth;
    private boolean inProc;
    private int cfaRegister = DWARF_RSP;
    private final Deque<Integer> rememberedCfa = new ArrayDeque<>();
    private String pendingPrefix;
    private int instructions;
    private boolean intelSyntax;
    private String sourceFile;
    private final Map<String, List<String>> inlineAccesses = new java.util.LinkedHashMap<>();

    AsmWalker(Listener listener) {
        this.listener = listener;
    }

    void walk(BufferedReader in) throws IOException {
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            line(line);
        }
        flushPrefix();
    }

    /** Function names by the index {@link Listener#instruction} reports; code outside functions is named by section. */
    List<String> functions() {
        return functions;
    }

    int instructionCount() {
        return instructions;
    }

    /**
     * Per function (in the order met), the instructions of its inline assembly that may access memory: a
     * memory operand, a string instruction, a push or pop. They are copied untraced; the build reports them.
     */
    Map<String, List<String>> inlineAccesses() {
        return inlineAccesses;
    }

    private void noteInline(String s) {
        String prefix = pendingPrefix == null ? "" : pendingPrefix + " ";
        var insn = AsmSyntax.Instruction.parse(prefix + s);
        String m = insn.mnemonic().toLowerCase();
        boolean memory = insn.operands().stream().anyMatch(o -> o.contains("("))
                || m.matches("(movs|stos|lods|cmps|scas|ins|outs)[bwlq]?|push[wlq]?|pop[wlq]?");
        if (memory) {
            Integer open = openFunction.get(section.name);
            String name = open != null ? functions.get(open) : "<" + section.name + ">";
            inlineAccesses.computeIfAbsent(name, k -> new ArrayList<>()).add((prefix + s).strip().replaceAll("\\s+", " "));
        }
    }

    /** The file uses {@code .intel_syntax}, which the rewriter does not read. */
    boolean intelSyntax() {
        return intelSyntax;
    }

    /** The source file named by the first {@code .file "…"} directive, or null. */
    String sourceFile() {
        return sourceFile;
    }

    private void line(String line) throws IOException {
        String trimmed = line.strip();
        if (trimmed.startsWith("#")) {
            if (trimmed.equals("#APP")) {
                inApp = true;
            } else if (trimmed.equals("#NO_APP")) {
                inApp = false;
            }
            flushPrefix();
            listener.rawLine(line);
            return;
        }
        List<String> statements = AsmSyntax.statements(line);
        if (statements.isEmpty()) {
            listener.rawLine(line);
            return;
        }
        for (String s : statements) {
            statement(s);
        }
    }

    private void statement(String s) throws IOException {
        if (s.endsWith(":") && AsmSyntax.labelEnd(s) == s.length() - 1) {
            flushPrefix();
            label(s.substring(0, s.length() - 1));
            listener.statement(s);
            return;
        }
        if (s.startsWith(".")) {
            flushPrefix();
            directive(s);
            listener.statement(s);
            return;
        }
        if (!section.executable || inApp || macroDepth > 0 || intelSyntax || AsmSyntax.isAssignment(s)) {
            if (section.executable && inApp && macroDepth == 0 && !intelSyntax && !AsmSyntax.isAssignment(s)) {
                noteInline(s);
            }
            flushPrefix();
            listener.statement(s);
            return;
        }
        String word = AsmSyntax.firstWord(s);
        if (AsmSyntax.PREFIXES.contains(word.toLowerCase()) && word.length() == s.length()) {
            // "lock; addl …" and "rep; movsb": one instruction written as two statements.
            pendingPrefix = pendingPrefix == null ? s : pendingPrefix + " " + s;
            return;
        }
        String text = pendingPrefix == null ? s : pendingPrefix + " " + s;
        pendingPrefix = null;
        listener.instruction(instructions++, function(), AsmSyntax.Instruction.parse(text),
                inProc && cfaRegister == DWARF_RSP);
    }

    private void flushPrefix() throws IOException {
        if (pendingPrefix != null) {
            listener.statement(pendingPrefix);
            pendingPrefix = null;
        }
    }

    private int function() {
        Integer open = openFunction.get(section.name);
        if (open != null) {
            return open;
        }
        return pseudoFunctions.computeIfAbsent(section.name, name -> {
            functions.add("<" + name + ">");
            return functions.size() - 1;
        });
    }

    private void label(String name) {
        if (functionTypes.contains(name)) {
            functions.add(name);
            openFunction.put(section.name, functions.size() - 1);
        }
    }

    private void directive(String s) {
        String name = AsmSyntax.firstWord(s).toLowerCase();
        String args = AsmSyntax.afterFirstWord(s);
        switch (name) {
            case ".text", ".data", ".bss" -> switchTo(new Section(name, name.equals(".text")));
            case ".section" -> switchTo(section(args));
            case ".pushsection" -> {
                pushed.push(new Section[] {section, previous});
                switchTo(section(args));
            }
            case ".popsection" -> {
                if (!pushed.isEmpty()) {
                    Section[] restored = pushed.pop();
                    section = restored[0];
                    previous = restored[1];
                }
            }
            case ".previous" -> {
                Section now = section;
                section = previous;
                previous = now;
            }
            case ".type" -> {
                List<String> parts = AsmSyntax.operands(args);
                if (parts.size() == 2 && (parts.get(1).endsWith("function") || parts.get(1).equals("STT_FUNC"))) {
                    functionTypes.add(parts.get(0));
                }
            }
            case ".size" -> {
                List<String> parts = AsmSyntax.operands(args);
                Integer open = openFunction.get(section.name);
                if (!parts.isEmpty() && open != null && functions.get(open).equals(parts.get(0))) {
                    openFunction.remove(section.name);
                }
            }
            case ".macro", ".rept", ".irp", ".irpc" -> macroDepth++;
            case ".endm", ".endr" -> macroDepth = Math.max(0, macroDepth - 1);
            case ".intel_syntax" -> intelSyntax = true;
            case ".att_syntax" -> intelSyntax = false;
            case ".file" -> {
                if (sourceFile == null && args.startsWith("\"") && args.endsWith("\"") && args.length() > 1) {
                    sourceFile = args.substring(1, args.length() - 1);
                }
            }
            case ".cfi_startproc" -> {
                inProc = true;
                cfaRegister = DWARF_RSP;
                rememberedCfa.clear();
            }
            case ".cfi_endproc" -> inProc = false;
            case ".cfi_def_cfa_register" -> cfaRegister = dwarfRegister(args);
            case ".cfi_def_cfa" -> cfaRegister = dwarfRegister(AsmSyntax.operands(args).getFirst());
            case ".cfi_remember_state" -> rememberedCfa.push(cfaRegister);
            case ".cfi_restore_state" -> {
                if (!rememberedCfa.isEmpty()) {
                    cfaRegister = rememberedCfa.pop();
                }
            }
            default -> {
            }
        }
    }

    private void switchTo(Section next) {
        previous = section;
        section = next;
    }

    private static Section section(String args) {
        List<String> parts = AsmSyntax.operands(args);
        String name = parts.isEmpty() ? "" : unquote(parts.get(0));
        String flags = parts.size() > 1 && parts.get(1).startsWith("\"") ? unquote(parts.get(1)) : null;
        boolean executable = flags != null ? flags.contains("x")
                : name.equals(".text") || name.startsWith(".text.") || name.equals(".init") || name.equals(".fini");
        return new Section(name, executable);
    }

    private static String unquote(String s) {
        return s.length() >= 2 && s.startsWith("\"") && s.endsWith("\"") ? s.substring(1, s.length() - 1) : s;
    }

    /** A DWARF register number as CFI directives write it: {@code 7}, {@code %rsp} or {@code rsp}. */
    private static int dwarfRegister(String text) {
        String t = text.strip();
        if (t.equals("%rsp") || t.equals("rsp")) {
            return DWARF_RSP;
        }
        try {
            return Integer.parseInt(t);
        } catch (NumberFormatException e) {
            return -1; // another register by name: not rsp
        }
    }
}
