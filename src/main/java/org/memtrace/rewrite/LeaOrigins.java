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
 * <p>Followed within straight-line code only, forward from the {@code lea}: copies to another register
 * ({@code mov}), to an 8-byte frame slot and back ({@code mov %rax,-8(%rbp)} ... {@code mov -8(%rbp),%rdx}),
 * {@code add}/{@code sub} of a constant and {@code add} of a register holding no such pointer (an index: gcc -O0
 * computes {@code p + i} as {@code add %rdx,%rax}). Everything is forgotten at a branch target of the function (a
 * function with an indirect jump is not read at all), after a call, a jump or a return, a register at any other
 * write to it ({@code sub %reg}: a difference of two pointers is no pointer), the slots at any memory write but
 * a constant one to another slot. An access whose base and index both hold such pointers is left alone.
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

    private static void follow(DwarfLocals.Function f, List<Instruction> code, Globals globals, Map<Long, Finding> out) {
        Set<Long> targets = new HashSet<>();
        for (Instruction insn : code) {
            if (insn.flow() == Flow.JUMP && insn.branchTarget().isEmpty()) return; // a jump table: any instruction may be a target
            insn.branchTarget().ifPresent(targets::add);
        }
        Map<Register, Origin> regs = new HashMap<>();
        Map<Long, Origin> slots = new HashMap<>(); // 8-byte frame slots disp(%rbp), by disp
        for (Instruction insn : code) {
            if (targets.contains(insn.address())) { regs.clear(); slots.clear(); }
            for (MemoryOperand m : insn.memoryOperands())
                if (m.accessesMemory() && m.sizeBytes() > 0) check(insn, m, regs, out);
            step(f, insn, globals, regs, slots);
            if (insn.flow() != Flow.SEQUENTIAL && insn.flow() != Flow.CONDITIONAL_JUMP) { regs.clear(); slots.clear(); }
        }
    }

    /** Notes {@code m} when its base, or its index of scale 1, holds a pointer from an object and the other register none. */
    private static void check(Instruction insn, MemoryOperand m, Map<Register, Origin> regs, Map<Long, Finding> out) {
        if (m.isImplicitStack() || m.segment().isSegmentWithBase() || m.base().isNone() || m.base().widthBits() != 64) return;
        if (m.base().isStackPointer() || m.base().isFramePointer() || m.isRipRelative()) return;
        if (!m.index().isNone() && m.index().widthBits() != 64) return;
        Origin base = regs.get(m.base().enclosing());
        Origin index = m.index().isNone() ? null : regs.get(m.index().enclosing());
        Origin o = base != null && index == null ? base : base == null && index != null && m.scale() <= 1 ? index : null;
        if (o != null && m.sizeBytes() <= o.size() && o.size() < (1L << 31)) out.put(insn.address(), new Finding(m, o));
    }

    /** What {@code insn} does to the registers and slots holding pointers from objects. */
    private static void step(DwarfLocals.Function f, Instruction insn, Globals globals, Map<Register, Origin> regs, Map<Long, Origin> slots) {
        List<Operand> ops = insn.operands();
        String op = insn.mnemonic();
        Operand dst = ops.isEmpty() ? null : ops.get(0), src = ops.size() < 2 ? null : ops.get(1);
        Register d = dst instanceof RegisterOperand r && r.register().widthBits() == 64 ? r.register() : null;
        Origin result = null;
        boolean keepsSlots = false;
        if (op.equals("lea") && d != null && src instanceof MemoryOperand m && m.index().isNone() && !m.segment().isSegmentWithBase()) {
            if (m.isRipRelative() && m.staticAddress().isPresent()) result = globals.at(m.staticAddress().getAsLong());
            else if (m.base().isFramePointer() && m.base().widthBits() == 64) result = local(f, m.displacement() - 16);
        } else if (op.equals("mov") && d != null && src instanceof RegisterOperand s && s.register().widthBits() == 64) {
            result = regs.get(s.register());
        } else if (op.equals("mov") && d != null && src instanceof MemoryOperand m && slot(m) && m.sizeBytes() == 8) {
            result = slots.get(m.displacement());
        } else if (op.equals("mov") && dst instanceof MemoryOperand m && slot(m) && src instanceof RegisterOperand s) {
            for (long at = m.displacement() - 7; at < m.displacement() + m.sizeBytes(); at++) slots.remove(at);
            Origin o = s.register().widthBits() == 64 ? regs.get(s.register()) : null;
            if (o != null && m.sizeBytes() == 8) slots.put(m.displacement(), o);
            keepsSlots = true;
        } else if ((op.equals("add") || op.equals("sub")) && d != null && src != null) {
            Origin was = regs.get(d);
            if (src instanceof org.memtrace.x86.ImmediateOperand) result = was;
            else if (op.equals("add") && src instanceof RegisterOperand s && s.register().widthBits() == 64) {
                Origin other = regs.get(s.register());
                result = was != null && other == null ? was : was == null ? other : null;
            }
        }
        for (Register w : insn.registersWritten()) regs.remove(w);
        if (result != null && d != null) regs.put(d, result);
        if (!keepsSlots)
            for (MemoryOperand m : insn.memoryOperands()) {
                if (!m.accessesMemory() || !m.write()) continue;
                if (slot(m)) for (long at = m.displacement() - 7; at < m.displacement() + Math.max(1, m.sizeBytes()); at++) slots.remove(at);
                else slots.clear();
            }
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
