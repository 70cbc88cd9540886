/* The fixed part of every skeleton program `memtrace skeleton --emit-c` writes (docs/skeleton-c.md), loaded
 * once by org.memtrace.skeleton.CSource. Each line "//@ NAME" opens a part that runs to the next such line:
 * "runtime" (the output and the accesses' common path), "reader" (reading the logged input), "main". CSource
 * writes the generated table of logged sites before the reader, the loop functions and their dispatch before
 * main, and replaces @INPUT@ in main with the default input's name as a C string. Nothing above the first
 * "//@" line is written.
 *
 * How its output reads: Valgrind Lackey's --trace-mem lines, " L addr,size", " S addr,size", " M addr,size",
 * as `memtrace convert --to lackey` writes them.
 * What it gets wrong: this file alone is no program; it needs the generated parts (NSITES, sites, last, run
 * and the loops) between its parts, and trusts them to name only what the input names.
 */
//@ runtime

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Record types: the low 3 bits of a record's first varint (docs/skeleton-c.md, "The input"). */
enum { LOGGED, THREAD, RUN, MARKER, BLOCK, RETURN };
/* How a loop run ended: at its exit (the trip register's value follows), or by a side exit in its body. */
enum { EXITED, SIDE_EXIT };
/* Block operations as the input numbers them. */
enum { COPY, FILL, FETCH };

struct site { uint64_t ip; char kind; unsigned char size; };
struct run { int how; uint64_t value; };

static const unsigned char *in, *in_start, *in_end;
static const char *input_name;

_Noreturn static void bad(const char *what)
{
    fprintf(stderr, "skel: %s: %s (at byte %ld)\n", input_name, what, (long) (in - in_start));
    exit(1);
}

static char out[1 << 16];
static size_t used;
static uint64_t tid; /* the thread whose records are being read */

static void line(char kind, uint64_t address, unsigned size)
{
    if (used > sizeof out - 48) {
        fwrite(out, 1, used, stdout);
        used = 0;
    }
    char *p = out + used, digits[12];
    *p++ = ' ';
    *p++ = kind;
    *p++ = ' ';
    int n = 8;
    while (n < 16 && address >> (4 * n) != 0) n++;
    for (int i = n - 1; i >= 0; i--) *p++ = "0123456789abcdef"[address >> (4 * i) & 15];
    *p++ = ',';
    n = 0;
    do digits[n++] = (char) ('0' + size % 10); while ((size /= 10) != 0);
    while (n > 0) *p++ = digits[--n];
    *p++ = '\n';
    used = (size_t) (p - out);
}

/* A load waits for the next access: a store of the same instruction, address, size and thread makes it one M line. */
static int pending;
static uint64_t pending_ip, pending_address, pending_tid;
static unsigned pending_size;

static void settle(void)
{
    if (!pending) return;
    pending = 0;
    line('L', pending_address, pending_size);
}

static void load(uint64_t ip, uint64_t address, unsigned size)
{
    settle();
    pending = 1;
    pending_ip = ip;
    pending_address = address;
    pending_size = size;
    pending_tid = tid;
}

static void store(uint64_t ip, uint64_t address, unsigned size)
{
    if (pending && ip == pending_ip && address == pending_address && size == pending_size && tid == pending_tid) {
        pending = 0;
        line('M', address, size);
        return;
    }
    settle();
    line('S', address, size);
}

static void modify(uint64_t ip, uint64_t address, unsigned size)
{
    load(ip, address, size);
    store(ip, address, size);
}

/* Chunks of at most 64 bytes that do not cross a 64-byte line of the range they step through. */
static uint64_t chunk(uint64_t address, uint64_t left)
{
    uint64_t to_end = 64 - (address & 63);
    return to_end < left ? to_end : left;
}

static void chunks(uint64_t address, uint64_t length, char kind)
{
    for (uint64_t done = 0, n; done < length; done += n) {
        n = chunk(address + done, length - done);
        line(kind, address + done, (unsigned) n);
    }
}
//@ reader

static uint64_t get(void)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64 && in < in_end; shift += 7) {
        unsigned char b = *in++;
        v |= (uint64_t) (b & 0x7f) << shift;
        if (!(b & 0x80)) return v;
    }
    bad("the input is cut short or damaged");
}

/* A value stored as its difference to the previous one (zigzag: 0, -1, 1, -2, ...). */
static inline uint64_t next(uint64_t *previous)
{
    uint64_t d = get();
    return *previous += (d >> 1) ^ -(d & 1);
}

static inline uint64_t peek(void)
{
    const unsigned char *at = in;
    uint64_t v = get();
    in = at;
    return v;
}

static void logged_record(uint64_t head)
{
    uint64_t s = head >> 3;
    if (s >= NSITES) bad("a logged access names no site");
    uint64_t address = next(&last[s]);
    switch (sites[s].kind) {
    case 'L': load(sites[s].ip, address, sites[s].size); break;
    case 'S': store(sites[s].ip, address, sites[s].size); break;
    default: modify(sites[s].ip, address, sites[s].size); break;
    }
}

/* Whether the next record is a logged access of the instruction at ip. */
static inline int next_is(uint64_t ip)
{
    if (in >= in_end) return 0;
    uint64_t head = peek();
    return (head & 7) == LOGGED && (head >> 3) < NSITES && sites[head >> 3].ip == ip;
}

/* A position the skeleton could not compute: its access comes from the input. */
static inline void logged(uint64_t ip)
{
    if (!next_is(ip)) bad("the input does not follow the skeleton: a logged access expected");
    logged_record(get());
}

/* A logged position of a block that may not run: its record, if it is the next one, says it ran. */
static inline int logged_if(uint64_t ip)
{
    if (!next_is(ip)) return 0;
    logged_record(get());
    return 1;
}

static void run(uint64_t loop);
static void block(uint64_t op);

/* After a call in a loop's body: the called function's records, its loop runs included, up to the call's return. */
static inline void callee(void)
{
    for (;;) {
        uint64_t head = get();
        switch (head & 7) {
        case LOGGED: logged_record(head); break;
        case RUN: run(head >> 3); break;
        case BLOCK: block(head >> 3); break;
        case RETURN: return;
        default: bad("a record that cannot come inside a call");
        }
    }
}

/* Marker m: whether its block ran (or its side exit was taken) now, where the trip register holds value. */
static inline int marker(uint64_t m, uint64_t value)
{
    const unsigned char *at = in;
    if (in < in_end && get() == (m << 3 | MARKER) && get() == value) return 1;
    in = at;
    return 0;
}

/*
 * A block whose condition the replay computes: whether it runs, from the x86 flags of a - b (op 1, cmp) or
 * a & b (op 2, test) at width bytes, where the jump of condition code cc (its opcode's low nibble) goes
 * into the block when taken is 1, or past it when taken is 0.
 */
static inline int holds(int op, int width, int cc, int taken, uint64_t a, uint64_t b)
{
    const int shift = 64 - 8 * width;
    const uint64_t r = (op == 1 ? a - b : a & b) << shift, x = a << shift, y = b << shift;
    const int zf = r == 0, sf = (int) (r >> 63), cf = op == 1 && x < y, of = op == 1 && (((x ^ y) & (x ^ r)) >> 63);
    int jump;
    switch (cc) {
    case 2: jump = cf; break;
    case 3: jump = !cf; break;
    case 4: jump = zf; break;
    case 5: jump = !zf; break;
    case 6: jump = cf || zf; break;
    case 7: jump = !cf && !zf; break;
    case 8: jump = sf; break;
    case 9: jump = !sf; break;
    case 12: jump = sf != of; break;
    case 13: jump = sf == of; break;
    case 14: jump = zf || sf != of; break;
    default: jump = !zf && sf == of; break;
    }
    return jump == taken;
}

/* How a run ended: at its exit, with the trip register's change from entry to exit (zigzag), or by a side exit, with the iterations it began. */
static inline struct run run_end(void)
{
    struct run r;
    r.how = (int) get();
    r.value = get();
    return r;
}

/* Iterations of a run: the trip register's change in steps (a side exit: those it began). */
static inline uint64_t trips(struct run r, uint64_t step)
{
    if (r.how == SIDE_EXIT) return r.value;
    int64_t distance = (int64_t) ((r.value >> 1) ^ -(r.value & 1)), s = (int64_t) step;
    if (s == 0 || distance % s != 0 || distance / s < 0) bad("a trip count that does not follow from the exit value");
    return (uint64_t) (distance / s);
}

static void block(uint64_t op)
{
    uint64_t destination = get(), source = get(), length = get();
    settle();
    if (op == COPY) {
        for (uint64_t done = 0, n; done < length; done += n) {
            n = chunk(destination + done, length - done);
            line('L', source + done, (unsigned) n);
            line('S', destination + done, (unsigned) n);
        }
    } else if (op == FILL) {
        chunks(destination, length, 'S');
    } else if (op == FETCH) {
        chunks(source, length, 'L');
    } else {
        bad("a block operation of unknown kind");
    }
}
//@ main

int main(int argc, char **argv)
{
    input_name = argc > 1 ? argv[1] : @INPUT@;
    FILE *f = fopen(input_name, "rb");
    if (!f) {
        perror(input_name);
        return 1;
    }
    size_t size = 0, room = 1 << 20;
    unsigned char *data = malloc(room);
    for (size_t got; data && (got = fread(data + size, 1, room - size, f)) > 0;) {
        size += got;
        if (size == room) data = realloc(data, room *= 2);
    }
    if (!data || ferror(f)) {
        perror(input_name);
        return 1;
    }
    fclose(f);
    in = in_start = data;
    in_end = data + size;
    while (in < in_end) {
        uint64_t head = get();
        switch (head & 7) {
        case LOGGED: logged_record(head); break;
        case THREAD: tid = head >> 3; break;
        case RUN: run(head >> 3); break;
        case BLOCK: block(head >> 3); break;
        default: bad("a marker or a return outside its loop run");
        }
    }
    settle();
    fwrite(out, 1, used, stdout);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        perror("skel: stdout");
        return 1;
    }
    free(data);
    return 0;
}
