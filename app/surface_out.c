/* What the body feels, panel by panel: the panels' sums read at every force row after the settling, each
 * interval's pressure, skin-friction and heat-transfer coefficients and contact rate kept as batch means (the
 * standard errors are those of CL and CD: mean_of / se_of over the interval values), written as surface.csv, as
 * cell data on body.vtp and as cp.png; kept in the checkpoint's caller block (a trailer after the run's state). */
#include "run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/free_each.h"
#include "core/panel_frame.h"
#include "io/image.h"
#include "io/vtk.h"

/* The quantities kept per panel, each an interval's value (core/panel_frame.h). */
enum { Q_CP = AD_PQ_CP, Q_CF = AD_PQ_CF, Q_CH = AD_PQ_CH, Q_RATE = AD_PQ_RATE, Q_FX = AD_PQ_FX, Q_FY = AD_PQ_FY,
       Q_FZ = AD_PQ_FZ, Q_N = AD_PQ_COUNT };

struct surface_state {
    ad_panel_geom *g;
    size_t n;
    ad_chord_frame frame;
    ad_panel_sums *prev, *now;  /* the sums at the last force row (since the reset), and room for a read */
    double prev_time;           /* ad_stats.panel_time at the last force row [s] */
    unsigned long long batches; /* intervals averaged */
    double *sum, *sum2;         /* n x Q_N: sums of the intervals' values and of their squares */
};

/* The checkpoint's trailer: this head, then per panel the sums at the last row, then sum and sum2. */
#define AD_SURFACE_TAG "ADSURF01"
typedef struct surface_head {
    char magic[8];
    uint64_t panels, batches;
    double prev_time;
} surface_head;
_Static_assert(sizeof(surface_head) == 32 && sizeof(ad_panel_sums) == 40, "the surface trailer's layout changed");

ad_status surf_prepare(run *r)
{
    const ad_scene *sc = &r->sc;
    surface_state *s = calloc(1, sizeof *s);
    if (!s) return fail(AD_ERR_NO_MEMORY, "out of memory");
    r->surf = s;
    if (sc->surface_out != AD_SURFACE_OUT_YES) return ok(); /* no panel is read: the fastest pass kept */
    int three = sc->dimensions == 3, wing = sc->shape == AD_SHAPE_WING;
    s->frame = (ad_chord_frame){three && !wing ? 0.0 : sc->chord, sc->aoa, {sc->x, sc->y, three ? sc->z : 0.0},
                                wing ? sc->sweep : 0.0};
    ad_status st = three ? ad_panels_3d(&r->mesh, &s->frame, &s->g)
                         : ad_panels_2d(r->ox, r->oy, r->on, r->oclosed, &s->frame, &s->g, &s->n);
    if (three) s->n = r->mesh.n;
    if (st.code || !s->n) return st;
    s->prev = calloc(s->n, sizeof *s->prev);
    s->now = calloc(s->n, sizeof *s->now);
    s->sum = calloc(s->n * Q_N, sizeof *s->sum);
    s->sum2 = calloc(s->n * Q_N, sizeof *s->sum2);
    if (!s->prev || !s->now || !s->sum || !s->sum2) return fail(AD_ERR_NO_MEMORY, "out of memory for %zu panels", s->n);
    return ok();
}

void surf_free(run *r)
{
    surface_state *s = r->surf;
    if (!s) return;
    AD_FREE_EACH(s->g, s->prev, s->now, s->sum, s->sum2);
    free(s);
    r->surf = NULL;
}

ad_status surf_reset(run *r)
{
    surface_state *s = r->surf;
    if (!s || !s->n) return ok();
    AD_TRY(ad_world_reset_panels(r->w));
    memset(s->prev, 0, s->n * sizeof *s->prev);
    memset(s->sum, 0, s->n * Q_N * sizeof *s->sum);
    memset(s->sum2, 0, s->n * Q_N * sizeof *s->sum2);
    s->prev_time = 0;
    s->batches = 0;
    return ok();
}

/* The free stream the coefficients are made with: q = rho U^2 / 2 (as CL and CD), the pressure p_inf = rho kT/m Z
 * (the dense gas's equation of state; Z = 1 without collisions), and rho U^3 / 2, the energy flux's scale. */
static ad_stream_scales scales_of(const run *r)
{
    const ad_flow_numbers *f = &r->flow;
    double u = r->sc.velocity, z = r->sc.collisions ? f->compressibility : 1.0;
    return (ad_stream_scales){f->dynamic_pressure, f->mass_density * r->sc.temperature * z,
                              0.5 * f->mass_density * u * u * u};
}

ad_status surf_row(run *r)
{
    surface_state *s = r->surf;
    if (!s || !s->n || !r->m.settled) return ok();
    ad_stats st_;
    ad_world_get_stats(r->w, &st_);
    double dt = st_.panel_time - s->prev_time;
    ad_stream_scales k = scales_of(r);
    if (!(dt > 0) || !(k.q > 0)) return ok(); /* as the force row: no interval, no coefficient */
    AD_TRY(ad_world_read_panels(r->w, 0, s->n, s->now));
    for (size_t i = 0; i < s->n; i++) {
        double v[Q_N];
        ad_panel_interval(&s->g[i], &k, &s->prev[i], &s->now[i], dt, v);
        for (int q = 0; q < Q_N; q++) {
            s->sum[i * Q_N + q] += v[q];
            s->sum2[i * Q_N + q] += v[q] * v[q];
        }
    }
    memcpy(s->prev, s->now, s->n * sizeof *s->prev);
    s->prev_time = st_.panel_time;
    s->batches++;
    return ok();
}

/* ------------------------------------------------------------ checkpoints -- */

size_t surf_block_size(const run *r)
{
    const surface_state *s = r->surf;
    return s && s->n ? sizeof(surface_head) + s->n * (sizeof(ad_panel_sums) + 2 * Q_N * sizeof(double)) : 0;
}

void surf_block_pack(const run *r, char *out)
{
    const surface_state *s = r->surf;
    if (!s || !s->n) return;
    surface_head h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, AD_SURFACE_TAG, sizeof h.magic);
    h.panels = s->n, h.batches = s->batches, h.prev_time = s->prev_time;
    memcpy(out, &h, sizeof h);
    out += sizeof h;
    memcpy(out, s->prev, s->n * sizeof *s->prev);
    out += s->n * sizeof *s->prev;
    memcpy(out, s->sum, s->n * Q_N * sizeof *s->sum);
    memcpy(out + s->n * Q_N * sizeof *s->sum, s->sum2, s->n * Q_N * sizeof *s->sum2);
}

ad_status surf_block_unpack(run *r, const char *in, size_t n, const char *checkpoint)
{
    surface_state *s = r->surf;
    if (n == 0) return ok(); /* a checkpoint older than the surface outputs: they start from zero */
    surface_head h;
    if (!s || n != surf_block_size(r) || n < sizeof h)
        return fail(AD_ERR_FORMAT, "%s: the surface state in the caller block (%zu bytes) is not that of the body's "
                    "%zu panels", checkpoint, n, s ? s->n : 0);
    memcpy(&h, in, sizeof h);
    int sane = !memcmp(h.magic, AD_SURFACE_TAG, sizeof h.magic) && h.panels == s->n && h.batches <= r->m.n &&
               isfinite(h.prev_time) && h.prev_time >= 0;
    in += sizeof h;
    memcpy(s->prev, in, s->n * sizeof *s->prev);
    in += s->n * sizeof *s->prev;
    memcpy(s->sum, in, s->n * Q_N * sizeof *s->sum);
    memcpy(s->sum2, in + s->n * Q_N * sizeof *s->sum, s->n * Q_N * sizeof *s->sum2);
    for (size_t i = 0; i < s->n * Q_N && sane; i++) sane = isfinite(s->sum[i]) && isfinite(s->sum2[i]);
    if (!sane) return fail(AD_ERR_FORMAT, "%s: the surface state in the caller block is damaged", checkpoint);
    s->batches = h.batches;
    s->prev_time = h.prev_time;
    return ok();
}

/* ---------------------------------------------------------------- files -- */

static double mean_q(const surface_state *s, size_t i, int q) { return mean_of(s->sum[i * Q_N + q], (double)s->batches); }

static double se_q(const surface_state *s, size_t i, int q)
{
    return se_of(s->sum[i * Q_N + q], s->sum2[i * Q_N + q], (double)s->batches);
}

/* surface.csv: a row per panel, in the world's order. */
static ad_status write_csv(run *r)
{
    const surface_state *s = r->surf;
    int three = r->sc.dimensions == 3;
    char path[AD_PATH_MAX + 32];
    ad_io_file io;
    ad_status st = out_open(r, &io, path, sizeof path, "surface.csv");
    if (st.code) return st;
    FILE *f = io.f;
    fputs(three ? "panel,x,y,z,nx,ny,nz,area,x_c,side,theta" : "panel,s,x_c,side,length,x,y,nx,ny", f);
    fputs(",cp,cp_se,cf,cf_se,ch,ch_se,contacts,contact_rate,contact_rate_se,fx,fy", f);
    fputs(three ? ",fz\n" : "\n", f);
    for (size_t i = 0; i < s->n; i++) {
        const ad_panel_geom *g = &s->g[i];
        if (three)
            fprintf(f, "%zu,%.9g,%.9g,%.9g,%.6g,%.6g,%.6g,%.9g,%.6g,%s,%.6g", i, g->c[0], g->c[1], g->c[2], g->n[0],
                    g->n[1], g->n[2], g->size, g->xc, ad_panel_side_name(g->side), g->theta);
        else
            fprintf(f, "%zu,%.9g,%.6g,%s,%.9g,%.9g,%.9g,%.6g,%.6g", i, g->s, g->xc, ad_panel_side_name(g->side),
                    g->size, g->c[0], g->c[1], g->n[0], g->n[1]);
        fprintf(f, ",%.6g,%.3g,%.6g,%.3g,%.6g,%.3g,%llu,%.6g,%.3g,%.9g,%.9g", mean_q(s, i, Q_CP), se_q(s, i, Q_CP),
                mean_q(s, i, Q_CF), se_q(s, i, Q_CF), mean_q(s, i, Q_CH), se_q(s, i, Q_CH),
                (unsigned long long)s->prev[i].contacts, mean_q(s, i, Q_RATE), se_q(s, i, Q_RATE), mean_q(s, i, Q_FX),
                mean_q(s, i, Q_FY));
        if (three) fprintf(f, ",%.9g", mean_q(s, i, Q_FZ));
        fputc('\n', f);
    }
    return ad_io_commit(&io);
}

/* body.vtp with the panels' means as cell data: Cp (the active scalars), Cf, Ch, contact_rate. */
static ad_status write_vtp(run *r)
{
    const surface_state *s = r->surf;
    float *v = malloc(4 * s->n * sizeof *v);
    if (!v) return fail(AD_ERR_NO_MEMORY, "out of memory for body.vtp");
    static const int qs[4] = {Q_CP, Q_CF, Q_CH, Q_RATE};
    for (int k = 0; k < 4; k++)
        for (size_t i = 0; i < s->n; i++) v[k * s->n + i] = (float)mean_q(s, i, qs[k]);
    ad_vtp_cells c[4] = {{"Cp", v}, {"Cf", v + s->n}, {"Ch", v + 2 * s->n}, {"contact_rate", v + 3 * s->n}};
    char path[AD_PATH_MAX + 32];
    ad_status st = path_in(r, path, sizeof path, "body.vtp");
    if (!st.code && r->sc.dimensions == 3) st = ad_write_vtp_mesh_cells(path, &r->mesh, c, 4);
    else if (!st.code) st = ad_write_vtp_panels(path, r->ox, r->oy, r->on, r->oclosed, c, 4);
    free(v);
    return st;
}

/* A series of cp.png: the panels of `side` (-1: any) that `pick` keeps, at x (x/c or the angle), by x. */
typedef struct cp_series {
    double *x, *y, *e;
    size_t n;
} cp_series;

static int by_x(const void *a, const void *b)
{
    const double *p = a, *q = b;
    return (p[0] > q[0]) - (p[0] < q[0]);
}

static ad_status gather(const run *r, int side, int angle, cp_series *out)
{
    const surface_state *s = r->surf;
    double *t = malloc(3 * s->n * sizeof *t);
    out->x = malloc(s->n * sizeof(double)), out->y = malloc(s->n * sizeof(double)), out->e = malloc(s->n * sizeof(double));
    out->n = 0;
    if (!t || !out->x || !out->y || !out->e) {
        free(t);
        return fail(AD_ERR_NO_MEMORY, "out of memory for cp.png");
    }
    /* a wing: the mid-span band, the triangles whose centroids lie within a quarter chord of the pivot's z */
    int band = r->sc.dimensions == 3 && !angle;
    for (size_t i = 0; i < s->n; i++) {
        const ad_panel_geom *g = &s->g[i];
        if ((side >= 0 && g->side != side) || (band && !(fabs(g->c[2] - s->frame.pivot[2]) <= 0.25 * s->frame.chord)))
            continue;
        double *p = t + 3 * out->n++;
        p[0] = angle ? g->theta : g->xc, p[1] = mean_q(s, i, Q_CP), p[2] = se_q(s, i, Q_CP);
    }
    qsort(t, out->n, 3 * sizeof *t, by_x);
    for (size_t i = 0; i < out->n; i++) out->x[i] = t[3 * i], out->y[i] = t[3 * i + 1], out->e[i] = t[3 * i + 2];
    free(t);
    return ok();
}

/* cp.png: Cp against x/c, upper and lower surfaces (a line body: upper minus lower), with standard errors, the
 * axis inverted (negative Cp up); a 3D body without a chord: Cp of every triangle against its angle from the
 * stagnation direction. */
static ad_status write_png(run *r)
{
    const surface_state *s = r->surf;
    int three = r->sc.dimensions == 3, angle = !(s->frame.chord > 0), line = !three && !r->oclosed;
    cp_series c[2];
    memset(c, 0, sizeof c);
    int ns = angle || line ? 1 : 2;
    ad_status st = ok();
    for (int k = 0; k < ns && !st.code; k++) st = gather(r, angle ? -1 : line ? AD_SIDE_BOTH : k, angle, &c[k]);
    ad_plot_series ps[2];
    const char *label[2] = {angle ? "triangles" : line ? "upper - lower" : "upper", "lower"};
    static const uint8_t rgb[2][3] = {{40, 90, 200}, {210, 60, 40}};
    for (int k = 0; k < ns; k++)
        ps[k] = (ad_plot_series){label[k], c[k].n, c[k].x, c[k].y, c[k].e, {rgb[k][0], rgb[k][1], rgb[k][2]}, three};
    char title[200], xl[96], path[AD_PATH_MAX + 32];
    if (three && !angle)
        snprintf(title, sizeof title, "pressure coefficient, wing mid-span band |z - %g| <= c/4, mean of %llu intervals",
                 s->frame.pivot[2], s->batches);
    else snprintf(title, sizeof title, "pressure coefficient on the body, mean of %llu intervals", s->batches);
    snprintf(xl, sizeof xl, "%s", angle ? "angle from the stagnation direction, acos(-n.x) [deg]" : "x/c (chord frame)");
    ad_line_plot p = {title, xl, "Cp", ps, ns, 0, 0, 1,
                      "Cp = (p - p_inf) / q_inf, negative up (aerodynamic convention); bars: one standard error"};
    if (!st.code) st = path_in(r, path, sizeof path, "cp.png");
    if (!st.code) st = ad_write_line_plot_png(path, &p);
    for (int k = 0; k < 2; k++) AD_FREE_EACH(c[k].x, c[k].y, c[k].e);
    return st;
}

ad_status out_surface(run *r)
{
    const surface_state *s = r->surf;
    if (!s || !s->n || r->sc.kind != AD_TUNNEL_FLOW) return ok();
    ad_status st = write_csv(r);
    if (!st.code && r->sc.vtk) st = write_vtp(r);
    if (!st.code && r->sc.png && s->batches >= 1) st = write_png(r);
    else if (!st.code && r->sc.png)
        say(r, "  no cp.png: no interval of the surface was averaged after the settling (a longer run)\n");
    return st;
}
