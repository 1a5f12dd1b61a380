/* Total momentum of an inelastic (e = 0.7) gas in a doubly periodic box without
 * gravity is conserved: pair forces are equal and opposite, including pairs across
 * the periodic seams (minimum image). */
#include "test_util.h"

#define N_TARGET 1500
#define FRACTION 0.3
#define STEPS 2000

static void momentum_of(const ad_particle *p, size_t n, double m, double *px, double *py, double *scale,
                        double *ke)
{
    *px = *py = *scale = *ke = 0.0;
    for (size_t i = 0; i < n; i++) {
        *px += m * p[i].vx;
        *py += m * p[i].vy;
        *scale += m * hypot(p[i].vx, p[i].vy);
        *ke += 0.5 * m * ((double)p[i].vx * p[i].vx + (double)p[i].vy * p[i].vy);
    }
}

static void run(ad_integrator integ)
{
    const double L = sqrt(N_TARGET * TU_PI * 0.25 / FRACTION);
    ad_world_def d = tu_def();
    d.x_min = -0.5 * L;
    d.x_max = 0.5 * L;
    d.y_min = 10.0;
    d.y_max = 10.0 + L;
    d.boundary_x = d.boundary_y = AD_BOUNDARY_PERIODIC;
    d.restitution = 0.7;
    d.integrator = integ;
    d.threads = 1;
    ad_world *w = NULL;
    REQUIRE_OK(ad_world_create(&d, &w));
    const double vx = 0.7, vy = -0.4;
    ad_fill_def f = {d.x_min + 0.5, d.y_min + 0.5, d.x_max - 0.5, d.y_max - 0.5, FRACTION, vx, vy, 1.0, 777, 0, 0, 0};
    size_t n = 0;
    REQUIRE_OK(ad_world_fill(w, &f, &n));
    ad_particle *p = malloc(n * sizeof *p);
    tu_read_by_id(w, n, p, NULL);
    double px0, py0, scale0, ke0;
    momentum_of(p, n, d.mass, &px0, &py0, &scale0, &ke0);
    double M = d.mass * (double)n;
    /* the fill gives the requested mean velocity (std of the mean ~ 1/sqrt(n)) */
    ENSURE_NEAR(px0 / M, vx, 0.1);
    ENSURE_NEAR(py0 / M, vy, 0.1);
    double thermal0 = ke0 - 0.5 * (px0 * px0 + py0 * py0) / M;

    REQUIRE_OK(ad_world_step(w, STEPS));
    ad_stats s = tu_stats(w);
    tu_read_by_id(w, n, p, NULL);
    double px1, py1, scale1, ke1;
    momentum_of(p, n, d.mass, &px1, &py1, &scale1, &ke1);
    double thermal1 = ke1 - 0.5 * (px1 * px1 + py1 * py1) / M;
    double dp = hypot(px1 - px0, py1 - py0);
    printf("%-18s %zu discs, %d steps, t = %.3f s: P0 = (%.6f, %.6f), P = (%.6f, %.6f), |P-P0| = %.3e = %.3e of "
           "sum|mv| = %.1f; thermal KE %.2f -> %.2f\n",
           ad_integrator_name(integ), n, STEPS, s.time, px0, py0, px1, py1, dp, dp / scale0, scale0, thermal0,
           thermal1);
    ENSURE_LE(dp, 1e-4 * scale0);
    /* the stats report the same momentum as the particles */
    ENSURE_NEAR(s.momentum_x, px1, 1e-5 * scale0);
    ENSURE_NEAR(s.momentum_y, py1, 1e-5 * scale0);
    ENSURE_NEAR(s.kinetic_energy, ke1, 1e-4 * ke1);
    /* collisions happened and dissipated: the test is not vacuous */
    ENSURE_MSG(thermal1 < 0.97 * thermal0, "thermal KE %.4f -> %.4f: too few inelastic collisions", thermal0,
               thermal1);
    free(p);
    ad_world_destroy(w);
}

int main(void)
{
    run(AD_INTEGRATOR_SYMPLECTIC_EULER);
    run(AD_INTEGRATOR_VERLET);
    return tu_finish("test_momentum");
}
