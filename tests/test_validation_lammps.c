/* The same inelastic 2D granular gas in aerodem and in LAMMPS (pair_style gran/hooke): kinetic energy and
 * pressure against time, compared with LAMMPS curves committed in docs/validation/lammps_cooling.csv.
 *
 * The gas: N = 100 x 100 discs, diameter 1, mass 1, area fraction 0.25, periodic square box of side
 * L = 100 a (square lattice, sites at (i + 1/2) a), Gaussian velocities from aerodem's counter-based RNG
 * with the mean removed and scaled to kT/m = 1 exactly, k_n = 1e3, e = 0.9, no friction, fixed
 * dt = t_c/50 (t_c = pi sqrt(m_eff/k_n), m_eff = m/2), velocity Verlet in both codes. Both codes start
 * from the same floats: `--data SEED FILE` writes them as a LAMMPS data file
 * (bench/lammps/run_cooling.sh runs LAMMPS on it).
 *
 * Mapping of the damping: aerodem's force on a pair is k delta - gamma v_n with gamma = 2 beta
 * sqrt(m_eff k), beta = -ln e / sqrt(pi^2 + ln^2 e) (src/physics/contact.h); gran/hooke's is
 * k delta - m_eff gamma_n v_n with m_eff = m_i m_j/(m_i + m_j) from the per-atom masses, so
 * gamma_n = gamma / m_eff = 2 beta sqrt(k / m_eff). Neither clips the force at zero (gran/hooke
 * clips only with the limit_damping keyword, not used).
 *
 * Observables, averaged over windows of LG_WINDOW steps (every step counted once in each code):
 *   KE = sum m v^2 / 2;   P = (sum m v^2 + sum_pairs r_ij . F_ij) / (2 L^2)
 * aerodem: kinetic_energy_integral and contact_virial_integral; LAMMPS: fix ave/time 1 W W of
 * compute ke and thermo_press (the 2D virial pressure, the same expression).
 *
 * Trajectories diverge chaotically (float in aerodem, double in LAMMPS, and a different dashpot
 * velocity: aerodem's Verlet predicts v + a dt, LAMMPS uses the half-step v + a dt/2), so after a
 * few collision times only statistics can agree. The reference file also holds a second LAMMPS run
 * of each seed with every disc moved at random by up to 1e-5: the difference between the two runs is the
 * chaotic noise of these curves. The tolerances (docs/VALIDATION.md) are set from it.
 *
 *   test_validation_lammps                  the test (reads the committed reference)
 *   test_validation_lammps --data SEED FILE writes the initial state as a LAMMPS data file
 *   test_validation_lammps --csv FILE SEED... aerodem's curves, in the reference file's format */
#include "test_util.h"

#include "physics/rng.h"

#include <time.h>

#define LG_NSIDE 100
#define LG_PHI 0.25
#define LG_R 0.5
#define LG_M 1.0
#define LG_E 0.9
#define LG_K 1e3
#define LG_STEPS_PER_TC 50
#define LG_WINDOW 350      /* steps per averaging window */
#define LG_WINDOWS 60      /* windows per run (the reference, the plot) */
#define LG_TEST_WINDOWS 40 /* windows the test runs (t = 19.7, T down 6x): 40 % cheaper */
#define LG_EARLY 4         /* windows before the trajectories decorrelate (t < 2, ~3 collisions per disc) */

/* Tolerances, relative (docs/VALIDATION.md: from the spread between LAMMPS runs moved by 1e-5) */
#define TOL_KE0 1e-8      /* the same initial state */
#define TOL_EARLY_KE 5e-4 /* windows 1..LG_EARLY */
#define TOL_EARLY_P 3e-3
#define TOL_KE 0.03 /* each later window */
#define TOL_P 0.06
#define TOL_KE_MEAN 0.015 /* mean over the later windows */
#define TOL_Z_MEAN 0.01   /* mean of the ratio of Z = P L^2 / KE (the cooling's noise divides out) */
#define LG_REF "docs/validation/lammps_cooling.csv"

static const uint64_t TEST_SEEDS[] = {1};
#define NTEST_SEEDS (sizeof TEST_SEEDS / sizeof TEST_SEEDS[0])

static double box_side(void)
{
    return sqrt(LG_NSIDE * LG_NSIDE * TU_PI * LG_R * LG_R / LG_PHI);
}
static double time_step(void)
{
    return TU_PI * sqrt(0.5 * LG_M / LG_K) / LG_STEPS_PER_TC;
}

/* The initial state of seed `seed`, as floats. */
static void initial_state(uint64_t seed, ad_particle *p)
{
    const int n = LG_NSIDE * LG_NSIDE;
    const double a = box_side() / LG_NSIDE;
    double mx = 0, my = 0;
    double *v = malloc(2 * (size_t)n * sizeof *v);
    if (!v) exit(1);
    for (int i = 0; i < n; i++) {
        ad_rng_normal2(seed, (uint64_t)i, &v[2 * i], &v[2 * i + 1]);
        mx += v[2 * i];
        my += v[2 * i + 1];
    }
    mx /= n;
    my /= n;
    double s2 = 0;
    for (int i = 0; i < n; i++) {
        v[2 * i] -= mx;
        v[2 * i + 1] -= my;
        s2 += v[2 * i] * v[2 * i] + v[2 * i + 1] * v[2 * i + 1];
    }
    double scale = sqrt(2.0 * n / s2); /* kT/m = 1: sum |v|^2 = 2 N */
    for (int i = 0; i < n; i++) {
        int row = i / LG_NSIDE, col = i % LG_NSIDE;
        p[i] = (ad_particle){(float)((col + 0.5) * a), (float)((row + 0.5) * a), (float)(v[2 * i] * scale),
                             (float)(v[2 * i + 1] * scale)};
    }
    free(v);
}

static int write_data(uint64_t seed, const char *path)
{
    const int n = LG_NSIDE * LG_NSIDE;
    ad_particle *p = malloc((size_t)n * sizeof *p);
    FILE *f = fopen(path, "w");
    if (!p || !f) {
        fprintf(stderr, "cannot write %s\n", path);
        return 1;
    }
    initial_state(seed, p);
    double L = box_side();
    /* the density makes the sphere-volume mass 1; the input sets the mass to 1 anyway */
    fprintf(f, "LAMMPS data file: aerodem cooling gas (tests/test_validation_lammps.c), seed %llu\n\n",
            (unsigned long long)seed);
    fprintf(f, "%d atoms\n1 atom types\n\n0 %.17g xlo xhi\n0 %.17g ylo yhi\n-0.5 0.5 zlo zhi\n\n", n, L, L);
    fprintf(f, "Atoms # sphere\n\n");
    for (int i = 0; i < n; i++)
        fprintf(f, "%d 1 1 %.17g %.9g %.9g 0\n", i + 1, 6.0 / TU_PI, p[i].x, p[i].y);
    fprintf(f, "\nVelocities\n\n");
    for (int i = 0; i < n; i++)
        fprintf(f, "%d %.9g %.9g 0 0 0 0\n", i + 1, p[i].vx, p[i].vy);
    fclose(f);
    free(p);
    return 0;
}

/* One curve: KE and P at the end of each window (index 0: instantaneous at t = 0). */
typedef struct curve {
    double t[LG_WINDOWS + 1], ke[LG_WINDOWS + 1], p[LG_WINDOWS + 1];
} curve;

static curve run_aerodem(uint64_t seed, int windows, double *wall_s)
{
    struct timespec c0, c1;
    clock_gettime(CLOCK_MONOTONIC, &c0);
    curve c;
    memset(&c, 0, sizeof c);
    const int n = LG_NSIDE * LG_NSIDE;
    const double L = box_side(), A = L * L, dt = time_step();
    ad_world_def d = tu_discs(tu_square(tu_def(), L, AD_BOUNDARY_PERIODIC), LG_R, LG_M, LG_K, LG_E);
    d.integrator = AD_INTEGRATOR_VERLET;
    d.adaptive_dt = 0;
    d.dt = dt;
    d.capacity = (size_t)n;
    ad_world *w = NULL;
    REQUIRE_OK(ad_world_create(&d, &w));
    ad_particle *p = malloc((size_t)n * sizeof *p);
    if (!p) exit(1);
    initial_state(seed, p);
    REQUIRE_OK(ad_world_add_particles(w, p, (size_t)n));
    /* t = 0: the lattice has no contacts, so P is the kinetic part (statistics start with a step) */
    double ke0 = 0;
    for (int i = 0; i < n; i++)
        ke0 += 0.5 * LG_M * ((double)p[i].vx * p[i].vx + (double)p[i].vy * p[i].vy);
    free(p);
    ad_stats a = tu_stats(w);
    c.t[0] = 0.0;
    c.ke[0] = ke0;
    c.p[0] = 2 * ke0 / (2 * A);
    for (int j = 1; j <= windows; j++) {
        if (!ENSURE_OK(ad_world_step(w, LG_WINDOW))) break;
        ad_stats b = tu_stats(w);
        double span = b.time - a.time;
        double ke = (b.kinetic_energy_integral - a.kinetic_energy_integral) / span;
        double vir = (b.contact_virial_integral - a.contact_virial_integral) / span;
        c.t[j] = (double)b.step * dt;
        c.ke[j] = ke;
        c.p[j] = (2 * ke + vir) / (2 * A);
        a = b;
    }
    ad_world_destroy(w);
    clock_gettime(CLOCK_MONOTONIC, &c1);
    if (wall_s) *wall_s = (double)(c1.tv_sec - c0.tv_sec) + 1e-9 * (double)(c1.tv_nsec - c0.tv_nsec);
    return c;
}

static void write_curve(FILE *f, const char *code, uint64_t seed, const curve *c)
{
    for (int j = 0; j <= LG_WINDOWS; j++)
        fprintf(f, "%s,%llu,%d,%.6f,%.9g,%.9g\n", code, (unsigned long long)seed, j * LG_WINDOW, c->t[j], c->ke[j],
                c->p[j]);
}

/* Reads the curve of (code, seed) from the reference file. Returns 0 when the file is missing or
 * the curve incomplete, with the reason printed. */
static int read_reference(const char *path, const char *code, uint64_t seed, curve *c)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr,
                "FAIL: the LAMMPS reference %s cannot be opened. It is committed with the repository and made by "
                "bench/lammps/run_cooling.sh (needs LAMMPS); this test compares aerodem against it and cannot "
                "pass without it.\n",
                path);
        return 0;
    }
    char line[512], name[64];
    int have[LG_WINDOWS + 1] = {0};
    while (fgets(line, sizeof line, f)) {
        unsigned long long sd;
        long step;
        double t, ke, p;
        if (line[0] == '#' || sscanf(line, "%63[^,],%llu,%ld,%lf,%lf,%lf", name, &sd, &step, &t, &ke, &p) != 6)
            continue;
        if (strcmp(name, code) != 0 || sd != seed || step % LG_WINDOW != 0 || step / LG_WINDOW > LG_WINDOWS) continue;
        int j = (int)(step / LG_WINDOW);
        c->t[j] = t;
        c->ke[j] = ke;
        c->p[j] = p;
        have[j] = 1;
    }
    fclose(f);
    for (int j = 0; j <= LG_WINDOWS; j++)
        if (!have[j]) {
            fprintf(stderr, "FAIL: %s has no %s curve for seed %llu at step %d (windows of %d steps, %d windows)\n",
                    path, code, (unsigned long long)seed, j * LG_WINDOW, LG_WINDOW, LG_WINDOWS);
            return 0;
        }
    return 1;
}

static void compare_seed(const char *path, uint64_t seed)
{
    curve ref, pert;
    int ok = read_reference(path, "lammps", seed, &ref) && read_reference(path, "lammps_perturbed", seed, &pert);
    ENSURE_MSG(ok, "the LAMMPS reference %s is missing or incomplete", path);
    if (!ok) return;
    double secs;
    curve ad = run_aerodem(seed, LG_TEST_WINDOWS, &secs);
    printf("seed %llu: aerodem %.1f s; window means (%d steps = %.3f time units), relative difference to LAMMPS "
           "(aerodem, and LAMMPS with every disc moved by up to 1e-5)\n",
           (unsigned long long)seed, secs, LG_WINDOW, LG_WINDOW * time_step());
    /* the same initial state: the same kinetic energy to the reference's printed digits */
    ENSURE_REL(ad.ke[0], ref.ke[0], TOL_KE0);
    double ske = 0, sz = 0;
    for (int j = 1; j <= LG_TEST_WINDOWS; j++) {
        double dke = ad.ke[j] / ref.ke[j] - 1, dp = ad.p[j] / ref.p[j] - 1;
        double dz = (ad.p[j] / ad.ke[j]) / (ref.p[j] / ref.ke[j]) - 1;
        printf("  t %6.2f  KE %9.2f  aerodem %+7.3f%%  perturbed %+7.3f%%  |  P %.5f  aerodem %+7.3f%%  perturbed "
               "%+7.3f%%  |  Z aerodem %+7.3f%%\n",
               ref.t[j], ref.ke[j], 100 * dke, 100 * (pert.ke[j] / ref.ke[j] - 1), ref.p[j], 100 * dp,
               100 * (pert.p[j] / ref.p[j] - 1), 100 * dz);
        if (j <= LG_EARLY) {
            ENSURE_REL(ad.ke[j], ref.ke[j], TOL_EARLY_KE);
            ENSURE_REL(ad.p[j], ref.p[j], TOL_EARLY_P);
            continue;
        }
        ENSURE_REL(ad.ke[j], ref.ke[j], TOL_KE);
        ENSURE_REL(ad.p[j], ref.p[j], TOL_P);
        ske += dke;
        sz += dz;
    }
    int n = LG_TEST_WINDOWS - LG_EARLY;
    printf("windows %d..%d (t %.2f .. %.2f): mean KE difference %+.3f%% (tolerance %.1f%%), mean Z difference %+.3f%% "
           "(tolerance %.1f%%)\n",
           LG_EARLY + 1, LG_TEST_WINDOWS, ref.t[LG_EARLY + 1], ref.t[LG_TEST_WINDOWS], 100 * ske / n, 100 * TOL_KE_MEAN,
           100 * sz / n, 100 * TOL_Z_MEAN);
    ENSURE_NEAR(ske / n, 0.0, TOL_KE_MEAN);
    ENSURE_NEAR(sz / n, 0.0, TOL_Z_MEAN);
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--data") == 0) return write_data(strtoull(argv[2], NULL, 10), argv[3]);
    if (argc >= 4 && strcmp(argv[1], "--csv") == 0) {
        FILE *f = fopen(argv[2], "w");
        if (!f) {
            fprintf(stderr, "cannot write %s\n", argv[2]);
            return 1;
        }
        fprintf(f, "code,seed,step,t,ke,p\n");
        for (int i = 3; i < argc; i++) {
            uint64_t seed = strtoull(argv[i], NULL, 10);
            double secs;
            curve c = run_aerodem(seed, LG_WINDOWS, &secs);
            write_curve(f, "aerodem", seed, &c);
            printf("seed %llu: %.1f s\n", (unsigned long long)seed, secs);
        }
        fclose(f);
        return tu_finish("validation_lammps (csv)");
    }
    if (argc > 1) {
        fprintf(stderr, "usage: test_validation_lammps [--data SEED FILE | --csv FILE SEED...]\n");
        return 2;
    }
    const char *path = AD_SOURCE_DIR "/" LG_REF;
    for (size_t i = 0; i < NTEST_SEEDS; i++)
        compare_seed(path, TEST_SEEDS[i]);
    return tu_finish("validation_lammps");
}
