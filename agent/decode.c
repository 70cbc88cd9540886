/*
 * memtrace agent, decoding and the code cache: how each faulting instruction runs (RUN_OOL, RUN_JMP,
 * RUN_CALL or RUN_TRAP, see fault.c), decided once per instruction address with Zydis 4.0, which is
 * dlopen'ed at start (its ABI is mirrored in zydis_abi.h, so neither building nor running needs its
 * headers). Out-of-line copies live in 1 MiB executable chunks mapped below the code they copy, so that a
 * RIP-relative displacement, rewritten for the copy's place, still reaches its target. Lookups take no
 * lock (an entry's key is stored last); adding takes cc.lock. An instruction with one ModRM memory
 * operand also gets a redirected copy (build_redirect) whose operand is [scratch], for moved memory.
 *
 * What it gets wrong: the cache holds 48 Ki instructions and 64 chunks; past that, and for code whose
 * bytes changed since it was decoded, instructions take the trap (slower, still exact). Code unmapped and
 * replaced at the same address keeps its old entry until the bytes differ. The redirected copy trusts
 * Zydis's operand list to name every general register the instruction uses (implicit ones included);
 * instructions without a ModRM memory operand are never redirected. String instructions (movs..scas) and
 * push/pop of a 64-bit memory operand are only marked here for emulation by the fault handler; a 16-bit
 * push/pop, a repne movs/stos/lods and FS/GS-relative ones are not.
 */
#include "agent.h"
#include "zydis_abi.h"

/* ------------------------------------------------------------------------------------------------ */
/* Decoding the faulting instruction: Zydis 4.0, loaded at run time                                 */

static struct {
    int ready;
    struct zy_decoder decoder;
    uint32_t (*decode)(const struct zy_decoder *, const void *, size_t, struct zy_insn *, struct zy_operand *);
    struct { uintptr_t bias, start, end; } object[8]; /* what dlopen brought in for it: never traced */
    int nobjects;
} zy;

/* Called for every loaded object; those past the count taken before the dlopen are what it brought in. */
static int note_new_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    int *index = arg;
    if ((*index)-- > 0 || zy.nobjects == (int)(sizeof zy.object / sizeof zy.object[0])) return 0;
    uintptr_t start = UINTPTR_MAX, end = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD) continue;
        if (info->dlpi_addr + ph->p_vaddr < start) start = info->dlpi_addr + ph->p_vaddr;
        if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > end) end = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
    }
    zy.object[zy.nobjects].bias = info->dlpi_addr;
    zy.object[zy.nobjects].start = start;
    zy.object[zy.nobjects].end = end;
    zy.nobjects++;
    return 0;
}
int is_decoder_object(uintptr_t bias)
{
    for (int i = 0; i < zy.nobjects; i++)
        if (bias == zy.object[i].bias) return 1;
    return 0;
}

int in_decoder_object(uintptr_t addr)
{
    for (int i = 0; i < zy.nobjects; i++)
        if (addr >= zy.object[i].start && addr < zy.object[i].end) return 1;
    return 0;
}

static int count_object(struct dl_phdr_info *info, size_t size, void *arg) { ++*(int *)arg; return 0; }

/* Zydis calls memset and memcpy: those bind to our wrappers, which serve calls from inside our handlers */
/* with the agent's own loops.                                                                          */
static void zydis_load(void)
{
    int before = 0;
    dl_iterate_phdr(count_object, &before);
    void *h = real.dlopen("libZydis.so.4.0", RTLD_NOW | RTLD_LOCAL);
    if (!h) return;
    dl_iterate_phdr(note_new_object, &before);
    typedef uint32_t (*init_fn)(struct zy_decoder *, int, int);
    uint64_t (*version)(void) = (uint64_t (*)(void))dlsym(h, "ZydisGetVersion");
    init_fn init = (init_fn)dlsym(h, "ZydisDecoderInit");
    zy.decode = (typeof(zy.decode))dlsym(h, "ZydisDecoderDecodeFull");
    if (!version || !init || !zy.decode || version() >> 32 != ZY_VERSION_4_0) return;
    if (ZY_FAILED(init(&zy.decoder, ZY_MODE_LONG_64, ZY_STACK_WIDTH_64))) return;
    zy.ready = 1;
}

/* ------------------------------------------------------------------------------------------------ */
/* The code cache: how each faulting instruction runs, and out-of-line copies of those that can      */


#define CACHE_BITS 16
#define SLOT_SIZE 32             /* the instruction (<= 15 bytes), jmp *0(%rip) (6) and the stub's address (8) */
#define RSLOT_SIZE 48            /* ...and for a redirected copy, the reload of its scratch register (9) too */
#define CHUNK_SIZE (1UL << 20)
#define MAX_CHUNKS 64

static struct {
    spinlock lock;               /* adding entries and slots; lookups take no lock */
    struct insn *table;
    int used;
    struct { unsigned char *base; size_t used; } chunk[MAX_CHUNKS];
    int nchunks;
} cc;

void mt_ool_return(void) __attribute__((visibility("hidden")));

/* REG_* for Zydis's RAX..R15 */
static const int8_t gpr_greg[16] = {REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP, REG_RSI, REG_RDI,
                                    REG_R8, REG_R9, REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15};

static unsigned cache_hash(uintptr_t ip) { return (unsigned)((ip * 0x9E3779B97F4A7C15ULL) >> (64 - CACHE_BITS)); }

static struct insn *cache_find(uintptr_t ip)
{
    for (unsigned i = cache_hash(ip);; i = (i + 1) & ((1u << CACHE_BITS) - 1)) {
        uintptr_t k = __atomic_load_n(&cc.table[i].ip, __ATOMIC_ACQUIRE);
        if (k == ip) return &cc.table[i];
        if (!k) return NULL;
    }
}

/* A chunk of code cache near `ip` (below it: above an executable lies its heap, which must stay free   */
/* to grow), so that RIP-relative operands stay within reach of a 32-bit displacement.                 */
static unsigned char *map_chunk_near(uintptr_t ip)
{
    for (uintptr_t d = CHUNK_SIZE; d <= (1UL << 30); d *= 2) {
        uintptr_t hint = (ip & ~(CHUNK_SIZE - 1)) - d;
        if (hint > ip || hint < 0x100000) return NULL;
        long p = mt_sys6(SYS_mmap, (long)hint, CHUNK_SIZE, PROT_READ | PROT_WRITE | PROT_EXEC,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        if ((uintptr_t)p == hint) { mt_own_add((void *)p, CHUNK_SIZE); return (unsigned char *)p; }
        if (!mt_failed(p)) mt_sys2(SYS_munmap, p, CHUNK_SIZE); /* a kernel that took the hint loosely */
    }
    return NULL;
}

static int within_rel32(uintptr_t from, uintptr_t to)
{
    int64_t d = (int64_t)(to - from);
    return d == (int32_t)d;
}

/* A free slot whose copy of a `len`-byte instruction can still reach `target` (when `rel`). Cache lock. */
static unsigned char *slot_alloc(uintptr_t ip, int rel, uintptr_t target, int len, size_t size)
{
    for (int i = cc.nchunks - 1; i >= 0; i--) {
        unsigned char *s = cc.chunk[i].base + cc.chunk[i].used;
        if (cc.chunk[i].used + size <= CHUNK_SIZE && (!rel || within_rel32((uintptr_t)s + len, target))) {
            cc.chunk[i].used += size;
            return s;
        }
    }
    if (cc.nchunks == MAX_CHUNKS) return NULL;
    unsigned char *base = map_chunk_near(ip);
    if (!base) return NULL;
    cc.chunk[cc.nchunks].base = base;
    cc.chunk[cc.nchunks].used = 0;
    cc.nchunks++;
    if (rel && !within_rel32((uintptr_t)base + len, target)) return NULL;
    cc.chunk[cc.nchunks - 1].used = size;
    return base;
}

/* The copy: the instruction (a RIP-relative displacement rewritten for the new place), then a jump to  */
/* the common return stub. Cache lock held.                                                            */
static unsigned char *build_slot(uintptr_t ip, const struct zy_insn *in, int rel)
{
    uintptr_t target = ip + in->length + (uintptr_t)in->disp;
    if (rel && (in->disp_size != 32 || in->disp_offset + 4 > in->length)) return NULL;
    unsigned char *s = slot_alloc(ip, rel, target, in->length, SLOT_SIZE);
    if (!s) return NULL;
    mt_memcpy(s, (const void *)ip, in->length);
    if (rel) {
        int32_t d = (int32_t)(target - ((uintptr_t)s + in->length));
        mt_memcpy(s + in->disp_offset, &d, 4);
    }
    static const unsigned char jmp_via_next_quad[6] = {0xff, 0x25, 0, 0, 0, 0};
    mt_memcpy(s + in->length, jmp_via_next_quad, 6);
    uint64_t stub = (uintptr_t)mt_ool_return;
    mt_memcpy(s + in->length + 6, &stub, 8);
    return s;
}

static int greg_of(uint32_t zreg)
{
    if (zreg == ZY_REG_NONE) return -1;
    return zreg >= ZY_REG_RAX && zreg <= ZY_REG_R15 ? gpr_greg[zreg - ZY_REG_RAX] : -2;
}

/* The general register (encoding number 0-15) a Zydis register is part of, or -1. */
static int gpr_number(uint32_t r)
{
    if (r >= ZY_REG_AL && r < ZY_REG_AH) return (int)(r - ZY_REG_AL);
    if (r >= ZY_REG_AH && r < ZY_REG_SPL) return (int)(r - ZY_REG_AH);
    if (r >= ZY_REG_SPL && r < ZY_REG_AX) return (int)(r - ZY_REG_SPL) + 4;
    if (r >= ZY_REG_AX && r < ZY_REG_EAX) return (int)(r - ZY_REG_AX);
    if (r >= ZY_REG_EAX && r < ZY_REG_RAX) return (int)(r - ZY_REG_EAX);
    if (r >= ZY_REG_RAX && r <= ZY_REG_R15) return (int)(r - ZY_REG_RAX);
    return -1;
}

static uintptr_t thread_pointer(void)
{
    uintptr_t tp;
    __asm__("mov %%fs:0, %0" : "=r"(tp));
    return tp;
}

/* A copy of an instruction whose one memory operand (ModRM-encoded, 64-bit addressing, no FS/GS, no   */
/* VSIB) is rewritten to [scratch], scratch being a general register the instruction does not use:     */
/* ModRM becomes mod=00 rm=scratch, SIB and displacement are dropped, REX/VEX/EVEX get X=0 and B=the     */
/* scratch's high bit. After it, `mov %fs:mt_scratch_save, scratch` gives the program its register back, */
/* then the jump to mt_ool_return. The fault handler sets scratch to the operand's alias address. NULL  */
/* (the instruction runs with its page opened instead) when any of that does not hold. Cache lock held. */
static unsigned char *build_redirect(uintptr_t ip, const struct zy_insn *in, const struct zy_operand *op, struct insn *e)
{
    const unsigned char *b = (const unsigned char *)ip;
    const struct zy_operand *m = NULL;
    unsigned used = 1u << 4 | 1u << 5 | 1u << 12 | 1u << 13; /* rsp, and what ModRM/SIB cannot name alone */
    for (int i = 0; i < in->operand_count && i < ZY_MAX_OPERANDS; i++) {
        if (op[i].type == ZY_OPERAND_MEMORY) {
            if (m) return NULL; /* two memory operands (push/pop [mem], movs...) */
            m = &op[i];
            int bn = gpr_number(m->mem.base), xn = gpr_number(m->mem.index);
            if (bn >= 0) used |= 1u << bn;
            if (xn >= 0) used |= 1u << xn;
        } else if (op[i].type == ZY_OPERAND_REGISTER) {
            int n = gpr_number(op[i].reg.value);
            if (n >= 0) used |= 1u << n;
        }
    }
    if (!m || m->mem.type != ZY_MEMOP_MEM || m->visibility == ZY_VISIBLE_HIDDEN || !(in->attributes & ZY_ATTRIB_HAS_MODRM) ||
        (b[in->modrm_offset] >> 6) == 3 || in->address_width != 64 || m->mem.segment == ZY_REG_FS ||
        m->mem.segment == ZY_REG_GS || m->size == 0 || m->size > 512 * 8 || m->size % 8)
        return NULL;
    int bn = m->mem.base == ZY_REG_RIP ? -1 : m->mem.base == ZY_REG_NONE ? -1 : greg_of(m->mem.base);
    int xn = greg_of(m->mem.index);
    if (bn == -2 || xn == -2 || (m->mem.base != ZY_REG_NONE && m->mem.base != ZY_REG_RIP && bn < 0)) return NULL;
    int has_rex = (in->attributes & ZY_ATTRIB_HAS_REX) != 0;
    int high_ok = (in->encoding == ZY_ENC_LEGACY && has_rex) || (in->encoding == ZY_ENC_VEX && in->vex_size == 3) ||
                  in->encoding == ZY_ENC_EVEX;
    if (in->encoding != ZY_ENC_LEGACY && in->encoding != ZY_ENC_VEX && in->encoding != ZY_ENC_EVEX) return NULL;
    int scratch = -1;
    static const int8_t order[] = {0, 1, 2, 3, 6, 7, 8, 9, 10, 11, 14, 15};
    for (unsigned i = 0; i < sizeof order && scratch < 0; i++)
        if (!(used & (1u << order[i])) && (order[i] < 8 || high_ok)) scratch = order[i];
    if (scratch < 0) return NULL;
    int has_sib = (in->attributes & ZY_ATTRIB_HAS_SIB) != 0;
    int after = in->modrm_offset + 1 + has_sib + in->disp_size / 8;
    if (after > in->length || (in->disp_size && in->disp_offset != in->modrm_offset + 1 + has_sib)) return NULL;
    unsigned char c[15];
    int n = 0;
    mt_memcpy(c, b, in->modrm_offset);
    n = in->modrm_offset;
    int hi = scratch >> 3;
    if (in->encoding == ZY_ENC_LEGACY && has_rex) c[in->rex_offset] = (unsigned char)((c[in->rex_offset] & ~3) | hi);
    if (in->encoding == ZY_ENC_VEX && in->vex_size == 3)
        c[in->vex_offset + 1] = (unsigned char)((c[in->vex_offset + 1] | 0x40 | 0x20) & ~(hi << 5));
    if (in->encoding == ZY_ENC_EVEX)
        c[in->evex_offset + 1] = (unsigned char)((c[in->evex_offset + 1] | 0x40 | 0x20) & ~(hi << 5));
    c[n++] = (unsigned char)((b[in->modrm_offset] & 0x38) | (scratch & 7));
    mt_memcpy(c + n, b + after, (size_t)(in->length - after));
    n += in->length - after;

    unsigned char *s = slot_alloc(ip, 0, 0, n, RSLOT_SIZE);
    if (!s) return NULL;
    mt_memcpy(s, c, (size_t)n);
    int64_t off = (int64_t)((uintptr_t)&mt_scratch_save - thread_pointer());
    if (off != (int32_t)off) return NULL;
    unsigned char reload[9] = {0x64, (unsigned char)(0x48 | hi << 2), 0x8b, (unsigned char)(0x04 | (scratch & 7) << 3), 0x25};
    int32_t off32 = (int32_t)off;
    mt_memcpy(reload + 5, &off32, 4);
    mt_memcpy(s + n, reload, 9);
    static const unsigned char jmp_via_next_quad[6] = {0xff, 0x25, 0, 0, 0, 0};
    mt_memcpy(s + n + 9, jmp_via_next_quad, 6);
    uint64_t stub = (uintptr_t)mt_ool_return;
    mt_memcpy(s + n + 15, &stub, 8);

    e->scratch = (int8_t)gpr_greg[scratch];
    e->base = (int8_t)bn;
    e->index = (int8_t)xn;
    e->scale = m->mem.scale;
    e->disp = m->mem.disp;
    if (m->mem.base == ZY_REG_RIP) e->disp += (int64_t)(ip + in->length);
    e->opsize = (uint16_t)(m->size / 8);
    e->access = (uint8_t)(((m->actions & (ZY_ACTION_READ | ZY_ACTION_CONDREAD)) ? PROT_READ : 0) |
                          ((m->actions & (ZY_ACTION_WRITE | ZY_ACTION_CONDWRITE)) ? PROT_WRITE : 0));
    return s;
}

/* movs, stos, lods, cmps and scas (one-byte opcodes A4-AF, rep/repe/repne or not, 64-bit addressing,  */
/* no FS/GS): emulated element by element on moved memory by the fault handler, which records each      */
/* element as the trap flag route would. A repne on movs/stos/lods is left to the CPU.                  */
static int string_kind(const struct zy_insn *in, struct insn *e)
{
    if (in->encoding != ZY_ENC_LEGACY || in->opcode_map != ZY_OPCODE_MAP_DEFAULT || in->address_width != 64 ||
        (in->attributes & (ZY_ATTRIB_HAS_SEGMENT_FS | ZY_ATTRIB_HAS_SEGMENT_GS)))
        return STR_NONE;
    int kind = in->opcode == 0xa4 || in->opcode == 0xa5 ? STR_MOVS
             : in->opcode == 0xa6 || in->opcode == 0xa7 ? STR_CMPS
             : in->opcode == 0xaa || in->opcode == 0xab ? STR_STOS
             : in->opcode == 0xac || in->opcode == 0xad ? STR_LODS
             : in->opcode == 0xae || in->opcode == 0xaf ? STR_SCAS : STR_NONE;
    int compares = kind == STR_CMPS || kind == STR_SCAS;
    e->rep = (in->attributes & (ZY_ATTRIB_HAS_REP | ZY_ATTRIB_HAS_REPE)) ? REP_E
           : (in->attributes & ZY_ATTRIB_HAS_REPNE) ? REP_NE : REP_NONE;
    if (e->rep == REP_NE && !compares) return STR_NONE;
    e->elem = (uint8_t)((in->opcode & 1) ? in->operand_width / 8 : 1);
    return e->elem == 1 || e->elem == 2 || e->elem == 4 || e->elem == 8 ? kind : STR_NONE;
}

/* The address expression of memory operand m, for an instruction the handler emulates: disp (RIP made  */
/* absolute), base and index as general-register numbers (-1: none), scale. 0 when a register of it is   */
/* not a general register the signal context holds.                                                    */
static int take_operand(uintptr_t ip, const struct zy_insn *in, const struct zy_operand *m, struct insn *e)
{
    e->disp = m->mem.disp;
    if (m->mem.base == ZY_REG_RIP) {
        e->base = -1;
        e->disp += (int64_t)(ip + in->length);
    } else {
        e->base = (int8_t)greg_of(m->mem.base);
    }
    e->index = (int8_t)greg_of(m->mem.index);
    e->scale = m->mem.scale;
    return e->base != -2 && e->index != -2;
}

/* push/pop of a 64-bit ModRM memory operand (FF /6, 8F /0; 64-bit addressing, no FS/GS): two memory   */
/* operands, so no redirected copy; the fault handler emulates it on moved memory. The operand's address */
/* goes to base..disp; a pop based on rsp names rsp as the pop left it (fault.c adds the 8).             */
static int stack_kind(uintptr_t ip, const struct zy_insn *in, const struct zy_operand *op, struct insn *e)
{
    const struct zy_operand *m = &op[0];
    if ((in->mnemonic != ZY_MNEMONIC_PUSH && in->mnemonic != ZY_MNEMONIC_POP) || in->encoding != ZY_ENC_LEGACY ||
        in->address_width != 64 || m->type != ZY_OPERAND_MEMORY || m->mem.type != ZY_MEMOP_MEM || m->size != 64 ||
        m->mem.segment == ZY_REG_FS || m->mem.segment == ZY_REG_GS || m->mem.base == ZY_REG_EIP)
        return STK_NONE;
    e->opsize = 8;
    if (!take_operand(ip, in, m, e)) return STK_NONE;
    return in->mnemonic == ZY_MNEMONIC_PUSH ? STK_PUSH : STK_POP;
}

/* The memory operand of the instruction at ip that a fault at addr hit (memtrace run --check's report of a  */
/* fault no check foresaw): its address, bytes and whether it writes. A fault carrying no address (a general */
/* protection fault: a non-canonical address) takes the first explicit memory operand. 0 when the          */
/* instruction cannot be decoded or has no memory operand the signal context can compute.                  */
int decode_fault_operand(uintptr_t ip, const greg_t *gr, uintptr_t addr, uintptr_t *ea, size_t *size, int *write)
{
    struct operand_origin o;
    if (!decode_operand_origin(ip, gr, addr, &o)) return 0;
    *ea = o.ea;
    *size = o.size;
    *write = o.write;
    return 1;
}

/* run --check's globals (check_globals.c): the operand decode_fault_operand finds, and where its address came */
/* from: the base register's value, the index register's when unscaled, and the displacement when it names  */
/* an address itself (RIP-relative, or absolute with no base). Returns 0 when not decodable.                */
int decode_operand_origin(uintptr_t ip, const greg_t *gr, uintptr_t addr, struct operand_origin *o)
{
    if (!zy.ready) return 0;
    struct zy_insn in;
    struct zy_operand op[ZY_MAX_OPERANDS];
    if (ZY_FAILED(zy.decode(&zy.decoder, (const void *)ip, 15, &in, op))) return 0;
    int found = 0;
    for (int i = 0; i < in.operand_count && i < ZY_MAX_OPERANDS; i++) {
        const struct zy_operand *m = &op[i];
        if (m->type != ZY_OPERAND_MEMORY || m->mem.type != ZY_MEMOP_MEM || m->mem.segment == ZY_REG_FS ||
            m->mem.segment == ZY_REG_GS)
            continue;
        int rip = m->mem.base == ZY_REG_RIP;
        int base = rip || m->mem.base == ZY_REG_NONE ? -1 : greg_of(m->mem.base), index = greg_of(m->mem.index);
        if (base == -2 || index == -2) continue;
        uintptr_t a = (uintptr_t)m->mem.disp + (rip ? ip + in.length : 0);
        if (base >= 0) a += (uintptr_t)gr[base];
        if (index >= 0) a += (uintptr_t)gr[index] * m->mem.scale;
        size_t n = m->size >= 8 ? m->size / 8 : 1;
        int here = addr >= a && addr - a < n;
        if (!here && found) continue;
        o->ea = a;
        o->size = n;
        o->write = (m->actions & (ZY_ACTION_WRITE | ZY_ACTION_CONDWRITE)) != 0;
        o->nfrom = 0;
        if (base >= 0) o->from[o->nfrom++] = (uintptr_t)gr[base];
        if (index >= 0 && m->mem.scale <= 1) o->from[o->nfrom++] = (uintptr_t)gr[index];
        o->nregs = (base >= 0) + (index >= 0);
        if (rip) o->from[o->nfrom++] = (uintptr_t)m->mem.disp + ip + in.length;
        else if (base < 0) o->from[o->nfrom++] = (uintptr_t)m->mem.disp;
        if (here) return 1;
        found = 1;
    }
    return found;
}

/* The address a redirected instruction's memory operand names in the program's view. */
uintptr_t operand_address(const struct insn *e, const greg_t *gr)
{
    uintptr_t ea = (uintptr_t)e->disp;
    if (e->base >= 0) ea += (uintptr_t)gr[e->base];
    if (e->index >= 0) ea += (uintptr_t)gr[e->index] * e->scale;
    return ea;
}


/* jmp/call through a 64-bit memory operand (a PLT stub reading the GOT): emulated, if its address is  */
/* computable from the general registers.                                                             */
static int branch_through_memory(uintptr_t ip, const struct zy_insn *in, const struct zy_operand *op, struct insn *e)
{
    const struct zy_operand *m = &op[0];
    if ((in->mnemonic != ZY_MNEMONIC_JMP && in->mnemonic != ZY_MNEMONIC_CALL) || in->branch_type != ZY_BRANCH_NEAR ||
        m->type != ZY_OPERAND_MEMORY || m->mem.type != ZY_MEMOP_MEM || m->size != 64 ||
        m->mem.segment == ZY_REG_FS || m->mem.segment == ZY_REG_GS)
        return RUN_TRAP;
    if (!take_operand(ip, in, m, e)) return RUN_TRAP;
    return in->mnemonic == ZY_MNEMONIC_JMP ? RUN_JMP : RUN_CALL;
}

/* How the instruction runs. Out of line unless it reads RIP other than through a RIP-relative operand  */
/* (branches, calls, system instructions), repeats (rep: one record per iteration, as the CPU faults),  */
/* or can raise #DE (the program's SIGFPE handler would see the copy's address).                        */
static int classify(uintptr_t ip, const struct zy_insn *in, const struct zy_operand *op, struct insn *e, int *rel)
{
    switch (in->category) {
    case ZY_CAT_CALL: case ZY_CAT_COND_BR: case ZY_CAT_INTERRUPT: case ZY_CAT_IO: case ZY_CAT_IOSTRINGOP:
    case ZY_CAT_RET: case ZY_CAT_SEGOP: case ZY_CAT_SGX: case ZY_CAT_SYSCALL: case ZY_CAT_SYSRET:
    case ZY_CAT_SYSTEM: case ZY_CAT_UINTR: case ZY_CAT_UNCOND_BR:
        return branch_through_memory(ip, in, op, e);
    }
    if ((in->attributes & ZY_ATTRIB_ANY_REP) || in->mnemonic == ZY_MNEMONIC_DIV || in->mnemonic == ZY_MNEMONIC_IDIV)
        return RUN_TRAP;
    *rel = 0;
    for (int i = 0; i < in->operand_count && i < ZY_MAX_OPERANDS; i++) {
        if (op[i].type == ZY_OPERAND_IMMEDIATE && op[i].imm.is_relative) return RUN_TRAP;
        if (op[i].type == ZY_OPERAND_MEMORY && op[i].mem.base == ZY_REG_EIP) return RUN_TRAP;
        if (op[i].type == ZY_OPERAND_MEMORY && op[i].mem.base == ZY_REG_RIP) *rel = 1;
    }
    return RUN_OOL;
}

/* Decodes the instruction at ip and enters it in the cache; NULL when the cache is full. */
static struct insn *cache_add(uintptr_t ip)
{
    struct zy_insn in;
    struct zy_operand op[ZY_MAX_OPERANDS];
    int ok = !ZY_FAILED(zy.decode(&zy.decoder, (const void *)ip, 15, &in, op)); /* reads no further than the insn */
    spin_lock(&cc.lock);
    struct insn *e = cache_find(ip);
    if (e || cc.used >= 3 << (CACHE_BITS - 2)) {
        spin_unlock(&cc.lock);
        return e;
    }
    unsigned i = cache_hash(ip);
    while (cc.table[i].ip) i = (i + 1) & ((1u << CACHE_BITS) - 1);
    e = &cc.table[i];
    e->how = RUN_TRAP;
    e->len = 0;
    e->rslot = NULL;
    e->string = STR_NONE;
    e->stack = STK_NONE;
    if (ok) {
        int rel = 0;
        e->len = in.length;
        mt_memcpy(e->bytes, (const void *)ip, in.length);
        e->how = (uint8_t)classify(ip, &in, op, e, &rel);
        if (e->how == RUN_OOL && !(e->slot = build_slot(ip, &in, rel))) e->how = RUN_TRAP;
        /* div/idiv take the trap on pages that are opened, but can be redirected: a #DE of the copy is */
        /* shown to the program at its own instruction, with its own registers (fault.c, end_step).     */
        int divides = in.mnemonic == ZY_MNEMONIC_DIV || in.mnemonic == ZY_MNEMONIC_IDIV;
        e->rslot = (e->how == RUN_OOL || divides) && g.aliases ? build_redirect(ip, &in, op, e) : NULL;
        e->string = g.aliases ? string_kind(&in, e) : STR_NONE;
        e->stack = g.aliases && !e->rslot ? (uint8_t)stack_kind(ip, &in, op, e) : STK_NONE;
    }
    cc.used++;
    __atomic_store_n(&e->ip, ip, __ATOMIC_RELEASE);
    spin_unlock(&cc.lock);
    return e;
}

/* The cache entry for the instruction at ip, or NULL: take the trap. */
struct insn *cache_lookup(uintptr_t ip)
{
    if (!zy.ready) return NULL;
    struct insn *e = cache_find(ip);
    if (!e) e = cache_add(ip);
    if (!e) return NULL;
    for (int i = 0; i < e->len; i++)
        if (e->bytes[i] != ((const unsigned char *)ip)[i]) return NULL;
    return e;
}

void ool_init(void)
{
    cc.table = agent_map(sizeof(struct insn) << CACHE_BITS);
    if (!cc.table) return;
    /* dlopen's allocations come from the boot arena: the program's heap starts where it would untraced. */
    hooks_ready = 0;
    zydis_load();
    hooks_ready = 1;
}

