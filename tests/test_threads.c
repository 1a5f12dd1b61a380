/* The CPU backend gives bit-identical results for any number of worker threads:
 * the same world stepped with 1, 2 and 4 threads has the same particles (read by id,
 * memcmp) and the same kinetic energy and segment impulse. Two worlds: a hopper under gravity
 * (symplectic Euler), and a periodic box of 12 000 discs streaming across it with velocity Verlet
 * (six blocks of the pass: its drift bins block by block, its leavers listed, step_cpu.c). */
#include "test_util.h"

#define STEPS 200

typedef struct snapshot {
    size_t n;
    ad_particle *p;
    float *pressure, *virial;
    ad_stats s;
    int threads_used;
} snapshot;

/* A few segments: a V-shaped hopper and a tilted plate. */
static const ad_segment segs[] = {
    {20.0f, 60.0f, 45.0f, 40.0f}, {55.0f, 40.0f, 80.0f, 60.0f}, /* hopper */
    {30.0f, 20.0f, 50.0f, 15.0f},                               /* plate */
    {65.0f, 10.0f, 75.0f, 10.0f}, {75.0f, 10.0f, 75.0f, 20.0f}, /* an L */
};

static snapshot run(int threads, int verlet)
{
    snapshot sn;
    memset(&sn, 0, sizeof sn);
    ad_world_def d = tu_def();
    d.threads = threads;
    d.gravity_y = -9.81;
    d.restitution = 0.8;
    d.wall_restitution = 0.9;
    d.backend = AD_BACKEND_CPU; /* threads are a CPU notion */
    if (verlet) {
        d = tu_square(d, 200.0, AD_BOUNDARY_PERIODIC);
        d.integrator = AD_INTEGRATOR_VERLET;
        d.gravity_y = 0.0;
    }
    ad_world *w = NULL;
    REQUIRE_OK(ad_world_create(&d, &w));
    REQUIRE_OK(ad_world_add_segments(w, segs, sizeof segs / sizeof segs[0]));
    ad_fill_def f = {0.0, 0.0, 100.0, 80.0, 0.3, 0.0, 0.0, 4.0, 2024, 0, 0, 0};
    if (verlet) f = (ad_fill_def){0.0, 0.0, 200.0, 200.0, 0.3, 3.0, 1.0, 4.0, 2025, 0, 0, 0};
    REQUIRE_OK(ad_world_fill(w, &f, &sn.n));
    ENSURE_MSG(sn.n > (verlet ? 12000u : 2000u), "fill added %zu discs", sn.n);
    REQUIRE_OK(ad_world_step(w, STEPS));
    sn.p = calloc(sn.n, sizeof *sn.p);
    sn.pressure = calloc(sn.n, sizeof *sn.pressure);
    sn.virial = calloc(sn.n, sizeof *sn.virial);
    size_t count = 0;
    ENSURE_OK(ad_world_read_particles(w, AD_READ_BY_ID, sn.n, sn.p, NULL, sn.pressure, sn.virial, &count));
    ENSURE(count == sn.n);
    sn.s = tu_stats(w);
    printf("%s, threads = %d (in use: %d): %zu discs, %d steps, t = %.4f s, KE = %.9g, body impulse = (%.9g, %.9g)\n",
           verlet ? "verlet" : "symplectic", threads, sn.s.threads, sn.n, STEPS, sn.s.time, sn.s.kinetic_energy, sn.s.body_impulse_x,
           sn.s.body_impulse_y);
    if (sn.s.threads != threads)
        printf("NOTE: asked for %d threads, the world uses %d\n", threads, sn.s.threads);
    ad_world_destroy(w);
    return sn;
}

static int same_double(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

static void compare(const snapshot *a, const snapshot *b, int ta, int tb)
{
    ENSURE(a->n == b->n);
    if (a->n != b->n) return;
    size_t first = a->n;
    size_t ndiff = 0;
    for (size_t i = 0; i < a->n; i++)
        if (memcmp(&a->p[i], &b->p[i], sizeof a->p[i]) != 0) {
            if (first == a->n) first = i;
            ndiff++;
        }
    ENSURE_MSG(ndiff == 0, "threads %d vs %d: %zu of %zu particles differ; first id %zu: (%.9g %.9g %.9g %.9g) vs "
                           "(%.9g %.9g %.9g %.9g)",
               ta, tb, ndiff, a->n, first, ndiff ? a->p[first].x : 0.0, ndiff ? a->p[first].y : 0.0,
               ndiff ? a->p[first].vx : 0.0, ndiff ? a->p[first].vy : 0.0, ndiff ? b->p[first].x : 0.0,
               ndiff ? b->p[first].y : 0.0, ndiff ? b->p[first].vx : 0.0, ndiff ? b->p[first].vy : 0.0);
    ENSURE_MSG(memcmp(a->pressure, b->pressure, a->n * sizeof *a->pressure) == 0,
               "threads %d vs %d: per-disc pressure differs", ta, tb);
    ENSURE_MSG(memcmp(a->virial, b->virial, a->n * sizeof *a->virial) == 0,
               "threads %d vs %d: per-disc virial differs", ta, tb);
    ENSURE_MSG(same_double(a->s.time, b->s.time), "time %.17g vs %.17g", a->s.time, b->s.time);
    ENSURE_MSG(same_double(a->s.kinetic_energy, b->s.kinetic_energy), "threads %d vs %d: KE %.17g vs %.17g", ta,
               tb, a->s.kinetic_energy, b->s.kinetic_energy);
    ENSURE_MSG(same_double(a->s.body_impulse_x, b->s.body_impulse_x),
               "threads %d vs %d: body_impulse_x %.17g vs %.17g", ta, tb, a->s.body_impulse_x, b->s.body_impulse_x);
    ENSURE_MSG(same_double(a->s.body_impulse_y, b->s.body_impulse_y),
               "threads %d vs %d: body_impulse_y %.17g vs %.17g", ta, tb, a->s.body_impulse_y, b->s.body_impulse_y);
    /* informational: other reductions */
    if (!same_double(a->s.potential_energy, b->s.potential_energy) || !same_double(a->s.momentum_x, b->s.momentum_x) ||
        !same_double(a->s.momentum_y, b->s.momentum_y) ||
        memcmp(a->s.wall_impulse, b->s.wall_impulse, sizeof a->s.wall_impulse) != 0)
        printf("NOTE: threads %d vs %d: potential energy, momentum or wall impulse differ in the last bits\n", ta, tb);
}

int main(void)
{
    for (int verlet = 0; verlet < 2; verlet++) {
        snapshot s1 = run(1, verlet), s2 = run(2, verlet), s4 = run(4, verlet);
        /* the run is not trivial: the discs hit the segments */
        ENSURE_MSG(fabs(s1.s.body_impulse_y) > 0.0, "no impulse on the segments in %d steps", STEPS);
        compare(&s1, &s2, 1, 2);
        compare(&s1, &s4, 1, 4);
        snapshot *all[3] = {&s1, &s2, &s4};
        for (int i = 0; i < 3; i++) {
            free(all[i]->p);
            free(all[i]->pressure);
            free(all[i]->virial);
        }
    }
    return tu_finish("test_threads");
}
