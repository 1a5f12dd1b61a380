/* The 3D test tunnel that tests/test_open3.c, test_reservoir3.c and test_gpu3.c run (the free stream of
 * physics/open3.h, the reservoir of open.h / reservoir_dim.h), written once: a tunnel of lx x 8 x 8 m
 * open along x, periodic along y and z, the stream at U = 2 m/s along x with kT/m = 1 and n spheres a
 * cubic metre, filled with the stream's gas; its means in slabs of 1 m along x; the checks every backend
 * runs on it (the bookkeeping, a checkpoint resumed bit for bit) and a world's hash. */
#ifndef AERODEM_TEST_TUNNEL3_CASES_H
#define AERODEM_TEST_TUNNEL3_CASES_H

#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/world_internal.h"

/* Every sphere's position, velocity, acceleration and id by id, hashed (FNV-1a). */
static inline uint64_t tu3_hash(const ad_world *w)
{
    size_t n = w->count, got;
    ad_particle3 *p = malloc(n * sizeof *p + 1);
    float *acc = malloc(3 * n * sizeof *acc + 1);
    uint32_t *id = malloc(n * sizeof *id + 1);
    ad_particle_out out = {NULL, id, NULL, NULL, acc, p};
    REQUIRE_OK(ad_world_read(w, AD_READ_BY_ID, n, &out, &got));
    uint64_t h = 1469598103934665603ull;
    const void *part[3] = {p, acc, id};
    size_t bytes[3] = {got * sizeof *p, got * 3 * sizeof *acc, got * sizeof *id};
    for (int k = 0; k < 3; k++)
        for (size_t i = 0; i < bytes[k]; i++) h = (h ^ ((const unsigned char *)part[k])[i]) * 1099511628211ull;
    free(p);
    free(acc);
    free(id);
    return h;
}

/* The stream's number density at volume fraction f (radius 0.5). */
static inline double tu3_density_of(double f) { return f / (4.0 / 3.0 * TU_PI * 0.125); }

/* The tunnel lx m long, n spheres a cubic metre, contacts on or off, no reservoir (set d.reservoir). */
static inline ad_world_def tu3_tunnel(ad_backend b, int threads, double lx, double n, int contacts)
{
    ad_world_def d = ad_default_world_def();
    d.dimensions = 3;
    d.backend = b;
    d.threads = threads;
    d.x_max = lx;
    d.y_max = d.z_max = 8.0;
    d.boundary_x = AD_BOUNDARY_OPEN;
    d.boundary_y = d.boundary_z = AD_BOUNDARY_PERIODIC;
    d.stream_vx = 2.0;
    d.stream_temperature = 1.0;
    d.stream_density = n;
    d.disc_contacts = contacts;
    d.capacity = 20000;
    return d;
}

/* The world of d filled with the stream's gas (drift 2, kT/m 1) at volume fraction `fraction` (none at 0). */
static inline ad_world *tu3_filled(const ad_world_def *d, double fraction)
{
    ad_world *w = NULL;
    REQUIRE_OK(ad_world_create(d, &w));
    ad_fill_def f = {0, 0, d->x_max, 8, fraction, 2.0, 0.0, 1.0, 5, 0, 8, 0.0};
    if (fraction > 0) REQUIRE_OK(ad_world_fill(w, &f, NULL));
    return w;
}

/* Steps (100 at a time) until the world's time reaches t. */
static inline void tu3_run_until(ad_world *w, double t)
{
    while (tu_stats(w).time < t) REQUIRE_OK(ad_world_step(w, 100));
}

/* Sums over slabs of 1 m along x (64 at most): spheres, velocity and its square per axis. */
#define TU3_SLABS 64
typedef struct tu3_slabs {
    double n[TU3_SLABS], v[TU3_SLABS][3], v2[TU3_SLABS][3];
    int count, samples;
} tu3_slabs;

/* Reads the world every 20 steps until the time `end`, into the slabs (calloc'd; free them). */
static inline tu3_slabs *tu3_sample(ad_world *w, double end)
{
    tu3_slabs *s = calloc(1, sizeof *s);
    s->count = (int)ceil(w->def.x_max - w->def.x_min);
    ENSURE(s->count <= TU3_SLABS);
    ad_particle3 *p = malloc(w->def.capacity * sizeof *p);
    ad_particle_out out = {NULL, NULL, NULL, NULL, NULL, p};
    while (tu_stats(w).time < end) {
        REQUIRE_OK(ad_world_step(w, 20));
        size_t got;
        REQUIRE_OK(ad_world_read(w, 0, w->def.capacity, &out, &got));
        s->samples++;
        for (size_t i = 0; i < got; i++) {
            int k = (int)floor(p[i].x - w->def.x_min);
            if (k < 0 || k >= s->count) continue;
            const double v[3] = {p[i].vx, p[i].vy, p[i].vz};
            s->n[k] += 1.0;
            for (int a = 0; a < 3; a++) s->v[k][a] += v[a], s->v2[k][a] += v[a] * v[a];
        }
    }
    free(p);
    return s;
}

/* The gas of slabs [x0, x1): density (spheres a cubic metre, the face 8 x 8 m), mean velocity along x,
 * temperature (the velocity variance, mean over the axes). */
typedef struct tu3_region {
    double density, vx, temperature;
} tu3_region;

static inline tu3_region tu3_region_of(const tu3_slabs *s, int x0, int x1)
{
    double n = 0, v[3] = {0, 0, 0}, v2[3] = {0, 0, 0};
    for (int k = x0; k < x1; k++) {
        n += s->n[k];
        for (int a = 0; a < 3; a++) v[a] += s->v[k][a], v2[a] += s->v2[k][a];
    }
    tu3_region r = {n / s->samples / (64.0 * (x1 - x0)), v[0] / n, 0.0};
    for (int a = 0; a < 3; a++) r.temperature += (v2[a] / n - (v[a] / n) * (v[a] / n)) / 3.0;
    return r;
}

/* Region r against the stream (density n, U = 2, kT/m = 1) within the relative tolerances. */
static inline void tu3_check_region(const char *name, tu3_region r, double n, double tol_n, double tol_v,
                                    double tol_t)
{
    printf("  %-24s density %.4f (%.4f, %+.2f %%), vx %.4f (%+.2f %%), kT/m %.4f (%+.2f %%)\n", name, r.density, n,
           100.0 * (r.density / n - 1.0), r.vx, 100.0 * (r.vx / 2.0 - 1.0), r.temperature,
           100.0 * (r.temperature - 1.0));
    ENSURE_REL(r.density, n, tol_n);
    ENSURE_REL(r.vx, 2.0, tol_v);
    ENSURE_REL(r.temperature, 1.0, tol_t);
}

/* The slabs' densities over n, printed. */
static inline void tu3_print_slabs(const tu3_slabs *s, double n)
{
    printf("  slabs' density / n:");
    for (int k = 0; k < s->count; k++) printf(" %.3f", s->n[k] / s->samples / 64.0 / n);
    printf("\n");
}

/* Every sphere accounted for: spheres = filled + entered + added - left - removed (the reservoir's). */
static inline int tu3_balanced(const ad_stats *s, size_t n0)
{
    long long b = (long long)n0 + (long long)s->entered + (long long)s->reservoir_added - (long long)s->left -
                  (long long)s->reservoir_removed;
    return b == (long long)s->count;
}

/* test_reservoir3's tunnel: 24 m long, bands of 4 m (4 cells) inside each open face, the stream at volume
 * fraction f, contacts on. */
#define TU3_RES_LX 24.0
#define TU3_BAND 4.0
static inline ad_world_def tu3_reservoir_tunnel(ad_backend b, int threads, double f)
{
    ad_world_def d = tu3_tunnel(b, threads, TU3_RES_LX, tu3_density_of(f), 1);
    d.reservoir = TU3_BAND;
    return d;
}

/* The reservoir tunnel at volume fraction f on backend b, filled with the stream's gas, `settle` seconds
 * to settle and means until `end`, over `runs` runs of seeds 1, 2, ... pooled (a run's region of 2 m
 * fluctuates slowly: at 0.1 over 200 s the mean velocity inside the inlet band came out -3.4, -1.4 and
 * +1.2 % in three seeds): the interior [6, 18) m, the 2 m inside the inlet's band [4, 6) and the
 * outlet's [18, 20) against the free stream within the tolerances; every sphere accounted for. */
static inline void tu3_reservoir_case(ad_backend b, double f, double settle, double end, int runs, double tol_n,
                                      double tol_v, double tol_t)
{
    tu3_slabs *all = calloc(1, sizeof *all);
    double n = tu3_density_of(f);
    for (int k = 0; k < runs; k++) {
        ad_world_def d = tu3_reservoir_tunnel(b, 2, f);
        d.seed = (uint64_t)(k + 1);
        ad_world *w = tu3_filled(&d, f);
        size_t n0 = w->count;
        tu3_run_until(w, settle);
        tu3_slabs *s = tu3_sample(w, end);
        ad_stats st = tu_stats(w);
        printf("%s, volume fraction %.1f, seed %d, %.0f s: %zu spheres at the start, %zu now; %llu entered, %llu left, "
               "reservoir +%llu -%llu; %u waiting; %.4g s a step\n", ad_backend_name(st.backend), f, k + 1, end, n0,
               w->count, (unsigned long long)st.entered, (unsigned long long)st.left,
               (unsigned long long)st.reservoir_added, (unsigned long long)st.reservoir_removed, st.entries_waiting,
               st.dt);
        tu3_print_slabs(s, n);
        ENSURE(tu3_balanced(&st, n0) && st.count == w->count);
        ENSURE(st.reservoir_added > 0 && st.reservoir_removed > 0 && st.entries_lost == 0);
        all->count = s->count;
        all->samples += s->samples;
        for (int j = 0; j < s->count; j++) {
            all->n[j] += s->n[j];
            for (int a = 0; a < 3; a++) all->v[j][a] += s->v[j][a], all->v2[j][a] += s->v2[j][a];
        }
        free(s);
        ad_world_destroy(w);
    }
    printf("  %d run%s pooled:\n", runs, runs > 1 ? "s" : "");
    tu3_check_region("interior [6, 18) m", tu3_region_of(all, 6, 18), n, tol_n, tol_v, tol_t);
    tu3_check_region("inside the inlet band", tu3_region_of(all, 4, 6), n, tol_n, tol_v, tol_t);
    tu3_check_region("inside the outlet band", tu3_region_of(all, 18, 20), n, tol_n, tol_v, tol_t);
    free(all);
}

/* `steps` steps of the world of d filled at `fraction`: the spheres balanced, ids unique and below the
 * counter, every sphere inside the tunnel; returns the stats. */
static inline ad_stats tu3_bookkeeping(const ad_world_def *d, double fraction, int steps)
{
    ad_world *w = tu3_filled(d, fraction);
    size_t n0 = w->count;
    REQUIRE_OK(ad_world_step(w, (uint64_t)steps));
    size_t n = w->count, got, dup = 0, outside = 0;
    ad_particle3 *p = malloc(n * sizeof *p + 1);
    uint32_t *id = malloc(n * sizeof *id + 1);
    ad_particle_out out = {NULL, id, NULL, NULL, NULL, p};
    REQUIRE_OK(ad_world_read(w, AD_READ_BY_ID, n, &out, &got));
    for (size_t k = 0; k < got; k++) {
        dup += k > 0 && id[k] <= id[k - 1];
        outside += !(p[k].x >= d->x_min && p[k].x < d->x_max && p[k].y >= 0 && p[k].y < 8 && p[k].z >= 0 && p[k].z < 8);
    }
    ad_stats s = tu_stats(w);
    printf("%d steps from %zu spheres: %zu spheres, %llu entered, %llu left, reservoir +%llu -%llu, %zu repeated ids, "
           "%zu outside, %u waiting\n", steps, n0, got, (unsigned long long)s.entered, (unsigned long long)s.left,
           (unsigned long long)s.reservoir_added, (unsigned long long)s.reservoir_removed, dup, outside,
           s.entries_waiting);
    ENSURE(got == n && dup == 0 && outside == 0 && s.left > 20);
    ENSURE(got == 0 || id[got - 1] < n0 + s.entered + s.reservoir_added);
    ENSURE(tu3_balanced(&s, n0) && s.count == w->count);
    free(p);
    free(id);
    ad_world_destroy(w);
    return s;
}

/* The world of d filled at `fraction`, run `first` steps (further, 25 at a time up to 1000, until spheres
 * wait for room where `until_waiting`), saved, run 300 more; the checkpoint resumed on backend `again`
 * runs the same 300 steps to the same bits. Returns the spheres waiting at the save. */
static inline uint32_t tu3_checkpoint(const ad_world_def *d, double fraction, int first, int until_waiting,
                                      ad_backend again)
{
    char path[] = "/tmp/aerodem_tunnel3_XXXXXX";
    int fd = mkstemp(path);
    ENSURE(fd >= 0);
    close(fd);
    ad_world *a = tu3_filled(d, fraction), *b = NULL;
    REQUIRE_OK(ad_world_step(a, (uint64_t)first));
    uint32_t waiting = tu_stats(a).entries_waiting;
    for (int k = 0; k < 40 && until_waiting && waiting == 0; k++) {
        REQUIRE_OK(ad_world_step(a, 25));
        waiting = tu_stats(a).entries_waiting;
    }
    REQUIRE_OK(ad_world_save(a, path, NULL, 0));
    REQUIRE_OK(ad_world_step(a, 300));
    REQUIRE_OK(ad_world_load(path, again, 1, &b, NULL, NULL));
    REQUIRE_OK(ad_world_step(b, 300));
    uint64_t ha = tu3_hash(a), hb = tu3_hash(b);
    ad_stats sa = tu_stats(a), sb = tu_stats(b);
    printf("checkpoint with %u spheres waiting, reservoir +%llu -%llu: straight %016llx, resumed on %s %016llx; "
           "entered %llu / %llu\n", waiting, (unsigned long long)sa.reservoir_added,
           (unsigned long long)sa.reservoir_removed, (unsigned long long)ha, ad_backend_name(again),
           (unsigned long long)hb, (unsigned long long)sa.entered, (unsigned long long)sb.entered);
    ENSURE(!until_waiting || waiting > 0);
    ENSURE(ha == hb && a->count == b->count && sa.time == sb.time);
    ENSURE(sa.entered == sb.entered && sa.left == sb.left && sa.entries_waiting == sb.entries_waiting &&
           sa.entries_lost == sb.entries_lost);
    ENSURE(sa.reservoir_added == sb.reservoir_added && sa.reservoir_removed == sb.reservoir_removed);
    ad_world_destroy(a);
    ad_world_destroy(b);
    unlink(path);
    return waiting;
}

/* The hash of the world of d filled at `fraction` after `steps` steps. */
static inline uint64_t tu3_run_hash(const ad_world_def *d, double fraction, int steps)
{
    ad_world *w = tu3_filled(d, fraction);
    REQUIRE_OK(ad_world_step(w, (uint64_t)steps));
    uint64_t h = tu3_hash(w);
    ad_world_destroy(w);
    return h;
}

/* backend = reference, cpu on 1 and on 4 threads: the same bits after `steps` steps. */
static inline void tu3_backends_agree(ad_world_def d, double fraction, int steps)
{
    d.backend = AD_BACKEND_REFERENCE, d.threads = 1;
    uint64_t r = tu3_run_hash(&d, fraction, steps);
    d.backend = AD_BACKEND_CPU;
    uint64_t c1 = tu3_run_hash(&d, fraction, steps);
    d.threads = 4;
    uint64_t c4 = tu3_run_hash(&d, fraction, steps);
    printf("reference, cpu on 1 and 4 threads, %d steps%s: %016llx %016llx %016llx\n", steps,
           d.reservoir > 0 ? " with the reservoir" : "", (unsigned long long)r, (unsigned long long)c1,
           (unsigned long long)c4);
    ENSURE(r == c1 && c1 == c4);
}

#endif
