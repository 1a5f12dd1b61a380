/* 3D bodies from shapes: an indexed vertex array first, then the triangles copied from it, so shared vertices
 * are bit-equal floats; placement applies one computation to every vertex copy; the frontal area rasterises. */
#include "body3.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "free_each.h"
#include "mesh_check.h"
#include "../physics/triangle.h"
#include "outline_internal.h"

#define BODY3_PI 3.14159265358979323846

/* ------------------------------------------------------------ indexed shape -- */

/* Points in double (computed once each) and faces as point indices, counter-clockwise from outside. */
typedef struct shape {
    double (*p)[3];
    uint32_t (*f)[3];
    size_t np, nf;
} shape;

static void shape_free(shape *s)
{
    AD_FREE_EACH(s->p, s->f);
    s->p = NULL;
    s->f = NULL;
}

static ad_status shape_alloc(shape *s, size_t np, size_t nf, const char *field)
{
    s->np = np;
    s->nf = nf;
    s->p = malloc(np * sizeof *s->p);
    s->f = malloc(nf * sizeof *s->f);
    if (!s->p || !s->f) {
        shape_free(s);
        return ad_fail(AD_ERR_NO_MEMORY, field, "out of memory for a body of %zu points and %zu triangles", np, nf);
    }
    return ad_ok();
}

/* The world's degenerate test (physics/triangle.h), or a vertex not finite. */
static int tri_degenerate(const ad_triangle *t)
{
    for (int j = 0; j < 3; j++)
        for (int d = 0; d < 3; d++)
            if (!isfinite(t->v[j][d])) return 1;
    return ad_tri_degenerate((const float(*)[3])t->v, NULL);
}

/* First degenerate triangle of t[0..n), or n. */
static size_t first_degenerate(const ad_triangle *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (tri_degenerate(&t[i])) return i;
    return n;
}

/* Whom a degenerate triangle is blamed on: the argument and what is wrong. */
typedef struct blame {
    const char *field, *why;
} blame;

/* The shape as a mesh: each point rounded once to float, each face copies its three. who(k) blames triangle k. */
static ad_status shape_emit(const shape *s, blame (*who)(size_t tri, const void *ctx), const void *ctx,
                            ad_mesh *out)
{
    float (*q)[3] = malloc((s->np + 1) * sizeof *q);
    ad_triangle *t = malloc((s->nf + 1) * sizeof *t);
    if (!q || !t) {
        AD_FREE_EACH(q, t);
        return ad_fail(AD_ERR_NO_MEMORY, who(0, ctx).field, "out of memory for %zu triangles", s->nf);
    }
    for (size_t i = 0; i < s->np; i++)
        for (int d = 0; d < 3; d++) q[i][d] = (float)s->p[i][d];
    for (size_t k = 0; k < s->nf; k++)
        for (int j = 0; j < 3; j++) memcpy(t[k].v[j], q[s->f[k][j]], sizeof q[0]);
    free(q);
    size_t bad = first_degenerate(t, s->nf);
    if (bad < s->nf) {
        const ad_triangle *b = &t[bad];
        blame w = who(bad, ctx);
        ad_status st = ad_fail(AD_ERR_INVALID, w.field,
                               "triangle %zu, (%g, %g, %g), (%g, %g, %g), (%g, %g, %g) m, is degenerate as floats "
                               "(area at most 1e-6 of its longest edge squared): %s",
                               bad, b->v[0][0], b->v[0][1], b->v[0][2], b->v[1][0], b->v[1][1], b->v[1][2],
                               b->v[2][0], b->v[2][1], b->v[2][2], w.why);
        free(t);
        return st;
    }
    out->t = t;
    out->n = s->nf;
    return ad_ok();
}

static ad_status check_out(ad_mesh *out, const char *fn)
{
    if (!out) return ad_fail(AD_ERR_INVALID, "out", "%s: no output mesh given", fn);
    out->t = NULL;
    out->n = 0;
    return ad_ok();
}

/* A length argument: well inside a float's normal range. */
static ad_status check_length(double v, const char *field, const char *what)
{
    if (!(v >= 1e-30 && v <= 1e30))
        return ad_fail(AD_ERR_INVALID, field, "%s %g m is outside 1e-30 to 1e30", what, v);
    return ad_ok();
}

/* ------------------------------------------------------------------ sphere -- */

/* Edge midpoints of one subdivision: an open-addressing table from the edge (lo, hi) to its midpoint's index. */
typedef struct edge_map {
    uint64_t *key;
    uint32_t *val;
    size_t mask;
} edge_map;

static uint32_t midpoint(edge_map *em, shape *s, uint32_t a, uint32_t b)
{
    uint64_t key = a < b ? (uint64_t)a << 32 | b : (uint64_t)b << 32 | a;
    size_t h = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 20) & em->mask;
    while (em->key[h] != UINT64_MAX && em->key[h] != key) h = (h + 1) & em->mask;
    if (em->key[h] == key) return em->val[h];
    double m[3], len = 0;
    for (int d = 0; d < 3; d++) {
        m[d] = s->p[a][d] + s->p[b][d];
        len += m[d] * m[d];
    }
    len = sqrt(len);
    uint32_t k = (uint32_t)s->np++;
    for (int d = 0; d < 3; d++) s->p[k][d] = m[d] / len;
    em->key[h] = key;
    em->val[h] = k;
    return k;
}

/* The unit icosahedron, its faces turned outward (checked, not trusted to the table's order). */
static void icosahedron(shape *s)
{
    static const double g = 1.6180339887498948482; /* the golden ratio */
    static const double v[12][3] = {{-1, g, 0}, {1, g, 0}, {-1, -g, 0}, {1, -g, 0}, {0, -1, g}, {0, 1, g},
                                    {0, -1, -g}, {0, 1, -g}, {g, 0, -1}, {g, 0, 1}, {-g, 0, -1}, {-g, 0, 1}};
    static const uint32_t f[20][3] = {{0, 11, 5}, {0, 5, 1},  {0, 1, 7},   {0, 7, 10}, {0, 10, 11},
                                      {1, 5, 9},  {5, 11, 4}, {11, 10, 2}, {10, 7, 6}, {7, 1, 8},
                                      {3, 9, 4},  {3, 4, 2},  {3, 2, 6},   {3, 6, 8},  {3, 8, 9},
                                      {4, 9, 5},  {2, 4, 11}, {6, 2, 10},  {8, 6, 7},  {9, 8, 1}};
    double len = sqrt(1 + g * g);
    for (int i = 0; i < 12; i++)
        for (int d = 0; d < 3; d++) s->p[i][d] = v[i][d] / len;
    for (int k = 0; k < 20; k++) {
        const double *a = s->p[f[k][0]], *b = s->p[f[k][1]], *c = s->p[f[k][2]];
        double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, w[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
        double n[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]};
        int out = n[0] * a[0] + n[1] * a[1] + n[2] * a[2] > 0;
        s->f[k][0] = f[k][0];
        s->f[k][1] = f[k][out ? 1 : 2];
        s->f[k][2] = f[k][out ? 2 : 1];
    }
    s->np = 12;
    s->nf = 20;
}

/* Splits every face of s in four (s has room for the new points and faces). */
static ad_status subdivide(shape *s)
{
    size_t nf = s->nf, ne = 3 * nf / 2, cap = 1;
    while (cap < 2 * ne) cap <<= 1;
    edge_map em = {malloc(cap * sizeof *em.key), malloc(cap * sizeof *em.val), cap - 1};
    if (!em.key || !em.val) {
        AD_FREE_EACH(em.key, em.val);
        return ad_fail(AD_ERR_NO_MEMORY, "subdivisions", "out of memory for the sphere's %zu edges", ne);
    }
    memset(em.key, 0xff, cap * sizeof *em.key);
    for (size_t k = 0; k < nf; k++) {
        uint32_t a = s->f[k][0], b = s->f[k][1], c = s->f[k][2];
        uint32_t ab = midpoint(&em, s, a, b), bc = midpoint(&em, s, b, c), ca = midpoint(&em, s, c, a);
        uint32_t(*f)[3] = s->f;
        size_t o = nf + 3 * k;
        f[o][0] = b, f[o][1] = bc, f[o][2] = ab;
        f[o + 1][0] = c, f[o + 1][1] = ca, f[o + 1][2] = bc;
        f[o + 2][0] = ab, f[o + 2][1] = bc, f[o + 2][2] = ca;
        f[k][1] = ab, f[k][2] = ca; /* (a, ab, ca) in place */
    }
    s->nf = 4 * nf;
    AD_FREE_EACH(em.key, em.val);
    return ad_ok();
}

static blame sphere_blame(size_t tri, const void *ctx)
{
    (void)tri, (void)ctx;
    return (blame){"radius", "the radius is too small or too large for floats"};
}

ad_status ad_mesh_sphere(double radius, int subdivisions, ad_mesh *out)
{
    AD_TRY(check_out(out, "ad_mesh_sphere"));
    AD_TRY(check_length(radius, "radius", "sphere radius"));
    if (subdivisions < 0 || subdivisions > 7)
        return ad_fail(AD_ERR_INVALID, "subdivisions", "sphere subdivisions %d is outside 0 to 7", subdivisions);
    size_t f4 = (size_t)1 << (2 * subdivisions); /* 4^s */
    shape s;
    AD_TRY(shape_alloc(&s, 10 * f4 + 2, 20 * f4, "subdivisions"));
    icosahedron(&s);
    ad_status st = ad_ok();
    for (int k = 0; k < subdivisions && !st.code; k++) st = subdivide(&s);
    for (size_t i = 0; i < s.np; i++)
        for (int d = 0; d < 3; d++) s.p[i][d] *= radius;
    if (!st.code) st = shape_emit(&s, sphere_blame, NULL, out);
    shape_free(&s);
    return st;
}

/* ---------------------------------------------------------------- cylinder -- */

static blame cylinder_blame(size_t tri, const void *ctx)
{
    (void)ctx;
    if (tri % 4 < 2) /* the side's two, then the caps' */
        return (blame){"length", "the side's strips are too thin: the length and the segments' width "
                                 "2 pi radius / segments differ too much"};
    return (blame){"segments", "too many segments for floats at this radius"};
}

ad_status ad_mesh_cylinder(double radius, double length, int segments, ad_mesh *out)
{
    AD_TRY(check_out(out, "ad_mesh_cylinder"));
    AD_TRY(check_length(radius, "radius", "cylinder radius"));
    AD_TRY(check_length(length, "length", "cylinder length"));
    if (segments < 8 || segments > 100000)
        return ad_fail(AD_ERR_INVALID, "segments", "cylinder segments %d is outside 8 to 100000", segments);
    uint32_t n = (uint32_t)segments, bc = 2 * n, tc = 2 * n + 1; /* ring k: bottom k, top n + k; centres */
    shape s;
    AD_TRY(shape_alloc(&s, 2 * (size_t)n + 2, 4 * (size_t)n, "segments"));
    for (uint32_t k = 0; k < n; k++) {
        double a = 2 * BODY3_PI * k / n, x = radius * cos(a), y = radius * sin(a);
        s.p[k][0] = s.p[n + k][0] = x;
        s.p[k][1] = s.p[n + k][1] = y;
        s.p[k][2] = -0.5 * length;
        s.p[n + k][2] = 0.5 * length;
    }
    s.p[bc][0] = s.p[bc][1] = s.p[tc][0] = s.p[tc][1] = 0;
    s.p[bc][2] = -0.5 * length;
    s.p[tc][2] = 0.5 * length;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t k1 = (k + 1) % n;
        uint32_t(*f)[3] = s.f + 4 * (size_t)k;
        f[0][0] = k, f[0][1] = k1, f[0][2] = n + k1;     /* side: outward, the ring runs counter-clockwise */
        f[1][0] = k, f[1][1] = n + k1, f[1][2] = n + k;
        f[2][0] = tc, f[2][1] = n + k, f[2][2] = n + k1; /* top cap, normal +z */
        f[3][0] = bc, f[3][1] = k1, f[3][2] = k;         /* bottom cap, normal -z */
    }
    ad_status st = shape_emit(&s, cylinder_blame, NULL, out);
    shape_free(&s);
    return st;
}

/* ------------------------------------------------------- tip triangulation -- */

static double orient2(const double *x, const double *y, uint32_t a, uint32_t b, uint32_t c)
{
    return (x[b] - x[a]) * (y[c] - y[a]) - (y[b] - y[a]) * (x[c] - x[a]);
}

/* Ear clipping's state: the remaining polygon as a linked ring, the non-convex vertices (the only ones that can
 * lie in an ear), and a heap of candidate ears, best-shaped first, stale entries skipped by version. */
typedef struct ear {
    double q;
    uint32_t v, ver;
} ear;

typedef struct clipper {
    const double *x, *y;
    uint32_t *prev, *next, *ver, *reflex_list;
    unsigned char *gone, *reflex;
    size_t nreflex, nheap;
    ear *heap;
} clipper;

static int ear_before(const ear *a, const ear *b)
{
    return a->q > b->q || (a->q == b->q && a->v < b->v);
}

static void heap_push(clipper *c, ear e)
{
    size_t i = c->nheap++;
    while (i > 0 && ear_before(&e, &c->heap[(i - 1) / 2])) {
        c->heap[i] = c->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    c->heap[i] = e;
}

static ear heap_pop(clipper *c)
{
    ear top = c->heap[0], last = c->heap[--c->nheap];
    size_t i = 0, n = c->nheap;
    for (;;) {
        size_t l = 2 * i + 1, best = l;
        if (l >= n) break;
        if (l + 1 < n && ear_before(&c->heap[l + 1], &c->heap[l])) best = l + 1;
        if (!ear_before(&c->heap[best], &last)) break;
        c->heap[i] = c->heap[best];
        i = best;
    }
    if (n) c->heap[i] = last;
    return top;
}

/* Re-judges vertex v after a neighbour changed: its convexity and, if it is an ear, its shape (twice the
 * area over the longest edge squared, as the world judges triangles) pushed on the heap. */
static void judge(clipper *c, uint32_t v)
{
    const double *x = c->x, *y = c->y;
    uint32_t p = c->prev[v], n = c->next[v];
    c->ver[v]++;
    double a2 = orient2(x, y, p, v, n);
    c->reflex[v] = !(a2 > 0);
    if (c->reflex[v]) return;
    for (size_t k = 0; k < c->nreflex; k++) {
        uint32_t r = c->reflex_list[k];
        if (c->gone[r] || !c->reflex[r] || r == p || r == n) continue;
        if (orient2(x, y, p, v, r) >= 0 && orient2(x, y, v, n, r) >= 0 && orient2(x, y, n, p, r) >= 0) return;
    }
    double l0 = (x[v] - x[p]) * (x[v] - x[p]) + (y[v] - y[p]) * (y[v] - y[p]);
    double l1 = (x[n] - x[v]) * (x[n] - x[v]) + (y[n] - y[v]) * (y[n] - y[v]);
    double l2 = (x[p] - x[n]) * (x[p] - x[n]) + (y[p] - y[n]) * (y[p] - y[n]);
    ear e = {a2 / fmax(l0, fmax(l1, l2)), v, c->ver[v]};
    heap_push(c, e);
}

/* Triangulates the simple counter-clockwise polygon (x, y) of n >= 3 points into n - 2 counter-clockwise
 * triangles of point indices, clipping the best-shaped ear first (so cosine-spaced airfoil points give a zipper
 * across the thickness, not slivers along the surface): O(n log n + n r) for r non-convex vertices. An ear stays
 * an ear while others are clipped (its triangle is unchanged and fewer vertices remain), so only the clipped
 * vertex's two neighbours are judged again. */
static ad_status ear_clip(const double *x, const double *y, uint32_t n, uint32_t (*tri)[3])
{
    size_t w = n * sizeof(uint32_t);
    clipper c = {x, y, malloc(w), malloc(w), calloc(n, sizeof(uint32_t)), malloc(w), calloc(n, 1), calloc(n, 1),
                 0, 0, malloc(3 * (size_t)n * sizeof(ear))};
    ad_status st = ad_ok();
    if (!c.prev || !c.next || !c.ver || !c.reflex_list || !c.gone || !c.reflex || !c.heap)
        st = ad_fail(AD_ERR_NO_MEMORY, "section", "out of memory for the triangulation of %u points", n);
    for (uint32_t i = 0; i < n && !st.code; i++) {
        c.prev[i] = (i + n - 1) % n;
        c.next[i] = (i + 1) % n;
        if (!(orient2(x, y, c.prev[i], i, c.next[i]) > 0)) c.reflex_list[c.nreflex++] = i, c.reflex[i] = 1;
    }
    for (uint32_t i = 0; i < n && !st.code; i++) judge(&c, i);
    uint32_t k = 0, some = 0; /* some: a vertex still in the polygon */
    for (uint32_t left = n; left > 3 && !st.code; left--) {
        int found = 0;
        ear e = {0, 0, 0};
        while (c.nheap && !found) {
            e = heap_pop(&c);
            found = !c.gone[e.v] && e.ver == c.ver[e.v];
        }
        if (!found) {
            st = ad_fail(AD_ERR_INVALID, "section", "the section cannot be triangulated (no ear in %u points)", left);
            break;
        }
        uint32_t p = c.prev[e.v], nx = c.next[e.v];
        tri[k][0] = p, tri[k][1] = e.v, tri[k][2] = nx;
        k++;
        c.gone[e.v] = 1;
        c.next[p] = nx;
        c.prev[nx] = p;
        judge(&c, p);
        judge(&c, nx);
        some = p;
    }
    if (!st.code) tri[k][0] = c.prev[some], tri[k][1] = some, tri[k][2] = c.next[some];
    AD_FREE_EACH(c.prev, c.next, c.ver, c.reflex_list, c.gone, c.reflex, c.heap);
    return st;
}

/* -------------------------------------------------------------------- wing -- */

typedef struct wing_ctx {
    size_t side; /* triangles of the side strips, before the tips' */
} wing_ctx;

static blame wing_blame(size_t tri, const void *ctx)
{
    if (tri < ((const wing_ctx *)ctx)->side)
        return (blame){"span_panels", "the strips' width span / span_panels and the section's shortest edges "
                                      "differ too much, or float precision merges the section's closest points"};
    return (blame){"section", "float precision at the chord merges the section's closest points (fewer points)"};
}

static ad_status check_wing(const ad_outline *section, double chord, double span, double sweep_deg, int span_panels,
                            int closed_tips)
{
    AD_TRY(check_length(chord, "chord", "wing chord"));
    AD_TRY(check_length(span, "span", "wing span"));
    if (!(fabs(sweep_deg) < 80))
        return ad_fail(AD_ERR_INVALID, "sweep", "wing sweep %g deg is outside (-80, 80)", sweep_deg);
    if (span_panels < 1 || span_panels > AD_BODY3_MAX_SPAN_PANELS)
        return ad_fail(AD_ERR_INVALID, "span_panels", "wing span_panels %d is outside 1 to %d", span_panels,
                       AD_BODY3_MAX_SPAN_PANELS);
    if (closed_tips != 0 && closed_tips != 1)
        return ad_fail(AD_ERR_INVALID, "closed_tips", "wing closed_tips %d is neither 0 nor 1", closed_tips);
    if (!section) return ad_fail(AD_ERR_INVALID, "section", "ad_mesh_wing: no section given");
    if (!section->closed)
        return ad_fail(AD_ERR_INVALID, "section",
                       "the wing section is open (%zu points): a wing needs a closed section; for a plate use "
                       "ad_shape_plate with a thickness > 0", section->n);
    AD_TRY(ad_outline_check(section, "wing section"));
    size_t n = section->n, tris = 2 * n * (size_t)span_panels + 2 * n;
    if (tris > AD_BODY3_MAX_TRIANGLES)
        return ad_fail(AD_ERR_INVALID, "span_panels", "the wing would have %zu triangles (at most %zu)", tris,
                       AD_BODY3_MAX_TRIANGLES);
    return ad_ok();
}

/* The section's points, counter-clockwise, in chord units. */
static ad_status ccw_section(const ad_outline *o, double **sx, double **sy)
{
    size_t n = o->n;
    *sx = malloc(n * sizeof **sx);
    *sy = malloc(n * sizeof **sy);
    if (!*sx || !*sy) {
        AD_FREE_EACH(*sx, *sy);
        *sx = *sy = NULL;
        return ad_fail(AD_ERR_NO_MEMORY, "section", "out of memory for a section of %zu points", n);
    }
    double area = ad_outline_shoelace(o->x, o->y, n);
    for (size_t i = 0; i < n; i++) {
        size_t k = area > 0 ? i : n - 1 - i;
        (*sx)[i] = o->x[k];
        (*sy)[i] = o->y[k];
    }
    return ad_ok();
}

/* Side strips: point (i, j) = section point i at station j; two triangles per section edge and strip. */
static void wing_sides(shape *s, const double *sx, const double *sy, uint32_t n, uint32_t P, double chord,
                       double span, double sweep_deg)
{
    double shear = tan(sweep_deg * BODY3_PI / 180);
    for (uint32_t j = 0; j <= P; j++) {
        double along = span * ((double)j / P); /* z + span/2: exactly 0 and span at the tips */
        double z = along - 0.5 * span, dx = along * shear;
        for (uint32_t i = 0; i < n; i++) {
            double *p = s->p[(size_t)j * n + i];
            p[0] = chord * sx[i] + dx;
            p[1] = chord * sy[i];
            p[2] = z;
        }
    }
    size_t k = 0;
    for (uint32_t j = 0; j < P; j++)
        for (uint32_t i = 0; i < n; i++) {
            uint32_t a = j * n + i, b = j * n + (i + 1) % n, c = a + n, d = b + n;
            s->f[k][0] = a, s->f[k][1] = b, s->f[k][2] = d; /* outward: the section runs counter-clockwise */
            s->f[k + 1][0] = a, s->f[k + 1][1] = d, s->f[k + 1][2] = c;
            k += 2;
        }
}

ad_status ad_mesh_wing(const ad_outline *section, double chord, double span, double sweep_deg, int span_panels,
                       int closed_tips, ad_mesh *out)
{
    AD_TRY(check_out(out, "ad_mesh_wing"));
    AD_TRY(check_wing(section, chord, span, sweep_deg, span_panels, closed_tips));
    uint32_t n = (uint32_t)section->n, P = (uint32_t)span_panels;
    size_t side = 2 * (size_t)n * P, tip = closed_tips ? n - 2 : 0;
    double *sx, *sy;
    AD_TRY(ccw_section(section, &sx, &sy));
    shape s;
    ad_status st = shape_alloc(&s, (size_t)n * (P + 1), side + 2 * tip, "span_panels");
    if (!st.code) wing_sides(&s, sx, sy, n, P, chord, span, sweep_deg);
    if (!st.code && tip) {
        uint32_t(*tri)[3] = s.f + side;
        st = ear_clip(sx, sy, n, tri);
        for (size_t k = 0; k < tip && !st.code; k++) {
            uint32_t *top = tri[k], *bottom = tri[tip + k];
            bottom[0] = top[0], bottom[1] = top[2], bottom[2] = top[1]; /* root tip, z = -span/2: normal -z */
            for (int j = 0; j < 3; j++) top[j] += P * n;                 /* far tip, z = +span/2: normal +z */
        }
    }
    wing_ctx ctx = {side};
    if (!st.code) st = shape_emit(&s, wing_blame, &ctx, out);
    shape_free(&s);
    AD_FREE_EACH(sx, sy);
    return st;
}

/* --------------------------------------------------------------- placement -- */

/* cos and sin of an angle in degrees, exact at multiples of 90. */
static void cos_sin_deg(double deg, double *c, double *s)
{
    double r = fmod(deg, 360.0), q = r / 90.0;
    if (q == nearbyint(q)) {
        static const double cs[4][2] = {{1, 0}, {0, 1}, {-1, 0}, {0, -1}};
        int k = ((int)q % 4 + 4) % 4;
        *c = cs[k][0];
        *s = cs[k][1];
        return;
    }
    *c = cos(r * BODY3_PI / 180);
    *s = sin(r * BODY3_PI / 180);
}

typedef struct placement {
    double scale, cs[3][2], offset[3];
} placement;

/* One vertex: in double from its floats, rotated about x, y, z in turn, rounded once. The same floats in give
 * the same floats out. */
static void place_vertex(const placement *pl, const float in[3], float out[3])
{
    double x = pl->scale * in[0], y = pl->scale * in[1], z = pl->scale * in[2], t;
    t = pl->cs[0][0] * y - pl->cs[0][1] * z; /* about x */
    z = pl->cs[0][1] * y + pl->cs[0][0] * z;
    y = t;
    t = pl->cs[1][0] * x + pl->cs[1][1] * z; /* about y */
    z = pl->cs[1][0] * z - pl->cs[1][1] * x;
    x = t;
    t = pl->cs[2][0] * x - pl->cs[2][1] * y; /* about z */
    y = pl->cs[2][1] * x + pl->cs[2][0] * y;
    x = t;
    out[0] = (float)(x + pl->offset[0]);
    out[1] = (float)(y + pl->offset[1]);
    out[2] = (float)(z + pl->offset[2]);
}

ad_status ad_mesh_place(ad_mesh *m, double scale, const double rot_deg[3], const double offset[3])
{
    if (!m || (m->n && !m->t)) return ad_fail(AD_ERR_INVALID, "mesh", "ad_mesh_place: no mesh given");
    if (!(scale >= 1e-30 && scale <= 1e30))
        return ad_fail(AD_ERR_INVALID, "scale", "scale %g is outside 1e-30 to 1e30 (no mirror: it would turn the "
                                                "normals inward)", scale);
    placement pl = {scale, {{1, 0}, {1, 0}, {1, 0}}, {0, 0, 0}};
    for (int d = 0; d < 3; d++) {
        if (rot_deg && !isfinite(rot_deg[d]))
            return ad_fail(AD_ERR_INVALID, "rotation", "rotation %d is %g deg (not finite)", d, rot_deg[d]);
        if (offset && !(fabs(offset[d]) <= 1e30))
            return ad_fail(AD_ERR_INVALID, "offset", "offset %d is %g m (not finite or beyond 1e30)", d, offset[d]);
        if (rot_deg) cos_sin_deg(rot_deg[d], &pl.cs[d][0], &pl.cs[d][1]);
        if (offset) pl.offset[d] = offset[d];
    }
    if (!m->n) return ad_ok();
    ad_triangle *t = malloc(m->n * sizeof *t);
    if (!t) return ad_fail(AD_ERR_NO_MEMORY, "mesh", "out of memory for placing %zu triangles", m->n);
    for (size_t i = 0; i < m->n; i++)
        for (int j = 0; j < 3; j++) place_vertex(&pl, m->t[i].v[j], t[i].v[j]);
    for (size_t i = 0; i < m->n; i++)
        if (tri_degenerate(&t[i]) && !tri_degenerate(&m->t[i])) {
            /* blame the offset when the triangle survives the scale and rotation alone */
            placement here = pl;
            ad_triangle alone;
            memset(here.offset, 0, sizeof here.offset);
            for (int j = 0; j < 3; j++) place_vertex(&here, m->t[i].v[j], alone.v[j]);
            int offset_at_fault = !tri_degenerate(&alone);
            free(t);
            return ad_fail(AD_ERR_INVALID, offset_at_fault ? "offset" : "scale",
                           "placed, triangle %zu becomes degenerate or not finite as floats (%s); the mesh is "
                           "unchanged", i, offset_at_fault ? "float precision at the offset collapses it"
                                                           : "the scale is too small or too large for floats");
        }
    memcpy(m->t, t, m->n * sizeof *t);
    free(t);
    return ad_ok();
}

/* ------------------------------------------------------------ frontal area -- */

/* The raster: nu x nv cells of edge h from (u0, v0), one bit each. */
typedef struct raster {
    double u0, v0, h;
    long nu, nv;
    uint64_t *bits;
} raster;

/* Marks the cells whose centre lies in the triangle (u[k], v[k]), edges included: row by row, the row's
 * crossing of the triangle from its three edges. */
static void raster_triangle(raster *r, const double u[3], const double v[3])
{
    double vmin = fmin(v[0], fmin(v[1], v[2])), vmax = fmax(v[0], fmax(v[1], v[2]));
    long j0 = (long)ceil((vmin - r->v0) / r->h - 0.5), j1 = (long)floor((vmax - r->v0) / r->h - 0.5);
    if (j0 < 0) j0 = 0;
    if (j1 > r->nv - 1) j1 = r->nv - 1;
    for (long j = j0; j <= j1; j++) {
        double vc = r->v0 + (j + 0.5) * r->h, lo = INFINITY, hi = -INFINITY;
        for (int e = 0; e < 3; e++) {
            double ua = u[e], va = v[e], ub = u[(e + 1) % 3], vb = v[(e + 1) % 3];
            if (vc < fmin(va, vb) || vc > fmax(va, vb)) continue;
            double uc = va == vb ? ua : ua + (vc - va) * (ub - ua) / (vb - va);
            double ue = va == vb ? ub : uc;
            lo = fmin(lo, fmin(uc, ue));
            hi = fmax(hi, fmax(uc, ue));
        }
        if (!(lo <= hi)) continue;
        long i0 = (long)ceil((lo - r->u0) / r->h - 0.5), i1 = (long)floor((hi - r->u0) / r->h - 0.5);
        if (i0 < 0) i0 = 0;
        if (i1 > r->nu - 1) i1 = r->nu - 1;
        for (long i = i0; i <= i1; i++) {
            size_t c = (size_t)j * (size_t)r->nu + (size_t)i;
            r->bits[c >> 6] |= (uint64_t)1 << (c & 63);
        }
    }
}

static size_t popcount64(uint64_t x)
{
    size_t n = 0;
    for (; x; x &= x - 1) n++;
    return n;
}

double ad_mesh_frontal_area(const ad_mesh *m, int axis, double resolution_fraction)
{
    if (!m || !m->n || !m->t || axis < 0 || axis > 2) return -1;
    if (!(resolution_fraction >= 1e-4 && resolution_fraction <= 0.5)) return -1;
    int a = (axis + 1) % 3, b = (axis + 2) % 3; /* x: (y, z); y: (z, x); z: (x, y) */
    for (size_t i = 0; i < m->n; i++)
        for (int j = 0; j < 3; j++)
            for (int d = 0; d < 3; d++)
                if (!isfinite(m->t[i].v[j][d])) return -1;
    double lo[3], hi[3];
    ad_mesh_bounds(m, lo, hi);
    double eu = hi[a] - lo[a], ev = hi[b] - lo[b], ext = fmax(eu, ev);
    if (!(eu > 0 && ev > 0)) return 0;
    raster r = {lo[a], lo[b], resolution_fraction * ext, 0, 0, NULL};
    r.nu = (long)ceil(eu / r.h) + 1;
    r.nv = (long)ceil(ev / r.h) + 1;
    size_t cells = (size_t)r.nu * (size_t)r.nv, words = (cells + 63) / 64;
    r.bits = calloc(words, sizeof *r.bits);
    if (!r.bits) return -1;
    for (size_t i = 0; i < m->n; i++) {
        double u[3], v[3];
        for (int j = 0; j < 3; j++) {
            u[j] = m->t[i].v[j][a];
            v[j] = m->t[i].v[j][b];
        }
        raster_triangle(&r, u, v);
    }
    size_t covered = 0;
    for (size_t w = 0; w < words; w++) covered += popcount64(r.bits[w]);
    free(r.bits);
    return (double)covered * r.h * r.h;
}
