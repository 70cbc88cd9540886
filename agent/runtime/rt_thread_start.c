/*
 * rt_thread_start.c: a new thread's first buffer, handed to it through the runtime's TLS image.
 *
 * glibc blocks every signal across the clone of pthread_create and the new thread runs libc's start_thread
 * with them blocked until it restores the creator's mask. When libc is rewritten (memtrace run --mode
 * rewrite), start_thread's own memory instructions carry probes, and a probe that finds the thread's cursor
 * still null faults with SIGSEGV blocked: the kernel then kills the process instead of calling the
 * runtime's handler (rt_buffer.c, "the thread's first probe"). So the creator hands the thread a buffer
 * before it exists: under a lock, pthread_create's wrapper (rt_init.c) takes a free buffer and writes its
 * base into __memtrace_cursor's word of this library's TLS initialization image (.tdata), which glibc
 * copies into the new thread's TLS block while it allocates it (also for a cached stack), inside the
 * wrapped pthread_create; then it writes the null back. The thread's probes store into that buffer from
 * its first instruction on, and the thread adopts it when the wrapper's start routine runs (rt_buffer.c,
 * rt_thread_begin_in), so the accesses of start_thread come first in the thread's trace, before its
 * MT_THREAD start record.
 *
 * How it reads: nothing of its own; the thread's records are in its first buffer as always.
 *
 * What it gets wrong: a thread that libc makes without going through pthread_create's PLT entry (a
 * SIGEV_THREAD timer's helper, a posix_spawn) while another thread is inside the wrapper copies the same
 * image and writes into the same buffer: the two threads' first slots mix. Without the image (a program
 * built by memtrace cc defines __memtrace_cursor itself, so the runtime's copy is unused) nothing is
 * handed over and a thread starts as before, with a null cursor; that is right there, since nothing of
 * libc is instrumented then.
 */
#include <link.h>
#include <sys/mman.h>

#include "rt.h"

/* __memtrace_cursor's word in this library's TLS initialization image; NULL when there is none. */
static char **image_slot;
/* Whether that word lies in PT_GNU_RELRO (read-only once relocated): written through an mprotect. */
static int image_relro;
static int looked;
static rt_lock image_lock;

static int find_image(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    (void)arg;
    const ElfW(Phdr) *tls = NULL, *relro = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        if (info->dlpi_phdr[i].p_type == PT_TLS) tls = &info->dlpi_phdr[i];
        if (info->dlpi_phdr[i].p_type == PT_GNU_RELRO) relro = &info->dlpi_phdr[i];
    }
    const char *data = info->dlpi_tls_data, *cursor = (const char *)&__memtrace_cursor;
    if (!tls || !data || cursor < data || cursor >= data + tls->p_memsz) return 0;
    size_t off = (size_t)(cursor - data);
    if (off + sizeof(char *) > tls->p_filesz) return 1; /* in .tbss: no image to write */
    uintptr_t at = info->dlpi_addr + tls->p_vaddr + off;
    image_slot = (char **)at;
    image_relro = relro && at >= info->dlpi_addr + relro->p_vaddr && at < info->dlpi_addr + relro->p_vaddr + relro->p_memsz;
    return 1;
}

static int write_image(char *value)
{
    uintptr_t page = (uintptr_t)image_slot & ~(uintptr_t)4095;
    if (image_relro && mt_sys3(SYS_mprotect, page, 4096, PROT_READ | PROT_WRITE) != 0) return -1;
    *image_slot = value;
    if (image_relro) mt_sys3(SYS_mprotect, page, 4096, PROT_READ);
    return 0;
}

struct rt_buf *rt_handover_begin(void)
{
    rt_lock_take(&image_lock);
    if (!looked) { /* under the lock: two first pthread_create calls at once look once */
        looked = 1;
        char *saved = rw_sink_enter(); /* the runtime's walk in rewritten libc: not the program's accesses */
        dl_iterate_phdr(find_image, NULL);
        rw_sink_leave(saved);
    }
    if (!image_slot) {
        rt_lock_drop(&image_lock);
        return NULL;
    }
    /* with or without a trace file: the probes run and need a buffer either way */
    uint64_t old = rt_block_signals();
    struct rt_buf *b = rt_buf_get();
    rt_restore_signals(old);
    if (write_image(b->base) != 0) {
        rt_buf_put(b);
        rt_lock_drop(&image_lock);
        return NULL;
    }
    return b;
}

void rt_handover_end(struct rt_buf *b, int created)
{
    if (!b) return;
    write_image(NULL);
    rt_lock_drop(&image_lock);
    if (!created) rt_buf_put(b);
}
