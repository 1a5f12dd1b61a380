/* The 3D world on the GPU (issue 18), against the CPU backend: sphere by sphere after 1 and 10 steps for
 * every integrator (positions, velocities, accelerations within abs + rel tolerances: the GPU takes
 * distances from its reciprocal square root, the CPU from a correctly rounded one), two GPU runs bit
 * for bit, and the cases every backend runs (world3_cases.h): collisions against the closed forms,
 * momentum, no sphere lost over 10^4 steps, checkpoints resumed bit for bit. Skipped (77) without a
 * GPU. `test_gpu3 quick`: the one-step comparisons only (for compute-sanitizer). */
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
