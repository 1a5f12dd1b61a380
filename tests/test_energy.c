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

static run_result run_steps(ad_integrator integ, uint64_t steps, double contact_steps)
{
    run_result r;
    memset(&r, 0, sizeof r);
    const double L = sqrt(N_TARGET * TU_PI * 0.25 / FRACTION); /* radius 0.5 */
    ad_world_def d = tu_square(tu_def(), L, AD_BOUNDARY_PERIODIC);
    d.restitution = 1.0;
    d.wall_restitution = 1.0;
    d.integrator = integ;
    d.contact_steps = contact_steps;
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

static run_result run(ad_integrator integ, uint64_t steps) { return run_steps(integ, steps, 20.0); }

/* The order of an integrator: the largest energy error over the same simulated time with the step
 * halved (contact time / 8, then / 16: the adaptive step is the contact time's here). A second-order
 * scheme's error falls about 4 times, a first-order one's about 2 times. Coarse steps, because at
 * t_c / 20 Verlet's error (7e-5) is that of the float positions (it does not fall with the step:
 * 6.9e-5 at t_c / 20, 8.2e-5 at t_c / 40). */
static double order_ratio(ad_integrator integ, uint64_t steps)
{
    run_result a = run_steps(integ, steps, 8.0), b = run_steps(integ, 2 * steps, 16.0);
    ENSURE(a.ok && b.ok);
    double r = a.max_drift / b.max_drift;
    printf("%-18s the step halved: largest |E-E0|/E0 %.3e -> %.3e, %.2f times smaller\n", ad_integrator_name(integ),
           a.max_drift, b.max_drift, r);
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
    /* Measured (CPU backend, 400 steps at t_c/8 and 800 at t_c/16, about 1.1 s): velocity Verlet
     * 5.1e-4 -> 1.4e-4 (3.70 times), symplectic Euler 2.4e-3 -> 1.2e-3 (1.91 times). Verlet's must
     * show its second order, symplectic Euler its first. */
    double vv_order = order_ratio(AD_INTEGRATOR_VERLET, 400);
    double se_order = order_ratio(AD_INTEGRATOR_SYMPLECTIC_EULER, 400);
    ENSURE_MSG(vv_order > 3.0, "velocity Verlet: halving the step divides the energy error by %.2f (second order: ~4)",
               vv_order);
    ENSURE_MSG(se_order < 3.0, "symplectic Euler: halving the step divides the energy error by %.2f (first order: ~2)",
               se_order);
    return tu_finish("test_energy");
}
