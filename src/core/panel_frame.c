/* A body's panels in its chord frame: the world coordinates of each segment or triangle turned back by the angle
 * of attack about the pivot (and, for a swept wing, shifted by the sweep), x/c = 0.25 + (that x) / chord. */
#include "panel_frame.h"

#include <math.h>
#include <stdlib.h>

#include "status.h"

static const double DEG = 3.14159265358979323846 / 180.0;

/* p in the chord frame, in chords from the leading edge (x) and above the chord line (y); a wing's sweep taken
 * off (the section at z lies (z - pivot z) tan(sweep) further back). */
static void to_chord(const ad_chord_frame *f, const double p[3], double *xc, double *yc)
{
    double a = f->aoa * DEG, c = cos(a), s = sin(a);
    double dx = p[0] - f->pivot[0], dy = p[1] - f->pivot[1], dz = p[2] - f->pivot[2];
    /* the placement turns the body clockwise by aoa: x' = x c + y s, y' = -x s + y c; back: */
    double lx = dx * c - dy * s, ly = dx * s + dy * c;
    lx -= dz * tan(f->sweep * DEG);
    *xc = f->chord > 0 ? 0.25 + lx / f->chord : NAN;
    *yc = ly;
}

int ad_panel_side_of(const double n[3], const ad_chord_frame *f)
{
    double a = f->aoa * DEG;
    return n[0] * sin(a) + n[1] * cos(a) >= 0 ? AD_SIDE_UPPER : AD_SIDE_LOWER;
}

const char *ad_panel_side_name(int side)
{
    return side == AD_SIDE_UPPER ? "upper" : side == AD_SIDE_LOWER ? "lower" : "both";
}

/* The tangent: u (the chord's direction towards the trailing edge, or the stream's) projected on the panel; where
 * the panel faces along u, y's projection. */
static void tangent(const ad_chord_frame *f, const double n[3], double t[3])
{
    double a = f->aoa * DEG, u[2][3] = {{cos(a), -sin(a), 0.0}, {0.0, 1.0, 0.0}};
    if (!(f->chord > 0)) u[0][0] = 1.0, u[0][1] = 0.0;
    for (int k = 0; k < 2; k++) {
        double un = u[k][0] * n[0] + u[k][1] * n[1] + u[k][2] * n[2], len = 0;
        for (int d = 0; d < 3; d++) t[d] = u[k][d] - un * n[d], len += t[d] * t[d];
        if (len > 1e-12) {
            for (int d = 0; d < 3; d++) t[d] /= sqrt(len);
            return;
        }
    }
}

/* What every panel gets from its centre and normal. */
static void finish_panel(const ad_chord_frame *f, ad_panel_geom *g)
{
    double yc;
    to_chord(f, g->c, &g->xc, &yc);
    tangent(f, g->n, g->t);
    g->theta = acos(fmax(-1.0, fmin(1.0, -g->n[0]))) / DEG;
    g->side = ad_panel_side_of(g->n, f);
}

ad_status ad_panels_2d(const float *x, const float *y, size_t n, int closed, const ad_chord_frame *f,
                       ad_panel_geom **out, size_t *np)
{
    *out = NULL;
    *np = 0;
    if (n < 2 || !x || !y) return ad_ok();
    size_t m = closed ? n : n - 1;
    ad_panel_geom *g = calloc(m, sizeof *g);
    if (!g) return ad_fail(AD_ERR_NO_MEMORY, "panels", "out of memory for %zu panels", m);
    double area = 0; /* twice the signed area: > 0 counter-clockwise, the outside on the right of each segment */
    for (size_t i = 0; i < n; i++) area += (double)x[i] * y[(i + 1) % n] - (double)x[(i + 1) % n] * y[i];
    double s = 0;
    for (size_t i = 0; i < m; i++) {
        size_t j = (i + 1) % n;
        double dx = (double)x[j] - x[i], dy = (double)y[j] - y[i], len = hypot(dx, dy);
        ad_panel_geom *p = &g[i];
        p->c[0] = 0.5 * ((double)x[i] + x[j]);
        p->c[1] = 0.5 * ((double)y[i] + y[j]);
        p->size = len;
        p->s = s + 0.5 * len;
        s += len;
        double sign = area >= 0 ? 1.0 : -1.0;
        p->n[0] = len > 0 ? sign * dy / len : 0.0;
        p->n[1] = len > 0 ? -sign * dx / len : 0.0;
        if (!closed && ad_panel_side_of(p->n, f) == AD_SIDE_LOWER) p->n[0] = -p->n[0], p->n[1] = -p->n[1];
        finish_panel(f, p);
        if (!closed) p->side = AD_SIDE_BOTH; /* a line: the gas presses both of its faces */
    }
    *out = g;
    *np = m;
    return ad_ok();
}

ad_status ad_panels_3d(const ad_mesh *m, const ad_chord_frame *f, ad_panel_geom **out)
{
    *out = NULL;
    if (!m->n) return ad_ok();
    ad_panel_geom *g = calloc(m->n, sizeof *g);
    if (!g) return ad_fail(AD_ERR_NO_MEMORY, "panels", "out of memory for %zu panels", m->n);
    for (size_t i = 0; i < m->n; i++) {
        const float(*v)[3] = m->t[i].v;
        double e1[3], e2[3], cr[3], len = 0;
        for (int d = 0; d < 3; d++) {
            e1[d] = (double)v[1][d] - v[0][d];
            e2[d] = (double)v[2][d] - v[0][d];
            g[i].c[d] = ((double)v[0][d] + v[1][d] + v[2][d]) / 3.0;
        }
        cr[0] = e1[1] * e2[2] - e1[2] * e2[1];
        cr[1] = e1[2] * e2[0] - e1[0] * e2[2];
        cr[2] = e1[0] * e2[1] - e1[1] * e2[0];
        for (int d = 0; d < 3; d++) len += cr[d] * cr[d];
        len = sqrt(len);
        for (int d = 0; d < 3; d++) g[i].n[d] = len > 0 ? cr[d] / len : 0.0;
        g[i].size = 0.5 * len;
        g[i].s = NAN;
        finish_panel(f, &g[i]);
    }
    *out = g;
    return ad_ok();
}

void ad_panel_interval(const ad_panel_geom *g, const ad_stream_scales *k, const ad_panel_sums *a,
                       const ad_panel_sums *b, double dt, double v[AD_PQ_COUNT])
{
    double f[3], fn = 0, ft = 0;
    for (int d = 0; d < 3; d++) {
        f[d] = (b->impulse[d] - a->impulse[d]) / dt;
        fn += f[d] * g->n[d];
        ft += f[d] * g->t[d];
    }
    double p = -fn / g->size, p_inf = g->side == AD_SIDE_BOTH ? 0.0 : k->p_inf;
    v[AD_PQ_CP] = (p - p_inf) / k->q;
    v[AD_PQ_CF] = ft / (g->size * k->q);
    v[AD_PQ_CH] = (b->energy - a->energy) / dt / (g->size * k->e_flux);
    v[AD_PQ_RATE] = (double)(b->contacts - a->contacts) / dt / g->size;
    v[AD_PQ_FX] = f[0], v[AD_PQ_FY] = f[1], v[AD_PQ_FZ] = f[2];
}
