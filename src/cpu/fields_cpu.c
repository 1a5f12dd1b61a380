/* The CPU backend's field sums: the current discs added to the time-averaged fields and the probe. */
#include "../core/world_internal.h"
#include "../physics/fields.h"
#include "cpu_world.h"

/* Adds the current discs to the field sums, serially in slot order: cheap next to
 * a step (it runs every `interval` steps) and the same sums for any thread count. A removed
 * disc (NaN position, until the next sort) falls in no cell. */
void ad_cpu_sample_fields(ad_world *w, const cpu_world *c)
{
    ad_fields *f = &w->fields;
    const ad_state *s = c->state[c->cur];
    const ad_accel *acc = ad_cpu_observed_accel(c);
    double *probe = f->sums + (size_t)f->def.nx * f->def.ny * AD_FS_COUNT;
    for (size_t k = 0; k < c->n; k++) {
        if (ad_in_probe(&f->grid, s[k])) {
            double v[AD_PS_COUNT];
            ad_probe_values(&f->grid, s[k], v);
            for (int q = 0; q < AD_PS_COUNT; q++) probe[q] += v[q];
        }
        int cell = ad_field_cell(&f->grid, s[k].x, s[k].y);
        if (cell < 0) continue;
        double v[AD_FS_COUNT];
        ad_field_values(s[k], c->virial[k], c->pressure[k], acc[k].ax, acc[k].ay, v);
        double *dst = f->sums + (size_t)cell * AD_FS_COUNT;
        for (int q = 0; q < AD_FS_COUNT; q++) dst[q] += v[q];
    }
    f->samples++;
    if (f->grid.probe) f->probe_samples++;
}
