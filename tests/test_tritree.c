/* The triangle tree (physics/bvh.h in 3D, physics/gather3.h, core/world3.c): on meshes of body3.c (an
 * icosphere, a NACA wing, a cylinder) and on an STL written and read back here (two bodies side by side and a
 * cube), the contact of spheres at random places near and on the surface, exactly on vertices and edges, and
 * anywhere in the body's box, through the tree against the brute force over every triangle with the same
 * rule: the same force to the bit (the result depends only on the set of touching triangles: triangle.h). The
 * tree's shape (a permutation of the triangles, boxes holding their children and their triangles grown by a
 * radius), the 3D Morton code, and the tree rebuilt the same from a checkpoint's triangles.
 * Usage: test_tritree DIR (for the STL and checkpoint files). */
#include "test_util.h"

#include <sys/stat.h>

#include "core/airfoil.h"
#include "core/body3.h"
#include "core/stl.h"
#include "core/world_internal.h"
#include "io/stl_write.h"
#include "core/free_each.h"
#include "physics/rng.h"

static const char *dir = ".";

static double uni(uint64_t seed, uint64_t k) { return ad_rng_uniform(seed, k); }

static ad_world *world_of(const ad_mesh *m, double radius)
{
    ad_world_def d = ad_default_world_def();
    d.dimensions = 3;
    d.backend = AD_BACKEND_REFERENCE;
    d.x_min = d.y_min = d.z_min = -20;
    d.x_max = d.y_max = d.z_max = 20;
    d.radius = radius;
    d.capacity = 64;
    ad_world *w = NULL;
    REQUIRE_OK(ad_world_create(&d, &w));
    REQUIRE_OK(ad_world_add_triangles(w, m->t, m->n));
    return w;
}

/* ------------------------------------------------------------ the tree's shape -- */

static int box_holds(const ad_bvh_box3 *outer, const ad_bvh_box3 *in)
{
    return outer->x0 <= in->x0 && outer->y0 <= in->y0 && outer->z0 <= in->z0 && outer->x1 >= in->x1 &&
           outer->y1 >= in->y1 && outer->z1 >= in->z1;
}

/* item[] a permutation; every internal box holds its children's; every leaf box holds its triangle's box
 * grown by the radius. */
static void check_shape(const char *what, const ad_world *w)
{
    const ad_tri_tree *T = &w->tri.tree;
    uint32_t n = T->t.n;
    ENSURE_MSG(n == w->tri.count, "%s: %u leaves for %zu triangles", what, n, w->tri.count);
    unsigned char *seen = calloc(n + 1, 1);
    size_t bad = 0;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = T->item[k];
        bad += i >= n || seen[i];
        if (i >= n) continue;
        seen[i] = 1;
        const ad_triangle *t = &w->tri.raw[i];
        double r = w->def.radius;
        ad_bvh_box3 b = T->t.leaf_box[k];
        for (int v = 0; v < 3; v++) {
            const float *p = t->v[v];
            bad += !(b.x0 <= p[0] - r && b.y0 <= p[1] - r && b.z0 <= p[2] - r && b.x1 >= p[0] + r &&
                     b.y1 >= p[1] + r && b.z1 >= p[2] + r);
        }
    }
    for (uint32_t k = 0; k + 1 < n; k++)
        for (int s = 0; s < 2; s++) {
            uint32_t c = T->t.child[2 * k + s];
            ad_bvh_box3 cb = c & AD_BVH_LEAF ? T->t.leaf_box[c & ~AD_BVH_LEAF] : T->t.box[c];
            bad += !box_holds(&T->t.box[k], &cb);
        }
    ENSURE_MSG(bad == 0, "%s: %zu faults in the tree's shape", what, bad);
    free(seen);
}

/* ------------------------------------------------------------ the queries -- */

typedef struct query_report {
    size_t queries, touching, multi, differ;
} query_report;

static ad_vec3 vertex(const ad_tri *t, int v)
{
    return v == 0 ? t->a : v == 1 ? ad_v3_add(t->a, t->ab) : ad_v3_add(t->a, t->ac);
}

/* Query k of n: a fifth each exactly on a vertex, exactly on an edge, on a face moved along its normal by up
 * to 1.2 radii either way, near a vertex or an edge (within 1.2 radii in a random direction), and anywhere in
 * the body's box grown by two radii. */
static ad_vec3 place(const ad_world *w, uint64_t seed, size_t k)
{
    const ad_tri *tris = w->tri.tris;
    size_t n = w->tri.count;
    double r = w->def.radius;
    const ad_tri *t = &tris[(size_t)(uni(seed, 8 * k) * (double)n) % n];
    double u = uni(seed, 8 * k + 1), v = uni(seed, 8 * k + 2), s = 2 * uni(seed, 8 * k + 3) - 1;
    ad_vec3 dir = ad_v3((float)(2 * uni(seed, 8 * k + 4) - 1), (float)(2 * uni(seed, 8 * k + 5) - 1),
                        (float)(2 * uni(seed, 8 * k + 6) - 1));
    int kind = (int)(k % 5), corner = (int)(uni(seed, 8 * k + 7) * 3) % 3;
    ad_vec3 a = vertex(t, corner), b = vertex(t, (corner + 1) % 3);
    switch (kind) {
    case 0: return a;
    case 1: return ad_v3_axpy(a, (float)u, ad_v3_sub(b, a));
    case 2: {
        if (u + v > 1) u = 1 - u, v = 1 - v;
        ad_vec3 p = ad_v3_add(t->a, ad_v3_add(ad_v3_scale(t->ab, (float)u), ad_v3_scale(t->ac, (float)v)));
        ad_vec3 nrm = ad_v3_cross(t->ab, t->ac);
        return ad_v3_axpy(p, (float)(1.2 * r * s / sqrt(ad_v3_dot(nrm, nrm))), nrm);
    }
    case 3: {
        ad_vec3 p = v < 0.5 ? a : ad_v3_axpy(a, (float)u, ad_v3_sub(b, a));
        return ad_v3_axpy(p, (float)(1.2 * r * fabs(s) / sqrt(ad_v3_dot(dir, dir) + 1e-30)), dir);
    }
    default: {
        ad_bvh_box3 all = ad_bvh_root_box3(&w->tri.tree.t);
        return ad_v3((float)(all.x0 - r + u * (all.x1 - all.x0 + 2 * r)),
                     (float)(all.y0 - r + v * (all.y1 - all.y0 + 2 * r)),
                     (float)(all.z0 - r + uni(seed, 8 * k + 3) * (all.z1 - all.z0 + 2 * r)));
    }
    }
}

/* How many triangles touch a sphere at c one by one. */
static int touching_triangles(const ad_world *w, ad_vec3 c)
{
    int m = 0;
    float r = w->params.radius;
    for (size_t i = 0; i < w->tri.count; i++) {
        const ad_tri *t = &w->tri.tris[i];
        int f;
        ad_vec3 d = ad_v3_sub(c, ad_closest_on_triangle(c, t->a, t->ab, t->ac, &f));
        float d2 = ad_v3_dot(d, d);
        m += d2 < r * r && d2 > 0;
    }
    return m;
}

static query_report compare(const char *what, const ad_world *w, size_t nq, uint64_t seed)
{
    const ad_params *P = &w->params;
    query_report q = {0};
    for (size_t k = 0; k < nq; k++) {
        ad_vec3 c = place(w, seed, k);
        ad_vec3 v = ad_v3((float)(uni(seed ^ 77, k) - 0.5), (float)(uni(seed ^ 78, k) - 0.5), 0.25f);
        ad_accum3 a, b;
        ad_accum_zero3(&a);
        ad_accum_zero3(&b);
        ad_contact_triangles(P, &w->tri.tree, c, v, &a);
        ad_contact_triangles_all(P, w->tri.tris, (uint32_t)w->tri.count, c, v, &b);
        int same = memcmp(&a, &b, sizeof a) == 0;
        if (!same && q.differ < 5)
            fprintf(stderr, "%s: query %zu at (%.9g, %.9g, %.9g): tree force (%.9g, %.9g, %.9g), brute force "
                    "(%.9g, %.9g, %.9g)\n", what, k, c.x, c.y, c.z, a.fx, a.fy, a.fz, b.fx, b.fy, b.fz);
        q.differ += !same;
        q.touching += b.pressure > 0;
        if (k % 16 == 0 && b.pressure > 0) q.multi += touching_triangles(w, c) > 1;
    }
    q.queries = nq;
    printf("%-34s %8zu triangles, %6zu queries: %6zu touching (of every 16th touching, %4zu meet 2+ triangles), "
           "%zu differ from the brute force\n", what, w->tri.count, q.queries, q.touching, q.multi, q.differ);
    ENSURE_MSG(q.differ == 0, "%s: %zu of %zu queries differ from the brute force", what, q.differ, nq);
    ENSURE_MSG(q.touching > nq / 4, "%s: only %zu of %zu queries touch the body", what, q.touching, nq);
    ENSURE_MSG(q.multi > 0, "%s: no query meets two triangles", what);
    return q;
}

static void mesh_case(const char *what, ad_mesh *m, double radius, size_t nq, uint64_t seed)
{
    ad_world *w = world_of(m, radius);
    check_shape(what, w);
    compare(what, w, nq, seed);
    ad_world_destroy(w);
}

/* ------------------------------------------------------------ the meshes -- */

static void test_sphere(void)
{
    for (int s = 1; s <= 5; s += 2) {
        ad_mesh m;
        REQUIRE_OK(ad_mesh_sphere(1.0, s, &m));
        char what[64];
        snprintf(what, sizeof what, "icosphere s = %d, r = 0.05", s);
        mesh_case(what, &m, 0.05, s == 5 ? 8000 : 20000, 11 + (uint64_t)s);
        snprintf(what, sizeof what, "icosphere s = %d, r = 0.3", s);
        mesh_case(what, &m, 0.3, s == 5 ? 3000 : 10000, 21 + (uint64_t)s);
        free(m.t);
    }
}

static void test_wing(void)
{
    ad_outline o;
    REQUIRE_OK(ad_airfoil_naca("2412", 40, 1, &o));
    ad_mesh m;
    REQUIRE_OK(ad_mesh_wing(&o, 2.0, 3.0, 20.0, 12, 1, &m));
    const double rot[3] = {0, 0, -8};
    REQUIRE_OK(ad_mesh_place(&m, 1, rot, NULL));
    mesh_case("NACA 2412 wing, swept 20, r = 0.02", &m, 0.02, 20000, 31);
    mesh_case("NACA 2412 wing, swept 20, r = 0.1", &m, 0.1, 10000, 32);
    free(m.t);
    ad_outline_free(&o);
}

static void test_cylinder(void)
{
    ad_mesh m;
    REQUIRE_OK(ad_mesh_cylinder(0.5, 2.0, 48, &m));
    mesh_case("cylinder 48 segments, r = 0.05", &m, 0.05, 20000, 41);
    free(m.t);
}

/* Two icospheres 0.05 apart (two components a sphere of radius 0.1 between them touches at once) and a cube,
 * written as a binary STL and read back. */
static void test_stl(void)
{
    ad_mesh a, b, m;
    REQUIRE_OK(ad_mesh_sphere(1.0, 3, &a));
    REQUIRE_OK(ad_mesh_sphere(1.0, 2, &b));
    const double off[3] = {2.05, 0, 0};
    REQUIRE_OK(ad_mesh_place(&b, 1, NULL, off));
    static const float cube[12][3][3] = {
        {{0, 0, 0}, {0, 1, 0}, {1, 1, 0}}, {{0, 0, 0}, {1, 1, 0}, {1, 0, 0}}, {{0, 0, 1}, {1, 0, 1}, {1, 1, 1}},
        {{0, 0, 1}, {1, 1, 1}, {0, 1, 1}}, {{0, 0, 0}, {1, 0, 0}, {1, 0, 1}}, {{0, 0, 0}, {1, 0, 1}, {0, 0, 1}},
        {{0, 1, 0}, {0, 1, 1}, {1, 1, 1}}, {{0, 1, 0}, {1, 1, 1}, {1, 1, 0}}, {{0, 0, 0}, {0, 0, 1}, {0, 1, 1}},
        {{0, 0, 0}, {0, 1, 1}, {0, 1, 0}}, {{1, 0, 0}, {1, 1, 0}, {1, 1, 1}}, {{1, 0, 0}, {1, 1, 1}, {1, 0, 1}}};
    m.n = a.n + b.n + 12;
    m.t = malloc(m.n * sizeof *m.t);
    memcpy(m.t, a.t, a.n * sizeof *m.t);
    memcpy(m.t + a.n, b.t, b.n * sizeof *m.t);
    for (int k = 0; k < 12; k++)
        for (int v = 0; v < 3; v++)
            for (int d = 0; d < 3; d++) m.t[a.n + b.n + k].v[v][d] = cube[k][v][d] + (d == 1 ? 1.2f : 0.5f);
    char path[512];
    snprintf(path, sizeof path, "%s/tritree.stl", dir);
    REQUIRE_OK(ad_stl_write(path, &m, "tritree"));
    ad_mesh back;
    REQUIRE_OK(ad_stl_load(path, &back));
    ENSURE(back.n == m.n);
    mesh_case("STL: two spheres and a cube, r = 0.1", &back, 0.1, 20000, 51);
    /* the spheres' gap: every query there touches both */
    ad_world *w = world_of(&back, 0.1);
    ENSURE(w->tri.tris[0].flags >> AD_TRI_COMP_SHIFT != w->tri.tris[a.n].flags >> AD_TRI_COMP_SHIFT);
    size_t two = 0, differ = 0;
    for (int k = 0; k < 2000; k++) {
        ad_vec3 c = ad_v3(1.025f, (float)(0.1 * uni(61, 2 * (uint64_t)k) - 0.05),
                          (float)(0.1 * uni(61, 2 * (uint64_t)k + 1) - 0.05));
        ad_accum3 x, y;
        ad_accum_zero3(&x);
        ad_accum_zero3(&y);
        ad_contact_triangles(&w->params, &w->tri.tree, c, ad_v3(0, 0, 0), &x);
        ad_contact_triangles_all(&w->params, w->tri.tris, (uint32_t)w->tri.count, c, ad_v3(0, 0, 0), &y);
        differ += memcmp(&x, &y, sizeof x) != 0;
        two += fabsf(y.fx) < 0.5f * y.pressure; /* pushed from both sides: the x forces mostly cancel */
    }
    printf("between the two spheres: %zu of 2000 queries pushed from both, %zu differ\n", two, differ);
    ENSURE(differ == 0 && two > 1000);
    ad_world_destroy(w);
    AD_FREE_EACH(a.t, b.t, m.t, back.t);
}

/* ------------------------------------------------------------ the rest -- */

static void test_morton3(void)
{
    ENSURE(ad_morton_spread3(0x3ffu) == 0x09249249u);
    int bad = 0;
    for (uint32_t b = 0; b < 10; b++) bad += ad_morton_spread3(1u << b) != 1u << (3 * b);
    ENSURE(bad == 0);
    const float lo[3] = {0, 0, 0}, inv[3] = {1024, 1024, 1024};
    ENSURE(ad_morton_code3(0.0f, 0.0f, 0.0f, lo, inv) == 0);
    ENSURE(ad_morton_code3(2.0f, 2.0f, 2.0f, lo, inv) == 0x3fffffffu); /* clamped to the top cell */
    ENSURE(ad_morton_code3(1.5f / 1024, 0.0f, 0.0f, lo, inv) == 1u && ad_morton_code3(0.0f, 0.0f, 1.5f / 1024, lo, inv) == 4u);
}

/* A checkpoint holds the triangles, not the tree: the loaded world builds the same tree. */
static void test_checkpoint(void)
{
    ad_mesh m;
    REQUIRE_OK(ad_mesh_sphere(1.0, 3, &m));
    ad_world *w = world_of(&m, 0.05);
    char path[512];
    snprintf(path, sizeof path, "%s/tritree.ckpt", dir);
    REQUIRE_OK(ad_world_save(w, path, NULL, 0));
    ad_world *v = NULL;
    REQUIRE_OK(ad_world_load(path, AD_BACKEND_AUTO, -1, &v, NULL, NULL));
    const ad_bvh3 *a = &w->tri.tree.t, *b = &v->tri.tree.t;
    size_t n = a->n;
    int same = a->n == b->n && !memcmp(w->tri.tree.item, v->tri.tree.item, n * 4) &&
               !memcmp(a->child, b->child, 2 * (n - 1) * 4) && !memcmp(a->box, b->box, (n - 1) * sizeof *a->box) &&
               !memcmp(a->leaf_box, b->leaf_box, n * sizeof *a->leaf_box);
    printf("checkpoint: the loaded world's tree over %zu triangles is %s\n", n, same ? "the same" : "different");
    ENSURE(same);
    ad_world_destroy(w);
    ad_world_destroy(v);
    free(m.t);
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        dir = argv[1];
        mkdir(dir, 0755);
    }
    test_morton3();
    test_sphere();
    test_wing();
    test_cylinder();
    test_stl();
    test_checkpoint();
    return tu_finish("test_tritree");
}
