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
 * Output: nothing of its own; check_objects.c names the frame (mc_fake_frame_of below gives its base).
 *
 * Layout: one reservation (MAP_NORESERVE) of FS_SLOTS slots of FS_SLOT bytes, a slot per thread that used
 * fake frames (released when the thread ends); inaccessible until a thread takes the slot, so that an index
 * far past a local (`buf[rand()]`, gigabytes) faults as a wild access, as on the real stack, instead of
 * writing silently into a slot no thread used (shadow 0). A slot holds, for each class N of 0..10, FS_CLASS bytes of
 * frames of 64 << N bytes aligned on their size, then one flag byte per frame (1: in use). Frames are handed
 * out round robin from a per-thread hint over a window, the class's first 32 KB of frames but at least 64
 * (FS_WINDOW, FS_WINDOW_MIN: 512 frames of 64 bytes, 64 of 512 bytes to 4 KB), skipping frames in use, so a
 * retired frame is not reused before the window's other frames were: a use after return is named after its
 * own frame for the class's next window - 1 frames (fewer by those in use), and reported as one later while
 * no running call holds the frame. The window keeps the frames a run reuses in the cache (the whole class
 * was 2.3 MB of cold frames and shadow on sqlite3); a recursion deeper than it takes the class's other frames.
 * The shadow set at entry (0) and, for frames of 2 KB and more, at return (0xf5) is gcc's frame size's,
 * rounded to 64 bytes, as gcc's inline epilogue poisons for the smaller ones.
 *
 * What it gets wrong: a frame that a longjmp or a throw skipped stays "in use" (its flag is never cleared)
 * until its thread ends; when every frame of a class is in use the function keeps its real stack (unchecked
 * for use after return, checked as before for overflows); a retired frame that was reused is that new
 * frame's (a late use is then missed while the new call runs, or named after it once it returned); functions whose body the as step
 * replaced by its vectorised twin (docs/check.md, "Vectorised loops") keep the real stack; an overflow past a
 * frame's last redzone into the rest of its class frame finds what an earlier, larger user left there (0, or
 * 0xf5: then reported as a use after return).
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
/* Frames are handed out round robin over the first FS_WINDOW bytes of a class (at least FS_WINDOW_MIN frames):
 * the frames a run keeps reusing stay in the cache, where the class's whole 256 KB did not */
#ifndef FS_WINDOW
#define FS_WINDOW ((uintptr_t)32 << 10)
#endif
#ifndef FS_WINDOW_MIN
#define FS_WINDOW_MIN 64u
#endif

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

/* The shadow of a frame's first `bytes` bytes (a multiple of 64, the frame 64-aligned: whole shadow words), set
 * by plain stores, 16 bytes at a time: memset here would be the runtime's own wrapper (check_libc.c), which
 * checks and counts its range as a libc call does (5 % of sqlite3's checked run). */
typedef uint64_t fs_pair __attribute__((vector_size(16), aligned(8), may_alias));
typedef uint64_t fs_word __attribute__((may_alias));
static inline void shadow_set(uintptr_t frame, uintptr_t bytes, uint8_t value)
{
    uint64_t w = value * 0x0101010101010101ULL;
    fs_pair p = {w, w};
    uint8_t *s = MC_SHADOW(frame);
    uintptr_t n = bytes >> 6;                                  /* shadow words */
    for (; n >= 2; n -= 2, s += 16) *(fs_pair *)s = p;
    if (n) *(fs_word *)s = w;
}

static inline uint32_t fs_window(int c)
{
    uint32_t n = (uint32_t)(FS_CLASS >> (6 + c)), w = (uint32_t)(FS_WINDOW >> (6 + c));
    if (w < FS_WINDOW_MIN) w = FS_WINDOW_MIN;
    return w < n ? w : n;
}

/* the bytes of a frame of class c whose shadow the runtime sets: gcc's frame size in whole 64-byte units (a
 * shadow word each), the class's size when gcc said none that fits */
static inline uintptr_t fs_extent(uintptr_t fsize, size_t size)
{
    return size && size <= fsize ? (size + 63) & ~(uintptr_t)63 : fsize;
}

/* every frame of the window is in use (a recursion deeper than the window): the rest of class c, or n */
static __attribute__((noinline)) uint32_t past_window(const uint8_t *flags, uint32_t w, uint32_t n)
{
    uint32_t pos = w;
    while (pos < n && flags[pos]) pos++;
    return pos;
}

/* inlined into each class's entry, where c is a constant (the shifts and the window fold) */
static inline __attribute__((always_inline)) uintptr_t fs_malloc(int c, size_t size)
{
    uintptr_t fsize = (uintptr_t)64 << c;
    if (size > fsize) return 0;   /* gcc picks the class its frame fills; the last word is redzone */
    uintptr_t slot = fs_me.slot;
    if (!slot && !(slot = fs_me.slot = take_slot())) return 0;
    uint32_t n = (uint32_t)(FS_CLASS >> (6 + c)), w = fs_window(c), h = fs_me.hint[c], pos;
    uint8_t *flags = flags_of(slot, c);
    for (uint32_t tries = 0; tries < w; tries++) {
        pos = h++ & (w - 1);
        if (!flags[pos]) goto found;
    }
    if ((pos = past_window(flags, w, n)) == n) return 0;
found:
    fs_me.hint[c] = h;
    flags[pos] = 1;
    uintptr_t frame = slot + (uintptr_t)c * FS_CLASS + (uintptr_t)pos * fsize;
    shadow_set(frame, fs_extent(fsize, size), 0);
    *(uint8_t **)(frame + fsize - 8) = &flags[pos];
    return frame;
}

static inline __attribute__((always_inline)) void fs_free(int c, uintptr_t frame, size_t size)
{
    uintptr_t fsize = (uintptr_t)64 << c;
    shadow_set(frame, fs_extent(fsize, size), 0xf5);
    **(uint8_t **)(frame + fsize - 8) = 0;
}

/* the base of the fake frame an address lies in, or 0 (check_objects.c names its variables from it) */
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
    MC_EXPORT void __asan_stack_free_##c(uintptr_t frame, size_t size) { fs_free(c, frame, size); }
FS_ENTRY(0) FS_ENTRY(1) FS_ENTRY(2) FS_ENTRY(3) FS_ENTRY(4) FS_ENTRY(5)
FS_ENTRY(6) FS_ENTRY(7) FS_ENTRY(8) FS_ENTRY(9) FS_ENTRY(10)
