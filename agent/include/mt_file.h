/*
 * mt_file.h: the on-disk layout of a .mtr file, the one C definition of it (docs/compiled-in.md, "The .mtr
 * file"). libmemtrace-rt.so writes it (runtime/rt_file.c); the Java reader is org.memtrace.mtr.MtrFile, whose
 * constants a compiled probe checks against this header (src/test/resources/c/runtime/mtr_probe.c).
 *
 * How it reads, all little-endian:
 *
 *     header (64 bytes)   chunk header (40 bytes) payload, zero-padded to 8   chunk ...   end record (32 bytes)
 *
 * Version 2 (MTR_VERSION_CHECKED) adds CRC32C checksums (the Castagnoli polynomial, as SSE4.2's crc32
 * instruction and java.util.zip.CRC32C compute it): the header's over its first 60 bytes, each chunk header's
 * over its first 32, each payload's over its stored bytes, the end record's over its three counts. Version 1
 * (MTR_VERSION_UNCHECKED: 32-byte chunk headers, no checksums) is still read, without checks.
 *
 * What it gets wrong: a checksum finds damage, it cannot repair it; a damaged chunk header hides which thread
 * the chunk belongs to, so the reader stops there.
 */
#ifndef MEMTRACE_MT_FILE_H
#define MEMTRACE_MT_FILE_H

#include <stddef.h>
#include <stdint.h>

#define MTR_MAGIC "MTRFILE1"            /* the first 8 bytes */
#define MTR_VERSION_UNCHECKED 1u
#define MTR_VERSION_CHECKED 2u
#define MTR_VERSION MTR_VERSION_CHECKED /* what the runtime writes */
#define MTR_CHUNK_MAGIC 0x4b4e4843u     /* "CHNK" */
#define MTR_END_MAGIC 0x444e4545u       /* "EEND" */

struct mtr_header {
    char magic[8];           /*  0: MTR_MAGIC */
    uint32_t version;        /*  8: MTR_VERSION */
    uint32_t header_size;    /* 12: sizeof(struct mtr_header) */
    uint64_t pid;            /* 16 */
    uint64_t page_size;      /* 24 */
    uint8_t reserved[28];    /* 32: zero */
    uint32_t crc;            /* 60: CRC32C of bytes 0..59 */
};

struct mtr_chunk_header {
    uint32_t magic;          /*  0: MTR_CHUNK_MAGIC */
    uint32_t tid;            /*  4: the thread whose slots the payload holds */
    uint64_t order;          /*  8: chunks written before this one, all threads */
    uint32_t stored_len;     /* 16: payload bytes in the file (before the padding) */
    uint32_t raw_len;        /* 20: bytes of slots the payload decodes to */
    uint32_t codec;          /* 24: docs/compiled-in.md, "Codecs" */
    uint32_t payload_crc;    /* 28: CRC32C of the stored payload bytes */
    uint32_t header_crc;     /* 32: CRC32C of bytes 0..31 */
    uint32_t reserved;       /* 36: zero */
};

struct mtr_end_record {
    uint32_t magic;          /*  0: MTR_END_MAGIC */
    uint32_t crc;            /*  4: CRC32C of bytes 8..31 */
    uint64_t chunks, records, dropped; /* 8, 16, 24 */
};

_Static_assert(sizeof(struct mtr_header) == 64, "mtr header");
_Static_assert(offsetof(struct mtr_header, crc) == 60, "mtr header crc");
_Static_assert(sizeof(struct mtr_chunk_header) == 40, "mtr chunk header");
_Static_assert(offsetof(struct mtr_chunk_header, payload_crc) == 28, "mtr payload crc");
_Static_assert(offsetof(struct mtr_chunk_header, header_crc) == 32, "mtr header crc");
_Static_assert(sizeof(struct mtr_end_record) == 32, "mtr end record");

#endif
