/* The backend-free parts of a 3D world: spheres in, the body's triangles and their tree, the fill of a
 * box with spheres. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../physics/rng.h"
#include "free_each.h"
#include "triangles.h"
#include "world_internal.h"

static ad_status need_3d(const ad_world *w, const char *what)
{
    if (!w) return ad_fail(AD_ERR_INVALID, "w", "world is NULL");
    if (w->params.dims != 3)
        return ad_fail(AD_ERR_INVALID, "dimensions", "%s is for 3D worlds; this world has dimensions = 2", what);
    return ad_ok();
}

ad_status ad_world_add_particles3(ad_world *w, const ad_particle3 *p, size_t n)
{
    AD_TRY(need_3d(w, "ad_world_add_particles3"));
    if (n == 0) return ad_ok();
    if (!p) return ad_fail(AD_ERR_INVALID, "p", "particle array is NULL");
    if (n > w->def.capacity - w->count)
        return ad_fail(AD_ERR_CAPACITY, "capacity",
                       "capacity: adding %zu spheres to %zu would exceed the capacity of %zu set at creation", n,
                       w->count, w->def.capacity);
    for (size_t i = 0; i < n; i++) {
        const ad_particle3 *q = &p[i];
        if (!isfinite(q->x) || !isfinite(q->y) || !isfinite(q->z) || !isfinite(q->vx) || !isfinite(q->vy) ||
            !isfinite(q->vz))
            return ad_fail(AD_ERR_INVALID, "particles", "sphere %zu (of %zu given) has a non-finite position or velocity",
                           i, n);
    }
    AD_TRY(w->ops->add_particles3(w, p, n));
    w->count += n;
    w->stats.count = w->count;
    return ad_ok();
}

static int by_id(const void *a, const void *b)
{
    uint32_t x = ((const uint32_t *)a)[0], y = ((const uint32_t *)b)[0];
    return (x > y) - (x < y);
}

ad_status ad_read3_host(const ad_state3 *s, const uint32_t *id, const float *pressure, const float *virial,
                        const ad_accel3 *acc, size_t n, int flags, size_t max, const ad_particle_out *out,
                        size_t *count)
{
    /* pairs (id, slot) of the live spheres (a removed one holds its slot until the next sort), by id
     * where asked */
    uint32_t *order = malloc((2 * n + 1) * sizeof *order);
    if (!order) return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory reading %zu spheres", n);
    size_t live = 0;
    for (size_t k = 0; k < n; k++)
        if (!ad_is_dead3(s[k])) order[2 * live] = id[k], order[2 * live + 1] = (uint32_t)k, live++;
    if (flags & AD_READ_BY_ID) qsort(order, live, 2 * sizeof *order, by_id);
    size_t m = live < max ? live : max;
    for (size_t k = 0; k < m; k++) {
        size_t i = order[2 * k + 1];
        const ad_state3 q = s[i];
        const ad_accel3 a = acc[i];
        ad_particle_out_put(out, k, 3, (const float[3]){q.x, q.y, q.z}, (const float[3]){q.vx, q.vy, q.vz}, id[i],
                            pressure[i], virial[i], (const float[3]){a.ax, a.ay, a.az});
    }
    free(order);
    if (count) *count = m;
    return ad_ok();
}

/* ------------------------------------------------------------- triangles -- */

void ad_triangles_free(ad_triangles *t)
{
    AD_FREE_EACH(t->raw, t->tris);
    ad_leaf_tree_free3(&t->nodes);
    memset(t, 0, sizeof *t);
}

/* x rounded to a float no farther from zero along `dir` than x (dir -1: the float at or below x). */
static float round_out(double x, int dir)
{
    float f = (float)x;
    if (dir < 0 && (double)f > x) f = nextafterf(f, -INFINITY);
    if (dir > 0 && (double)f < x) f = nextafterf(f, INFINITY);
    return f;
}

/* Triangle k's Morton code (its centroid over the box of all centroids, lo and inv as ad_morton_code3
 * takes them) and its box grown by r, rounded outwards. */
static void tri_leaf(const ad_triangle *t, const float lo[3], const float inv[3], double r, uint32_t *code,
                     ad_bvh_box3 *box)
{
    float c[3], b0[3], b1[3];
    for (int d = 0; d < 3; d++) {
        double x = t->v[0][d], y = t->v[1][d], z = t->v[2][d];
        c[d] = (float)((x + y + z) / 3.0);
        b0[d] = round_out(fmin(x, fmin(y, z)) - r, -1);
        b1[d] = round_out(fmax(x, fmax(y, z)) + r, 1);
    }
    *code = ad_morton_code3(c[0], c[1], c[2], lo, inv);
    *box = (ad_bvh_box3){b0[0], b0[1], b0[2], b1[0], b1[1], b1[2]};
}

/* The triangle tree (gather3.h): leaves grown by the radius times AD_TRI_TREE_MARGIN, Morton codes of
 * the centroids over their box, built by core/leaf_tree.c. */
static ad_status build_tri_tree(ad_world *w)
{
    ad_triangles *t = &w->tri;
    size_t n = t->count;
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (size_t k = 0; k < n; k++)
        for (int d = 0; d < 3; d++) {
            double c = ((double)t->raw[k].v[0][d] + t->raw[k].v[1][d] + t->raw[k].v[2][d]) / 3.0;
            lo[d] = fmin(lo[d], c), hi[d] = fmax(hi[d], c);
        }
    float flo[3], inv[3];
    for (int d = 0; d < 3; d++) {
        flo[d] = (float)lo[d];
        inv[d] = hi[d] > lo[d] ? (float)(AD_MORTON_CELLS3 / (hi[d] - lo[d])) : 0.0f;
    }
    uint32_t *code = malloc((n + 1) * sizeof *code);
    ad_bvh_box3 *box = malloc((n + 1) * sizeof *box);
    ad_status st = ad_ok();
    if (!code || !box) st = ad_fail(AD_ERR_NO_MEMORY, "", "out of memory for the tree of %zu triangles", n);
    double r = (double)w->def.radius * AD_TRI_TREE_MARGIN;
    for (size_t k = 0; k < n && !st.code; k++) tri_leaf(&t->raw[k], flo, inv, r, &code[k], &box[k]);
    if (!st.code) st = ad_leaf_tree_build3(&t->nodes, code, box, n);
    AD_FREE_EACH(code, box);
    t->tree = (ad_tri_tree){t->nodes.t, t->nodes.item, t->tris};
    return st;
}

ad_status ad_world_add_triangles(ad_world *w, const ad_triangle *tri, size_t n)
{
    AD_TRY(need_3d(w, "ad_world_add_triangles"));
    if (n == 0) return ad_ok();
    if (!tri) return ad_fail(AD_ERR_INVALID, "triangles", "triangle array is NULL");
    ad_triangles *t = &w->tri;
    if (n > (size_t)UINT32_MAX / 4 - t->count)
        return ad_fail(AD_ERR_INVALID, "triangles", "%zu triangles are too many (at most 2^30)", t->count + n);
    size_t total = t->count + n;
    ad_triangle *raw = realloc(t->raw, total * sizeof *raw);
    if (!raw) return ad_fail(AD_ERR_NO_MEMORY, "", "out of memory for %zu triangles", total);
    t->raw = raw;
    memcpy(raw + t->count, tri, n * sizeof *tri);
    ad_tri *made = malloc(total * sizeof *made);
    if (!made) return ad_fail(AD_ERR_NO_MEMORY, "", "out of memory for %zu triangles", total);
    ad_status st = ad_triangles_make(raw, total, made); /* all again: new ones may join old surfaces */
    if (st.code) {
        free(made);
        return st; /* t->count unchanged: the refused triangles are not part of the world */
    }
    st = ad_panels_resize(&w->panels, total);
    if (st.code) {
        free(made);
        return st;
    }
    free(t->tris);
    t->tris = made;
    t->count = total;
    AD_TRY(build_tri_tree(w));
    return w->ops->set_segments(w);
}

/* -------------------------------------------------------------------- fill -- */

/* 1 where a sphere at c of radius r would touch a triangle: the tree's leaves hold the triangles within
 * its own growth of c, the query box the rest of r. */
static int near_triangle(const ad_world *w, ad_vec3 c, float r)
{
    const ad_tri_tree *g = &w->tri.tree;
    float h = fmaxf(0.0f, r - (float)w->def.radius * AD_TRI_TREE_MARGIN) * 1.001f;
    ad_bvh_box3 q = {c.x - h, c.y - h, c.z - h, c.x + h, c.y + h, c.z + h};
    uint32_t stack[AD_BVH_STACK];
    ad_bvh_walk3 walk;
    ad_bvh_walk_begin3(&g->t, &walk, q, 0, stack, 1);
    for (uint32_t k = ad_bvh_walk_next3(&g->t, &walk); k != AD_BVH_NONE; k = ad_bvh_walk_next3(&g->t, &walk)) {
        const ad_tri *t = &g->tris[g->item[k]];
        int feature;
        ad_vec3 d = ad_v3_sub(c, ad_closest_on_triangle(c, t->a, t->ab, t->ac, &feature));
        if (ad_v3_dot(d, d) < r * r) return 1;
    }
    return 0;
}

/* Inside a closed surface: a ray from c towards +x crosses its triangles an odd number of times
 * (Moller-Trumbore; only the triangles of closed components count). */
static int inside_closed(const ad_world *w, ad_vec3 c)
{
    if (w->tri.tree.t.n == 0) return 0;
    ad_bvh_box3 all = ad_bvh_root_box3(&w->tri.tree.t); /* outside the body's box: outside */
    if (c.x < all.x0 || c.x > all.x1 || c.y < all.y0 || c.y > all.y1 || c.z < all.z0 || c.z > all.z1) return 0;
    int inside = 0;
    for (size_t k = 0; k < w->tri.count; k++) {
        const ad_tri *t = &w->tri.tris[k];
        if (!(t->flags & AD_TRI_CLOSED)) continue;
        /* the ray c + s (1, 0, 0), s > 0, against a + u ab + v ac, in double */
        double ab[3] = {t->ab.x, t->ab.y, t->ab.z}, ac[3] = {t->ac.x, t->ac.y, t->ac.z};
        double pv[3] = {0.0, -ac[2], ac[1]}; /* (1, 0, 0) x ac */
        double det = ab[0] * pv[0] + ab[1] * pv[1] + ab[2] * pv[2];
        if (det == 0.0) continue;
        double tv[3] = {(double)c.x - t->a.x, (double)c.y - t->a.y, (double)c.z - t->a.z};
        double u = (tv[0] * pv[0] + tv[1] * pv[1] + tv[2] * pv[2]) / det;
        if (u < 0.0 || u > 1.0) continue;
        double qv[3] = {tv[1] * ab[2] - tv[2] * ab[1], tv[2] * ab[0] - tv[0] * ab[2], tv[0] * ab[1] - tv[1] * ab[0]};
        double v = qv[0] / det; /* (1, 0, 0) . qv */
        if (v < 0.0 || u + v > 1.0) continue;
        double s = (ac[0] * qv[0] + ac[1] * qv[1] + ac[2] * qv[2]) / det;
        if (s > 0.0) inside = !inside;
    }
    return inside;
}

/* A box [x0,x1]x[y0,y1]x[z0,z1] (cut to the domain) filled at a volume fraction on a jittered simple
 * cubic lattice: n sites spread evenly over the lattice, each jittered within its cube so that no two
 * spheres overlap, those touching a triangle or inside a closed surface left out; Maxwellian velocities. Counter-based random
 * numbers: the same for any thread count. */
ad_status ad_world_fill3(ad_world *w, const ad_fill_def *f, size_t *added)
{
    const ad_world_def *d = &w->def;
    double r = d->radius;
    double lo[3] = {fmax(f->x0, d->x_min), fmax(f->y0, d->y_min), fmax(f->z0, d->z_min)};
    double hi[3] = {fmin(f->x1, d->x_max), fmin(f->y1, d->y_max), fmin(f->z1, d->z_max)};
    double ext[3];
    for (int k = 0; k < 3; k++) {
        ext[k] = hi[k] - lo[k];
        if (!(ext[k] >= 2.0 * r))
            return ad_fail(AD_ERR_INVALID, "fill.region",
                           "fill region [%g, %g] x [%g, %g] x [%g, %g] is empty, not finite, or thinner than a diameter "
                           "inside the domain",
                           f->x0, f->x1, f->y0, f->y1, f->z0, f->z1);
    }
    AD_TRY(ad_check_range("fill.area_fraction", f->area_fraction, 0.0, 1, 0.5,
                          "in 3D it is the volume fraction and must lie in (0, 0.5] (a jittered cubic lattice)"));
    AD_TRY(ad_check_range("fill.temperature", f->temperature, 0.0, 0, DBL_MAX, "it must be >= 0 (m^2/s^2)"));
    double vf = sqrt(f->vx * f->vx + f->vy * f->vy + f->vz * f->vz) + 10.0 * sqrt(f->temperature);
    if (!(vf * vf <= FLT_MAX))
        return ad_fail(AD_ERR_INVALID, "fill.velocity", "fill velocity and temperature make speeds up to %g m/s, whose "
                       "square is beyond a float", vf);
    double vol = ext[0] * ext[1] * ext[2];
    double n_want = floor(f->area_fraction * vol / (4.0 / 3.0 * AD_PI * r * r * r) + 0.5);
    if (n_want < 1) return ad_ok();
    /* the lattice: cubes of edge a >= 2r, as many as the box holds, at least n_want of them */
    double a = cbrt(vol / n_want), cols[3];
    for (int k = 0; k < 3; k++) cols[k] = fmax(1.0, floor(ext[k] / fmax(a, 2.0 * r)));
    while (cols[0] * cols[1] * cols[2] < n_want) {
        int best = -1;
        for (int k = 0; k < 3; k++)
            if (ext[k] / (cols[k] + 1.0) >= 2.0 * r && (best < 0 || ext[k] / cols[k] > ext[best] / cols[best])) best = k;
        if (best < 0)
            return ad_fail(AD_ERR_INVALID, "fill.area_fraction",
                           "fill.area_fraction = %g does not fit on a lattice in a %g x %g x %g m region",
                           f->area_fraction, ext[0], ext[1], ext[2]);
        cols[best] += 1.0;
    }
    size_t n = (size_t)n_want;
    if (n > d->capacity - w->count)
        return ad_fail(AD_ERR_CAPACITY, "capacity",
                       "capacity: the fill needs %zu spheres but only %zu of the capacity %zu are free", n,
                       d->capacity - w->count, d->capacity);
    ad_particle3 *p = malloc(n * sizeof *p);
    unsigned char *keep = malloc(n);
    if (!p || !keep) {
        AD_FREE_EACH(p, keep);
        return ad_fail(AD_ERR_NO_MEMORY, "", "out of memory for %zu fill spheres", n);
    }
    double cw[3], jit[3], sites = cols[0] * cols[1] * cols[2], sd = sqrt(f->temperature);
    for (int k = 0; k < 3; k++) {
        cw[k] = ext[k] / cols[k];
        jit[k] = 0.5 * (cw[k] - 2.0 * r) * 0.999;
    }
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) {
        double site = floor((double)i * sites / (double)n), q[3], g[4];
        double idx[3] = {fmod(site, cols[0]), fmod(floor(site / cols[0]), cols[1]), floor(site / (cols[0] * cols[1]))};
        for (int k = 0; k < 3; k++)
            q[k] = lo[k] + (idx[k] + 0.5) * cw[k] + jit[k] * (2.0 * ad_rng_uniform(f->seed, (uint64_t)i * 4 + k) - 1.0);
        ad_rng_normal2(f->seed ^ 0x5DEECE66Dull, 2 * (uint64_t)i, &g[0], &g[1]);
        ad_rng_normal2(f->seed ^ 0x5DEECE66Dull, 2 * (uint64_t)i + 1, &g[2], &g[3]);
        p[i] = (ad_particle3){(float)q[0], (float)q[1], (float)q[2], (float)(f->vx + sd * g[0]),
                              (float)(f->vy + sd * g[1]), (float)(f->vz + sd * g[2])};
        ad_vec3 at = ad_v3(p[i].x, p[i].y, p[i].z);
        keep[i] = !near_triangle(w, at, (float)(r * 1.01)) && !inside_closed(w, at);
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (keep[i]) p[k++] = p[i];
    ad_status st = ad_world_add_particles3(w, p, k);
    AD_FREE_EACH(p, keep);
    if (st.code == AD_OK && added) *added = k;
    return st;
}
