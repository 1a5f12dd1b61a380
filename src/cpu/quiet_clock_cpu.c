/* The quiet test's clock on the CPU (gather_cpu.h): set at creation, advanced after every step. */
#include <math.h>

#include "cpu_world.h"
#include "gather_cpu.h"

/* The quiet test's clock (gather_cpu.h, ad_cpu_quiet8_avx2). Its rounding allowances come from
 * the largest coordinate of the grid: a float position there is good to half an ulp. */
static double coord_ulp(const ad_params *P)
{
    double R = fmax(fmax(fabs((double)P->origin_x), fabs((double)P->origin_x + (double)P->nx * P->cell_x)),
                    fmax(fabs((double)P->origin_y), fabs((double)P->origin_y + (double)P->ny * P->cell_y)));
    return ldexp(1.0, ilogb(R > 1e-30 ? R : 1e-30) - 23);
}

/* The clock as the next pass takes it: rounded up for the expiry test, down for new expiries. */
static void quiet_clock_floats(cpu_world *c)
{
    float f = (float)c->quiet_clock;
    c->qc.up = (double)f >= c->quiet_clock ? f : nextafterf(f, INFINITY);
    c->qc.down = (double)f <= c->quiet_clock ? f : nextafterf(f, -INFINITY);
}

/* The clock at zero, and the world's constants of it. */
void ad_cpu_quiet_clock_init(ad_world *w, cpu_world *c)
{
    const ad_params *P = &w->params;
    c->quiet_clock = 0.0;
    c->quiet_v2 = 0.0f;
    c->quiet_ulp = coord_ulp(P);
    c->qc.dlim = sqrtf(P->diameter_sq) * (1.0f + 1e-5f);
    c->qc.slack = (float)(8.0 * c->quiet_ulp + 1e-6 * (double)P->diameter);
    quiet_clock_floats(c);
}

/* After a step: the clock grows by twice the largest distance a disc moved (its speed before
 * or after the step, times dt), plus the positions' rounding; and past every expiry (margins
 * stay below 1.5 cells) where the pass did not keep the expiries or a disc moved more than
 * a quarter cell (gather_cpu.h: a disc that wraps lands that close to an edge). Far along,
 * where a float of the clock would round margins away, it starts again from zero with every
 * expiry cleared. */
void ad_cpu_quiet_clock_step(const ad_world *w, cpu_world *c, size_t n, int kept, double dt, float v2)
{
    if (!c->qexp) return;
    const ad_params *P = &w->params;
    double move = sqrt((double)fmaxf(v2, c->quiet_v2)) * dt;
    double wmin = fmin((double)P->cell_x, (double)P->cell_y), wmax = fmax((double)P->cell_x, (double)P->cell_y);
    c->quiet_v2 = v2;
    if (!kept || !(move <= 0.25 * wmin)) c->quiet_clock += 2.0 * wmax;
    c->quiet_clock += 2.0 * move * (1.0 + 1e-6) + 2.0 * c->quiet_ulp;
    if (!(c->quiet_clock < 4096.0 * wmax)) {
        for (size_t i = 0; i < n; i++) c->qexp[i] = -INFINITY;
        c->quiet_clock = 0.0;
    }
    quiet_clock_floats(c);
}
