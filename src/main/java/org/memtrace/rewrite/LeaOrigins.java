package org.memtrace.rewrite;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.memtrace.symbols.Demangler;
import org.memtrace.symbols.DwarfLocals;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfSection;
import org.memtrace.symbols.ElfSymbol;
import org.memtrace.x86.Flow;
import org.memtrace.x86.Instruction;
import org.memtrace.x86.MemoryOperand;
import org.memtrace.x86.Operand;
import org.memtrace.x86.Register;
import org.memtrace.x86.RegisterOperand;

/**
 * Accesses of gcc -O0 code through a register whose value provably came from a {@code lea} of a known object
 * (docs/check.md, "Pointers from a lea of a global or a local"): {@code lea g(%rip),%rdx; mov %eax,(%rdx,%rax)},
 * {@code lea -0x20(%rbp),%rax; mov %rax,-8(%rbp); mov -8(%rbp),%rax; add $0x14,%rax; movl $1,(%rax)} ({@code p =
 * buf; *(p + 5) = 1}). The object is a global of the module's {@code .symtab} (an {@code STT_OBJECT} of non-zero
 * size holding the lea's target) or a DWARF variable of the function (the lea's {@code %rbp + disp} inside it),
 * and the trampoline checks that the access lies inside it, as Spindle checks an access against the object its
 * pointer came from ({@link CheckProbe}): so an overflow that lands in the next global, or in a neighbouring
 * variable, is that object's.
 *
 * <p>Followed by a forward dataflow over the function to a fixpoint ({@link OriginState}; docs/check.md, "Pointers
 * across branches, loops and calls"): copies to another register ({@code mov}), to an 8-byte frame slot or global
 * and back, {@code add}/{@code sub} of a constant (to a register or, {@code p--}, to its slot), {@code lea} of a
 * constant from it, {@code add} of a register holding no such pointer (an index: gcc -O0 computes {@code p + i}
 * as {@code add %rdx,%rax}), and gcc's {@code add %rbp,%rax} followed by a constant (a stack array of structs).
 * Paths meet by what both say. A call forgets the registers, the globals and the slots inside a variable whose
 * address the function takes; any other write to a register forgets it ({@code sub %reg}: a difference of two
 * pointers is no pointer); a store through a pointer from an object forgets that object's slots, through any
 * other pointer every slot and global. A function with an indirect jump is not read at all. An access whose
 * base and index both hold such pointers is left alone.
 *
 * <p>gcc folds a constant added to a global's address into the lea ({@code g1 + 16} is {@code lea g1+16(%rip)}),
 * so a target at an object's start that is also the end of the object before it may point past that one: such an
 * object is given the one before as slack below its start (an access there is not reported: it may be the first
 * object's). A target at which a symbol of another kind starts (a linker's {@code __stop_} marker, a label) is
 * not taken. Frame addresses are not folded at -O0 ({@code buf + 16} is {@code lea; add $16}). Only functions
 * whose unit gcc compiled without optimisation ({@link DwarfLocals.Function#unoptimised}): an optimiser biases a
 * base ({@code lea g-4(%rip)} for a loop from 1) and keeps a pointer in a register across blocks.
 */
final class LeaOrigins {
    /** The object an access's pointer came from; checked from {@code -slack} to its end. */
    sealed interface Origin permits Global, Local {
        long size();
    }

    /** A global at link-time address {@code start}, named as the check runtime names it ({@code history.0}: {@code history}). */
    record Global(String name, long start, long size, long slack) implements Origin {}

    /** A variable of the function's frame. */
    record Local(StackSlots.Slot slot) implements Origin {
        public long size() { return slot.size(); }
    }

    /** The access {@code operand} of an instruction is checked against {@code origin}. */
    record Finding(MemoryOperand operand, Origin origin) {}

    private static final long SHF_ALLOC = 0x2, SHF_TLS = 0x400;
    private static final int STT_SECTION = 3;

    private LeaOrigins() {}

    /** The findings of {@code functions}' unoptimised code in {@code elf}, by instruction address. */
    static Map<Long, Finding> of(ElfFile elf, List<DwarfLocals.Function> functions) {
        Map<Long, Finding> out = new HashMap<>();
        Globals globals = null;
        FunctionCode reader = new FunctionCode(elf);
        for (DwarfLocals.Function f : functions) {
            if (!f.unoptimised()) continue;
            List<Instruction> code = reader.of(f);
            if (code == null) continue;
            if (globals == null) globals = Globals.of(elf);
            follow(f, code, globals, out);
        }
        return named(out);
    }

    /**
     * The findings with each C++ global named as cc --check names it, gcc's ASan descriptors' name: the name as
     * declared, unqualified ({@code _ZL5cases}: {@code cases}; {@code _ZN2ns5tableE}, {@code ns::table}:
     * {@code table}). All names go through one c++filt run ({@link Demangler}); without one they stay raw.
     */
    private static Map<Long, Finding> named(Map<Long, Finding> out) {
        Set<String> names = new HashSet<>();
        for (Finding f : out.values()) if (f.origin() instanceof Global g) names.add(g.name());
        Map<String, String> demangled = names.isEmpty() ? Map.of() : Demangler.system().demangle(names);
        if (demangled.isEmpty()) return out;
        out.replaceAll((at, f) -> f.origin() instanceof Global g && demangled.containsKey(g.name())
                ? new Finding(f.operand(), new Global(declared(demangled.get(g.name())), g.start(), g.size(), g.slack())) : f);
        return out;
    }

    /** A demangled variable's own name: what follows its last {@code ::} outside brackets ({@code f(a::b)::x}: {@code x}). */
    static String declared(String demangled) {
        int depth = 0;
        for (int i = demangled.length() - 1; i > 0; i--) {
            char c = demangled.charAt(i);
            if (c == '>' || c == ')') depth++;
            else if (c == '<' || c == '(') depth--;
            else if (c == ':' && depth == 0 && demangled.charAt(i - 1) == ':') return demangled.substring(i + 1);
        }
        return demangled;
    }

    /**
     * A forward dataflow over the function's instructions to a fixpoint ({@link OriginState}: paths meet at a
     * branch target by what both say), then each access through a register holding a pointer from an object noted.
     */
    private static void follow(DwarfLocals.Function f, List<Instruction> code, Globals globals, Map<Long, Finding> out) {
        Map<Long, Integer> index = new HashMap<>();
        Set<Long> targets = new HashSet<>();
        for (int i = 0; i < code.size(); i++) {
            Instruction insn = code.get(i);
            if (insn.flow() == Flow.JUMP && insn.branchTarget().isEmpty()) return; // a jump table: any instruction may be a target
            insn.branchTarget().ifPresent(targets::add);
            index.put(insn.address(), i);
        }
        Set<Long> frameKeys = new HashSet<>(), globalKeys = new HashSet<>();
        for (Instruction insn : code)
            if (insn.mnemonic().equals("mov"))
                for (MemoryOperand m : insn.memoryOperands())
                    if (m.sizeBytes() == 8 && slot(m)) frameKeys.add(m.displacement());
                    else if (m.sizeBytes() == 8 && global(m)) globalKeys.add(m.staticAddress().getAsLong());
        List<Long> taken = taken(f, code, frameKeys);
        OriginState[] in = new OriginState[code.size()];
        in[0] = OriginState.entry(frameKeys, globalKeys);
        java.util.ArrayDeque<Integer> work = new java.util.ArrayDeque<>(List.of(0));
        while (!work.isEmpty()) {
            int i = work.poll();
            Instruction insn = code.get(i);
            OriginState s = in[i].copy();
            Instruction prev = i > 0 && !targets.contains(insn.address()) ? code.get(i - 1) : null;
            step(f, prev, insn, globals, s, taken);
            for (int next : successors(insn, i, index, code.size())) {
                OriginState merged = in[next] == null ? s : OriginState.meet(in[next], s);
                if (!merged.equals(in[next])) { in[next] = merged; work.add(next); }
            }
        }
        for (int i = 0; i < code.size(); i++) {
            if (in[i] == null) continue; // not reached from the entry by a direct branch (a landing pad)
            for (MemoryOperand m : code.get(i).memoryOperands())
                if (m.accessesMemory() && m.sizeBytes() > 0) check(code.get(i), m, in[i].regs, out);
        }
    }

    /** The instructions control may go to after {@code insn} (the {@code i}th), inside the function. */
    private static List<Integer> successors(Instruction insn, int i, Map<Long, Integer> index, int n) {
        List<Integer> next = new ArrayList<>(2);
        switch (insn.flow()) {
            case RETURN, TRAP, JUMP -> {}
            default -> { if (i + 1 < n) next.add(i + 1); }
        }
        if (insn.flow() == Flow.JUMP || insn.flow() == Flow.CONDITIONAL_JUMP) {
            Integer t = insn.branchTarget().isPresent() ? index.get(insn.branchTarget().getAsLong()) : null;
            if (t != null) next.add(t);
        }
        return next;
    }

    /**
     * The 8-byte frame slots a call may write: those the function stores or loads a pointer at and that lie in a
     * variable whose address it takes ({@code lea disp(%rbp)} inside it); every such slot when the frame's
     * address escapes otherwise ({@code %rbp} copied or added, a {@code lea} outside every variable).
     */
    private static List<Long> taken(DwarfLocals.Function f, List<Instruction> code, Set<Long> keys) {
        List<long[]> ranges = new ArrayList<>();
        boolean all = false;
        for (Instruction insn : code) {
            for (MemoryOperand m : insn.memoryOperands()) {
                if (insn.mnemonic().equals("lea") && m.base().isFramePointer() && m.base().widthBits() == 64) {
                    if (!m.index().isNone()) { all = true; continue; }
                    DwarfLocals.Local first = null;
                    for (DwarfLocals.Local l : f.locals())
                        if (l.cfaOffset() <= m.displacement() - 16 && m.displacement() - 16 < l.cfaOffset() + l.size()) {
                            ranges.add(new long[] {l.cfaOffset() + 16, l.cfaOffset() + 16 + l.size()});
                            first = l;
                        }
                    if (first == null) all = true;
                }
            }
            for (Operand o : insn.operands()) // %rbp copied or added (leave, pop and push are the frame's own)
                if (o instanceof RegisterOperand r && r.read() && r.register().isFramePointer() && r.visibility() == Operand.Visibility.EXPLICIT
                        && !insn.mnemonic().equals("push") && !(insn.operands().get(0) instanceof RegisterOperand d && d.register().isStackPointer())) all = true;
        }
        List<Long> out = new ArrayList<>();
        for (long k : keys) {
            boolean in = all;
            for (long[] r : ranges) in |= k + 8 > r[0] && k < r[1];
            if (in) out.add(k);
        }
        return out;
    }

    /** Notes {@code m} when its base, or its index of scale 1, holds a pointer from an object and the other register none. */
    private static void check(Instruction insn, MemoryOperand m, Map<Register, Origin> regs, Map<Long, Finding> out) {
        if (m.isImplicitStack() || m.segment().isSegmentWithBase() || m.base().isNone() || m.base().widthBits() != 64) return;
        if (m.base().isStackPointer() || m.base().isFramePointer() || m.isRipRelative()) return;
        if (!m.index().isNone() && m.index().widthBits() != 64) return;
        Origin o = through(m, regs);
        // an access wider than a variable cannot be inside it (a struct laid on a smaller buffer); a global's
        // .symtab size is an assembler's word, so one wider than it is left alone
        if (o != null && (m.sizeBytes() <= o.size() || o instanceof Local) && o.size() < (1L << 31)) out.put(insn.address(), new Finding(m, o));
    }

    /** The object {@code m}'s base, or its index of scale 1, holds a pointer from when the other register holds none. */
    private static Origin through(MemoryOperand m, Map<Register, Origin> regs) {
        if (m.base().isNone() || m.isRipRelative()) return null;
        Origin base = regs.get(m.base().enclosing());
        Origin index = m.index().isNone() ? null : regs.get(m.index().enclosing());
        return base != null && index == null ? base : base == null && index != null && m.scale() <= 1 ? index : null;
    }

    /**
     * What {@code insn} does to the registers and slots holding pointers from objects; {@code prev} is the
     * instruction before it when no branch comes in between (gcc's {@code add %rbp,%rax; sub $0x70,%rax} for
     * {@code &table[i].field} of a stack array of structs: the constant names the variable).
     */
    private static void step(DwarfLocals.Function f, Instruction prev, Instruction insn, Globals globals, OriginState st, List<Long> taken) {
        Map<Register, Origin> regs = st.regs;
        List<Operand> ops = insn.operands();
        String op = insn.mnemonic();
        Operand dst = ops.isEmpty() ? null : ops.get(0), src = ops.size() < 2 ? null : ops.get(1);
        Register d = dst instanceof RegisterOperand r && r.register().widthBits() == 64 ? r.register() : null;
        Origin result = null;
        boolean keepsSlots = false;
        if (op.equals("lea") && d != null && src instanceof MemoryOperand m && m.index().isNone() && !m.segment().isSegmentWithBase()) {
            if (m.isRipRelative() && m.staticAddress().isPresent()) result = globals.at(m.staticAddress().getAsLong());
            else if (m.base().isFramePointer() && m.base().widthBits() == 64) result = local(f, m.displacement() - 16);
            else if (!m.base().isNone() && m.base().widthBits() == 64 && !m.isRipRelative()) {
                // a constant added to a pointer; after add %rbp (gcc's `lea -0x70(%rax),%rdx`), the frame's variable there
                result = regs.get(m.base());
                if (result == null && prev != null && framePlus(prev, m.base())) result = local(f, m.displacement() - 16);
            }
        } else if (op.equals("mov") && d != null && src instanceof RegisterOperand s && s.register().widthBits() == 64) {
            result = regs.get(s.register());
        } else if (op.equals("mov") && d != null && src instanceof MemoryOperand m && slot(m) && m.sizeBytes() == 8) {
            result = st.frame.get(m.displacement());
        } else if (op.equals("mov") && d != null && src instanceof MemoryOperand m && global(m) && m.sizeBytes() == 8) {
            result = st.globals.get(m.staticAddress().getAsLong());
        } else if (op.equals("mov") && dst instanceof MemoryOperand m && (slot(m) || global(m)) && src instanceof RegisterOperand s) {
            OriginState.Slots slots = slot(m) ? st.frame : st.globals;
            long at = slot(m) ? m.displacement() : m.staticAddress().getAsLong();
            slots.forget(at, at + m.sizeBytes());
            Origin o = s.register().widthBits() == 64 ? regs.get(s.register()) : null;
            if (o != null && m.sizeBytes() == 8) slots.put(at, o);
            keepsSlots = true;
        } else if ((op.equals("add") || op.equals("sub")) && dst instanceof MemoryOperand m && slot(m) && m.sizeBytes() == 8
                && src instanceof org.memtrace.x86.ImmediateOperand) {
            keepsSlots = true; // p++ / p-- of a pointer kept in its slot: the same object's
        } else if ((op.equals("add") || op.equals("sub")) && d != null && src != null) {
            Origin was = regs.get(d);
            if (src instanceof org.memtrace.x86.ImmediateOperand i) {
                result = was;
                if (was == null && prev != null && framePlus(prev, d)) result = local(f, (op.equals("add") ? i.value() : -i.value()) - 16);
            } else if (op.equals("add") && src instanceof RegisterOperand s && s.register().widthBits() == 64) {
                Origin other = regs.get(s.register());
                result = was != null && other == null ? was : was == null ? other : null;
            }
        }
        if (!keepsSlots)
            for (MemoryOperand m : insn.memoryOperands()) {
                if (!m.accessesMemory() || !m.write() || m.isImplicitStack()) continue;
                Origin o = insn.rep() ? null : through(m, regs);
                if (slot(m)) st.frame.forget(m.displacement(), m.displacement() + Math.max(1, m.sizeBytes()));
                else if (global(m)) st.globals.forget(m.staticAddress().getAsLong(), m.staticAddress().getAsLong() + Math.max(1, m.sizeBytes()));
                // a store through a pointer from an object stays in it (else it is reported): only its slots change
                else if (o instanceof Local l) st.frame.forget(l.slot().cfaOffset() + 16, l.slot().cfaOffset() + 16 + l.size());
                else if (o instanceof Global g) st.globals.forget(g.start() - g.slack(), g.start() + g.size());
                else { st.frame.clobber(); st.globals.clobber(); }
            }
        for (Register w : insn.registersWritten()) regs.remove(w);
        if (result != null && d != null) regs.put(d, result);
        if (insn.flow() == Flow.CALL || insn.flow() == Flow.SYSTEM_CALL) st.called(taken);
    }

    /** Whether {@code prev} is {@code add %rbp,%d}: {@code d} then holds the frame's base plus an index. */
    private static boolean framePlus(Instruction prev, Register d) {
        List<Operand> ops = prev.operands();
        return prev.mnemonic().equals("add") && ops.size() >= 2 && ops.get(0) instanceof RegisterOperand r && r.register().equals(d)
                && ops.get(1) instanceof RegisterOperand s && s.register().isFramePointer() && s.register().widthBits() == 64;
    }

    /** Whether {@code m} is a global at a constant address, {@code sym(%rip)}. */
    private static boolean global(MemoryOperand m) {
        return m.isRipRelative() && m.staticAddress().isPresent() && !m.segment().isSegmentWithBase();
    }

    /** Whether {@code m} is a constant frame slot {@code disp(%rbp)}. */
    private static boolean slot(MemoryOperand m) {
        return m.base().isFramePointer() && m.base().widthBits() == 64 && m.index().isNone() && !m.segment().isSegmentWithBase();
    }

    /** The variable (the hull of those sharing the slot in different scopes) holding {@code at} from the CFA, or null. */
    private static Origin local(DwarfLocals.Function f, long at) {
        DwarfLocals.Local first = null;
        long beg = Long.MAX_VALUE, end = Long.MIN_VALUE;
        for (DwarfLocals.Local l : f.locals())
            if (l.cfaOffset() <= at && at < l.cfaOffset() + l.size()) {
                if (l.cfaOffset() < beg) { beg = l.cfaOffset(); first = l; }
                end = Math.max(end, l.cfaOffset() + l.size());
            }
        return first == null ? null : new Local(new StackSlots.Slot(first.name(), f.name(), first.line(), beg, end - beg));
    }

    /** The module's data objects by address, from {@code .symtab}. */
    private record Globals(List<ElfSymbol> objects, List<ElfSymbol> others) {
        static Globals of(ElfFile elf) {
            List<ElfSymbol> objects = new ArrayList<>(), others = new ArrayList<>();
            List<ElfSection> sections = elf.sections();
            for (ElfSymbol s : elf.symtab()) {
                if (!s.isDefined() || s.type() == STT_SECTION || s.type() == ElfSymbol.STT_FILE) continue;
                if (s.sectionIndex() <= 0 || s.sectionIndex() >= sections.size()) continue; // absolute, common: no address here
                long flags = sections.get(s.sectionIndex()).flags();
                if ((flags & SHF_ALLOC) == 0) continue;
                if (s.isObject() && s.size() > 0 && (flags & SHF_TLS) == 0) objects.add(s); else others.add(s);
            }
            return new Globals(objects, others);
        }

        /** The object holding {@code target}, or null when none, or more than one of different extents, or another symbol starts there. */
        Origin at(long target) {
            ElfSymbol hit = null;
            long slack = 0;
            for (ElfSymbol s : objects) {
                if (s.value() <= target && target < s.value() + s.size()) {
                    if (hit != null && (hit.value() != s.value() || hit.size() != s.size())) return null;
                    hit = s;
                } else if (s.value() + s.size() == target) {
                    slack = Math.max(slack, s.size()); // target may be that object's end, folded
                }
            }
            if (hit == null) return null;
            for (ElfSymbol s : others) if (s.value() == target) return null;
            return new Global(spelled(hit.name()), hit.value(), hit.size(), hit.value() == target ? slack : 0);
        }

        /** A static's {@code .N} suffix dropped, as the check runtime spells it (check_symglobals.c). */
        private static String spelled(String name) {
            int d = name.length();
            while (d > 0 && Character.isDigit(name.charAt(d - 1))) d--;
            return d < name.length() && d > 1 && name.charAt(d - 1) == '.' ? name.substring(0, d - 1) : name;
        }
    }
}
