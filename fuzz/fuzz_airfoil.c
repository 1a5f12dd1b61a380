/* libFuzzer harness for the airfoil file loader (src/core/airfoil_file.c): any bytes as a Selig or Lednicer
 * coordinate file. A file is refused with a message or loaded into an outline that passes ad_outline_check and
 * places in a tunnel as finite segments; never a crash, a leak, a hang or undefined behaviour.
 * The same bytes, read as small integer points, also test the outline check's sweep (outline_check.c) against
 * its plain reference: integer points are exact in the orientation tests and full of the collinear runs, shared
 * vertices and touching edges that a sweep can get wrong. */
#include <math.h>
#include <stdlib.h>

#include "core/airfoil.h"
#include "core/outline_internal.h"
#include "fuzz_file.h"

/* The reference is O(n^2): keep the outlines it sees small enough to stay fast. */
#define FUZZ_CHECK_MAX_POINTS 128

static void fuzz_load(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size, ".dat");
    ad_outline o;
    ad_status st = ad_airfoil_load(path, &o);
    if (st.code) return;
    if (ad_outline_check(&o, "fuzz").code) {
        fprintf(stderr, "a loaded airfoil fails ad_outline_check\n");
        abort();
    }
    ad_segment *segs = NULL;
    size_t nseg = 0;
    st = ad_outline_place(&o, 0.5, 7.0, 10.0, 5.0, &segs, &nseg);
    if (st.code == AD_OK) {
        if (nseg != o.n) abort();
        for (size_t k = 0; k < nseg; k++) {
            const ad_segment *g = &segs[k];
            if (!isfinite(g->x0) || !isfinite(g->y0) || !isfinite(g->x1) || !isfinite(g->y1)) {
                fprintf(stderr, "placed segment %zu is not finite\n", k);
                abort();
            }
        }
    } else if (st.code != AD_ERR_INVALID) {
        fprintf(stderr, "placing a loaded airfoil failed: %s\n", st.message);
        abort();
    }
    free(segs);
    ad_outline_free(&o);
}

static void fuzz_check(const uint8_t *data, size_t size)
{
    size_t n = size / 2;
    if (n < 2 || n > FUZZ_CHECK_MAX_POINTS) return;
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    if (!x || !y) abort();
    for (size_t i = 0; i < n; i++) {
        x[i] = (int8_t)data[2 * i];
        y[i] = (int8_t)data[2 * i + 1];
    }
    ad_outline o = {x, y, n, (int)(size & 1)};
    ad_check_result f = ad_outline_check_core(&o), r = ad_outline_check_reference(&o);
    if (f.kind != r.kind || (f.kind != AD_CHECK_CROSS && f.i != r.i)) {
        fprintf(stderr, "outline check: sweep kind %d (%zu, %zu), reference kind %d (%zu, %zu), n %zu closed %d\n",
                (int)f.kind, f.i, f.j, (int)r.kind, r.i, r.j, n, o.closed);
        abort();
    }
    free(x);
    free(y);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_load(data, size);
    fuzz_check(data, size);
    return 0;
}
