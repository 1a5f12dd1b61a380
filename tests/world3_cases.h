/* The 3D world's cases that run on every backend (tests/test_world3.c on the CPU, tests/test_gpu3.c on
 * the GPU): head-on collisions against the closed forms, momentum in a periodic box, no sphere lost
 * over 10^4 steps, a checkpoint resumed bit for bit. g_backend: the backend they run on. A world's hash:
 * tu3_hash (tunnel3_cases.h). */
#ifndef AERODEM_TEST_WORLD3_CASES_H
#define AERODEM_TEST_WORLD3_CASES_H

#include "tunnel3_cases.h"

#include <unistd.h>

#include "core/world_internal.h"

static ad_backend g_backend = AD_BACKEND_CPU;

static ad_world_def def3(void)
{
    ad_world_def d = ad_default_world_def();
    d.dimensions = 3;
    d.backend = g_backend;
    d.x_max = d.y_max = d.z_max = 20.0;
    d.capacity = 20000;
    return d;
}

/* ------------------------------------------------------------ collisions -- */

typedef struct bounce {
    double e, tc;
} bounce;

/* Steps until the two (or one) spheres part, with a fixed step; e from the speeds along `n` before
 * and after, tc from the steps with a contact (pressure > 0). */
static bounce run_bounce(ad_world *w, size_t n, const double dir[3], double dt)
{
    ad_particle3 p[2];
    float pr[2];
    ad_particle_out out = {NULL, NULL, pr, NULL, NULL, p};
    size_t got;
    REQUIRE_OK(ad_world_read(w, AD_READ_BY_ID, 2, &out, &got));
    double before = n == 2 ? (p[1].vx - p[0].vx) * dir[0] + (p[1].vy - p[0].vy) * dir[1] + (p[1].vz - p[0].vz) * dir[2]
                           : p[0].vx * dir[0] + p[0].vy * dir[1] + p[0].vz * dir[2];
    int contact_steps = 0, touched = 0;
    for (int k = 0; k < 100000; k++) {
        REQUIRE_OK(ad_world_step(w, 1));
        REQUIRE_OK(ad_world_read(w, AD_READ_BY_ID, 2, &out, &got));
        if (pr[0] > 0.0f) contact_steps++, touched = 1;
        else if (touched) break;
    }
    double after = n == 2 ? (p[1].vx - p[0].vx) * dir[0] + (p[1].vy - p[0].vy) * dir[1] + (p[1].vz - p[0].vz) * dir[2]
                          : p[0].vx * dir[0] + p[0].vy * dir[1] + p[0].vz * dir[2];
    bounce b = {-after / before, contact_steps * dt};
    return b;
}

static double theory_tc(double m_eff, double k, double e)
{
    double le = log(e), beta = -le / sqrt(TU_PI * TU_PI + le * le), gamma = 2 * beta * sqrt(m_eff * k);
    double eta = gamma / (2 * m_eff);
    return TU_PI / sqrt(k / m_eff - eta * eta);
}

static ad_world *bounce_world(double e, double dt)
{
    ad_world_def d = def3();
    d.restitution = d.wall_restitution = e;
    d.adaptive_dt = 0;
    d.dt = dt;
    d.threads = 1;
    ad_world *w = NULL;
    REQUIRE_OK(ad_world_create(&d, &w));
    return w;
}

static void test_pair_collision(void)
{
    const double e = 0.8, dt = 2e-5;
    const double dir[3] = {0.48, 0.6, 0.64}; /* a unit vector off every axis */
    ad_world *w = bounce_world(e, dt);
    double c[3] = {10, 10, 10}, gap = 1.3, v = 1.0;
    ad_particle3 p[2];
    p[0] = (ad_particle3){(float)(c[0] - gap / 2 * dir[0]), (float)(c[1] - gap / 2 * dir[1]),
                          (float)(c[2] - gap / 2 * dir[2]), (float)(v * dir[0]), (float)(v * dir[1]), (float)(v * dir[2])};
    p[1] = (ad_particle3){(float)(c[0] + gap / 2 * dir[0]), (float)(c[1] + gap / 2 * dir[1]),
                          (float)(c[2] + gap / 2 * dir[2]), (float)(-v * dir[0]), (float)(-v * dir[1]), (float)(-v * dir[2])};
    REQUIRE_OK(ad_world_add_particles3(w, p, 2));
    bounce b = run_bounce(w, 2, dir, dt);
    double tc = theory_tc(0.5, 1e4, e);
    printf("sphere-sphere: e = %.5f (theory %.5f), contact time %.6f s (theory %.6f s)\n", b.e, e, b.tc, tc);
    ENSURE_REL(b.e, e, 0.01);
    ENSURE_REL(b.tc, tc, 0.02);
    ad_stats s;
    REQUIRE_OK(ad_world_get_stats(w, &s));
    ENSURE_LE(fabs(s.momentum_x) + fabs(s.momentum_y) + fabs(s.momentum_z), 1e-6);
    ad_world_destroy(w);
}

/* A cube [x0, x0 + size] x [y0, ...] x [z0, ...] of 12 triangles, each face split along a diagonal (its
 * triangles share the face's edges and vertices: one connected surface). */
static void cube_at(ad_triangle t[12], double x0, double y0, double z0, double size)
{
    static const int faces[6][4][3] = {{{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}}, {{0, 0, 1}, {0, 1, 1}, {1, 1, 1}, {1, 0, 1}},
                                       {{0, 0, 0}, {0, 0, 1}, {1, 0, 1}, {1, 0, 0}}, {{0, 1, 0}, {1, 1, 0}, {1, 1, 1}, {0, 1, 1}},
                                       {{0, 0, 0}, {0, 1, 0}, {0, 1, 1}, {0, 0, 1}}, {{1, 0, 0}, {1, 0, 1}, {1, 1, 1}, {1, 1, 0}}};
    const double at[3] = {x0, y0, z0};
    for (int f = 0; f < 6; f++)
        for (int h = 0; h < 2; h++) {
            const int *q[3] = {faces[f][0], faces[f][1 + h], faces[f][2 + h]};
            for (int j = 0; j < 3; j++)
                for (int k = 0; k < 3; k++) t[2 * f + h].v[j][k] = (float)(at[k] + size * q[j][k]);
        }
}

/* The cube [6, 14]^3. */
static void cube(ad_triangle t[12]) { cube_at(t, 6, 6, 6, 8); }

static void test_triangle_collisions(void)
{
    const double e = 0.7, dt = 2e-5;
    static const struct {
        const char *name;
        double at[3], dir[3]; /* the point of the cube hit, and the outward direction the sphere comes from */
    } hits[] = {{"face", {10.3, 9.6, 14}, {0, 0, 1}},
                {"edge", {10.4, 14, 14}, {0, 0.70710678, 0.70710678}},
                {"corner", {14, 14, 14}, {0.57735027, 0.57735027, 0.57735027}},
                {"face diagonal", {12, 12, 14}, {0, 0, 1}}}; /* over the edge between a face's two triangles */
    double tc = theory_tc(1.0, 1e4, e);
    for (size_t h = 0; h < sizeof hits / sizeof hits[0]; h++) {
        ad_world *w = bounce_world(e, dt);
        ad_triangle t[12];
        cube(t);
        REQUIRE_OK(ad_world_add_triangles(w, t, 12));
        const double *a = hits[h].at, *n = hits[h].dir;
        double start = 0.5 + 0.3, v = 1.0;
        ad_particle3 p = {(float)(a[0] + start * n[0]), (float)(a[1] + start * n[1]), (float)(a[2] + start * n[2]),
                          (float)(-v * n[0]), (float)(-v * n[1]), (float)(-v * n[2])};
        REQUIRE_OK(ad_world_add_particles3(w, &p, 1));
        double dir[3] = {-n[0], -n[1], -n[2]};
        bounce b = run_bounce(w, 1, dir, dt);
        ad_stats s;
        REQUIRE_OK(ad_world_get_stats(w, &s));
        /* the impulse the body took: the sphere's momentum change, along n */
        double imp = -(s.body_impulse_x * n[0] + s.body_impulse_y * n[1] + s.body_impulse_z * n[2]);
        printf("sphere-triangle (%s): e = %.5f (theory %.5f), contact time %.6f s (theory %.6f s), body impulse "
               "%.5f (sphere's change %.5f)\n",
               hits[h].name, b.e, e, b.tc, tc, imp, (1 + b.e) * v);
        ENSURE_REL(b.e, e, 0.01);
        ENSURE_REL(b.tc, tc, 0.02);
        ENSURE_REL(imp, (1 + b.e) * v, 0.01);
        ad_world_destroy(w);
    }
}

/* -------------------------------------------------- a box of a gas -- */

static ad_world *gas(int periodic, double e, ad_integrator integ, int threads, double fraction, int body)
{
    ad_world_def d = def3();
    d.boundary_x = d.boundary_y = d.boundary_z = periodic ? AD_BOUNDARY_PERIODIC : AD_BOUNDARY_SOLID;
    d.restitution = d.wall_restitution = e;
    d.integrator = integ;
    d.threads = threads;
    ad_world *w = NULL;
    REQUIRE_OK(ad_world_create(&d, &w));
    if (body) {
        ad_triangle t[12];
        cube(t);
        REQUIRE_OK(ad_world_add_triangles(w, t, 12));
    }
    ad_fill_def f = {0, 0, 20, 20, fraction, 0.3, -0.2, 1.0, 77, 0, 20, 0.1};
    size_t added, got, inside = 0;
    REQUIRE_OK(ad_world_fill(w, &f, &added));
    ENSURE(added > 1000);
    ad_particle3 *p = malloc(added * sizeof *p);
    ad_particle_out out = {NULL, NULL, NULL, NULL, NULL, p};
    REQUIRE_OK(ad_world_read(w, 0, added, &out, &got));
    for (size_t k = 0; k < got; k++)
        inside += p[k].x > 6 && p[k].x < 14 && p[k].y > 6 && p[k].y < 14 && p[k].z > 6 && p[k].z < 14;
    ENSURE_MSG(!body || inside == 0, "%zu spheres filled inside the cube", inside);
    free(p);
    return w;
}

static void test_momentum(void)
{
    ad_world *w = gas(1, 0.8, AD_INTEGRATOR_SYMPLECTIC_EULER, 2, 0.3, 0);
    ad_stats s0, s1;
    REQUIRE_OK(ad_world_step(w, 1));
    REQUIRE_OK(ad_world_get_stats(w, &s0));
    REQUIRE_OK(ad_world_step(w, 3000));
    REQUIRE_OK(ad_world_get_stats(w, &s1));
    double p0 = sqrt(s0.momentum_x * s0.momentum_x + s0.momentum_y * s0.momentum_y + s0.momentum_z * s0.momentum_z);
    double dp = sqrt(pow(s1.momentum_x - s0.momentum_x, 2) + pow(s1.momentum_y - s0.momentum_y, 2) +
                     pow(s1.momentum_z - s0.momentum_z, 2));
    /* float precision: each step's pair forces cancel to rounding, summed over n spheres */
    double scale = sqrt(2.0 * s0.kinetic_energy * (double)w->count); /* sum |p| ~ sqrt(n) x this */
    printf("periodic box: %zu spheres, momentum %.6g -> drift %.3g over 3000 steps (%.2g of sum m|v| ~ %.3g); KE "
           "%.4g -> %.4g (e = 0.8 cools)\n", w->count, p0, dp, dp / scale, scale, s0.kinetic_energy, s1.kinetic_energy);
    ENSURE_LE(dp, 1e-4 * scale);
    ENSURE(s1.kinetic_energy < 0.9 * s0.kinetic_energy);
    ad_world_destroy(w);
}

/* Spheres drifting through periodic sides every step for 10^4 steps: the count and the ids stay. */
static void test_no_loss(void)
{
    ad_world_def d = def3();
    d.boundary_x = d.boundary_y = d.boundary_z = AD_BOUNDARY_PERIODIC;
    d.x_max = d.y_max = d.z_max = 12.0;
    d.threads = 2;
    ad_world *w = NULL;
    REQUIRE_OK(ad_world_create(&d, &w));
    ad_fill_def f = {0, 0, 12, 12, 0.25, 3.0, 2.0, 0.5, 5, 0, 12, -2.5};
    size_t added;
    REQUIRE_OK(ad_world_fill(w, &f, &added));
    REQUIRE_OK(ad_world_step(w, 10000));
    size_t n = w->count, got;
    uint32_t *id = malloc(n * sizeof *id);
    ad_particle3 *p = malloc(n * sizeof *p);
    ad_particle_out out = {NULL, id, NULL, NULL, NULL, p};
    REQUIRE_OK(ad_world_read(w, AD_READ_BY_ID, n, &out, &got));
    size_t wrong = 0, outside = 0;
    for (size_t k = 0; k < got; k++) {
        wrong += id[k] != k;
        outside += !(p[k].x >= 0 && p[k].x < 12 && p[k].y >= 0 && p[k].y < 12 && p[k].z >= 0 && p[k].z < 12);
    }
    ad_stats s;
    REQUIRE_OK(ad_world_get_stats(w, &s));
    double travelled = s.time * 3.0;
    printf("10^4 steps: %zu spheres in, %zu out, ids 0..n-1 (%zu wrong), %zu outside the box; the stream crossed the "
           "box %.0f times\n", added, got, wrong, outside, travelled / 12.0);
    ENSURE(got == added && wrong == 0 && outside == 0);
    ENSURE(travelled > 2 * 12.0);
    free(id);
    free(p);
    ad_world_destroy(w);
}

static void test_checkpoint(void)
{
    char path[] = "/tmp/aerodem_world3_XXXXXX";
    int fd = mkstemp(path);
    ENSURE(fd >= 0);
    close(fd);
    ad_integrator integ[2] = {AD_INTEGRATOR_VERLET, AD_INTEGRATOR_RK4};
    for (int k = 0; k < 2; k++) {
        ad_world *a = gas(0, 0.9, integ[k], 2, 0.3, 1), *b = NULL;
        REQUIRE_OK(ad_world_step(a, 150));
        REQUIRE_OK(ad_world_save(a, path, "3d", 2));
        REQUIRE_OK(ad_world_step(a, 150));
        void *user = NULL;
        size_t ub = 0;
        REQUIRE_OK(ad_world_load(path, g_backend, 1, &b, &user, &ub));
        ENSURE(ub == 2 && !memcmp(user, "3d", 2));
        free(user);
        ENSURE(b->params.dims == 3 && b->tri.count == 12);
        REQUIRE_OK(ad_world_step(b, 150));
        ad_stats sa, sb;
        REQUIRE_OK(ad_world_get_stats(a, &sa));
        REQUIRE_OK(ad_world_get_stats(b, &sb));
        uint64_t ha = tu3_hash(a), hb = tu3_hash(b);
        printf("checkpoint (%s): straight %016llx, resumed on 1 thread %016llx; time %.17g / %.17g\n",
               ad_integrator_name(integ[k]), (unsigned long long)ha, (unsigned long long)hb, sa.time, sb.time);
        ENSURE(ha == hb);
        ENSURE(sa.time == sb.time && sa.kinetic_energy == sb.kinetic_energy && sa.body_impulse_z == sb.body_impulse_z);
        ad_world_destroy(a);
        ad_world_destroy(b);
    }
    unlink(path);
}

#endif
