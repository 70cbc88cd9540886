/*
 * memtrace event stream, version 1: the one interface between the agent (inside the traced process) and
 * the Java side. docs/event-stream.md describes the same layout for readers of the Java code.
 *
 * Transport: a file that both sides map MAP_SHARED (memtrace creates it, passes its path in MEMTRACE_RING).
 * It holds a header page and a ring of records. The agent appends records under a process-wide spinlock
 * and publishes each one by advancing `tail` with a release store; Java consumes records up to `tail`
 * and advances `head`. Because every record is in shared memory the moment it is published, whatever
 * the program recorded survives its crash, _exit or SIGKILL.
 *
 * A saved stream (memtrace run --save-stream) is the header page followed by the records, in order,
 * with no padding records; `tail` then holds the byte count of the records.
 *
 * Everything is little-endian. Every record starts on an 8-byte boundary with mt_rec_header, and its
 * size (header included) is a multiple of 8. A record never wraps around the end of the ring: the
 * producer fills the rest with one MT_PAD record and continues at offset 0.
 */
#ifndef MEMTRACE_STREAM_H
#define MEMTRACE_STREAM_H

#include <stdint.h>

#define MT_MAGIC 0x3143525454454d4dULL /* "MMETTRC1" as little-endian bytes */
#define MT_VERSION 1u
#define MT_HEADER_SIZE 4096u

/* The header page. Offsets are fixed: head and tail sit on their own cache lines. */
struct mt_ring_header {
    uint64_t magic;          /*   0: MT_MAGIC */
    uint32_t version;        /*   8: MT_VERSION */
    uint32_t header_size;    /*  12: MT_HEADER_SIZE; data starts here */
    uint64_t capacity;       /*  16: bytes in the data area, a power of two */
    uint64_t agent_pid;      /*  24: written by the agent when it attaches, 0 before */
    uint64_t pad0[4];
    uint64_t head;           /*  64: consumer position (bytes ever consumed); written by Java only */
    uint64_t pad1[7];
    uint64_t tail;           /* 128: producer position (bytes ever published); written by the agent only */
    uint64_t pad2[7];
    uint64_t lost;           /* 192: records dropped because nobody consumed them (consumer gone) */
    uint64_t done;           /* 200: 1 once the agent wrote its final record (exit, exec or detach) */
};

/* Record types. */
enum mt_type {
    MT_PAD = 0,       /* filler up to the end of the ring; skip */
    MT_HELLO = 1,     /* first record: who is talking */
    MT_ACCESS = 2,    /* one data access caught by a page fault */
    MT_BLOCK = 3,     /* a block operation: memcpy/memmove/memset call or a system call's user buffer */
    MT_ALLOC = 4,     /* an allocator or mapping call and its result */
    MT_MODULE = 5,    /* a loaded ELF object: path, load bias, build-id */
    MT_MAPPING = 6,   /* one line of the memory map when recording starts or a module is loaded */
    MT_RANGE = 7,     /* a range of memory became traced or stopped being traced */
    MT_THREAD = 8,    /* a thread started or exited */
    MT_CONTROL = 9,   /* recording started or stopped */
    MT_EXIT = 10,     /* the process is about to end or exec; the last record */
    MT_STATS = 11,    /* the agent's counters, written just before MT_EXIT */
    MT_FORK = 12,     /* the program forked a child (which runs untraced) */
    MT_WRITER = 13,   /* compiled-in runtime: how long the program waited for its trace writer, just before MT_EXIT */
    MT_FALLBACK = 14, /* rewrite mode: the int3 fallback's traps and the accesses they recorded, just before MT_EXIT */
    MT_CONTEXT = 15,  /* access stacks: the calling context of the thread's next accesses (fault mode) or of one place's */
};

/* 8 bytes at the start of every record. */
struct mt_rec_header {
    uint8_t type;     /* enum mt_type */
    uint8_t flags;    /* meaning depends on type */
    uint16_t size;    /* whole record in bytes, a multiple of 8 */
    uint32_t tid;     /* kernel thread id of the thread that produced the record */
};

/* MT_HELLO: flags. A runtime that says whether it armed probes or trampolines for access stacks sets     */
/* MT_HELLO_ARMING_SAID, and MT_HELLO_ARMED when it did (docs/stacks.md, "Access stacks"); an older one sets */
/* neither, nor does the fault agent (which unwinds every fault).                                          */
#define MT_HELLO_ARMED 0x01
#define MT_HELLO_ARMING_SAID 0x02
struct mt_hello {
    struct mt_rec_header h;
    uint64_t pid;
    uint64_t page_size;
    uint64_t agent_text_start;  /* the agent's own code: never traced, exempt from syscall dispatch */
    uint64_t agent_text_end;
    uint64_t regions;           /* MT_REGION_* bits that were asked for */
};

#define MT_STACK_MAX_CONTEXT 63 /* return addresses of an MT_CONTEXT: MT_STACK_MAX - 1 */
/* MT_ACCESS: flags */
#define MT_ACC_WRITE 0x01       /* the CPU reported a write (page-fault error code bit 1) */
#define MT_ACC_SAME_STEP 0x02   /* not the first fault of this execution of the instruction at ip */
struct mt_access {
    struct mt_rec_header h;
    uint64_t ip;                /* address of the faulting instruction */
    uint64_t addr;              /* the faulting data address (si_addr) */
};

/* MT_CONTEXT (access stack format 1, docs/event-stream.md): fault mode with MEMTRACE_STACK_DEPTH > 1 sends   */
/* it before an MT_ACCESS whose return addresses (above the faulting instruction's frame, innermost first,  */
/* at most depth - 1, MT_FRAME_CFI as in MT_ALLOC's) differ from those of the thread's last MT_ACCESS; the   */
/* thread's accesses until its next MT_CONTEXT have them. (size - 8) / 8 words; none: the walk found none.   */
/* Flag MT_CONTEXT_INSTRUCTION (access stack format 2, rewrite mode: agent/rewrite/rw_arm.c): word 0 is the   */
/* instruction whose trampoline's next records alone have the stack (words 1.., at most depth - 1).          */
#define MT_CONTEXT_INSTRUCTION 0x01
struct mt_context {
    struct mt_rec_header h;
    uint64_t callers[MT_STACK_MAX_CONTEXT];
};

/* MT_BLOCK: flags = op | source */
#define MT_BLK_COPY 1           /* Y: dst <- src */
#define MT_BLK_STORE 2          /* W: dst written (memset, or the kernel writing a read() buffer) */
#define MT_BLK_FETCH 3          /* G: src read (the kernel reading a write() buffer) */
#define MT_BLK_OP_MASK 0x0f
#define MT_BLK_SYSCALL 0x10     /* done by the kernel in a system call; `what` is the syscall number */
struct mt_block {
    struct mt_rec_header h;
    uint64_t ip;                /* caller's return address (library call) or address after the syscall instruction */
    uint64_t dst;               /* 0 for a fetch */
    uint64_t src;               /* 0 for a store */
    uint64_t len;               /* bytes actually transferred */
    uint32_t what;              /* enum mt_blockfn for a library call, syscall number otherwise */
    uint32_t pad;
};
/* fread/fwrite: recorded by the compiled-in runtime (the stdio buffer copy, not the system call) */
enum mt_blockfn { MT_FN_MEMCPY = 1, MT_FN_MEMMOVE = 2, MT_FN_MEMSET = 3, MT_FN_FREAD = 4, MT_FN_FWRITE = 5 };

/* MT_ALLOC: flags = enum mt_allocfn. The raw arguments are recorded in C order; Java gives them meaning. */
enum mt_allocfn {
    MT_FN_MALLOC = 1,         /* a0 = size */
    MT_FN_CALLOC = 2,         /* a0 = nmemb, a1 = size */
    MT_FN_REALLOC = 3,        /* a0 = old pointer, a1 = size */
    MT_FN_FREE = 4,           /* a0 = pointer */
    MT_FN_MMAP = 5,           /* a0 = addr hint, a1 = length, a2 = prot, a3 = flags, a4 = fd, a5 = offset */
    MT_FN_MREMAP = 6,         /* a0 = old address, a1 = old size, a2 = new size, a3 = flags, a4 = new address */
    MT_FN_MUNMAP = 7,         /* a0 = addr, a1 = length */
    MT_FN_POSIX_MEMALIGN = 8, /* a0 = memptr, a1 = alignment, a2 = size; result = the block (0 on error), a5 = return code */
    MT_FN_ALIGNED_ALLOC = 9,  /* a0 = alignment, a1 = size */
    MT_FN_MEMALIGN = 10,      /* a0 = alignment, a1 = size */
    MT_FN_VALLOC = 11,        /* a0 = size */
    MT_FN_REALLOCARRAY = 12,  /* a0 = old pointer, a1 = nmemb, a2 = size */
    MT_FN_PVALLOC = 13,       /* a0 = size */
};
struct mt_alloc {
    struct mt_rec_header h;
    uint64_t caller;            /* return address of the call into the allocator */
    uint64_t result;            /* returned pointer (MAP_FAILED as all ones), 0/-1 also for failure */
    uint64_t usable;            /* bytes the block really spans (malloc_usable_size, or page-rounded length) */
    uint64_t a[6];
    /* Stack format 1 (docs/event-stream.md): when MEMTRACE_STACK_DEPTH > 1, the record goes on with the  */
    /* return addresses beyond `caller`, innermost first, as many as h.size says ((size - 80) / 8, at most */
    /* MT_STACK_MAX - 1). A reader of the 80-byte form ignores them; an 80-byte record has none. Bit 63  */
    /* (MT_FRAME_CFI, common/mt_common.h) marks a frame found by .eh_frame, not by the saved rbp.          */
};
#define MT_STACK_MAX 64         /* frames of an allocation stack, `caller` included */
#define MT_STACK_DEPTH_DEFAULT 12 /* without MEMTRACE_STACK_DEPTH: DHAT's and valgrind's --num-callers (docs/stacks.md) */
struct mt_alloc_stack {
    struct mt_alloc a;
    uint64_t more[MT_STACK_MAX - 1];
};

/* MT_MODULE: followed by build_id bytes then path bytes (no NUL), padded to 8 */
struct mt_module {
    struct mt_rec_header h;
    uint64_t load_bias;         /* l_addr: add to an ELF virtual address to get the run-time address */
    uint32_t build_id_len;
    uint32_t path_len;
};

/* MT_MAPPING: one /proc/self/maps line; followed by path bytes (no NUL), padded to 8 */
#define MT_MAP_TRACED 0x01      /* flags: memtrace protects this mapping */
struct mt_mapping {
    struct mt_rec_header h;
    uint64_t start;
    uint64_t end;
    uint64_t offset;
    uint32_t prot;              /* PROT_READ|PROT_WRITE|PROT_EXEC as the program set them */
    uint32_t path_len;
};

/* MT_RANGE: flags = MT_RANGE_ADD or MT_RANGE_REMOVE; kind = enum mt_region */
#define MT_RANGE_ADD 1
#define MT_RANGE_REMOVE 2
enum mt_region {
    MT_REGION_DATA = 1,       /* data, bss and read-only data of the executable and libraries */
    MT_REGION_HEAP = 2,       /* the brk heap and blocks the allocator returned */
    MT_REGION_ANON = 4,       /* anonymous memory the program mapped */
    MT_REGION_FILE = 8,       /* files the program mapped */
};
struct mt_range {
    struct mt_rec_header h;
    uint64_t start;
    uint64_t end;
    uint32_t kind;
    uint32_t prot;
};

/* MT_THREAD: flags = MT_THREAD_START or MT_THREAD_EXIT; the header's tid is the thread itself */
#define MT_THREAD_START 1
#define MT_THREAD_EXIT 2
struct mt_thread {
    struct mt_rec_header h;
    uint64_t value;             /* start: parent tid; exit: exit code */
};

/* MT_CONTROL: flags = MT_CTL_START or MT_CTL_STOP */
#define MT_CTL_START 1
#define MT_CTL_STOP 2
struct mt_control {
    struct mt_rec_header h;
    uint64_t caller;            /* return address of memtrace_start()/memtrace_stop(), 0 for autostart/exit */
};

/* MT_EXIT: flags = how */
#define MT_EXIT_NORMAL 1        /* exit_group(value) */
#define MT_EXIT_EXEC 2          /* execve succeeded... or is about to be attempted; followed by path bytes */
#define MT_EXIT_EXEC_FAILED 4   /* the execve announced by MT_EXIT_EXEC failed: value = errno, path again; the process goes on */
#define MT_EXIT_SIGNAL 3        /* a fatal signal with no handler: value = signal, ip, addr = fault address (all ones if sent by kill) */
struct mt_exit {
    struct mt_rec_header h;
    uint64_t value;
    uint64_t ip;
    uint64_t addr;
    uint32_t path_len;
    uint32_t pad;
};

/* MT_STATS */
struct mt_stats {
    struct mt_rec_header h;
    uint64_t faults;            /* page faults the agent handled as accesses */
    uint64_t steps;             /* instruction executions completed with pages open */
    uint64_t syscalls;          /* system calls the agent ran for the program */
    uint64_t windows_at_risk;   /* times a traced page was open while another thread of the program ran */
    uint64_t untraced_faults;   /* faults inside allocator/block-op wrappers (not accesses of the program) */
};

/* MT_FORK */
struct mt_fork {
    struct mt_rec_header h;
    uint64_t child_pid;
};

/* MT_WRITER (libmemtrace-rt.so, writing a .mtr file): the program's threads found no free buffer `waits` */
/* times and spent `wait_ns` (monotonic clock, all threads summed) until they had one, encoding a queued   */
/* buffer themselves or sleeping; `buffers` buffers were handed over before exit (the ones the exit's     */
/* flush writes come after this record and are not counted). With no writer thread (h.flags has          */
/* MT_WRITER_NONE: rewrite mode runs none), each thread encodes and writes the buffer it filled: `own` of */
/* them, in `own_ns` (monotonic clock, all threads summed). Records of 32 bytes (older runtimes) end at   */
/* `buffers`.                                                                                            */
#define MT_WRITER_NONE 0x01
struct mt_writer {
    struct mt_rec_header h;
    uint64_t wait_ns;
    uint64_t waits;
    uint64_t buffers;
    uint64_t own_ns;
    uint64_t own;
};

/* MT_FALLBACK (libmemtrace-rt.so in `memtrace run --mode rewrite`, agent/rewrite/rw_trap.c): `traps` times a  */
/* thread reached an instruction through the int3 fallback, whose trampolines recorded `accesses` accesses;  */
/* of the planned punned jumps, `puns` were written, `puns_bytes` kept their int3 because the bytes after the */
/* instruction were not as planned, `puns_page` because no stub page could be mapped (the last three since    */
/* the 48-byte record; a 24-byte one has none).                                                              */
struct mt_fallback {
    struct mt_rec_header h;
    uint64_t traps;
    uint64_t accesses;
    uint64_t puns;
    uint64_t puns_bytes;
    uint64_t puns_page;
};

#endif
