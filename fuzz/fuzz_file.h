/* The loaders read files by path: a fuzzer's input goes to a file of this process first. */
#ifndef AD_FUZZ_FILE_H
#define AD_FUZZ_FILE_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Writes data to a file of this process under $TMPDIR (or /tmp) and returns its path (static). */
static const char *fuzz_file(const uint8_t *data, size_t size, const char *suffix)
{
    static char path[512];
    if (!path[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(path, sizeof path, "%s/aerodem_fuzz_%ld%s", t && *t ? t : "/tmp", (long)getpid(), suffix);
    }
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (size && fwrite(data, 1, size, f) != size) abort();
    if (fclose(f)) abort();
    return path;
}
#endif
