/* The 3D free stream (physics/open3.h) on the plain pipeline: a tunnel open along x, periodic along y and
 * z.
 *   - free-molecular (no sphere contacts): the entry rate through the faces against the one-way flux of
 *     kinetic theory, and a tunnel filled with the stream's gas kept at the free stream (number, mean
 *     velocity, temperature) over six transits;
 *   - with contacts at volume fraction 0.1: the entry rate, the number and the temperature as free-molecular;
 *     the mean velocity within 10 %: without a reservoir (test_reservoir3 runs one) the open faces pass the stream's
 *     kinetic momentum flux but not its collisional part, so the gas piles up at the inlet and expands out
 *     of the outlet (measured on a 16 x 16 m face: density 0.237 / 0.177 at inlet / outlet against the
 *     stream's 0.2, velocity 1.61 / 2.14 against 2, the mean 1.92; docs/VALIDATION.md);
 *   - the bookkeeping: ids unique, spheres = entered - left; backend = reference against cpu and 1 thread
 *     against 4, sphere by sphere; a checkpoint with spheres waiting for room resumed bit for bit;
 *   - what stays refused in 3D (an open z axis). */
#include "tunnel3_cases.h"

#define LX 16.0

/* The tunnel filled with the stream's gas, then kept by the stream alone: over six transits of 8 s the
 * gas stays the free stream (a tunnel filled from empty takes a long time to hold its share of the
 * slowest spheres: after 100 s it still lacks 2 % of them). */
static void stream_case(int contacts, double n, double tol_n, double tol_v, double tol_t)
{
    ad_world_def d = tu3_tunnel(AD_BACKEND_CPU, 2, LX, n, contacts);
    ad_world *w = tu3_filled(&d, n * 4.0 / 3.0 * TU_PI * 0.125);
    size_t n0 = w->count;
    double rate = w->params.side_rate[0] + w->params.side_rate[1];
    /* the one-way flux, by hand: a = U / sigma = 2 through the upstream face of 8 x 8 m, -2 downstream */
    double a = 2.0, phi = exp(-0.5 * a * a) / sqrt(2.0 * TU_PI), Phi = 0.5 * erfc(-a / sqrt(2.0));
    double want = 64.0 * n * ((phi + a * Phi) + (phi - a * (1 - Phi)));
    ENSURE_REL(rate, want, 1e-6);
    tu3_run_until(w, 8.0);
    ad_stats s0 = tu_stats(w);
    tu3_slabs *sl = tu3_sample(w, 56.0);
    ad_stats s1 = tu_stats(w);
    tu3_region g = tu3_region_of(sl, 0, (int)LX);
    double rate_in = (double)(s1.entered - s0.entered) / (s1.time - s0.time);
    printf("%s, n = %g: %.1f spheres (stream: %.1f, filled with %zu), vx %.4f (2), T %.4f (1); entries %.2f/s "
           "(theory %.2f)\n", contacts ? "contacts" : "free-molecular", n, g.density * LX * 64.0, n * LX * 64.0, n0,
           g.vx, g.temperature, rate_in, want);
    ENSURE_REL(g.density, n, tol_n);
    ENSURE_REL(g.vx, 2.0, tol_v);
    ENSURE_REL(g.temperature, 1.0, tol_t);
    ENSURE_REL(rate_in, want, 0.05); /* about 2500 entries: 3 sigma is 6 %, the mean 2 % */
    ENSURE(tu3_balanced(&s1, n0) && s1.entries_lost == 0);
    free(sl);
    ad_world_destroy(w);
}

static void test_refusals(void)
{
    ad_world_def d = tu3_tunnel(AD_BACKEND_CPU, 1, LX, 0.1, 1);
    d.reservoir = 2.0; /* the 3D reservoir: accepted */
    ad_status st = ad_world_def_validate(&d);
    ENSURE(st.code == AD_OK);
    d = tu3_tunnel(AD_BACKEND_CPU, 1, LX, 0.1, 1);
    d.boundary_z = AD_BOUNDARY_OPEN;
    st = ad_world_def_validate(&d);
    ENSURE(st.code == AD_ERR_INVALID && !strcmp(st.field, "boundary_z"));
}

int main(void)
{
    test_refusals();
    stream_case(0, 0.4, 0.03, 0.02, 0.03);
    stream_case(1, 0.2, 0.05, 0.1, 0.05);
    ad_world_def d = tu3_tunnel(AD_BACKEND_CPU, 2, LX, 0.2, 1);
    tu3_backends_agree(d, 0.1, 1500);
    tu3_bookkeeping(&d, 0.1, 3000);
    /* a dense stream (volume fraction 0.26) into a gas at 0.25 has spheres waiting for room */
    d.stream_density = 0.5;
    tu3_checkpoint(&d, 0.25, 0, 1, AD_BACKEND_REFERENCE);
    return tu_finish("test_open3");
}
