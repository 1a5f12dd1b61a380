/* Haff's law in 3D: a freely cooling gas of inelastic spheres in a periodic box (no walls, no gravity).
 *
 * In the homogeneous cooling state of d = 3 hard spheres (diameter sigma, mass m, constant restitution
 * e, T = kT = m <|v - u|^2> / 3) a collision with normal relative speed g_n loses (1 - e^2) m g_n^2 / 4.
 * Over a Maxwellian of relative velocities (variance 2T/m a component) and the contact directions
 * (the unit sphere) the loss rate per volume is 2 sqrt(pi) (1 - e^2) n^2 sigma^2 g(sigma) m (T/m)^(3/2)
 * (the 2D test's derivation with the sphere's 4 pi sigma^2 for the circle's 2 pi sigma); divided by the
 * energy per volume 3 n T / 2:
 *
 *     dT/dt = -(4 sqrt(pi) / 3) (1 - e^2) n sigma^2 g T^(3/2) / sqrt(m),
 *     T^(-1/2) = T0^(-1/2) + b t,   b = (2 sqrt(pi) / 3) (1 - e^2) n sigma^2 g / sqrt(m)
 *
 * (Brilliantov & Poeschel, "Kinetic Theory of Granular Gases", OUP 2004, the cooling coefficient at
 * leading Sonine order), with the Carnahan-Starling contact value g(sigma) = (1 - phi/2) / (1 - phi)^3.
 * The linear spring-dashpot's e does not depend on the speed, so the law applies as it stands. The test
 * fits T^(-1/2) against t from t_skip (5 collision times: the lattice start is not yet the cooling
 * state) until T has dropped 10x (before clusters form), and checks the slope against b (B_TOL) and
 * the linearity (R^2 >= R2_MIN). Tolerances: docs/VALIDATION.md.
 *
 *   test_validation_haff3            the test
 *   test_validation_haff3 out.csv    writes T(t) to a CSV as well */
#include "test_util.h"

#define H_E 0.9
#define H_PHI 0.15
#define H_L 20.0
#define B_TOL 0.08
#define R2_MIN 0.998

int main(int argc, char **argv)
{
    ad_world_def d = ad_default_world_def();
    d.dimensions = 3;
    d.backend = AD_BACKEND_CPU;
    d.x_max = d.y_max = d.z_max = H_L;
    d.boundary_x = d.boundary_y = d.boundary_z = AD_BOUNDARY_PERIODIC;
    d.stiffness = 1e5;
    d.restitution = H_E;
    d.capacity = 8000;
    ad_world *w = NULL;
    REQUIRE_OK(ad_world_create(&d, &w));
    ad_fill_def f = {0, 0, H_L, H_L, H_PHI, 0, 0, 1.0, 1969, 0, H_L, 0};
    size_t n;
    REQUIRE_OK(ad_world_fill(w, &f, &n));
    double V = H_L * H_L * H_L, nd = n / V, phi = nd * TU_PI / 6.0, g = (1.0 - phi / 2) / pow(1.0 - phi, 3);
    double b = 2.0 * sqrt(TU_PI) / 3.0 * (1.0 - H_E * H_E) * nd * g;
    double omega0 = 4.0 * sqrt(TU_PI) * nd * g; /* Enskog collision frequency per sphere at T = 1 */
    double t_skip = 5.0 / omega0;
    FILE *csv = argc > 1 ? fopen(argv[1], "w") : NULL;
    if (csv) fprintf(csv, "t,T,T_haff\n");
    double sx = 0, sy = 0, sxx = 0, sxy = 0, syy = 0, T0 = 0, t0 = 0;
    int m = 0;
    for (;;) {
        REQUIRE_OK(ad_world_step(w, 200));
        ad_stats s = tu_stats(w);
        double p2 = s.momentum_x * s.momentum_x + s.momentum_y * s.momentum_y + s.momentum_z * s.momentum_z;
        double T = (2.0 * s.kinetic_energy - p2 / n) / (3.0 * n);
        if (s.time < t_skip) continue;
        if (!m) T0 = T, t0 = s.time;
        if (T < T0 / 10.0) break;
        double x = s.time - t0, y = 1.0 / sqrt(T);
        sx += x, sy += y, sxx += x * x, sxy += x * y, syy += y * y, m++;
        if (csv) fprintf(csv, "%.6f,%.6f,%.6f\n", s.time, T, 1.0 / pow(1.0 / sqrt(T0) + b * x, 2));
    }
    double slope = (m * sxy - sx * sy) / (m * sxx - sx * sx);
    double r = (m * sxy - sx * sy) / sqrt((m * sxx - sx * sx) * (m * syy - sy * sy));
    printf("Haff 3D: %zu spheres, phi = %.4f, e = %.2f, g(sigma) = %.4f; slope of T^-1/2 %.5f /s, theory %.5f /s "
           "(%+.2f%%), R^2 = %.5f over %d samples to T/T0 = 0.1\n",
           n, phi, H_E, g, slope, b, 100.0 * (slope / b - 1.0), r * r, m);
    ENSURE_REL(slope, b, B_TOL);
    ENSURE(r * r >= R2_MIN);
    if (csv) fclose(csv);
    ad_world_destroy(w);
    return tu_finish("validation_haff3");
}
