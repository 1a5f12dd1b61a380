/* libFuzzer harness for the checkpoint loader (src/core/checkpoint.c): any bytes as a checkpoint.
 * A file is refused with a message or gives a world that steps; never a crash, a leak, a hang or
 * undefined behaviour. */
#include "aerodem/aerodem.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size, ".ckpt");
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
