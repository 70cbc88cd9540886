package org.memtrace.instrument;

import org.memtrace.format.SiteFormat;

import org.memtrace.select.BidParameter;
import org.memtrace.select.BinaryAnalyzer;
import org.memtrace.select.BlockModel;
import org.memtrace.select.FunctionModel;
import org.memtrace.select.FunctionSymbol;
import org.memtrace.select.MemoryReference;
import org.memtrace.select.Selection;
import org.memtrace.x86.Instruction;
import org.memtrace.x86.MemoryAccess;
import org.memtrace.x86.MemoryOperand;
import org.memtrace.x86.Operand;
import org.memtrace.x86.Register;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Decides the probes of one function: which instructions (all memory-referencing ones, or the selection of
 * paper 001 for ω &lt; 1, computed by the {@code select} package on exactly these decoded instructions), and
 * for each its sites with the operand text the probe's {@code lea} takes.
 */
final class FunctionPlanner {
    /** The probe runs 152 bytes below the program's %rsp: 128 of red zone and three saved registers. */
    static final int RSP_OFFSET = 152;

    /** An instruction of the function: its index in the .s, its text and its decoding in the assembled object. */
    record Decoded(int index, AsmSyntax.Instruction text, Instruction instruction) {
    }

    /**
     * The probes of a function by instruction index, notes on instructions left alone, and its skeleton loops.
     * {@code early} maps a TLS resolver call whose push is recorded to the instruction its probe stands
     * before: the {@code lea} the linker rewrites together with the call ({@link #tlsResolverCalls}).
     */
    record Plan(Map<Integer, List<Site>> probes, Map<Integer, Integer> early, List<String> notes,
                LoopSkeleton.Result skeleton) {
    }

    private static final LoopSkeleton.Result NO_SKELETON = new LoopSkeleton.Result(List.of(), List.of());

    /** A construct the rewriter cannot instrument; the whole function stays as the compiler wrote it. */
    static final class Unsupported extends Exception {
        Unsupported(String construct) {
            super(construct);
        }
    }

    private FunctionPlanner() {
    }

    /**
     * @param places       the places of the function's static operands, by instruction address ({@code StaticPlaces})
     * @param resolverPush record the push of a TLS resolver call that the link may keep (an object that may go
     *                     into a shared library); else such calls get no probe
     */
    static Plan plan(String name, List<Decoded> code, Map<Long, BidParameter.Place> places, CcOptions options,
                     boolean resolverPush) throws Unsupported {
        var probes = new LinkedHashMap<Integer, List<Site>>();
        var notes = new ArrayList<String>();
        if (code.isEmpty()) {
            return new Plan(probes, Map.of(), notes, NO_SKELETON);
        }
        Map<Instruction, Decoded> byInstruction = new HashMap<>();
        List<Instruction> instructions = new ArrayList<>(code.size());
        for (Decoded d : code) {
            byInstruction.put(d.instruction(), d);
            instructions.add(d.instruction());
        }
        long start = instructions.getFirst().address();
        var symbol = new FunctionSymbol(name, start, instructions.getLast().nextAddress() - start);
        FunctionModel model = BinaryAnalyzer.model(symbol, instructions, places, options.analysis());
        Map<Instruction, Decoded> tlsCalls = tlsResolverCalls(code);
        var early = new HashMap<Integer, Integer>();
        int mode = options.mode().flagBits;
        // a skeleton build records them as a full build does; LoopSkeleton declines a loop that holds one
        boolean gotLoads = !options.selective();
        for (BlockModel block : model.blocks()) {
            Map<Instruction, int[]> weights = new HashMap<>();
            if (options.selective()) {
                for (Selection.Choice c : block.select(options.omega()).knapsack()) {
                    weights.put(c.candidate().representative().instruction(), new int[] {c.maWeight(), c.aiaWeight()});
                }
            } else {
                for (MemoryReference r : block.references()) {
                    weights.put(r.instruction(), new int[] {1, 1});
                }
            }
            int firstIndex = -1;
            int resolverIndex = -1;
            int ma = 0;
            int aia = 0;
            for (Instruction insn : block.block().instructions()) {
                int[] w = weights.get(insn);
                boolean resolver = tlsCalls.containsKey(insn);
                Decoded lea = tlsCalls.get(insn);
                Decoded d = byInstruction.get(insn);
                Site got = w == null && gotLoads ? gotLoad(d) : null;
                if (got != null) {
                    // no reference of the selection: it weighs nothing and never counts its block
                    probes.put(d.index(), new ArrayList<>(List.of(got.withFlags(mode))));
                    continue;
                }
                if (w == null || (resolver && (lea == null || !resolverPush))) {
                    continue;
                }
                List<Site> sites = sites(d, options.stack());
                if (sites == null) {
                    notes.add("conditional rep string instruction '" + d.text().text() + "' left uninstrumented");
                    continue;
                }
                if (sites.isEmpty()) {
                    continue;
                }
                var weighted = new ArrayList<Site>(sites.size());
                int flags = mode | (resolver ? SiteFormat.FLAG_KEPT_WHERE_LINKED : 0);
                int counted = lasting(sites);
                for (int i = 0; i < sites.size(); i++) {
                    weighted.add(sites.get(i).weighted(i == counted ? w[0] : 0, i == counted ? w[1] : 0).withFlags(flags));
                }
                probes.put(d.index(), weighted);
                ma += w[0];
                aia += w[1];
                if (resolver) {
                    early.put(d.index(), lea.index());
                    resolverIndex = d.index();
                } else if (firstIndex < 0) {
                    firstIndex = d.index();
                }
            }
            // a resolver push the link may take away counts its block only when nothing else can
            firstIndex = firstIndex >= 0 ? firstIndex : resolverIndex;
            if (firstIndex >= 0) {
                List<Site> first = probes.get(firstIndex);
                int at = lasting(first);
                first.set(at, first.get(at).blockStart(block.references().size(), ma, aia));
            }
        }
        LoopSkeleton.Result skeleton = options.skeleton() ? LoopSkeleton.plan(code, model, probes) : NO_SKELETON;
        return new Plan(probes, early, notes, skeleton);
    }

    /**
     * The first of an instruction's sites the link cannot take away (a {@code call *f@GOTPCREL(%rip)}'s push,
     * not its read of the slot), or 0 when all can: the one that carries the instruction's weights and its
     * block's count, so the reader never drops them with a relaxed site.
     */
    private static int lasting(List<Site> sites) {
        for (int i = 0; i < sites.size(); i++) {
            if ((sites.get(i).flags() & SiteFormat.FLAG_KEPT_WHERE_LINKED) == 0) return i;
        }
        return 0;
    }

    /**
     * The calls of TLS sequences: the {@code call __tls_get_addr} right after a {@code lea x@tlsgd(%rip), %rdi}
     * (or {@code @tlsld}), and the descriptor call {@code call *x@TLSCALL(%rax)}, each with the {@code lea}
     * right before it ({@code x@TLSDESC}), or null when the call does not follow its {@code lea}. The linker
     * rewrites them — in an executable into thread-pointer arithmetic or a nop, with no call at all — and the
     * first pair only as one byte sequence, so no probe may stand between them: the push of the call is
     * recorded by a probe before the {@code lea}, flagged so that the reader keeps its records only where the
     * linked bytes still hold the call (docs/compiled-in.md, "TLS resolver calls").
     */
    private static Map<Instruction, Decoded> tlsResolverCalls(List<Decoded> code) {
        var calls = new HashMap<Instruction, Decoded>();
        Decoded previous = null;
        String before = "";
        for (Decoded d : code) {
            String self = d.text().text().toLowerCase(Locale.ROOT);
            if (d.instruction().mnemonic().startsWith("call")) {
                boolean pair = before.contains("@tlsgd") || before.contains("@tlsld");
                if (pair || self.contains("@tlscall")) {
                    boolean lea = previous != null && previous.instruction().mnemonic().equals("lea")
                            && (pair || before.contains("@tlsdesc"));
                    calls.put(d.instruction(), lea ? previous : null);
                }
            }
            previous = d;
            before = self;
        }
        return calls;
    }

    /**
     * The site of a {@code mov f@GOTPCREL(%rip), reg} or of a {@code -fno-plt} tail call {@code jmp
     * *f@GOTPCREL(%rip)} (relaxed, a direct {@code jmp}), or null for any other instruction. A full build records
     * it as every memory instruction is, flagged so that the reader keeps its records only where the linked
     * bytes still load (docs/compiled-in.md, "Accesses the link may take away"): the linker relaxes it into a
     * {@code lea} or an immediate when the symbol is in the file, and keeps the load when it is in another
     * module. The probe's {@code lea} of the same operand names the slot through a GOTPCREL relocation the
     * linker never relaxes.
     */
    private static Site gotLoad(Decoded d) {
        Instruction insn = d.instruction();
        List<String> texts = d.text().memoryOperands();
        if (!(insn.mnemonic().equals("mov") || insn.mnemonic().startsWith("jmp")) || texts.size() != 1 || insn.accesses().size() != 1
                || !texts.getFirst().toLowerCase(Locale.ROOT).contains("@gotpcrel")) {
            return null;
        }
        MemoryAccess a = insn.accesses().getFirst();
        if (!a.read() || a.write() || !a.operand().isRipRelative()) {
            return null;
        }
        return new Site(texts.getFirst(), false, SiteFormat.LOAD, a.operand().sizeBytes(), 0, SiteFormat.FLAG_KEPT_WHERE_LINKED,
                0, 0, 0, 0, 0);
    }

    /**
     * The sites of one instruction, in the order its accesses come; null for a conditional rep string
     * instruction (repe/repne cmps and scas), which this version leaves alone.
     */
    static List<Site> sites(Decoded d, boolean stack) throws Unsupported {
        Instruction insn = d.instruction();
        boolean repString = insn.rep() && isString(insn.mnemonic());
        if (repString && (insn.mnemonic().startsWith("cmps") || insn.mnemonic().startsWith("scas"))) {
            return null;
        }
        List<MemoryAccess> accesses = insn.accesses();
        int explicit = 0;
        for (MemoryAccess a : accesses) {
            if (a.operand().visibility() == Operand.Visibility.EXPLICIT) {
                explicit++;
            }
        }
        String explicitText = null;
        if (explicit > 0) {
            List<String> texts = d.text().memoryOperands();
            if (explicit != 1 || texts.size() != 1) {
                throw new Unsupported("'" + d.text().text() + "' (" + explicit + " memory operands, "
                        + texts.size() + " in the text)");
            }
            explicitText = texts.getFirst();
        }
        var result = new ArrayList<Site>(accesses.size() + 1);
        int elementSize = 0;
        for (int i = 0; i < accesses.size(); i++) {
            MemoryAccess a = accesses.get(i);
            MemoryOperand m = a.operand();
            if (!stack && m.isStack()) {
                continue;
            }
            if (m.sizeBytes() <= 0 || m.sizeBytes() > 255) {
                throw new Unsupported("'" + d.text().text() + "' (an access of " + m.sizeBytes() + " bytes)");
            }
            if (!m.index().isNone() && m.index().widthBits() > 64) {
                throw new Unsupported("'" + d.text().text() + "' (vector-indexed addressing)");
            }
            if (m.segment().isSegmentWithBase() && !m.segment().name().equals("fs")) {
                throw new Unsupported("'" + d.text().text() + "' (%" + m.segment().name() + " segment)");
            }
            boolean explicitOperand = m.visibility() == Operand.Visibility.EXPLICIT;
            Site site;
            int linked = 0;
            if (explicitOperand) {
                site = explicitSite(explicitText, d);
                if (site == null && a.read() && isGotCall(insn, explicitText)) {
                    site = new Site(explicitText, false, 0, 0, 0, 0, 0, 0, 0, 0, 0);
                    linked = SiteFormat.FLAG_KEPT_WHERE_LINKED;
                }
                if (site == null) {
                    continue;
                }
            } else {
                site = new Site(implicitAddress(m, d), false, 0, 0, 0, 0, 0, 0, 0, 0, 0);
            }
            int kind = repString ? (m.base().name().equals("rsi") ? SiteFormat.REP_SOURCE : SiteFormat.REP_DESTINATION)
                    : a.read() && a.write() ? SiteFormat.MODIFY : a.write() ? SiteFormat.STORE : SiteFormat.LOAD;
            int flags = (!explicitOperand && m.isStack() ? SiteFormat.FLAG_IMPLICIT_STACK : 0) | linked;
            result.add(new Site(site.address(), site.fs(), kind, m.sizeBytes(), i, flags, 0, 0, 0, 0, 0));
            elementSize = m.sizeBytes();
        }
        if (repString && !result.isEmpty()) {
            result.add(new Site("(%rcx)", false, SiteFormat.REP_COUNT, elementSize, accesses.size(), 0, 0, 0, 0, 0, 0));
        }
        return result;
    }

    /**
     * Whether {@code insn} is a {@code -fno-plt} call {@code call *f@GOTPCREL(%rip)}: it reads the slot where the
     * linker keeps it, and where it relaxes it into a direct {@code addr32 call f} it only pushes, so its read
     * is a site of flag 0x40 like a {@code @GOTPCREL} load's (the push is the reference the selection counts).
     */
    private static boolean isGotCall(Instruction insn, String operand) {
        String lower = operand.toLowerCase(Locale.ROOT);
        return insn.mnemonic().startsWith("call") && lower.contains("@gotpcrel") && !lower.startsWith("%");
    }

    private static boolean isString(String mnemonic) {
        return mnemonic.startsWith("movs") || mnemonic.startsWith("stos") || mnemonic.startsWith("lods")
                || mnemonic.startsWith("cmps") || mnemonic.startsWith("scas") || mnemonic.startsWith("ins")
                || mnemonic.startsWith("outs");
    }

    /**
     * The lea operand for an explicit memory operand, from its text: the segment prefix taken off (%fs noted),
     * 152 added to an %rsp-based displacement; null when the operand is a GOT or TLS-descriptor slot (not the
     * program's data; the selection does not count a GOT load, and lea cannot carry the TLS relocations).
     */
    static Site explicitSite(String operand, Decoded d) throws Unsupported {
        String text = operand;
        boolean fs = false;
        int colon = text.indexOf(':');
        if (text.startsWith("%") && colon > 0 && (text.indexOf('(') < 0 || colon < text.indexOf('('))) {
            String segment = text.substring(1, colon).toLowerCase(Locale.ROOT);
            switch (segment) {
                case "fs" -> fs = true;
                case "ds", "es", "ss", "cs" -> {
                }
                default -> throw new Unsupported("'" + d.text().text() + "' (%" + segment + " segment)");
            }
            text = text.substring(colon + 1).strip();
        }
        String lower = text.toLowerCase(Locale.ROOT);
        if (lower.contains("@gottpoff") || lower.contains("@tlsgd") || lower.contains("@tlsld")
                || lower.contains("@gotntpoff") || lower.contains("@indntpoff") || lower.contains("@tlsdesc")
                || lower.contains("@tlscall") || lower.contains("@gotpcrel")) {
            return null;
        }
        int open = text.lastIndexOf('(');
        if (open >= 0) {
            int close = text.indexOf(')', open);
            if (close < 0) {
                throw new Unsupported("'" + d.text().text() + "' (unreadable memory operand)");
            }
            String base = text.substring(open + 1, close).split(",", -1)[0].strip().toLowerCase(Locale.ROOT);
            if (base.equals("%rsp")) {
                String displacement = text.substring(0, open).strip();
                text = (displacement.isEmpty() ? "" + RSP_OFFSET : RSP_OFFSET + "+" + displacement) + text.substring(open);
            } else if (base.equals("%esp") || base.equals("%sp")) {
                throw new Unsupported("'" + d.text().text() + "' (32-bit stack addressing)");
            }
        }
        return new Site(text, fs, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    }

    /** The lea operand for an implicit operand (push/pop/call/ret slots, string pointers, leave's [rbp]). */
    private static String implicitAddress(MemoryOperand m, Decoded d) throws Unsupported {
        long displacement = m.displacement() + (m.base().isStackPointer() ? RSP_OFFSET : 0);
        StringBuilder b = new StringBuilder();
        b.append(displacement == 0 ? "" : Long.toString(displacement)).append('(');
        b.append(register(m.base(), d));
        if (!m.index().isNone()) {
            b.append(',').append(register(m.index(), d)).append(',').append(Math.max(1, m.scale()));
        }
        return b.append(')').toString();
    }

    private static String register(Register r, Decoded d) throws Unsupported {
        if (r.isNone() || r.widthBits() != 64) {
            throw new Unsupported("'" + d.text().text() + "' (implicit operand addressed by " + r + ")");
        }
        return "%" + r.name();
    }
}
