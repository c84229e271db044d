/*
 * Test oracle: librdkafka's own hash functions, compiled from the librdkafka sources that
 * node-rdkafka ships (deps/librdkafka/src: rd_murmur2, rd_crc32, rd_fnv1a).
 *
 * stdin:  records of a 4-byte little-endian length followed by that many key bytes.
 * stdout: per record, three 4-byte little-endian words: rd_murmur2, rd_crc32, rd_fnv1a.
 */
#include "rd.h"
#include "rdcrc32.h"
#include "rdmurmur2.h"
#include "rdfnv1a.h"

#include <stdio.h>
#include <stdlib.h>

static int read_exact(void *buf, size_t len) {
        return fread(buf, 1, len, stdin) == len;
}

static void write_u32(uint32_t v) {
        unsigned char b[4] = {v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, v >> 24};
        fwrite(b, 1, 4, stdout);
}

int main(void) {
        unsigned char lenbuf[4];
        size_t cap = 1 << 16;
        char *key  = malloc(cap);

        while (read_exact(lenbuf, 4)) {
                size_t len = lenbuf[0] | (lenbuf[1] << 8) | (lenbuf[2] << 16) |
                             ((size_t)lenbuf[3] << 24);
                if (len > cap) {
                        cap = len;
                        key = realloc(key, cap);
                }
                if (len && !read_exact(key, len))
                        return 2;
                write_u32(rd_murmur2(key, len));
                write_u32(rd_crc32(key, len));
                write_u32(rd_fnv1a(key, len));
        }
        free(key);
        return fflush(stdout) == 0 ? 0 : 3;
}
