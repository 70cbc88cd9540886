/*
 * check_fakestack.c: stack use after return for `memtrace cc --check` (ASan's detect_stack_use_after_return
 * idea, with gcc's interface and memtrace's own code).
 *
 * gcc (--param asan-use-after-return=1) makes every function that has a laid-out frame (an address-taken
 * local array or variable) ask at entry, when __asan_option_detect_stack_use_after_return is not 0, for a
 * "fake" frame: __asan_stack_malloc_N(size) returns memory of 64 << N bytes in which the function keeps its
 * locals, with the same layout as on the real stack (magic, description, pc, redzones), or 0 to keep the real
 * stack. At return gcc's epilogue retires the frame: for N < 5 inline (the frame's base word becomes
 * 0x45E0360E, its shadow 0xf5, and the flag byte whose address the frame's last word holds becomes 0), for
 * larger ones by __asan_stack_free_N(frame, size). A pointer to a local kept past the return then reads
 * shadow 0xf5: "stack use after return", the variable named from the retired frame's description.
 *
 * Output: nothing of its own; check_report.c names the frame (mc_fake_frame_of below gives its base).
 *
 * Layout: one reservation (MAP_NORESERVE) of FS_SLOTS slots of FS_SLOT bytes, a slot per thread that used
 * fake frames (released when the thread ends); inaccessible until a thread takes the slot, so that an index
 * far past a local (`buf[rand()]`, gigabytes) faults as a wild access, as on the real stack, instead of
 * writing silently into a slot no thread used (shadow 0). A slot holds, for each class N of 0..10, FS_CLASS bytes of
 * frames of 64 << N bytes aligned on their size, then one flag byte per frame (1: in use). Frames are handed
 * out round robin from a per-thread hint, skipping frames in use, so a retired frame is not reused before the
 * class's other frames were: the window in which a use after return is still seen (4,096 calls for the
 * smallest frames, 4 for frames of 64 KB).
 *
 * What it gets wrong: a frame that a longjmp or a throw skipped stays "in use" (its flag is never cleared)
 * until its thread ends; when every frame of a class is in use the function keeps its real stack (unchecked
 * for use after return, checked as before for overflows); a retired frame that was reused is that new
 * frame's (a late use is then missed or named after the new call); functions whose body the as step
 * replaced by its vectorised twin (docs/check.md, "Vectorised loops") keep the real stack.
 * MEMTRACE_CHECK=noreturn turns fake frames off (every frame on the real stack, as gcc's default).
 */
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include "mt_common.h"
#include "check.h"

#define FS_CLASSES 11
#define FS_CLASS ((uintptr_t)256 << 10)                    /* bytes of frames per class */
#define FS_FLAGS_AT ((uintptr_t)FS_CLASSES * FS_CLASS)     /* the flag bytes, FS_CLASS / 64 per class */
#define FS_SLOT ((uintptr_t)4 << 20)
#define FS_SLOTS 4096

MC_EXPORT int __asan_option_detect_stack_use_after_return = 1;

static uintptr_t fs_base;                    /* the reservation, 0 before the first frame, -1 when refused */
static uint8_t fs_used[FS_SLOTS];            /* slots taken by threads */
static pthread_mutex_t fs_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t fs_key;

struct fs_thread { uintptr_t slot; uint32_t hint[FS_CLASSES]; };
static __thread struct fs_thread fs_me __attribute__((tls_model("initial-exec")));

static uint8_t *flags_of(uintptr_t slot, int c) { return (uint8_t *)(slot + FS_FLAGS_AT + (uintptr_t)c * (FS_CLASS >> 6)); }

/* a thread ends: its slot's frames and flags go back (the frames' memory to the kernel) */
static void slot_released(void *slot)
{
    uintptr_t s = (uintptr_t)slot;
    madvise(slot, FS_SLOT, MADV_DONTNEED);
    pthread_mutex_lock(&fs_lock);
    fs_used[(s - fs_base) / FS_SLOT] = 0;
    pthread_mutex_unlock(&fs_lock);
    fs_me.slot = 0;
}

static uintptr_t take_slot(void)
{
    uintptr_t slot = 0;
    mc_init();       /* a frame before the module's constructor ran __asan_init */
    pthread_mutex_lock(&fs_lock);
    if (!fs_base) {
        void *p = mmap(NULL, FS_SLOT * FS_SLOTS, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        fs_base = p == MAP_FAILED ? (uintptr_t)-1 : (uintptr_t)p;
        if (p != MAP_FAILED) mt_own_add(p, FS_SLOT * FS_SLOTS);
        if (p != MAP_FAILED) pthread_key_create(&fs_key, slot_released);
    }
    if (fs_base != (uintptr_t)-1)
        for (int i = 0; i < FS_SLOTS; i++)
            if (!fs_used[i]) {
                slot = fs_base + (uintptr_t)i * FS_SLOT;
                /* read-write from its first use on (a slot given back stays so) */
                if (mprotect((void *)slot, FS_SLOT, PROT_READ | PROT_WRITE) != 0) { slot = 0; break; }
                fs_used[i] = 1;
                break;
            }
    pthread_mutex_unlock(&fs_lock);
    if (slot) pthread_setspecific(fs_key, (void *)slot);
    return slot;
}

/* A frame's shadow, fsize >> 3 bytes (a multiple of 8, 8-aligned: frames are aligned on their size), set by
 * plain stores: memset here would be the runtime's own wrapper (check_libc.c), which checks and counts its
 * range as a libc call does (5 % of sqlite3's checked run). */
static void shadow_set(uintptr_t frame, uintptr_t fsize, uint8_t value)
{
    uint64_t w = value * 0x0101010101010101ULL, *s = (uint64_t *)MC_SHADOW(frame);
    for (uintptr_t n = fsize >> 6; n; n--) *s++ = w;
}

static uintptr_t fs_malloc(int c, size_t size)
{
    uintptr_t fsize = (uintptr_t)64 << c;
    if (size > fsize) return 0;   /* gcc picks the class its frame fills; the last word is redzone */
    uintptr_t slot = fs_me.slot;
    if (!slot && !(slot = fs_me.slot = take_slot())) return 0;
    uint32_t n = (uint32_t)(FS_CLASS >> (6 + c));   /* a shift: c is not a constant here */
    uint8_t *flags = flags_of(slot, c);
    for (uint32_t tries = 0; tries < n; tries++) {
        uint32_t pos = fs_me.hint[c]++ & (n - 1);
        if (flags[pos]) continue;
        flags[pos] = 1;
        uintptr_t frame = slot + (uintptr_t)c * FS_CLASS + (uintptr_t)pos * fsize;
        shadow_set(frame, fsize, 0);
        *(uint8_t **)(frame + fsize - 8) = &flags[pos];
        return frame;
    }
    return 0;
}

static void fs_free(int c, uintptr_t frame)
{
    uintptr_t fsize = (uintptr_t)64 << c;
    shadow_set(frame, fsize, 0xf5);
    **(uint8_t **)(frame + fsize - 8) = 0;
}

/* the base of the fake frame an address lies in, or 0 (check_report.c names its variables from it) */
uintptr_t mc_fake_frame_of(uintptr_t addr)
{
    uintptr_t base = fs_base;
    if (!base || base == (uintptr_t)-1 || addr < base || addr >= base + FS_SLOT * FS_SLOTS) return 0;
    uintptr_t in = (addr - base) % FS_SLOT;
    if (in >= FS_FLAGS_AT) return 0;
    uintptr_t c = in / FS_CLASS, fsize = (uintptr_t)64 << c;
    return addr - (in - c * FS_CLASS) % fsize;
}

/* Leak roots: the frames in use of every slot (their locals point to blocks as the real stack's do). */
void mc_fake_frames_scan(void (*scan)(void *s, uintptr_t from, uintptr_t to), void *s)
{
    if (!fs_base || fs_base == (uintptr_t)-1) return;
    for (int i = 0; i < FS_SLOTS; i++) {
        if (!fs_used[i]) continue;
        uintptr_t slot = fs_base + (uintptr_t)i * FS_SLOT;
        for (int c = 0; c < FS_CLASSES; c++) {
            uintptr_t fsize = (uintptr_t)64 << c, n = FS_CLASS / fsize;
            const uint8_t *flags = flags_of(slot, c);
            for (uintptr_t pos = 0; pos < n; pos++)
                if (flags[pos]) scan(s, slot + c * FS_CLASS + pos * fsize, slot + c * FS_CLASS + (pos + 1) * fsize - 8);
        }
    }
}

#define FS_ENTRY(c) \
    MC_EXPORT uintptr_t __asan_stack_malloc_##c(size_t size) { return fs_malloc(c, size); } \
    MC_EXPORT void __asan_stack_free_##c(uintptr_t frame, size_t size) { (void)size; fs_free(c, frame); }
FS_ENTRY(0) FS_ENTRY(1) FS_ENTRY(2) FS_ENTRY(3) FS_ENTRY(4) FS_ENTRY(5)
FS_ENTRY(6) FS_ENTRY(7) FS_ENTRY(8) FS_ENTRY(9) FS_ENTRY(10)
