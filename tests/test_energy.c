/* Energy of an elastic gas (e = 1, periodic box, no gravity): KE + PE must stay
 * constant up to the integrator's error. Symplectic Euler and velocity Verlet are
 * checked against a tight bound; forward Euler must be accepted, run, and drift
 * far more (it gains energy in every contact); RK4 must stay bounded. */
#include "test_util.h"

#define N_TARGET 2000
#define FRACTION 0.3

typedef struct run_result {
    int ok;
    double e0, e_end, max_drift; /* max |E - E0| / E0 over the run */
    double ke_end;
    size_t n;
} run_result;

static run_result run(ad_integrator integ, uint64_t steps)
{
    run_result r;
    memset(&r, 0, sizeof r);
    const double L = sqrt(N_TARGET * TU_PI * 0.25 / FRACTION); /* radius 0.5 */
    ad_world_def d = tu_square(tu_def(), L, AD_BOUNDARY_PERIODIC);
    d.restitution = 1.0;
    d.wall_restitution = 1.0;
    d.integrator = integ;
    d.threads = 1;
    ad_world *w = NULL;
    if (!ENSURE_OK(ad_world_create(&d, &w))) return r;
    /* inset by a radius so that no two discs overlap across the periodic seam */
    ad_fill_def f = {0.5, 0.5, L - 0.5, L - 0.5, FRACTION, 0.0, 0.0, 1.0, 12345, 0, 0, 0};
    size_t added = 0;
    if (!ENSURE_OK(ad_world_fill(w, &f, &added))) {
        ad_world_destroy(w);
        return r;
    }
    r.n = added;
    ENSURE_MSG(added > N_TARGET / 2 && added < N_TARGET * 2, "fill added %zu discs", added);

    /* the initial energy from the particles themselves: no overlaps at fill */
    ad_particle *p = malloc(added * sizeof *p);
    tu_read_by_id(w, added, p, NULL);
    double ke_read = 0.0;
    for (size_t i = 0; i < added; i++) ke_read += 0.5 * d.mass * ((double)p[i].vx * p[i].vx + (double)p[i].vy * p[i].vy);
    free(p);

    if (!ENSURE_OK(ad_world_step(w, 1))) {
        ad_world_destroy(w);
        return r;
    }
    ad_stats s = tu_stats(w);
    r.e0 = s.kinetic_energy + s.potential_energy;
    /* the stats after one step agree with the particles read before it */
    ENSURE_REL(r.e0, ke_read, 1e-3);
    ENSURE_MSG(r.e0 > 0.5 * added, "E0 = %g for %zu discs at temperature 1", r.e0, added);

    const uint64_t chunk = 10;
    for (uint64_t done = 1; done < steps; done += chunk) {
        ad_status st = ad_world_step(w, chunk);
        if (!ENSURE_OK(st)) break;
        s = tu_stats(w);
        double e = s.kinetic_energy + s.potential_energy;
        double drift = fabs(e - r.e0) / r.e0;
        if (!(drift <= r.max_drift)) r.max_drift = drift; /* NaN propagates */
        r.e_end = e;
        r.ke_end = s.kinetic_energy;
    }
    ENSURE(s.count == added);
    r.ok = 1;
    printf("%-18s %zu discs, %llu steps, t = %.3f s, dt = %.3g s: E0 = %.6f, E_end = %.6f, max |E-E0|/E0 = %.3e\n",
           ad_integrator_name(integ), added, (unsigned long long)s.step, s.time, s.dt, r.e0, r.e_end, r.max_drift);
    ad_world_destroy(w);
    return r;
}

int main(void)
{
    /* ~2 simulated seconds: each disc has a few collisions */
    run_result se = run(AD_INTEGRATOR_SYMPLECTIC_EULER, 2000);
    run_result vv = run(AD_INTEGRATOR_VERLET, 2000);
    run_result rk = run(AD_INTEGRATOR_RK4, 800);
    run_result se_short = run(AD_INTEGRATOR_SYMPLECTIC_EULER, 400);
    run_result fe = run(AD_INTEGRATOR_EULER, 400);

    ENSURE(se.ok && vv.ok && rk.ok && fe.ok && se_short.ok);
    /* Measured on the CPU backend (~1950 discs, dt = t_c/20): symplectic Euler 1.2e-3
     * (KE and PE are read half a step apart), velocity Verlet 7.6e-5, RK4 2.7e-3 (a slow
     * loss, ~1.3e-3 per second), forward Euler 0.24 in 400 steps. The bounds leave a
     * margin of 4-6x; Verlet's is below symplectic Euler's error, so a Verlet that
     * degenerates into a first-order scheme fails. */
    ENSURE_LE(se.max_drift, 5e-3);
    ENSURE_LE(vv.max_drift, 5e-4);
    ENSURE_LE(rk.max_drift, 1e-2);
    /* forward Euler gains energy in every contact */
    ENSURE_MSG(fe.e_end > fe.e0 * (1.0 + 10.0 * se_short.max_drift) && fe.max_drift > 10.0 * se_short.max_drift,
               "forward Euler: E0 = %g, E_end = %g, drift %.3e; symplectic Euler drift %.3e over the same steps",
               fe.e0, fe.e_end, fe.max_drift, se_short.max_drift);
    return tu_finish("test_energy");
}
