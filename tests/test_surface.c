/* Gas-surface models and the body's panels (issue 20; physics/panel.h, physics/surface.h): definitions refused
 * by name; the panels' impulses add up to the body's for every integrator, the BVH, 3D, a world sampled from a
 * reset on (every surface specular) and an open tunnel with the reservoir; the reference and the
 * CPU agree panel by panel and disc by disc with diffuse walls and body, and the CPU on 1, 2 and 4 threads; a
 * checkpoint resumes bit for bit; a diffuse body at the gas's temperature takes no energy on average from a gas
 * at rest, a hotter one gives some.
 *
 * The cases that are not the reference's run on the backend of AERODEM_TEST_BACKEND (the CPU by default);
 * `test_surface gpu` runs them on the CUDA backend (exit 77 without a GPU), and then the GPU against the CPU:
 * disc by disc over 10 steps, the panels' and the body's sums over 400 free-molecular steps within float
 * rounding, 2D and 3D, and two GPU runs bit-identical (deterministic mode). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_gpu_tunnel.h"
#include "test_util.h"

/* The backend of the cases that are not the reference's (tu_def's; CUDA for `test_surface gpu`). */
static ad_backend g_be = AD_BACKEND_CPU;
/* The worlds below: without disc-disc contacts (free-molecular), on the GPU's fast path (not deterministic). */
static int g_free_molecular, g_fast;

/* ------------------------------------------------------------ refusals -- */

static void refused(ad_world_def d, const char *field)
{
    ad_status st = ad_world_def_validate(&d);
    ENSURE_MSG(st.code == AD_ERR_INVALID && !strcmp(st.field, field), "expected %s refused, got %d '%s': %s", field,
               (int)st.code, st.field, st.message);
}

static void test_refusals(void)
{
    ad_world_def d = ad_default_world_def();
    ENSURE(d.body_surface.model == AD_SURFACE_SPECULAR && d.body_surface.temperature == 1.0);
    ENSURE_OK(ad_world_def_validate(&d));
    ad_world_def e = d;
    e.body_surface.accommodation = 1.5;
    refused(e, "body_surface.accommodation");
    e = d;
    e.body_surface.model = AD_SURFACE_DIFFUSE;
    e.body_surface.temperature = 0.0;
    refused(e, "body_surface.temperature");
    e.body_surface.temperature = NAN;
    refused(e, "body_surface.temperature");
    e = d;
    e.wall_surface[2].model = (ad_surface_model)7;
    refused(e, "wall_surface[2].model");
    e = d;
    e.wall_surface[1].model = AD_SURFACE_MAXWELL;
    e.wall_surface[1].accommodation = -0.1;
    refused(e, "wall_surface[1].accommodation");
    e = d;
    e.body_surface.temperature = 0.0; /* a specular surface has no temperature to check */
    ENSURE_OK(ad_world_def_validate(&e));
    e = d;
    e.body_surface.model = AD_SURFACE_DIFFUSE; /* any backend takes it, auto too */
    e.backend = AD_BACKEND_AUTO;
    ad_world *w = NULL;
    ENSURE_OK(ad_world_create(&e, &w));
    ad_world_destroy(w);
}

/* ------------------------------------------------------------- a world -- */

/* A closed box of gas (area fraction 0.25, kT/m = 1) around a closed 24-gon of radius 6 and a plate,
 * with the given surfaces: walls diffuse at T_w if wall_model says so, the body's model. */
static ad_world *box_world(ad_backend backend, int threads, ad_integrator integ, ad_broad_phase bp,
                           ad_surface_model body, ad_surface_model walls, double Tbody)
{
    ad_world_def d = ad_default_world_def();
    d.x_max = d.y_max = 40.0;
    d.capacity = 4096;
    d.stiffness = 1e4;
    d.restitution = 0.95;
    d.disc_contacts = !g_free_molecular;
    d.deterministic = !g_fast;
    d.backend = backend;
    d.threads = threads;
    d.integrator = integ;
    d.broad_phase = bp;
    d.body_surface.model = body;
    d.body_surface.accommodation = 0.6;
    d.body_surface.temperature = Tbody;
    for (int k = 0; k < 4; k++) {
        d.wall_surface[k].model = walls;
        d.wall_surface[k].accommodation = 0.5;
        d.wall_surface[k].temperature = 1.5;
    }
    ad_world *w;
    REQUIRE_OK(ad_world_create(&d, &w));
    enum { N = 24 };
    ad_segment s[N + 3];
    for (int k = 0; k < N; k++) {
        double a0 = 2 * TU_PI * k / N, a1 = 2 * TU_PI * (k + 1) / N;
        s[k] = (ad_segment){(float)(15 + 6 * cos(a0)), (float)(20 + 6 * sin(a0)), (float)(15 + 6 * cos(a1)),
                            (float)(20 + 6 * sin(a1))};
    }
    s[N] = (ad_segment){28, 10, 31, 14};
    s[N + 1] = (ad_segment){31, 14, 34, 18};
    s[N + 2] = (ad_segment){34, 18, 37, 22};
    REQUIRE_OK(ad_world_add_segments(w, s, N + 3));
    ad_fill_def f = {1, 1, 39, 39, 0.25, 0.3, -0.2, 1.0, 5, 0, 0, 0};
    size_t added;
    REQUIRE_OK(ad_world_fill(w, &f, &added));
    return w;
}

static ad_stats stats_of(const ad_world *w)
{
    ad_stats s;
    REQUIRE_OK(ad_world_get_stats(w, &s));
    return s;
}

/* The panels' impulses and energies summed, and their contacts. */
static void panel_totals(const ad_world *w, size_t n, double imp[3], double *energy, uint64_t *contacts)
{
    ad_panel_sums *p = malloc(n * sizeof *p);
    REQUIRE_OK(ad_world_read_panels(w, 0, n, p));
    imp[0] = imp[1] = imp[2] = *energy = 0;
    *contacts = 0;
    for (size_t k = 0; k < n; k++) {
        for (int j = 0; j < 3; j++) imp[j] += p[k].impulse[j];
        *energy += p[k].energy;
        *contacts += p[k].contacts;
    }
    free(p);
}

/* After a reset, the panels' impulse equals the body's over the same time, to rounding. */
static void check_sums(const char *what, ad_world *w, size_t npanel, uint64_t steps)
{
    REQUIRE_OK(ad_world_step(w, 200));
    REQUIRE_OK(ad_world_reset_panels(w));
    ad_stats a = stats_of(w);
    ENSURE(a.panel_time == 0.0);
    REQUIRE_OK(ad_world_step(w, steps));
    ad_stats b = stats_of(w);
    double imp[3], e;
    uint64_t n;
    panel_totals(w, npanel, imp, &e, &n);
    double bx = b.body_impulse_x - a.body_impulse_x, by = b.body_impulse_y - a.body_impulse_y;
    double scale = fabs(bx) + fabs(by) + 1e-3;
    printf("  %-34s body impulse (%.5f, %.5f), panels (%.5f, %.5f), %llu contacts, panel_time %.4f s\n", what, bx,
           by, imp[0], imp[1], (unsigned long long)n, b.panel_time);
    ENSURE_NEAR(imp[0], bx, 1e-4 * scale);
    ENSURE_NEAR(imp[1], by, 1e-4 * scale);
    ENSURE(n > 0);
    ENSURE_NEAR(b.panel_time, b.time - a.time, 1e-9 * b.time);
}

static void test_sums(void)
{
    static const struct {
        const char *name;
        ad_backend be;
        ad_integrator integ;
        ad_broad_phase bp;
        ad_surface_model body;
    } cases[] = {
        {"symplectic, specular", AD_BACKEND_CPU, AD_INTEGRATOR_SYMPLECTIC_EULER, AD_BROAD_PHASE_GRID,
         AD_SURFACE_SPECULAR},
        {"symplectic, maxwell 0.6", AD_BACKEND_CPU, AD_INTEGRATOR_SYMPLECTIC_EULER, AD_BROAD_PHASE_GRID,
         AD_SURFACE_MAXWELL},
        {"euler, diffuse", AD_BACKEND_CPU, AD_INTEGRATOR_EULER, AD_BROAD_PHASE_GRID, AD_SURFACE_DIFFUSE},
        {"verlet, diffuse", AD_BACKEND_CPU, AD_INTEGRATOR_VERLET, AD_BROAD_PHASE_GRID, AD_SURFACE_DIFFUSE},
        {"rk4, diffuse", AD_BACKEND_CPU, AD_INTEGRATOR_RK4, AD_BROAD_PHASE_GRID, AD_SURFACE_DIFFUSE},
        {"bvh, diffuse", AD_BACKEND_CPU, AD_INTEGRATOR_SYMPLECTIC_EULER, AD_BROAD_PHASE_BVH, AD_SURFACE_DIFFUSE},
        {"rk4, diffuse", AD_BACKEND_REFERENCE, AD_INTEGRATOR_RK4, AD_BROAD_PHASE_GRID, AD_SURFACE_DIFFUSE},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        ad_backend be = cases[k].be == AD_BACKEND_CPU ? g_be : cases[k].be;
        ad_world *w = box_world(be, 2, cases[k].integ, cases[k].bp, cases[k].body, AD_SURFACE_DIFFUSE, 1.0);
        char what[64];
        snprintf(what, sizeof what, "%s %s", ad_backend_name(be), cases[k].name);
        check_sums(what, w, 27, 1500);
        ad_world_destroy(w);
    }
    /* every surface specular: sampling starts at the reset, on a world that ran its fast path until then */
    ad_world *w = box_world(g_be, 2, AD_INTEGRATOR_SYMPLECTIC_EULER, AD_BROAD_PHASE_GRID, AD_SURFACE_SPECULAR,
                            AD_SURFACE_SPECULAR, 1.0);
    char what[64];
    snprintf(what, sizeof what, "%s all specular, from the reset", ad_backend_name(g_be));
    check_sums(what, w, 27, 1500);
    ad_world_destroy(w);
    /* an open tunnel with the reservoir: discs leave, and enter with no contact yet */
    ad_world_def d = gt_def(g_be, AD_INTEGRATOR_SYMPLECTIC_EULER);
    d.body_surface.model = AD_SURFACE_DIFFUSE;
    d.wall_surface[AD_WALL_YMIN].model = d.wall_surface[AD_WALL_YMAX].model = AD_SURFACE_DIFFUSE;
    w = gt_create(&d);
    gt_fill(w);
    snprintf(what, sizeof what, "%s open tunnel, diffuse", ad_backend_name(g_be));
    check_sums(what, w, 5, 1500);
    ENSURE(stats_of(w).entered > 0 && stats_of(w).left > 0);
    ad_world_destroy(w);
}

/* ----------------------------------------------- bit for bit: backends, threads, checkpoints -- */

typedef struct snapshot {
    size_t n;
    ad_particle *p;
    ad_panel_sums sums[27];
    ad_stats st;
} snapshot;

static snapshot take(const ad_world *w)
{
    snapshot s;
    s.st = stats_of(w);
    s.p = malloc(s.st.count * sizeof *s.p);
    REQUIRE_OK(ad_world_read_particles(w, AD_READ_BY_ID, s.st.count, s.p, NULL, NULL, NULL, &s.n));
    REQUIRE_OK(ad_world_read_panels(w, 0, 27, s.sums));
    return s;
}

static int same(const snapshot *a, const snapshot *b)
{
    return a->n == b->n && !memcmp(a->p, b->p, a->n * sizeof *a->p) && !memcmp(a->sums, b->sums, sizeof a->sums) &&
           a->st.body_impulse_x == b->st.body_impulse_x && a->st.body_impulse_y == b->st.body_impulse_y &&
           !memcmp(a->st.wall_impulse, b->st.wall_impulse, sizeof a->st.wall_impulse);
}

static snapshot run(ad_backend be, int threads, ad_integrator integ)
{
    ad_world *w = box_world(be, threads, integ, AD_BROAD_PHASE_GRID, AD_SURFACE_MAXWELL, AD_SURFACE_DIFFUSE, 1.2);
    REQUIRE_OK(ad_world_step(w, 600));
    snapshot s = take(w);
    ad_world_destroy(w);
    return s;
}

static void test_identical(void)
{
    for (int i = 0; i < 2; i++) {
        ad_integrator integ = i ? AD_INTEGRATOR_RK4 : AD_INTEGRATOR_SYMPLECTIC_EULER;
        snapshot ref = run(AD_BACKEND_REFERENCE, 1, integ);
        int reemitted = 0;
        for (int k = 0; k < 27; k++) reemitted |= ref.sums[k].contacts > 0;
        ENSURE(reemitted);
        for (int t = 1; t <= 4; t *= 2) {
            snapshot c = run(AD_BACKEND_CPU, t, integ);
            ENSURE_MSG(same(&ref, &c), "%s: the CPU on %d threads differs from the reference (panels, discs or walls)",
                       i ? "rk4" : "symplectic", t);
            free(c.p);
        }
        free(ref.p);
    }
    printf("  reference = cpu on 1, 2, 4 threads, disc by disc and panel by panel (symplectic Euler, RK4)\n");
}

static void test_checkpoint(void)
{
    char path[] = "/tmp/aerodem_test_surface_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) {
        perror("mkstemp");
        exit(1);
    }
    close(fd);
    ad_world *a = box_world(g_be, 2, AD_INTEGRATOR_SYMPLECTIC_EULER, AD_BROAD_PHASE_GRID, AD_SURFACE_DIFFUSE,
                            AD_SURFACE_DIFFUSE, 1.0);
    REQUIRE_OK(ad_world_reset_panels(a));
    REQUIRE_OK(ad_world_step(a, 300));
    REQUIRE_OK(ad_world_save(a, path, NULL, 0));
    REQUIRE_OK(ad_world_step(a, 300));
    snapshot sa = take(a);
    ad_world *b;
    REQUIRE_OK(ad_world_load(path, g_be, -1, &b, NULL, NULL));
    REQUIRE_OK(ad_world_step(b, 300));
    snapshot sb = take(b);
    ENSURE_MSG(same(&sa, &sb), "a resumed run differs from the uninterrupted one");
    ENSURE(sa.st.panel_time == sb.st.panel_time);
    uint64_t nc = 0;
    for (int k = 0; k < 27; k++) nc += sb.sums[k].contacts;
    printf("  %s: checkpoint resumed bit for bit: %llu contacts on the panels\n", ad_backend_name(g_be),
           (unsigned long long)nc);
    free(sa.p);
    free(sb.p);
    ad_world_destroy(a);
    ad_world_destroy(b);
    unlink(path);
}

/* ------------------------------------------------------------- 3D -- */

/* A box of spheres around a cube of edge 4 (12 triangles), diffuse at twice the gas's temperature. */
static ad_world *cube_world(ad_backend be)
{
    ad_world_def d = ad_default_world_def();
    d.dimensions = 3;
    d.x_max = d.y_max = d.z_max = 16.0;
    d.capacity = 4096;
    d.stiffness = 1e4;
    d.disc_contacts = !g_free_molecular;
    d.backend = be;
    d.threads = 2;
    d.body_surface.model = AD_SURFACE_DIFFUSE;
    d.body_surface.temperature = 2.0;
    ad_world *w;
    REQUIRE_OK(ad_world_create(&d, &w));
    /* a cube of edge 4 at the middle, 12 triangles */
    float c0 = 6, c1 = 10;
    float v[8][3];
    for (int k = 0; k < 8; k++) v[k][0] = k & 1 ? c1 : c0, v[k][1] = k & 2 ? c1 : c0, v[k][2] = k & 4 ? c1 : c0;
    static const int f[12][3] = {{0, 2, 1}, {1, 2, 3}, {4, 5, 6}, {5, 7, 6}, {0, 1, 4}, {1, 5, 4},
                                 {2, 6, 3}, {3, 6, 7}, {0, 4, 2}, {2, 4, 6}, {1, 3, 5}, {3, 7, 5}};
    ad_triangle t[12];
    for (int k = 0; k < 12; k++)
        for (int j = 0; j < 3; j++) memcpy(t[k].v[j], v[f[k][j]], sizeof v[0]);
    REQUIRE_OK(ad_world_add_triangles(w, t, 12));
    ad_fill_def fl = {0.5, 0.5, 15.5, 15.5, 0.1, 0.4, 0, 1.0, 3, 0.5, 15.5, 0};
    size_t added;
    REQUIRE_OK(ad_world_fill(w, &fl, &added));
    return w;
}

static void test_3d(void)
{
    ad_world *w = cube_world(g_be);
    REQUIRE_OK(ad_world_reset_panels(w));
    ad_stats a = stats_of(w);
    REQUIRE_OK(ad_world_step(w, 1500));
    ad_stats b = stats_of(w);
    double imp[3], e;
    uint64_t n;
    panel_totals(w, 12, imp, &e, &n);
    double dx = b.body_impulse_x - a.body_impulse_x, dy = b.body_impulse_y - a.body_impulse_y,
           dz = b.body_impulse_z - a.body_impulse_z, scale = fabs(dx) + fabs(dy) + fabs(dz) + 1e-3;
    printf("  %s 3D cube, diffuse at 2x the gas: body impulse (%.4f, %.4f, %.4f), panels (%.4f, %.4f, %.4f), %llu "
           "contacts, energy %.3f J\n",
           ad_backend_name(g_be), dx, dy, dz, imp[0], imp[1], imp[2], (unsigned long long)n, e);
    ENSURE_NEAR(imp[0], dx, 1e-4 * scale);
    ENSURE_NEAR(imp[1], dy, 1e-4 * scale);
    ENSURE_NEAR(imp[2], dz, 1e-4 * scale);
    ENSURE(n > 5);
    ENSURE(e < 0); /* a body hotter than the gas gives it energy */
    ad_world_destroy(w);
}

/* --------------------------------------------- energy flux at the gas's temperature -- */

/* Free-molecular gas at rest (kT/m = 1) in a box with specular walls around a diffuse body: at T_w = 1 the
 * mean energy the body takes per contact is zero within its error; at T_w = 2 it is negative, by about
 * (3/2) m (T - T_w) per re-emission in 2D (surface_theory.h). */
static void energy_case(double Tw, double *per_contact, double *se, double *first)
{
    ad_world_def d = ad_default_world_def();
    d.x_max = d.y_max = 30.0;
    d.capacity = 4096;
    d.stiffness = 1e3; /* no disc-disc contacts: a soft wall only lengthens the step */
    d.disc_contacts = 0;
    d.backend = g_be;
    d.threads = 2;
    d.body_surface.model = AD_SURFACE_DIFFUSE;
    d.body_surface.temperature = Tw;
    ad_world *w;
    REQUIRE_OK(ad_world_create(&d, &w));
    /* four triangles: a long perimeter in a small box, for many contacts a step */
    ad_segment s[12];
    for (int k = 0; k < 4; k++) {
        float x = 2.5f + 14.0f * (float)(k & 1), y = 2.5f + 14.0f * (float)(k >> 1);
        s[3 * k] = (ad_segment){x, y, x + 11, y};
        s[3 * k + 1] = (ad_segment){x + 11, y, x + 5.5f, y + 10};
        s[3 * k + 2] = (ad_segment){x + 5.5f, y + 10, x, y};
    }
    REQUIRE_OK(ad_world_add_segments(w, s, 12));
    ad_fill_def f = {0.5, 0.5, 29.5, 29.5, 0.3, 0, 0, 1.0, 9, 0, 0, 0};
    size_t added;
    REQUIRE_OK(ad_world_fill(w, &f, &added));
    REQUIRE_OK(ad_world_reset_panels(w));
    enum { B = 16 };
    double x[B], sum = 0, sum2 = 0;
    double prev_e = 0;
    uint64_t prev_n = 0;
    for (int b = 0; b < B; b++) {
        REQUIRE_OK(ad_world_step(w, 1500));
        double imp[3], e;
        uint64_t n;
        panel_totals(w, 12, imp, &e, &n);
        x[b] = (e - prev_e) / (double)(n - prev_n);
        prev_e = e, prev_n = n;
        sum += x[b], sum2 += x[b] * x[b];
    }
    *first = x[0];
    *per_contact = sum / B;
    *se = sqrt(fmax(sum2 / B - *per_contact * *per_contact, 0) / (B - 1));
    ad_world_destroy(w);
}

static void test_energy(void)
{
    double e1, s1, f1, e2, s2, f2;
    energy_case(1.0, &e1, &s1, &f1);
    energy_case(2.0, &e2, &s2, &f2);
    printf("  energy to a diffuse body per contact, gas at rest, kT/m = 1: at T_w = 1 %.4f +- %.4f J (theory 0); at "
           "T_w = 2 %.4f J in the first of 16 batches (theory -1.5 as the gas starts, 0 as it reaches T_w), %.4f on "
           "the whole\n",
           e1, s1, f2, e2);
    ENSURE_NEAR(e1, 0.0, 4 * s1 + 0.02);
    /* the body heats the gas as it runs: the flux starts near -1.5 and falls to zero */
    ENSURE(f2 < -0.7 && f2 > -1.7);
    ENSURE(e2 > f2);
}

/* ------------------------------------------------------- the GPU against the CPU -- */

/* A world's discs (spheres) by id as floats (2 dims positions, then velocities, per disc), its panels' sums and
 * statistics: what the GPU and the CPU are compared on. */
typedef struct record {
    size_t n, np;
    int dims;
    float *x;
    ad_panel_sums *sums;
    ad_stats st;
} record;

static record take_all(const ad_world *w, size_t np)
{
    record r;
    r.st = stats_of(w);
    r.dims = r.st.dimensions;
    r.np = np;
    r.x = malloc(r.st.count * 6 * sizeof *r.x + 1);
    r.sums = malloc(np * sizeof *r.sums);
    ad_particle_out out;
    memset(&out, 0, sizeof out);
    if (r.dims == 3)
        out.state3 = (ad_particle3 *)r.x;
    else
        out.state = (ad_particle *)r.x;
    REQUIRE_OK(ad_world_read(w, AD_READ_BY_ID, r.st.count, &out, &r.n));
    REQUIRE_OK(ad_world_read_panels(w, 0, np, r.sums));
    return r;
}

static void record_free(record *r)
{
    free(r->x);
    free(r->sums);
}

/* The largest |impulse| component and |energy| of the panels (the scales of the tolerances). */
static void panel_scales(const record *r, double *imp, double *energy)
{
    *imp = *energy = 1e-12;
    for (size_t k = 0; k < r->np; k++) {
        for (int j = 0; j < 3; j++)
            *imp = fmax(*imp, fabs(r->sums[k].impulse[j]));
        *energy = fmax(*energy, fabs(r->sums[k].energy));
    }
}

/* The GPU's record g against the CPU's c: discs within abs + rel tol (the share that is, at least `share`),
 * each panel's impulse and energy within rel of the largest panel's, its contacts within 2 + 1 %, the body's
 * impulse within rel of its size. */
static void agree(const char *what, const record *c, const record *g, double tol, double share, double rel)
{
    ENSURE(c->n == g->n && c->np == g->np);
    size_t off = 0;
    double worst = 0;
    for (size_t i = 0; i < c->n; i++) {
        int bad = 0;
        for (int k = 0; k < 2 * c->dims; k++) {
            double u = c->x[i * 2 * c->dims + k], v = g->x[i * 2 * c->dims + k], t = tol + tol * fabs(u);
            bad |= !(fabs(u - v) <= t);
            worst = fmax(worst, fabs(u - v) / t);
        }
        off += bad;
    }
    double pi, pe, worst_i = 0, worst_e = 0;
    panel_scales(c, &pi, &pe);
    size_t bad_panels = 0;
    for (size_t k = 0; k < c->np; k++) {
        const ad_panel_sums *a = &c->sums[k], *b = &g->sums[k];
        double di = 0;
        for (int j = 0; j < 3; j++)
            di = fmax(di, fabs(a->impulse[j] - b->impulse[j]));
        double de = fabs(a->energy - b->energy), dn = fabs((double)a->contacts - (double)b->contacts);
        worst_i = fmax(worst_i, di / pi);
        worst_e = fmax(worst_e, de / pe);
        bad_panels += !(di <= rel * pi && de <= rel * pe && dn <= 2 + 0.01 * (double)a->contacts);
    }
    double bx = c->st.body_impulse_x, by = c->st.body_impulse_y, bz = c->st.body_impulse_z;
    double scale = fabs(bx) + fabs(by) + fabs(bz) + 1e-9;
    double db = fabs(bx - g->st.body_impulse_x) + fabs(by - g->st.body_impulse_y) + fabs(bz - g->st.body_impulse_z);
    printf("  %-40s %zu of %zu discs outside %.0e (worst %.3g of it); panels: worst impulse %.2e, energy %.2e of the "
           "largest, %zu outside %.0e; body impulse (%.5f, %.5f, %.5f) vs (%.5f, %.5f, %.5f)\n",
           what, off, c->n, tol, worst, worst_i, worst_e, bad_panels, rel, bx, by, bz, g->st.body_impulse_x,
           g->st.body_impulse_y, g->st.body_impulse_z);
    ENSURE_MSG((double)off <= (1.0 - share) * (double)c->n + 0.5, "%s: %zu discs of %zu differ", what, off, c->n);
    ENSURE_MSG(bad_panels == 0, "%s: %zu panels differ", what, bad_panels);
    ENSURE_MSG(db <= rel * scale, "%s: the body's impulse differs by %.3g of %.3g", what, db, scale);
    ENSURE_REL(g->st.time, c->st.time, 1e-6);
    ENSURE_REL(g->st.panel_time, c->st.panel_time, 1e-6);
}

/* The GPU's world from the CPU's after `warm` steps, through a checkpoint (discs, contact states, panels). */
static ad_world *gpu_from(ad_world *c, uint64_t warm)
{
    char path[] = "/tmp/aerodem_test_surface_gpu_XXXXXX";
    int fd = mkstemp(path);
    ENSURE(fd >= 0);
    close(fd);
    REQUIRE_OK(ad_world_step(c, warm));
    REQUIRE_OK(ad_world_save(c, path, NULL, 0));
    ad_world *g;
    REQUIRE_OK(ad_world_load(path, AD_BACKEND_CUDA, -1, &g, NULL, NULL));
    unlink(path);
    return g;
}

/* Both backends from the same start: reset, `steps` steps, compared. */
static void versus(const char *what, ad_world *c, ad_world *g, size_t np, uint64_t steps, double tol, double share,
                   double rel)
{
    REQUIRE_OK(ad_world_reset_panels(c));
    REQUIRE_OK(ad_world_reset_panels(g));
    ad_stats c0 = stats_of(c), g0 = stats_of(g);
    REQUIRE_OK(ad_world_step(c, steps));
    REQUIRE_OK(ad_world_step(g, steps));
    record a = take_all(c, np), b = take_all(g, np);
    a.st.body_impulse_x -= c0.body_impulse_x,
        b.st.body_impulse_x -= g0.body_impulse_x; /* the body's, since the reset */
    a.st.body_impulse_y -= c0.body_impulse_y, b.st.body_impulse_y -= g0.body_impulse_y;
    a.st.body_impulse_z -= c0.body_impulse_z, b.st.body_impulse_z -= g0.body_impulse_z;
    agree(what, &a, &b, tol, share, rel);
    record_free(&a);
    record_free(&b);
    ad_world_destroy(c);
    ad_world_destroy(g);
}

static void test_gpu_versus_cpu(void)
{
    printf("the GPU against the CPU, diffuse walls and body:\n");
    /* disc by disc over 10 steps from the CPU's state after 1000 (its contacts under way), as test_gpu (FMA
     * contraction differs between gcc and nvcc, and the gas's chaos grows it) */
    static const ad_integrator integ[] = {AD_INTEGRATOR_SYMPLECTIC_EULER, AD_INTEGRATOR_EULER, AD_INTEGRATOR_VERLET,
                                          AD_INTEGRATOR_RK4};
    for (int k = 0; k < 4; k++) {
        char what[64];
        snprintf(what, sizeof what, "%s, 10 steps", ad_integrator_name(integ[k]));
        ad_world *c =
            box_world(AD_BACKEND_CPU, 2, integ[k], AD_BROAD_PHASE_GRID, AD_SURFACE_MAXWELL, AD_SURFACE_DIFFUSE, 1.2);
        versus(what, c, gpu_from(c, 1000), 27, 10, 1e-4, 1.0, 1e-3);
    }
    /* free-molecular, 400 steps: a diffuse re-emission's velocity is a function of (id, step), so rounding does not
     * grow across contacts; the odd disc whose contact ends a step apart differs */
    g_free_molecular = 1;
    for (int bvh = 0; bvh < 2; bvh++) {
        ad_broad_phase bp = bvh ? AD_BROAD_PHASE_BVH : AD_BROAD_PHASE_GRID;
        ad_world *wc[2];
        for (int k = 0; k < 2; k++)
            wc[k] = box_world(k ? AD_BACKEND_CUDA : AD_BACKEND_CPU, 2, AD_INTEGRATOR_SYMPLECTIC_EULER, bp,
                              AD_SURFACE_DIFFUSE, AD_SURFACE_DIFFUSE, 1.0);
        versus(bvh ? "free-molecular BVH, 400 steps" : "free-molecular, 400 steps", wc[0], wc[1], 27, 400, 1e-3, 0.98,
               2e-2);
    }
    versus("3D free-molecular, 400 steps", cube_world(AD_BACKEND_CPU), cube_world(AD_BACKEND_CUDA), 12, 400, 1e-3, 0.98,
           2e-2);
    g_free_molecular = 0;
    ad_world *c = cube_world(AD_BACKEND_CPU);
    versus("3D, 10 steps", c, gpu_from(c, 600), 12, 10, 1e-4, 1.0, 1e-3);
    g_free_molecular = 0;
}

/* Two GPU runs of the deterministic mode are the same bits, discs, panels and walls; the fast path keeps the
 * panels' sums equal to the body's; a 3D checkpoint resumes bit for bit. */
static void test_gpu_runs(void)
{
    for (int i = 0; i < 2; i++) {
        ad_integrator integ = i ? AD_INTEGRATOR_RK4 : AD_INTEGRATOR_SYMPLECTIC_EULER;
        snapshot a = run(AD_BACKEND_CUDA, 1, integ), b = run(AD_BACKEND_CUDA, 1, integ);
        printf("  %s: two GPU runs of 600 steps are %s\n", ad_integrator_name(integ),
               same(&a, &b) ? "bit-identical" : "DIFFERENT");
        ENSURE(same(&a, &b));
        free(a.p);
        free(b.p);
    }
    g_fast = 1;
    ad_world *w = box_world(AD_BACKEND_CUDA, 1, AD_INTEGRATOR_SYMPLECTIC_EULER, AD_BROAD_PHASE_GRID, AD_SURFACE_DIFFUSE,
                            AD_SURFACE_DIFFUSE, 1.0);
    check_sums("cuda fast path (atomic scatter)", w, 27, 1500);
    ad_world_destroy(w);
    g_fast = 0;
    char path[] = "/tmp/aerodem_test_surface3_XXXXXX";
    int fd = mkstemp(path);
    ENSURE(fd >= 0);
    close(fd);
    ad_world *a = cube_world(AD_BACKEND_CUDA), *b;
    REQUIRE_OK(ad_world_reset_panels(a));
    REQUIRE_OK(ad_world_step(a, 300));
    REQUIRE_OK(ad_world_save(a, path, NULL, 0));
    REQUIRE_OK(ad_world_step(a, 300));
    REQUIRE_OK(ad_world_load(path, AD_BACKEND_CUDA, -1, &b, NULL, NULL));
    REQUIRE_OK(ad_world_step(b, 300));
    record ra = take_all(a, 12), rb = take_all(b, 12);
    int ok = ra.n == rb.n && !memcmp(ra.x, rb.x, ra.n * 6 * sizeof *ra.x) &&
             !memcmp(ra.sums, rb.sums, 12 * sizeof *ra.sums) && ra.st.body_impulse_x == rb.st.body_impulse_x &&
             ra.st.panel_time == rb.st.panel_time;
    printf("  3D checkpoint on the GPU: the resumed run is %s\n", ok ? "bit-identical" : "DIFFERENT");
    ENSURE(ok);
    record_free(&ra);
    record_free(&rb);
    ad_world_destroy(a);
    ad_world_destroy(b);
    unlink(path);
}

int main(int argc, char **argv)
{
    int gpu = argc > 1 && !strcmp(argv[1], "gpu");
    g_be = gpu ? AD_BACKEND_CUDA : tu_def().backend;
    if (g_be == AD_BACKEND_CUDA && ad_backend_describe(AD_BACKEND_CUDA, NULL, 0) <= 0) {
        printf("test_surface: no CUDA GPU (or a build without CUDA): skipped\n");
        return 77;
    }
    test_refusals();
    test_sums();
    test_identical();
    test_checkpoint();
    test_3d();
    test_energy();
    if (gpu) {
        test_gpu_versus_cpu();
        test_gpu_runs();
    }
    return tu_finish(gpu ? "test_surface gpu" : "test_surface");
}
