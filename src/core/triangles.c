/* A body's triangles: checked by name, made into the kernels' form, their components labelled. */
#include "triangles.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "components.h"
#include "free_each.h"

static ad_status check_triangle(const ad_triangle *t, size_t i)
{
    static const char axis[3] = {'x', 'y', 'z'};
    for (int j = 0; j < 3; j++)
        for (int d = 0; d < 3; d++)
            if (!isfinite(t->v[j][d]))
                return ad_fail(AD_ERR_INVALID, "triangles", "triangle %zu: vertex %d's %c is %g (not a finite number)",
                               i, j, axis[d], t->v[j][d]);
    double longest;
    if (ad_tri_degenerate(t->v, &longest))
        return ad_fail(AD_ERR_INVALID, "triangles",
                       "triangle %zu is degenerate: its vertices (%g, %g, %g), (%g, %g, %g), (%g, %g, %g) are %s", i,
                       t->v[0][0], t->v[0][1], t->v[0][2], t->v[1][0], t->v[1][1], t->v[1][2], t->v[2][0], t->v[2][1],
                       t->v[2][2], longest == 0 ? "one point" : "on a line (no area)");
    return ad_ok();
}

/* An edge: its end points in lexicographic order, and its triangle's component. */
typedef struct edge {
    float p[6];
    uint32_t comp;
} edge;

static int edge_cmp(const void *a, const void *b)
{
    const edge *x = a, *y = b;
    if (x->comp != y->comp) return x->comp < y->comp ? -1 : 1;
    for (int k = 0; k < 6; k++)
        if (x->p[k] != y->p[k]) return x->p[k] < y->p[k] ? -1 : 1;
    return 0;
}

/* closed[c] = 1 where every edge of component c is shared by exactly two of its triangles. */
static ad_status closed_components(const ad_triangle *raw, size_t n, const uint32_t *comp, unsigned char *closed)
{
    edge *e = malloc((3 * n + 1) * sizeof *e);
    if (!e) return ad_fail(AD_ERR_NO_MEMORY, "", "out of memory for the edges of %zu triangles", n);
    for (size_t i = 0; i < n; i++) {
        closed[comp[i]] = 1;
        for (int j = 0; j < 3; j++) {
            const float *a = raw[i].v[j], *b = raw[i].v[(j + 1) % 3];
            int swap = a[0] > b[0] || (a[0] == b[0] && (a[1] > b[1] || (a[1] == b[1] && a[2] > b[2])));
            const float *lo = swap ? b : a, *hi = swap ? a : b;
            edge *x = &e[3 * i + (size_t)j];
            memcpy(x->p, lo, 3 * sizeof(float));
            memcpy(x->p + 3, hi, 3 * sizeof(float));
            x->comp = comp[i];
        }
    }
    qsort(e, 3 * n, sizeof *e, edge_cmp);
    for (size_t k = 0; k < 3 * n;) {
        size_t run = 1;
        while (k + run < 3 * n && !edge_cmp(&e[k], &e[k + run])) run++;
        if (run != 2) closed[e[k].comp] = 0;
        k += run;
    }
    free(e);
    return ad_ok();
}

ad_status ad_triangles_make(const ad_triangle *raw, size_t n, ad_tri *out)
{
    for (size_t i = 0; i < n; i++) {
        ad_status st = check_triangle(&raw[i], i);
        if (st.code) return st;
    }
    float *pts = malloc((9 * n + 1) * sizeof *pts);
    uint32_t *comp = malloc((n + 1) * sizeof *comp);
    ad_status st = ad_ok();
    if (!pts || !comp) st = ad_fail(AD_ERR_NO_MEMORY, "", "out of memory for %zu triangles", n);
    for (size_t i = 0; i < n && !st.code; i++)
        for (int j = 0; j < 3; j++)
            for (int d = 0; d < 3; d++) pts[9 * i + 3 * j + d] = raw[i].v[j][d];
    if (!st.code) st = ad_label_components(pts, 3, 3, n, comp, NULL);
    unsigned char *closed = st.code ? NULL : calloc(n + 1, 1);
    if (!st.code && !closed) st = ad_fail(AD_ERR_NO_MEMORY, "", "out of memory for %zu triangles", n);
    if (!st.code) st = closed_components(raw, n, comp, closed);
    for (size_t i = 0; i < n && !st.code; i++) {
        const float(*v)[3] = raw[i].v;
        out[i].a = ad_v3(v[0][0], v[0][1], v[0][2]);
        out[i].ab = ad_v3(v[1][0] - v[0][0], v[1][1] - v[0][1], v[1][2] - v[0][2]);
        out[i].ac = ad_v3(v[2][0] - v[0][0], v[2][1] - v[0][1], v[2][2] - v[0][2]);
        out[i].flags = comp[i] << AD_TRI_COMP_SHIFT | (closed[comp[i]] ? AD_TRI_CLOSED : 0u);
    }
    AD_FREE_EACH(pts, comp, closed);
    return st;
}
