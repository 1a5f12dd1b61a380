/* The smallest use of the aerodem library: a box of gas, 1000 steps, the statistics. */
#include <stdio.h>

#include "aerodem/aerodem.h"

int main(void)
{
    ad_world_def def = ad_default_world_def(); /* 100 x 100 m box, solid walls, discs of radius 0.5 m */
    def.capacity = 10000;
    ad_world *w;
    ad_status st = ad_world_create(&def, &w);
    ad_fill_def fill = {0, 0, 100, 100, 0.3, 0, 0, 1.0, 1, 0, 0, 0}; /* region [m], area fraction, mean v, kT/m, seed */
    if (!st.code) st = ad_world_fill(w, &fill, NULL);
    if (!st.code) st = ad_world_step(w, 1000);
    ad_stats s;
    if (!st.code) st = ad_world_get_stats(w, &s);
    if (st.code) return fprintf(stderr, "aerodem: %s\n", st.message), ad_world_destroy(w), 1;
    printf("%zu discs, t = %.3f s, kinetic energy %.1f J, %s backend\n", s.count, s.time, s.kinetic_energy,
           ad_backend_name(s.backend));
    ad_world_destroy(w);
    return 0;
}
