/* libFuzzer harness for the checkpoint loader (src/core/checkpoint.c): any bytes as a checkpoint.
 * A file is refused with a message or gives a world that steps; never a crash, a leak, a hang or
 * undefined behaviour.
 *
 * The checksum: a mutated checkpoint almost never has a valid CRC-32, so the loader would refuse nearly
 * every input at its first check and the field checks behind it would never run. The harness therefore
 * recomputes the CRC of each input and stores it in the input's last 4 bytes before loading (the format:
 * the CRC-32 of every byte before it), so that mutations reach the validation of every field. Run with
 * AERODEM_FUZZ_KEEP_CRC=1 in the environment to load the inputs exactly as they are (the checksum check
 * itself is then fuzzed).
 *
 * Memory: a definition may legitimately ask for a world of many GB (capacity, cells), which the loader
 * creates where the host has the memory; libFuzzer's -malloc_limit_mb would report that as a finding.
 * The harness skips inputs whose world definition needs more than about FUZZ_WORLD_BYTES (its own
 * estimate from the capacity and the grid's cells, in 3D along z too, so that the definition reaches the library only
 * through the loader): what the file itself makes the loader allocate is bounded by the file's size. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "aerodem/aerodem.h"
#include "fuzz_file.h"

#define FUZZ_WORLD_BYTES (256u << 20)

static int keep_crc;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *k = getenv("AERODEM_FUZZ_KEEP_CRC");
    keep_crc = k && *k && strcmp(k, "0") != 0;
    return 0;
}

static uint32_t crc32_of(const uint8_t *p, size_t n)
{
    static uint32_t table[256];
    if (!table[1])
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            table[i] = c;
        }
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) c = table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
    return ~c;
}

/* 1 when a DEF section (wherever it lies) describes a world larger than FUZZ_WORLD_BYTES. */
static int world_too_big(const uint8_t *data, size_t size)
{
    size_t at = 16;
    while (size >= 4 && at + 16 <= size - 4) {
        uint64_t len;
        memcpy(&len, data + at + 8, 8);
        if (len > size - 4 - (at + 16)) return 0;
        /* this build's definition, or one of before the surface models (the loader takes both) */
        if (!memcmp(data + at, "DEF ", 4) &&
            (len == sizeof(ad_world_def) || len == offsetof(ad_world_def, body_surface))) {
            ad_world_def d;
            memset(&d, 0, sizeof d);
            memcpy(&d, data + at + 16, (size_t)len);
            /* generous per disc (its arrays, the sort's, the BVH's) and per cell (start, count) */
            double cell = d.cell_size > 0.0 ? d.cell_size : 2.0 * d.radius;
            double cells = ceil((d.x_max - d.x_min) / cell) * ceil((d.y_max - d.y_min) / cell);
            if (d.dimensions == 3) cells *= ceil((d.z_max - d.z_min) / cell); /* a 3D grid has depth */
            double bytes = 1024.0 * (double)d.capacity + 16.0 * (cells > 1.0 ? cells : 1.0);
            return bytes > FUZZ_WORLD_BYTES; /* NaN: not too big, the loader refuses it */
        }
        at += 16 + (size_t)len;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (world_too_big(data, size)) return 0;
    uint8_t *copy = NULL;
    if (!keep_crc && size >= 20) {
        copy = malloc(size);
        if (!copy) return 0;
        memcpy(copy, data, size);
        uint32_t c = crc32_of(copy, size - 4);
        memcpy(copy + size - 4, &c, 4);
        data = copy;
    }
    const char *path = fuzz_file(data, size, ".ckpt");
    free(copy);
    ad_world *w = NULL;
    void *user = NULL;
    size_t user_bytes = 0;
    ad_status st = ad_world_load(path, AD_BACKEND_CPU, 1, &w, &user, &user_bytes);
    free(user);
    if (st.code) return 0;
    (void)ad_world_step(w, 2);
    ad_world_destroy(w);
    return 0;
}
