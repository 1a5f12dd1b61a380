/* libFuzzer harness for the airfoil file loader (src/core/airfoil.c): any bytes as a Selig or Lednicer
 * coordinate file. A file is refused with a message or loaded into an outline that passes
 * ad_outline_check, and can then be placed in a tunnel; never a crash, a leak, a hang or undefined
 * behaviour. */
#include "core/airfoil.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size, ".dat");
    ad_outline o;
    ad_status st = ad_airfoil_load(path, &o);
    if (st.code) return 0;
    if (ad_outline_check(&o, "fuzz").code) {
        fprintf(stderr, "a loaded airfoil fails ad_outline_check\n");
        abort();
    }
    ad_outline_free(&o);
    return 0;
}
