/* The aerodem command-line program. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aerodem/aerodem.h"

static int fail(ad_status st)
{
    fprintf(stderr, "aerodem: error: %s\n", st.message);
    return 1;
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    ad_world_def def = ad_default_world_def();
    def.boundary_x = def.boundary_y = AD_BOUNDARY_PERIODIC;
    ad_world *w;
    ad_status st = ad_world_create(&def, &w);
    if (st.code) return fail(st);
    ad_fill_def f = {0, 0, 100, 100, 0.3, 0, 0, 1.0, 1};
    size_t added;
    st = ad_world_fill(w, &f, &added);
    if (st.code) return fail(st);
    for (int k = 0; k < 10; k++) {
        st = ad_world_step(w, 100);
        if (st.code) return fail(st);
        ad_stats s;
        ad_world_get_stats(w, &s);
        printf("step %llu t=%.4f KE=%.6g PE=%.3g P=(%.3g,%.3g) maxocc=%u\n", (unsigned long long)s.step, s.time,
               s.kinetic_energy, s.potential_energy, s.momentum_x, s.momentum_y, s.max_cell_occupancy);
    }
    ad_world_destroy(w);
    return 0;
}
