/*
 * mtr_probe.c: prints the .mtr layout as agent/include/mt_file.h defines it, and CRC32C checksums as the
 * runtime computes them (agent/runtime/rt_crc.c, included whole so that both its paths can be run: the
 * SSE4.2 instruction and the table), one "name value" line each, for MtrLayoutProbeTest to compare with
 * org.memtrace.mtr.MtrFile's constants and java.util.zip.CRC32C.
 */
#include <stdio.h>

#include "mt_file.h"
#include "rt_crc.c"

int main(void)
{
    printf("HEADER_SIZE %zu\n", sizeof(struct mtr_header));
    printf("HEADER_CRC_OFFSET %zu\n", offsetof(struct mtr_header, crc));
    printf("VERSION_UNCHECKED %u\nVERSION_CHECKED %u\nVERSION %u\n", MTR_VERSION_UNCHECKED, MTR_VERSION_CHECKED, MTR_VERSION);
    printf("CHUNK_MAGIC %u\nEND_MAGIC %u\n", MTR_CHUNK_MAGIC, MTR_END_MAGIC);
    printf("CHUNK_HEADER_SIZE %zu\n", sizeof(struct mtr_chunk_header));
    printf("CHUNK_PAYLOAD_CRC_OFFSET %zu\n", offsetof(struct mtr_chunk_header, payload_crc));
    printf("CHUNK_HEADER_CRC_OFFSET %zu\n", offsetof(struct mtr_chunk_header, header_crc));
    printf("END_SIZE %zu\n", sizeof(struct mtr_end_record));
    printf("END_CRC_OFFSET %zu\n", offsetof(struct mtr_end_record, crc));
    /* bytes i*7+3 (mod 256), checksummed in two pieces that meet at every length from 0 to 40 */
    unsigned char data[1000];
    for (int i = 0; i < 1000; i++) data[i] = (unsigned char)(i * 7 + 3);
    rt_crc_init();
    int have_hw = hardware;
    for (int path = 0; path < 2; path++) {
        if (path == 0 && !have_hw) continue;
        hardware = path == 0;
        for (int n = 0; n <= 1000; n += 37)
            for (int split = 0; split <= 40 && split <= n; split += 13)
                printf("crc_%s_%d_%d %u\n", path == 0 ? "hw" : "sw", n, split,
                       rt_crc32c(rt_crc32c(0, data, (size_t)split), data + split, (size_t)(n - split)));
    }
    return 0;
}
