/* The contact-free test's clock (contact_free_cpu.h): set at creation, advanced after every step.
 *
 * Contract. free_clock is a distance (metres), the same for every disc: after each step it has
 * grown by at least twice the largest distance any disc moved in that step, so between the
 * step a disc's expiry was set at and any later step, no two discs can have closed their
 * distance by more than the clock advanced. A disc's expiry (free_until, contact_free_cpu.h) is
 * the clock at its test plus its margin; while the clock is below it, the disc is still
 * contact-free. The clock may only run fast (it is rounded up, and jumps past every expiry
 * where it cannot vouch for a step), which costs tests, never exactness. */
#include <math.h>

#include "contact_free_cpu.h"
#include "cpu_world.h"

/* The clock's rounding allowances come from the largest coordinate of the grid: a float
 * position there is good to half an ulp. */
static double coord_ulp(const ad_params *P)
{
    double R = fmax(fmax(fabs((double)P->origin_x), fabs((double)P->origin_x + (double)P->nx * P->cell_x)),
                    fmax(fabs((double)P->origin_y), fabs((double)P->origin_y + (double)P->ny * P->cell_y)));
    return ldexp(1.0, ilogb(R > 1e-30 ? R : 1e-30) - 23);
}

/* The clock as the next pass takes it: rounded up for the expiry test, down for new expiries. */
static void free_clock_floats(cpu_world *c)
{
    float f = (float)c->free_clock;
    c->free_clock_f.up = (double)f >= c->free_clock ? f : nextafterf(f, INFINITY);
    c->free_clock_f.down = (double)f <= c->free_clock ? f : nextafterf(f, -INFINITY);
}

/* The clock at zero, and the world's constants of it. */
void ad_cpu_free_clock_init(ad_world *w, cpu_world *c)
{
    const ad_params *P = &w->params;
    c->free_clock = 0.0;
    c->free_clock_v2 = 0.0f;
    c->free_clock_ulp = coord_ulp(P);
    c->free_clock_f.dlim = sqrtf(P->diameter_sq) * (1.0f + 1e-5f);
    c->free_clock_f.slack = (float)(8.0 * c->free_clock_ulp + 1e-6 * (double)P->diameter);
    free_clock_floats(c);
}

/* After a step: the clock grows by twice the largest distance a disc moved (its speed before
 * or after the step, times dt), plus the positions' rounding; and past every expiry (margins
 * stay below 1.5 cells) where the pass did not keep the expiries (kept = 0: it did not run
 * the prefilters) or a disc moved more than a quarter cell (contact_free_cpu.h: a disc that
 * wraps lands that close to an edge). Far along, where a float of the clock would round
 * margins away, it starts again from zero with every expiry cleared. */
void ad_cpu_free_clock_step(const ad_world *w, cpu_world *c, size_t n, int kept, double dt, float v2)
{
    if (!c->free_until) return;
    const ad_params *P = &w->params;
    double move = sqrt((double)fmaxf(v2, c->free_clock_v2)) * dt;
    double wmin = fmin((double)P->cell_x, (double)P->cell_y), wmax = fmax((double)P->cell_x, (double)P->cell_y);
    c->free_clock_v2 = v2;
    if (!kept || !(move <= 0.25 * wmin)) c->free_clock += 2.0 * wmax;
    c->free_clock += 2.0 * move * (1.0 + 1e-6) + 2.0 * c->free_clock_ulp;
    if (!(c->free_clock < 4096.0 * wmax)) {
        for (size_t i = 0; i < n; i++) c->free_until[i] = -INFINITY;
        c->free_clock = 0.0;
    }
    free_clock_floats(c);
}
