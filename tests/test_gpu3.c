/* The 3D world on the GPU (issue 18), against the CPU backend: sphere by sphere after 1 and 10 steps for
 * every integrator (positions, velocities, accelerations within abs + rel tolerances: the GPU takes
 * distances from its reciprocal square root, the CPU from a correctly rounded one), two GPU runs bit
 * for bit, and the cases every backend runs (world3_cases.h): collisions against the closed forms,
 * momentum, no sphere lost over 10^4 steps, checkpoints resumed bit for bit. Skipped (77) without a
 * GPU. The cell counters at two widths, and one pushed past its width. The 3D fields and probe against the
 * CPU's, and resumed from a checkpoint. `test_gpu3 quick`: the one-step comparisons, the counters and the
 * fields only (for compute-sanitizer). */
#include "world3_cases.h"

typedef struct spheres {
    size_t n;
    ad_particle3 *p;
    float *acc;
} spheres;

static spheres read_all(const ad_world *w)
{
    spheres s = {w->count, malloc(w->count * sizeof(ad_particle3)), malloc(3 * w->count * sizeof(float))};
    ad_particle_out out = {NULL, NULL, NULL, NULL, s.acc, s.p};
    size_t got;
    REQUIRE_OK(ad_world_read(w, AD_READ_BY_ID, s.n, &out, &got));
    return s;
}

/* The worst error over the tolerance of every component, and how many are past it. */
static double compare(const spheres *a, const spheres *b, size_t *outside)
{
    double worst = 0;
    *outside = 0;
    for (size_t i = 0; i < a->n; i++) {
        const float *x = &a->p[i].x, *y = &b->p[i].x;
        for (int k = 0; k < 6; k++) {
            double tol = k < 3 ? 1e-4 + 1e-6 * fabs(x[k]) : 1e-3 + 1e-3 * fabs(x[k]);
            double r = fabs(x[k] - y[k]) / tol;
            worst = fmax(worst, r);
            *outside += !(r <= 1.0);
        }
        for (int k = 0; k < 3; k++) {
            double r = fabs(a->acc[3 * i + k] - b->acc[3 * i + k]) / (1e-2 + 1e-3 * fabs(a->acc[3 * i + k]));
            worst = fmax(worst, r);
            *outside += !(r <= 1.0);
        }
    }
    return worst;
}

static void test_against_cpu(int quick)
{
    static const ad_integrator integ[4] = {AD_INTEGRATOR_SYMPLECTIC_EULER, AD_INTEGRATOR_EULER, AD_INTEGRATOR_VERLET,
                                           AD_INTEGRATOR_RK4};
    static const int steps[2] = {1, 10};
    for (int k = 0; k < 4; k++)
        for (int j = 0; j < (quick ? 1 : 2); j++) {
            g_backend = AD_BACKEND_CPU;
            ad_world *c = gas(k % 2, 0.9, integ[k], 2, 0.3, 1);
            g_backend = AD_BACKEND_CUDA;
            ad_world *g = gas(k % 2, 0.9, integ[k], 2, 0.3, 1);
            REQUIRE_OK(ad_world_step(c, (uint64_t)steps[j]));
            REQUIRE_OK(ad_world_step(g, (uint64_t)steps[j]));
            spheres a = read_all(c), b = read_all(g);
            size_t outside;
            double worst = compare(&a, &b, &outside);
            ad_stats sc = tu_stats(c), sg = tu_stats(g);
            printf("  %-17s %2d steps  %zu spheres: worst error %.3g of tolerance, %zu values outside; KE %.9g vs "
                   "%.9g, time %.9g vs %.9g\n", ad_integrator_name(integ[k]), steps[j], a.n, worst, outside,
                   sc.kinetic_energy, sg.kinetic_energy, sc.time, sg.time);
            ENSURE(a.n == b.n && outside == 0);
            ENSURE_REL(sg.kinetic_energy, sc.kinetic_energy, 1e-5);
            ENSURE_REL(sg.time, sc.time, 1e-6);
            ENSURE(sg.backend == AD_BACKEND_CUDA && sc.backend == AD_BACKEND_CPU);
            free(a.p), free(a.acc), free(b.p), free(b.acc);
            ad_world_destroy(c);
            ad_world_destroy(g);
        }
}

static void test_two_runs(void)
{
    uint64_t h[2];
    for (int k = 0; k < 2; k++) {
        ad_world *w = gas(1, 0.9, AD_INTEGRATOR_SYMPLECTIC_EULER, 1, 0.3, 1);
        REQUIRE_OK(ad_world_step(w, 500));
        h[k] = hash_world(w);
        ad_world_destroy(w);
    }
    printf("two GPU runs of 500 steps: %016llx %016llx\n", (unsigned long long)h[0], (unsigned long long)h[1]);
    ENSURE(h[0] == h[1]);
}

/* The cell counters at two widths (src/cuda/counts.cuh): cells of one diameter (8 bits) and of 6
 * diameters (16 bits: ~80 spheres a cell at 0.3), each against the CPU after 10 steps; then 300
 * spheres dropped into one cell of 8-bit counters fail the step with a message, nothing written
 * outside the arrays meanwhile (test_gpu3 quick runs this under memcheck). */
static void test_counter_widths(void)
{
    const struct {
        double cell;
        uint32_t bits;
    } k[] = {{0, 8}, {6, 16}};
    for (int i = 0; i < 2; i++) {
        ad_world_def d = def3();
        d.cell_size = k[i].cell;
        ad_world *w[2];
        for (int b = 0; b < 2; b++) {
            d.backend = b ? AD_BACKEND_CUDA : AD_BACKEND_CPU;
            REQUIRE_OK(ad_world_create(&d, &w[b]));
            ad_fill_def f = {0, 0, 20, 20, 0.3, 0.3, -0.2, 1.0, 77, 0, 20, 0.1};
            REQUIRE_OK(ad_world_fill(w[b], &f, NULL));
            REQUIRE_OK(ad_world_step(w[b], 10));
        }
        ad_stats s = tu_stats(w[1]);
        ENSURE_MSG(s.cell_counter_bits == k[i].bits, "cells of %g m: %u-bit counters, expected %u", k[i].cell,
                   s.cell_counter_bits, k[i].bits);
        spheres a = read_all(w[0]), c = read_all(w[1]);
        size_t outside;
        double worst = compare(&a, &c, &outside);
        printf("  %u-bit counters, 10 steps: worst error %.3g of tolerance, %zu values outside\n", s.cell_counter_bits,
               worst, outside);
        ENSURE(a.n == c.n && outside == 0);
        free(a.p), free(a.acc), free(c.p), free(c.acc);
        ad_world_destroy(w[0]);
        ad_world_destroy(w[1]);
    }
    ad_world_def d = def3();
    d.backend = AD_BACKEND_CUDA;
    ad_world *w;
    REQUIRE_OK(ad_world_create(&d, &w));
    ENSURE(tu_stats(w).cell_counter_bits == 8);
    ad_particle3 p[300];
    for (int i = 0; i < 300; i++) /* all in the cell [10, 11)^3, deep in each other */
        p[i] = (ad_particle3){10.02f + 0.14f * (float)(i % 7), 10.02f + 0.14f * (float)((i / 7) % 7),
                              10.02f + 0.14f * (float)(i / 49), 0, 0, 0};
    REQUIRE_OK(ad_world_add_particles3(w, p, 300));
    ad_status st = ad_world_step(w, 3);
    printf("  300 spheres in one cell of 8-bit counters: %s\n", st.message);
    ENSURE(st.code == AD_ERR_UNSTABLE && strstr(st.message, "cell counters"));
    ad_world_destroy(w);
}

/* ------------------------------------------------------------ 3D fields -- */

/* A gas with a 5 x 4 x 3 field grid sampled every step and a probe (src/cuda/fields3.cuh on the GPU). */
static ad_world *gas_fields(ad_backend b, ad_integrator integ)
{
    g_backend = b;
    ad_world *w = gas(1, 0.9, integ, 2, 0.3, 1);
    g_backend = AD_BACKEND_CUDA;
    ad_field_def fd = {5, 4, 0, 0, 20, 20, 1, 3, 1, 19};
    REQUIRE_OK(ad_world_set_fields(w, &fd));
    ad_probe_def pd = {2, 2, 18, 18, 1, 0.5, 2, 18};
    REQUIRE_OK(ad_world_set_probe(w, &pd));
    return w;
}

/* Every field of a against b (abs + rel x scale tolerances per field), the probe's sums to rel x scale;
 * returns the values outside, *worst the largest error over its tolerance. */
static size_t compare_fields(const ad_world *a, const ad_world *b, double scale, double *worst)
{
    /* density, vx, vy, T, p, ax, ay, contact, vz, az: float sums of the GPU's contacts against the CPU's */
    static const double abs_tol[AD_FIELD_COUNT] = {1e-6, 2e-3, 2e-3, 1e-6, 1e-6, 2e-2, 2e-2, 1e-2, 2e-3, 2e-2};
    static const double rel_tol[AD_FIELD_COUNT] = {2e-3, 1e-3, 1e-3, 1e-3, 2e-3, 1e-3, 1e-3, 1e-3, 1e-3, 1e-3};
    enum { CELLS = 5 * 4 * 3 };
    size_t outside = 0;
    *worst = 0;
    for (int f = 0; f < AD_FIELD_COUNT; f++) {
        float x[CELLS], y[CELLS];
        uint64_t sa, sb;
        REQUIRE_OK(ad_world_read_field(a, (ad_field)f, x, &sa));
        REQUIRE_OK(ad_world_read_field(b, (ad_field)f, y, &sb));
        outside += sa != sb;
        for (int c = 0; c < CELLS; c++) {
            double tol = scale * (abs_tol[f] + rel_tol[f] * fabs(x[c])), r = fabs(x[c] - y[c]) / tol;
            *worst = fmax(*worst, r);
            outside += !(r <= 1.0);
        }
    }
    ad_probe_sums pa, pb;
    REQUIRE_OK(ad_world_read_probe(a, &pa));
    REQUIRE_OK(ad_world_read_probe(b, &pb));
    const double qa[5] = {pa.count, pa.v_par, pa.v_perp, pa.v_par2, pa.v_perp2};
    const double qb[5] = {pb.count, pb.v_par, pb.v_perp, pb.v_par2, pb.v_perp2};
    for (int k = 0; k < 5; k++) {
        double r = fabs(qa[k] - qb[k]) / (scale * 1e-3 * (1.0 + fabs(qa[k])));
        *worst = fmax(*worst, r);
        outside += !(r <= 1.0);
    }
    outside += pa.samples != pb.samples || !(pa.count > 0);
    return outside;
}

/* The GPU's 3D fields against the CPU's after 4 sampled steps (within float tolerances), and a checkpoint of
 * a GPU world with fields resumed on the GPU (the same to the double atomics' rounding: their order varies). */
static void test_fields(void)
{
    const ad_integrator integ[2] = {AD_INTEGRATOR_SYMPLECTIC_EULER, AD_INTEGRATOR_VERLET};
    for (int k = 0; k < 2; k++) {
        ad_world *c = gas_fields(AD_BACKEND_CPU, integ[k]), *g = gas_fields(AD_BACKEND_CUDA, integ[k]);
        REQUIRE_OK(ad_world_step(c, 4));
        REQUIRE_OK(ad_world_step(g, 4));
        double worst;
        size_t outside = compare_fields(c, g, 1.0, &worst);
        printf("  fields, %s, 4 samples: worst error %.3g of tolerance, %zu values outside\n",
               ad_integrator_name(integ[k]), worst, outside);
        ENSURE(outside == 0);
        ad_world_destroy(c);
        ad_world_destroy(g);
    }
    char path[] = "/tmp/aerodem_gpu3_fields_XXXXXX";
    int fd = mkstemp(path);
    ENSURE(fd >= 0);
    close(fd);
    ad_world *a = gas_fields(AD_BACKEND_CUDA, AD_INTEGRATOR_VERLET), *b = NULL;
    REQUIRE_OK(ad_world_step(a, 20));
    REQUIRE_OK(ad_world_save(a, path, NULL, 0));
    REQUIRE_OK(ad_world_step(a, 20));
    REQUIRE_OK(ad_world_load(path, AD_BACKEND_CUDA, -1, &b, NULL, NULL));
    REQUIRE_OK(ad_world_step(b, 20));
    double worst;
    size_t outside = compare_fields(a, b, 1e-3, &worst);
    printf("  fields resumed from a checkpoint on the GPU: worst error %.3g of 1e-3 x the tolerance (a float's "
           "rounding), %zu outside; spheres %s\n", worst, outside, hash_world(a) == hash_world(b) ? "identical" : "DIFFER");
    ENSURE(outside == 0 && hash_world(a) == hash_world(b));
    ad_world_destroy(a);
    ad_world_destroy(b);
    unlink(path);
}

/* quick: the comparisons after one step only (for compute-sanitizer) */
int main(int argc, char **argv)
{
    int quick = argc > 1 && !strcmp(argv[1], "quick");
    char desc[512];
    if (ad_backend_describe(AD_BACKEND_CUDA, desc, sizeof desc) <= 0) {
        printf("test_gpu3: no CUDA GPU (or no CUDA backend in this build): skipped\n");
        return 77;
    }
    printf("per-sphere agreement with the CPU:\n");
    test_against_cpu(quick);
    printf("cell counters:\n");
    test_counter_widths();
    printf("3D fields:\n");
    test_fields();
    g_backend = AD_BACKEND_CUDA;
    if (quick) return tu_finish("test_gpu3 quick");
    test_two_runs();
    test_pair_collision();
    test_triangle_collisions();
    test_momentum();
    test_no_loss();
    test_checkpoint();
    return tu_finish("test_gpu3");
}
