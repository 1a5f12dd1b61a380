/* Haff's law: a freely cooling gas of inelastic discs in a periodic box (no walls, no gravity).
 *
 * In the homogeneous cooling state of d = 2 hard discs (diameter sigma, mass m, constant
 * restitution e, kT per disc = m <|v|^2> / 2) the temperature obeys dT/dt = -zeta T with
 * (Brilliantov & Poeschel, "Kinetic Theory of Granular Gases", OUP 2004, eqs. for the cooling
 * coefficient at leading Sonine order with a2 = 0, d = 2):
 *
 *     zeta = (1 - e^2) omega / 2,   omega = 2 sqrt(pi) n sigma g(sigma) sqrt(kT/m)
 *
 * omega: the Enskog collision frequency per disc; g(sigma) = (1 - 7 phi/16) / (1 - phi)^2
 * (Henderson). Derivation: a collision with normal relative speed g_n loses (1 - e^2) m g_n^2 / 4;
 * averaging g_n^3 over a Maxwellian of relative velocities (variance 2kT/m a component) and over
 * the contact angle gives the loss rate per area sqrt(pi) (1 - e^2) n^2 sigma g m (kT/m)^(3/2),
 * divided by the energy per area n kT. Since zeta ~ sqrt(T):
 *
 *     T(t) = T0 / (1 + t / tau)^2,   tau = 2 / zeta0 = 4 / ((1 - e^2) omega0),
 *     T^(-1/2) = T0^(-1/2) + b t,    b = sqrt(pi) (1 - e^2) n sigma g / (2 sqrt(m))  (independent of T0)
 *
 * The linear spring-dashpot has a velocity-independent e, so the law applies without the
 * viscoelastic corrections. The test fits T^(-1/2) against t (least squares) from t_skip (a few
 * collision times: the lattice start is not yet the cooling state) until T has dropped 10x
 * (before clustering and vortices), and checks the slope against b (TAU_TOL) and the linearity
 * (R^2 >= R2_MIN). Tolerances: docs/VALIDATION.md.
 *
 *   test_validation_haff                      the test
 *   test_validation_haff out.csv [DROP [SEEDS [L [STOP]]]]   writes T(t) to a CSV, runs until T has
 *       dropped DROPx (default 100), fits up to a drop of STOPx (default 10), box side L (default 50)
 */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

#include <time.h>

#define H_R 0.5
#define H_M 1.0
#define H_E 0.9
#define H_K 1e5
#define H_PHI 0.15
#define TAU_TOL 0.08
#define R2_MIN 0.998

static double H_L = 50.0; /* box side [m] */

static double g_contact(double phi) { return (1.0 - 7.0 * phi / 16.0) / ((1.0 - phi) * (1.0 - phi)); }

typedef struct haff_fit {
    double n, phi, omega0, tau_theory, b_theory;
    double b_fit, a_fit, tau_fit, r2;
    double t_skip, t_end;
    int points;
    double wall_s;
} haff_fit;

/* Runs one cooling gas; samples T every dt_s until T < T(t_skip)/drop_stop (fit window) and
 * further until T < T(t_skip)/drop_run. Writes rows "seed,t,T" to csv when given. */
static haff_fit haff_run(uint64_t seed, double drop_stop, double drop_run, FILE *csv)
{
    haff_fit h;
    memset(&h, 0, sizeof h);
    struct timespec c0, c1;
    clock_gettime(CLOCK_MONOTONIC, &c0);
    ad_world_def d = tu_discs(tu_square(tu_def(), H_L, AD_BOUNDARY_PERIODIC), H_R, H_M, H_K, H_E);
    d.capacity = 16384;
    d.threads = 1; /* a few hundred discs: one block of work */
    ad_world *w = NULL;
    REQUIRE_OK(ad_world_create(&d, &w));
    ad_fill_def f = {0.0, 0.0, H_L, H_L, H_PHI, 0.0, 0.0, 1.0, seed, 0, 0, 0};
    size_t N = 0;
    REQUIRE_OK(ad_world_fill(w, &f, &N));
    double sigma = 2 * H_R;
    h.n = (double)N / (H_L * H_L);
    h.phi = h.n * TU_PI * H_R * H_R;
    double g = g_contact(h.phi);
    h.b_theory = sqrt(TU_PI) * (1 - H_E * H_E) * h.n * sigma * g / (2.0 * sqrt(H_M));
    h.omega0 = 2.0 * sqrt(TU_PI) * h.n * sigma * g * 1.0; /* at kT/m = 1 */
    h.tau_theory = 4.0 / ((1 - H_E * H_E) * h.omega0);
    h.t_skip = 3.0 / h.omega0; /* three collision times */
    double dts = 0.25;
    double sx = 0, sy = 0, sxx = 0, sxy = 0, syy = 0, T_skip = -1;
    int n = 0;
    ad_stats s = tu_stats(w);
    for (;;) {
        double t_next = s.time + dts;
        while (s.time < t_next) {
            if (!ENSURE_OK(ad_world_step(w, 20))) goto done;
            s = tu_stats(w);
        }
        double M = H_M * (double)N;
        double T = (s.kinetic_energy - (s.momentum_x * s.momentum_x + s.momentum_y * s.momentum_y) / (2 * M)) /
                   (double)N;
        if (csv) fprintf(csv, "%llu,%.5f,%.6g\n", (unsigned long long)seed, s.time, T);
        if (s.time < h.t_skip) continue;
        if (T_skip < 0) T_skip = T;
        if (T < T_skip / drop_run) break;
        if (T < T_skip / drop_stop) continue;
        double x = s.time, y = 1.0 / sqrt(T);
        sx += x, sy += y, sxx += x * x, sxy += x * y, syy += y * y, n++;
        h.t_end = s.time;
    }
done:;
    double cxx = sxx - sx * sx / n, cxy = sxy - sx * sy / n, cyy = syy - sy * sy / n;
    h.b_fit = cxy / cxx;
    h.a_fit = (sy - h.b_fit * sx) / n;
    h.r2 = cxy * cxy / (cxx * cyy);
    h.tau_fit = 1.0 / h.b_fit; /* at T0 = 1: tau = 1 / (b sqrt(T0)) */
    h.points = n;
    ad_world_destroy(w);
    clock_gettime(CLOCK_MONOTONIC, &c1);
    h.wall_s = (double)(c1.tv_sec - c0.tv_sec) + 1e-9 * (double)(c1.tv_nsec - c0.tv_nsec);
    printf("seed %llu: N %zu phi %.4f g %.4f omega0 %.4f | fit %.2f..%.2f (%d points): tau(kT0/m=1) %.3f, theory %.3f, "
           "rel dev %+.2f%%, R^2 %.6f | %.1f s\n",
           (unsigned long long)seed, N, h.phi, g, h.omega0, h.t_skip, h.t_end, n, h.tau_fit, h.tau_theory,
           100 * (h.tau_fit / h.tau_theory - 1), h.r2, h.wall_s);
    return h;
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        FILE *csv = fopen(argv[1], "w");
        if (!csv) return 1;
        double drop = argc > 2 ? atof(argv[2]) : 100.0;
        int seeds = argc > 3 ? atoi(argv[3]) : 1;
        if (argc > 4) H_L = atof(argv[4]);
        double stop = argc > 5 ? atof(argv[5]) : 10.0;
        fprintf(csv, "seed,t,T\n");
        for (int i = 0; i < seeds; i++) haff_run(7 + (uint64_t)i, stop, drop, csv);
        fclose(csv);
        return 0;
    }
    haff_fit h = haff_run(7, 10.0, 10.0, NULL);
    ENSURE(h.points >= 50);
    ENSURE_REL(h.tau_fit, h.tau_theory, TAU_TOL);
    ENSURE_LE(R2_MIN, h.r2);
    return tu_finish("validation_haff");
}
