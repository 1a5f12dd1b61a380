/* A triangle mesh checked as a body's surface and measured.
 *
 * The edges are found in expected linear time, for meshes of millions of triangles: every vertex (a
 * triangle's corner, a "ref" 3 i + j) gets the id of the first corner with equal coordinates through an
 * open-addressing hash table; each edge goes to the bucket of its lower id (a counting sort) with its higher
 * id, and a bucket (a vertex's few edges) is sorted by that id, so equal edges are side by side.
 */
#include "mesh_check.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../physics/triangle.h"
#include "free_each.h"

static const float *corner(const ad_mesh *m, size_t ref)
{
    return m->t[ref / 3].v[ref % 3];
}

static int same_point(const float *a, const float *b)
{
    return a[0] == b[0] && a[1] == b[1] && a[2] == b[2];
}

/* A hash of a point that equal points share: -0 is hashed as +0. */
static uint64_t point_hash(const float *p)
{
    uint64_t h = 0x9e3779b97f4a7c15u;
    for (int d = 0; d < 3; d++) {
        float f = p[d] == 0.0f ? 0.0f : p[d];
        uint32_t u;
        memcpy(&u, &f, sizeof u);
        h = (h ^ u) * 0xff51afd7ed558ccdu;
        h ^= h >> 32;
    }
    return h;
}

/* Inserts ref's point (known new) into slots; slot values are ref + 1, 0 is empty. */
static void slot_put(const ad_mesh *m, uint32_t *slot, size_t mask, uint32_t ref)
{
    size_t h = (size_t)point_hash(corner(m, ref)) & mask;
    while (slot[h])
        h = (h + 1) & mask;
    slot[h] = ref + 1;
}

/* vid[ref]: the id of ref's point, ids numbered by first appearance; *nv the number of points. */
static ad_status vertex_ids(const ad_mesh *m, uint32_t *vid, size_t *nv)
{
    size_t nref = 3 * m->n, cap = 64;
    while (cap < m->n) /* a closed mesh has about n / 2 points: load 1/2 without growing */
        cap *= 2;
    uint32_t *slot = calloc(cap, sizeof *slot);
    if (!slot) return ad_fail(AD_ERR_NO_MEMORY, "mesh", "out of memory for the vertices of %zu triangles", m->n);
    size_t used = 0;
    for (size_t ref = 0; ref < nref; ref++) {
        const float *p = corner(m, ref);
        size_t mask = cap - 1, h = (size_t)point_hash(p) & mask;
        while (slot[h] && !same_point(corner(m, slot[h] - 1), p))
            h = (h + 1) & mask;
        if (slot[h]) {
            vid[ref] = vid[slot[h] - 1];
            continue;
        }
        slot[h] = (uint32_t)ref + 1;
        vid[ref] = (uint32_t)used++;
        if (2 * used > cap) {
            uint32_t *grown = calloc(2 * cap, sizeof *grown);
            if (!grown) {
                free(slot);
                return ad_fail(AD_ERR_NO_MEMORY, "mesh", "out of memory for the vertices of %zu triangles", m->n);
            }
            for (size_t k = 0; k < cap; k++)
                if (slot[k]) slot_put(m, grown, 2 * cap - 1, slot[k] - 1);
            free(slot);
            slot = grown;
            cap *= 2;
        }
    }
    free(slot);
    *nv = used;
    return ad_ok();
}

/* An edge in the bucket of its lower vertex: its higher vertex and the corner it starts from in its triangle. */
typedef struct edge_rec {
    uint32_t hi, ref;
} edge_rec;

static int rec_less(const edge_rec *x, const edge_rec *y)
{
    return x->hi != y->hi ? x->hi < y->hi : x->ref < y->ref;
}

static int rec_cmp(const void *a, const void *b)
{
    const edge_rec *x = a, *y = b;
    return rec_less(x, y) ? -1 : rec_less(y, x) ? 1 : 0;
}

static void sort_bucket(edge_rec *r, size_t k)
{
    if (k > 16) {
        qsort(r, k, sizeof *r, rec_cmp);
        return;
    }
    for (size_t i = 1; i < k; i++) {
        edge_rec x = r[i];
        size_t j = i;
        for (; j > 0 && rec_less(&x, &r[j - 1]); j--)
            r[j] = r[j - 1];
        r[j] = x;
    }
}

static size_t next_ref(size_t ref)
{
    return ref % 3 == 2 ? ref - 2 : ref + 1;
}

/* 1 where corner ref comes before edge j of triangle t (or none was kept: first). */
static int earlier(uint32_t ref, int first, size_t t, int j)
{
    return first || ref < 3 * t + (size_t)j;
}

/* One edge, from lower vertex lo, with its k uses r[0..k) sorted by corner (so by triangle). */
static void take_edge(ad_mesh_edges *e, const uint32_t *vid, uint32_t lo, const edge_rec *r, size_t k)
{
    size_t t0 = r[0].ref / 3;
    e->edges++;
    if (k == 1) {
        if (earlier(r[0].ref, !e->open++, e->open_tri, e->open_edge))
            e->open_tri = t0, e->open_edge = (int)(r[0].ref % 3);
    } else if (k > 2) {
        if (earlier(r[0].ref, !e->nonmanifold++, e->nm_tri[0], e->nm_edge)) {
            e->nm_edge = (int)(r[0].ref % 3);
            e->nm_uses = k;
            for (size_t i = 0; i < 4; i++)
                e->nm_tri[i] = i < k ? r[i].ref / 3 : 0;
        }
    } else if ((vid[r[0].ref] == lo) == (vid[r[1].ref] == lo)) {
        if (earlier(r[0].ref, !e->misoriented++, e->mis_tri[0], e->mis_edge)) {
            e->mis_tri[0] = t0;
            e->mis_tri[1] = r[1].ref / 3;
            e->mis_edge = (int)(r[0].ref % 3);
        }
    }
}

/* The edges bucketed by lower vertex (start: the buckets' ends after the fill), each bucket sorted and its
 * runs of equal edges taken. */
static void scan_buckets(ad_mesh_edges *e, const uint32_t *vid, size_t nv, const uint32_t *end, edge_rec *rec)
{
    size_t b0 = 0;
    for (size_t a = 0; a < nv; a++) {
        size_t b1 = end[a];
        sort_bucket(rec + b0, b1 - b0);
        for (size_t i = b0; i < b1;) {
            size_t k = 1;
            while (i + k < b1 && rec[i + k].hi == rec[i].hi)
                k++;
            take_edge(e, vid, (uint32_t)a, rec + i, k);
            i += k;
        }
        b0 = b1;
    }
}

ad_status ad_mesh_edges_find(const ad_mesh *m, ad_mesh_edges *e)
{
    memset(e, 0, sizeof *e);
    if (!m || !m->n) return ad_ok();
    if (!m->t) return ad_fail(AD_ERR_INVALID, "mesh", "the mesh has %zu triangles but no array", m->n);
    if (m->n > AD_MESH_MAX_TRIANGLES)
        return ad_fail(AD_ERR_INVALID, "mesh", "%zu triangles are too many (at most %zu)", m->n, AD_MESH_MAX_TRIANGLES);
    size_t nref = 3 * m->n, nv = 0;
    uint32_t *vid = malloc(nref * sizeof *vid), *end = NULL;
    edge_rec *rec = NULL;
    ad_status st = vid ? vertex_ids(m, vid, &nv)
                       : ad_fail(AD_ERR_NO_MEMORY, "mesh", "out of memory for the vertices of %zu triangles", m->n);
    if (!st.code) {
        end = calloc(nv + 1, sizeof *end);
        rec = malloc(nref * sizeof *rec);
        if (!end || !rec) st = ad_fail(AD_ERR_NO_MEMORY, "mesh", "out of memory for the edges of %zu triangles", m->n);
    }
    if (!st.code) {
        for (size_t ref = 0; ref < nref; ref++) { /* counts, then the exclusive sum: the buckets' starts */
            uint32_t a = vid[ref], b = vid[next_ref(ref)];
            if (a != b) end[a < b ? a : b]++;
        }
        uint32_t sum = 0;
        for (size_t a = 0; a < nv; a++) {
            uint32_t c = end[a];
            end[a] = sum;
            sum += c;
        }
        for (size_t ref = 0; ref < nref; ref++) { /* the fill moves each start to its bucket's end */
            uint32_t a = vid[ref], b = vid[next_ref(ref)];
            if (a == b) continue;
            edge_rec r = {a < b ? b : a, (uint32_t)ref};
            rec[end[a < b ? a : b]++] = r;
        }
        scan_buckets(e, vid, nv, end, rec);
    }
    AD_FREE_EACH(vid, end, rec);
    return st;
}

/* ---------------------------------------------------------------- check -- */

#define P3 "(%.9g, %.9g, %.9g)"
#define V3(p) (double)(p)[0], (double)(p)[1], (double)(p)[2]

static ad_status check_triangle(const ad_mesh *m, size_t i, const char *name)
{
    static const char axis[3] = {'x', 'y', 'z'};
    const float(*v)[3] = m->t[i].v;
    for (int j = 0; j < 3; j++)
        for (int d = 0; d < 3; d++)
            if (!isfinite(v[j][d]))
                return ad_fail(AD_ERR_INVALID, "mesh", "%s: triangle %zu of %zu: vertex %d is %s (its %c).", name,
                               i + 1, m->n, j + 1, isnan(v[j][d]) ? "NaN" : "infinite", axis[d]);
    double longest2;
    if (!ad_tri_degenerate(v, &longest2)) return ad_ok();
    if (longest2 == 0)
        return ad_fail(AD_ERR_INVALID, "mesh",
                       "%s: triangle %zu of %zu is degenerate: its three vertices are one "
                       "point " P3 ".",
                       name, i + 1, m->n, V3(v[0]));
    for (int j = 0; j < 3; j++)
        if (same_point(v[j], v[(j + 1) % 3])) {
            int a = j < (j + 1) % 3 ? j : (j + 1) % 3, b = j + (j + 1) % 3 - a;
            return ad_fail(AD_ERR_INVALID, "mesh",
                           "%s: triangle %zu of %zu is degenerate: its vertices %d and %d coincide at " P3 ".", name,
                           i + 1, m->n, a + 1, b + 1, V3(v[j]));
        }
    return ad_fail(AD_ERR_INVALID, "mesh",
                   "%s: triangle %zu of %zu is degenerate: its vertices " P3 ", " P3 ", " P3 " are (nearly) "
                   "collinear, its area below 1e-6 of its longest edge squared.",
                   name, i + 1, m->n, V3(v[0]), V3(v[1]), V3(v[2]));
}

/* Edge j of triangle t, from vertex j to vertex j + 1. */
static const float *edge_from(const ad_mesh *m, size_t t, int j)
{
    return m->t[t].v[j];
}
static const float *edge_to(const ad_mesh *m, size_t t, int j)
{
    return m->t[t].v[(j + 1) % 3];
}

static ad_status nonmanifold_error(const ad_mesh *m, const ad_mesh_edges *e, const char *name)
{
    char tris[96];
    int len = snprintf(tris, sizeof tris, "%zu", e->nm_tri[0] + 1);
    for (size_t i = 1; i < e->nm_uses && i < 4; i++)
        len += snprintf(tris + len, sizeof tris - (size_t)len, "%s%zu", i + 1 == e->nm_uses ? " and " : ", ",
                        e->nm_tri[i] + 1);
    if (e->nm_uses > 4) snprintf(tris + len, sizeof tris - (size_t)len, " and %zu more", e->nm_uses - 4);
    return ad_fail(AD_ERR_INVALID, "mesh",
                   "%s: the edge from " P3 " to " P3 " is shared by %zu triangles (%s); an edge of a surface joins "
                   "two at most (%zu such edge%s in all).",
                   name, V3(edge_from(m, e->nm_tri[0], e->nm_edge)), V3(edge_to(m, e->nm_tri[0], e->nm_edge)),
                   e->nm_uses, tris, e->nonmanifold, e->nonmanifold == 1 ? "" : "s");
}

ad_status ad_mesh_check(const ad_mesh *m, const char *name, int require_closed)
{
    if (!name || !name[0]) name = "mesh";
    if (!m || !m->n) return ad_fail(AD_ERR_INVALID, "mesh", "%s: the mesh has no triangles.", name);
    if (!m->t) return ad_fail(AD_ERR_INVALID, "mesh", "%s: %zu triangles but no array.", name, m->n);
    if (m->n > AD_MESH_MAX_TRIANGLES)
        return ad_fail(AD_ERR_INVALID, "mesh", "%s: %zu triangles, more than the %zu a world takes.", name, m->n,
                       AD_MESH_MAX_TRIANGLES);
    for (size_t i = 0; i < m->n; i++)
        AD_TRY(check_triangle(m, i, name));
    ad_mesh_edges e;
    ad_status st = ad_mesh_edges_find(m, &e);
    if (st.code) return ad_fail(st.code, "mesh", "%s: %.300s.", name, st.message);
    if (e.nonmanifold) return nonmanifold_error(m, &e, name);
    if (require_closed && e.open)
        return ad_fail(AD_ERR_INVALID, "mesh",
                       "%s: the surface is not closed: %zu edge%s used by one triangle only; the first, triangle "
                       "%zu's edge from " P3 " to " P3 ", borders a hole.",
                       name, e.open, e.open == 1 ? " is" : "s are", e.open_tri + 1,
                       V3(edge_from(m, e.open_tri, e.open_edge)), V3(edge_to(m, e.open_tri, e.open_edge)));
    if (require_closed && e.misoriented)
        return ad_fail(AD_ERR_INVALID, "mesh",
                       "%s: triangles %zu and %zu are oriented inconsistently: both run their shared edge from " P3
                       " to " P3 " (one of them is flipped; %zu such edge%s in all).",
                       name, e.mis_tri[0] + 1, e.mis_tri[1] + 1, V3(edge_from(m, e.mis_tri[0], e.mis_edge)),
                       V3(edge_to(m, e.mis_tri[0], e.mis_edge)), e.misoriented, e.misoriented == 1 ? "" : "s");
    return ad_ok();
}

/* ------------------------------------------------------------- measures -- */

void ad_mesh_bounds(const ad_mesh *m, double lo[3], double hi[3])
{
    for (int d = 0; d < 3; d++)
        lo[d] = hi[d] = m && m->n ? m->t[0].v[0][d] : 0.0;
    for (size_t i = 0; m && i < m->n; i++)
        for (int j = 0; j < 3; j++)
            for (int d = 0; d < 3; d++) {
                double x = m->t[i].v[j][d];
                if (x < lo[d]) lo[d] = x;
                if (x > hi[d]) hi[d] = x;
            }
}

/* b - a and c - a of triangle t about point o, in double precision. */
static void edges_about(const ad_triangle *t, const double o[3], double p[3][3])
{
    for (int j = 0; j < 3; j++)
        for (int d = 0; d < 3; d++)
            p[j][d] = (double)t->v[j][d] - o[d];
}

static void cross(const double a[3], const double b[3], double c[3])
{
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}

double ad_mesh_area(const ad_mesh *m)
{
    double sum = 0;
    for (size_t i = 0; m && i < m->n; i++) {
        double o[3] = {m->t[i].v[0][0], m->t[i].v[0][1], m->t[i].v[0][2]}, p[3][3], c[3];
        edges_about(&m->t[i], o, p);
        cross(p[1], p[2], c);
        sum += 0.5 * sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
    }
    return sum;
}

double ad_mesh_volume(const ad_mesh *m)
{
    if (!m || !m->n) return 0.0;
    double o[3] = {m->t[0].v[0][0], m->t[0].v[0][1], m->t[0].v[0][2]}, sum = 0;
    for (size_t i = 0; i < m->n; i++) {
        double p[3][3], c[3];
        edges_about(&m->t[i], o, p);
        cross(p[1], p[2], c);
        sum += p[0][0] * c[0] + p[0][1] * c[1] + p[0][2] * c[2];
    }
    return sum / 6.0;
}
