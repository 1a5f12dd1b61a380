/* The CUDA backend against the CPU reference: per-disc agreement, invariants over 10^4 steps, mean forces.
 * Skips (exit 77) where no GPU is found. For compute-sanitizer, `test_gpu quick` runs a short subset (no mean
 * forces, invariants over 100 steps) and `test_gpu race` a shorter one (agreement, invariants over 20 steps):
 * racecheck runs far slower than memcheck. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/scene.h"
#include "test_gpu_tunnel.h"
#include "test_util.h"

/* A gas around a small closed square and a plate, in a flow tunnel. */
static ad_world *make(ad_backend b, ad_integrator integ)
{
    ad_world_def d = gt_def(b, integ);
    ad_world *w = gt_create(&d);
    gt_fill(w);
    return w;
}

static void compare(const char *what, ad_world *a, ad_world *b, double abs_tol, double rel_tol)
{
    ad_stats sa = tu_stats(a), sb = tu_stats(b);
    ENSURE(sa.count == sb.count);
    size_t n = sa.count;
    ad_particle *pa = malloc(n * sizeof *pa), *pb = malloc(n * sizeof *pb);
    float *fa = malloc(n * sizeof *fa), *fb = malloc(n * sizeof *fb);
    ad_world_read_particles(a, AD_READ_BY_ID, n, pa, NULL, fa, NULL, NULL);
    ad_world_read_particles(b, AD_READ_BY_ID, n, pb, NULL, fb, NULL, NULL);
    double worst = 0;
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        const float *u = &pa[i].x, *v = &pb[i].x;
        for (int k = 0; k < 4; k++) {
            double d = fabs((double)u[k] - v[k]), tol = abs_tol + rel_tol * fabs((double)u[k]);
            if (!(d <= tol)) bad++;
            worst = fmax(worst, d / tol);
        }
        double dp = fabs((double)fa[i] - fb[i]), tp = 1e-2 + 1e-3 * fabs((double)fa[i]);
        if (!(dp <= tp)) bad++;
    }
    printf("  %-34s %zu discs: worst error %.3g of tolerance, %zu values outside; time %.9g vs %.9g\n", what, n, worst,
           bad, sa.time, sb.time);
    ENSURE_MSG(bad == 0, "%s: %zu values outside abs %.1g + rel %.1g", what, bad, abs_tol, rel_tol);
    ENSURE_REL(sb.time, sa.time, 1e-6);
    ENSURE_REL(sb.kinetic_energy, sa.kinetic_energy, 1e-4);
    free(pa);
    free(pb);
    free(fa);
    free(fb);
}

static void agreement(void)
{
    printf("per-disc agreement with the CPU (deterministic mode):\n");
    const ad_integrator integ[] = {AD_INTEGRATOR_SYMPLECTIC_EULER, AD_INTEGRATOR_EULER, AD_INTEGRATOR_VERLET,
                                   AD_INTEGRATOR_RK4};
    for (int k = 0; k < 4; k++) {
        ad_world *c = make(AD_BACKEND_CPU, integ[k]), *g = make(AD_BACKEND_CUDA, integ[k]);
        char what[96];
        REQUIRE_OK(ad_world_step(c, 1));
        REQUIRE_OK(ad_world_step(g, 1));
        snprintf(what, sizeof what, "%s, 1 step", ad_integrator_name(integ[k]));
        compare(what, c, g, 1e-5, 1e-5);
        REQUIRE_OK(ad_world_step(c, 9));
        REQUIRE_OK(ad_world_step(g, 9));
        snprintf(what, sizeof what, "%s, 10 steps", ad_integrator_name(integ[k]));
        compare(what, c, g, 1e-4, 1e-4);
        ad_world_destroy(c);
        ad_world_destroy(g);
    }
}

static void determinism(void)
{
    ad_world *a = make(AD_BACKEND_CUDA, AD_INTEGRATOR_SYMPLECTIC_EULER);
    ad_world *b = make(AD_BACKEND_CUDA, AD_INTEGRATOR_SYMPLECTIC_EULER);
    REQUIRE_OK(ad_world_step(a, 500));
    REQUIRE_OK(ad_world_step(b, 500));
    size_t n = tu_stats(a).count;
    ENSURE(tu_stats(b).count == n);
    ad_particle *pa = malloc(n * sizeof *pa), *pb = malloc(n * sizeof *pb);
    tu_read_by_id(a, n, pa, NULL);
    tu_read_by_id(b, n, pb, NULL);
    int same = memcmp(pa, pb, n * sizeof *pa) == 0;
    printf("deterministic mode: two GPU runs of 500 steps are %s\n", same ? "bit-identical" : "DIFFERENT");
    ENSURE(same);
    /* a checkpoint resumed on the GPU continues bit-identically */
    const char *path = "/tmp/aerodem_test_gpu.ckpt";
    REQUIRE_OK(ad_world_save(a, path, NULL, 0));
    ad_world *r;
    REQUIRE_OK(ad_world_load(path, AD_BACKEND_CUDA, -1, &r, NULL, NULL));
    REQUIRE_OK(ad_world_step(a, 300));
    REQUIRE_OK(ad_world_step(r, 300));
    n = tu_stats(a).count; /* the sides are open: the count changed */
    ENSURE(tu_stats(r).count == n);
    pa = realloc(pa, n * sizeof *pa);
    pb = realloc(pb, n * sizeof *pb);
    tu_read_by_id(a, n, pa, NULL);
    tu_read_by_id(r, n, pb, NULL);
    same = memcmp(pa, pb, n * sizeof *pa) == 0;
    printf("checkpoint on the GPU: resumed run is %s\n", same ? "bit-identical" : "DIFFERENT");
    ENSURE(same);
    remove(path);
    free(pa);
    free(pb);
    ad_world_destroy(a);
    ad_world_destroy(b);
    ad_world_destroy(r);
}

/* The tunnel of world d on the fast (non-deterministic) path: no disc lost or duplicated after `steps`
 * steps. Its sides are open: every disc is accounted for (the count = the start's + entered + added by
 * the reservoir - left - removed by it), every id is unique, and every disc is inside the domain. */
static void tunnel_kept(const char *what, ad_world_def d, int steps)
{
    d.deterministic = 0;
    ad_world *w;
    REQUIRE_OK(ad_world_create(&d, &w));
    ad_segment sq[] = {{30, 20, 36, 20}, {36, 20, 36, 26}, {36, 26, 30, 26}, {30, 26, 30, 20}};
    REQUIRE_OK(ad_world_add_segments(w, sq, 4));
    ad_fill_def f = {0, 0, 80, 50, 0.3, 3.0, 0.0, 1.0, 5, 0, 0, 0};
    REQUIRE_OK(ad_world_fill(w, &f, NULL));
    size_t n = tu_stats(w).count;
    REQUIRE_OK(ad_world_step(w, (uint64_t)steps));
    ad_stats s = tu_stats(w);
    ad_particle *p = malloc(s.count * sizeof *p);
    uint32_t *id = malloc(s.count * sizeof *id);
    size_t got = 0;
    REQUIRE_OK(ad_world_read_particles(w, AD_READ_BY_ID, s.count, p, id, NULL, NULL, &got));
    size_t dup = 0, outside = 0;
    for (size_t i = 0; i < got; i++) {
        if (i && id[i] <= id[i - 1]) dup++;
        if (!(p[i].x >= d.x_min && p[i].x < d.x_max && p[i].y > d.y_min - 0.5 && p[i].y < d.y_max + 0.5)) outside++;
    }
    long long balance = (long long)n + (long long)s.entered + (long long)s.reservoir_added - (long long)s.left -
                        (long long)s.reservoir_removed;
    printf("%s, %d steps on the GPU: %zu discs (started with %zu; %llu entered, %llu left, reservoir +%llu -%llu), %zu "
           "repeated ids, %zu outside\n",
           what, steps, s.count, n, (unsigned long long)s.entered, (unsigned long long)s.left,
           (unsigned long long)s.reservoir_added, (unsigned long long)s.reservoir_removed, dup, outside);
    ENSURE((long long)s.count == balance && got == s.count && dup == 0 && outside == 0);
    if (steps >= 2000) ENSURE(s.entered > 0 && s.left > 0); /* a sanitizer's short run may see neither */
    free(p);
    free(id);
    ad_world_destroy(w);
}

/* `steps`: 10^4, or fewer for compute-sanitizer (test_gpu quick) */
static void invariants(int steps)
{
    tunnel_kept("tunnel", gt_def(AD_BACKEND_CUDA, AD_INTEGRATOR_SYMPLECTIC_EULER), steps);
    ad_world_def d;
    ad_world *w;

    /* a periodic box: total momentum */
    d = ad_default_world_def();
    d.backend = AD_BACKEND_CUDA;
    d.boundary_x = d.boundary_y = AD_BOUNDARY_PERIODIC;
    d.restitution = 0.7;
    d.deterministic = 0;
    REQUIRE_OK(ad_world_create(&d, &w));
    ad_fill_def g = {0, 0, 100, 100, 0.3, 0.7, -0.4, 1.0, 9, 0, 0, 0};
    REQUIRE_OK(ad_world_fill(w, &g, NULL));
    REQUIRE_OK(ad_world_step(w, 1)); /* statistics exist from the first step on */
    ad_stats a = tu_stats(w);
    REQUIRE_OK(ad_world_step(w, (uint64_t)steps));
    ad_stats b = tu_stats(w);
    double scale = a.count * d.mass * 1.5; /* sum of |m v| is about this */
    printf("periodic box, %d steps on the GPU: momentum (%.6g, %.6g) -> (%.6g, %.6g), drift %.2g of sum|mv|\n",
           steps, a.momentum_x, a.momentum_y, b.momentum_x, b.momentum_y,
           hypot(b.momentum_x - a.momentum_x, b.momentum_y - a.momentum_y) / scale);
    ENSURE_LE(hypot(b.momentum_x - a.momentum_x, b.momentum_y - a.momentum_y), 1e-4 * scale);
    ad_world_destroy(w);
}

/* The GPU's cell counters at each of their widths (src/cuda/counts.cuh): cells one diameter
 * wide (8 bits), 12 diameters (16 bits: ~70 discs a cell) and 40 with a capacity past 65535
 * (32 bits: ~450 discs a cell, past what 8 bits hold; the tunnel 120 m long): the CPU's discs after 10 steps in
 * deterministic mode, and the fast path keeps every disc. Then a counter pushed past its width
 * (300 discs dropped into one cell) fails the step with a message, and nothing is written
 * outside the arrays meanwhile (test_gpu quick runs this under memcheck). */
static void counter_widths(int steps)
{
    const struct {
        double cell;
        size_t capacity;
        uint32_t bits;
    } k[] = {{0, 20000, 8}, {12, 20000, 16}, {40, 70000, 32}};
    printf("cell counters of each width:\n");
    for (int i = 0; i < 3; i++) {
        ad_world_def dc = gt_def(AD_BACKEND_CPU, AD_INTEGRATOR_SYMPLECTIC_EULER);
        dc.cell_size = k[i].cell;
        dc.capacity = k[i].capacity;
        if (k[i].cell > 26) dc.x_max = 3 * k[i].cell; /* the flow axis holds three cells */
        ad_world_def dg = dc;
        dg.backend = AD_BACKEND_CUDA;
        ad_world *c = gt_create(&dc), *g = gt_create(&dg);
        gt_fill(c);
        gt_fill(g);
        ad_stats s = tu_stats(g);
        ENSURE_MSG(s.cell_counter_bits == k[i].bits, "cells of %g m: %u-bit counters, expected %u", k[i].cell,
                   s.cell_counter_bits, k[i].bits);
        REQUIRE_OK(ad_world_step(c, 10));
        REQUIRE_OK(ad_world_step(g, 10));
        s = tu_stats(g);
        char what[96];
        snprintf(what, sizeof what, "%u-bit, %u discs in a cell, 10 steps", s.cell_counter_bits,
                 s.max_cell_occupancy);
        compare(what, c, g, 1e-4, 1e-4);
        ad_world_destroy(c);
        ad_world_destroy(g);
        snprintf(what, sizeof what, "  tunnel, %u-bit counters", k[i].bits);
        tunnel_kept(what, dg, steps);
    }

    ad_world_def d = ad_default_world_def();
    d.backend = AD_BACKEND_CUDA;
    d.capacity = 1000;
    d.x_max = d.y_max = 20;
    ad_world *w = gt_create(&d);
    ENSURE(tu_stats(w).cell_counter_bits == 8);
    ad_particle p[300];
    for (int i = 0; i < 300; i++) /* all in the cell [10, 11) x [10, 11), deep in each other */
        p[i] = (ad_particle){10.02f + 0.05f * (float)(i % 20), 10.02f + 0.06f * (float)(i / 20), 0, 0};
    REQUIRE_OK(ad_world_add_particles(w, p, 300));
    ad_status st = ad_world_step(w, 3);
    printf("  300 discs in one cell of 8-bit counters: %s\n", st.message);
    ENSURE(st.code == AD_ERR_UNSTABLE && strstr(st.message, "cell counters"));
    ad_world_destroy(w);
}

/* Mean lift and drag of a scene over interval means after settling. */
static void scene_forces(const char *path, ad_backend b, double *cl, double *clse, double *cd, double *cdse)
{
    ad_scene s;
    ad_scene_defaults(&s);
    REQUIRE_OK(ad_scene_load(&s, path));
    s.backend = b;
    s.deterministic = 0;
    REQUIRE_OK(ad_scene_finish(&s));
    ad_world *w;
    REQUIRE_OK(ad_scene_build(&s, &w));
    double q = ad_scene_flow_numbers(&s).dynamic_pressure * s.chord;
    REQUIRE_OK(ad_world_step(w, s.settle_steps));
    ad_stats a = tu_stats(w);
    tu_coef co = {0};
    for (unsigned long long k = s.settle_steps; k + s.force_interval <= s.steps; k += s.force_interval) {
        REQUIRE_OK(ad_world_step(w, s.force_interval));
        ad_stats c = tu_stats(w);
        tu_coef_add(&co, &a, &c, q, NULL, NULL);
        a = c;
    }
    tu_coef_result(&co, cl, clse, cd, cdse);
    ad_world_destroy(w);
}

static void default_scene(const char *src)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/scenes/default.ini", src);
    double l1, l1e, d1, d1e, l2, l2e, d2, d2e;
    scene_forces(path, AD_BACKEND_CPU, &l1, &l1e, &d1, &d1e);
    scene_forces(path, AD_BACKEND_CUDA, &l2, &l2e, &d2, &d2e);
    double zl = fabs(l1 - l2) / hypot(l1e, l2e), zd = fabs(d1 - d2) / hypot(d1e, d2e);
    printf("default scene: CPU CL = %.4f +- %.4f, CD = %.4f +- %.4f; GPU CL = %.4f +- %.4f, CD = %.4f +- %.4f; "
           "differences %.2f and %.2f combined standard errors\n",
           l1, l1e, d1, d1e, l2, l2e, d2, d2e, zl, zd);
    ENSURE(zl < 3.0);
    ENSURE(zd < 3.0);
}

int main(int argc, char **argv)
{
    int quick = argc > 1 && !strcmp(argv[1], "quick"), race = argc > 1 && !strcmp(argv[1], "race");
    agreement();
    if (!race) determinism();
    invariants(race ? 20 : quick ? 100 : 10000);
    if (!race) counter_widths(quick ? 100 : 2000);
    if (!quick && !race) default_scene(AD_SOURCE_DIR);
    return tu_finish("test_gpu");
}
