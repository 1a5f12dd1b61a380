/* Triangle-tree benchmark (issue 19): a sphere's contact with a 3D body, in queries per second on one CPU
 * thread, through the triangle tree (ad_contact_triangles), the coarse grid it replaced (kept here alone, as the
 * baseline: below) and the brute force over every triangle (ad_contact_triangles_all), on icospheres of growing
 * subdivision (80 to 327680 triangles) and three of the finest side by side (983040), and with --cuda the tree
 * and the brute force on the GPU. Two sets of query spheres: "near", centres within 1.5 radii of the mesh's
 * surface (a random point of a random triangle moved along its normal), and "box", uniform in the cube
 * [-1.5, 1.5]^3 (most far from the body or inside it). Each method's forces are compared with the tree's, to the bit. Not a timed test: a table
 * and a CSV. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aerodem/aerodem.h"
#include "core/body3.h"
#include "core/free_each.h"
#include "core/world_internal.h"
#include "physics/rng.h"
#include "bench_tritree.h"
#include "bench_util.h"

/* ------------------------------------------------- the coarse grid (baseline) -- */

/* The triangles on a coarse grid, as core/world3.c kept them before the tree: cells of at least a diameter and
 * at least 1/64 of the body's box (at most 128 a side), each listing the triangles whose box grown by a radius
 * touches it; a sphere looks in its own cell. */
typedef struct tri_grid {
    float origin[3], inv_cell[3], box_lo[3], box_hi[3];
    int n[3];
    uint32_t *start, *index;
} tri_grid;

static void tri_box(const ad_triangle *t, double r, double lo[3], double hi[3])
{
    for (int d = 0; d < 3; d++) {
        double a = t->v[0][d], b = t->v[1][d], c = t->v[2][d];
        lo[d] = fmin(a, fmin(b, c)) - r;
        hi[d] = fmax(a, fmax(b, c)) + r;
    }
}

static void grid_cells(const tri_grid *g, const double a[3], const double b[3], int c0[3], int c1[3])
{
    for (int d = 0; d < 3; d++) {
        c0[d] = ad_cell_coord((float)a[d], g->origin[d], g->inv_cell[d], g->n[d]);
        c1[d] = ad_cell_coord((float)b[d], g->origin[d], g->inv_cell[d], g->n[d]);
    }
}

static void grid_build(tri_grid *g, const ad_triangle *raw, size_t n, double r)
{
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY}, a[3], b[3];
    for (size_t k = 0; k < n; k++) {
        tri_box(&raw[k], r, a, b);
        for (int d = 0; d < 3; d++) lo[d] = fmin(lo[d], a[d]), hi[d] = fmax(hi[d], b[d]);
    }
    double span = fmax(hi[0] - lo[0], fmax(hi[1] - lo[1], hi[2] - lo[2])), cell = fmax(2.0 * r, span / 64.0);
    size_t cells = 1;
    for (int d = 0; d < 3; d++) {
        g->n[d] = (int)fmax(1.0, fmin(ceil((hi[d] - lo[d]) / cell), 128.0));
        g->origin[d] = g->box_lo[d] = (float)lo[d];
        g->box_hi[d] = (float)hi[d];
        g->inv_cell[d] = (float)(g->n[d] / (hi[d] - lo[d]));
        cells *= (size_t)g->n[d];
    }
    g->start = calloc(cells + 1, sizeof *g->start);
    uint32_t *cursor = malloc((cells + 1) * sizeof *cursor);
    for (int pass = 0; pass < 2; pass++) {
        for (size_t k = 0; k < n; k++) {
            int c0[3], c1[3];
            tri_box(&raw[k], r, a, b);
            grid_cells(g, a, b, c0, c1);
            for (int z = c0[2]; z <= c1[2]; z++)
                for (int y = c0[1]; y <= c1[1]; y++)
                    for (int x = c0[0]; x <= c1[0]; x++) {
                        size_t c = ((size_t)z * (size_t)g->n[1] + (size_t)y) * (size_t)g->n[0] + (size_t)x;
                        if (pass == 0) g->start[c + 1]++;
                        else g->index[cursor[c]++] = (uint32_t)k;
                    }
        }
        if (pass == 1) break;
        for (size_t c = 0; c < cells; c++) g->start[c + 1] += g->start[c];
        g->index = malloc(((size_t)g->start[cells] + 1) * sizeof *g->index);
        memcpy(cursor, g->start, cells * sizeof *cursor);
    }
    free(cursor);
}

static void grid_contact(const ad_params *p, const tri_grid *g, const ad_tri *tris, ad_vec3 c, ad_vec3 v,
                         ad_accum3 *a)
{
    if (c.x < g->box_lo[0] || c.x > g->box_hi[0] || c.y < g->box_lo[1] || c.y > g->box_hi[1] || c.z < g->box_lo[2] ||
        c.z > g->box_hi[2])
        return;
    int cx = ad_cell_coord(c.x, g->origin[0], g->inv_cell[0], g->n[0]);
    int cy = ad_cell_coord(c.y, g->origin[1], g->inv_cell[1], g->n[1]);
    int cz = ad_cell_coord(c.z, g->origin[2], g->inv_cell[2], g->n[2]);
    uint32_t cell = ((uint32_t)cz * (uint32_t)g->n[1] + (uint32_t)cy) * (uint32_t)g->n[0] + (uint32_t)cx;
    ad_tri_touches tt;
    tt.n = 0;
    for (uint32_t k = g->start[cell]; k < g->start[cell + 1]; k++) {
        ad_vec3 q;
        uint32_t i = g->index[k];
        if (ad_tri_touch(&tris[i], i, c, p->radius, &tt, &q)) ad_contact_body_point3(p, c, v, q, a);
    }
    ad_tri_touches_apply(p, &tt, c, v, a);
}

/* ------------------------------------------------------------ the runs -- */

enum { M_TREE, M_GRID, M_BRUTE, M_COUNT };
static const char *method_name[M_COUNT] = {"tree", "grid", "brute"};

/* Queries k = 0 .. n-1 of a set: centre and velocity, 6 floats each. near: a point of a random triangle moved
 * along its normal by up to 1.5 radii either way; else uniform in the cube [-1.5, 1.5]^3. */
static void make_queries(const ad_world *w, int near, size_t n, float *q)
{
    const ad_tri *t = w->tri.tris;
    double r = w->def.radius;
    for (size_t k = 0; k < n; k++) {
        double u = ad_rng_uniform(7, 4 * k), v = ad_rng_uniform(7, 4 * k + 1), s = 2 * ad_rng_uniform(7, 4 * k + 2) - 1;
        const ad_tri *x = &t[(size_t)(ad_rng_uniform(7, 4 * k + 3) * (double)w->tri.count) % w->tri.count];
        if (u + v > 1) u = 1 - u, v = 1 - v;
        ad_vec3 nrm = ad_v3_cross(x->ab, x->ac);
        ad_vec3 c = ad_v3_add(x->a, ad_v3_add(ad_v3_scale(x->ab, (float)u), ad_v3_scale(x->ac, (float)v)));
        c = ad_v3_axpy(c, (float)(1.5 * r * s / sqrt(ad_v3_dot(nrm, nrm))), nrm);
        for (int d = 0; d < 3; d++) q[6 * k + d] = (float)(3.0 * ad_rng_uniform(9, 3 * k + d) - 1.5);
        if (near) q[6 * k] = c.x, q[6 * k + 1] = c.y, q[6 * k + 2] = c.z;
        q[6 * k + 3] = (float)(u - 0.5), q[6 * k + 4] = (float)(v - 0.5), q[6 * k + 5] = 0.1f;
    }
}

/* Runs method m over the queries, again and again from the first, until `budget` seconds pass (the clock
 * read every 16 queries); fills out[] with the forces; returns queries per second and sets *done to how many
 * of out[] are filled. */
static double run_method(int m, const ad_world *w, const tri_grid *g, const float *q, size_t nq, double budget,
                         ad_accum3 *out, size_t *done)
{
    const ad_params *P = &w->params;
    double t0 = wall(), t;
    size_t total = 0;
    do {
        for (int j = 0; j < 16; j++, total++) {
            size_t k = total % nq;
            ad_vec3 c = ad_v3(q[6 * k], q[6 * k + 1], q[6 * k + 2]), v = ad_v3(q[6 * k + 3], q[6 * k + 4], q[6 * k + 5]);
            ad_accum_zero3(&out[k]);
            if (m == M_TREE) ad_contact_triangles(P, &w->tri.tree, c, v, &out[k]);
            else if (m == M_GRID) grid_contact(P, g, w->tri.tris, c, v, &out[k]);
            else ad_contact_triangles_all(P, w->tri.tris, (uint32_t)w->tri.count, c, v, &out[k]);
        }
    } while ((t = wall()) - t0 < budget);
    *done = total < nq ? total : nq;
    return (double)total / (t - t0);
}

static size_t differing(const ad_accum3 *a, const ad_accum3 *b, size_t n)
{
    size_t d = 0;
    for (size_t k = 0; k < n; k++) d += memcmp(&a[k], &b[k], sizeof *a) != 0;
    return d;
}

/* A world around the mesh (its box and 4 m more each way) holding it; *build_s: the time the world took
 * to take the triangles (their checks, components and tree). */
static ad_world *world_of(const ad_mesh *m, double radius, double *build_s)
{
    ad_world_def d = ad_default_world_def();
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (size_t i = 0; i < m->n; i++)
        for (int v = 0; v < 3; v++)
            for (int k = 0; k < 3; k++) lo[k] = fmin(lo[k], m->t[i].v[v][k] - 4.0), hi[k] = fmax(hi[k], m->t[i].v[v][k] + 4.0);
    d.x_min = lo[0], d.y_min = lo[1], d.z_min = lo[2], d.x_max = hi[0], d.y_max = hi[1], d.z_max = hi[2];
    d.dimensions = 3, d.backend = AD_BACKEND_REFERENCE, d.radius = radius, d.capacity = 16;
    ad_world *w = NULL;
    ad_status st = ad_world_create(&d, &w);
    double t0 = wall();
    if (!st.code) st = ad_world_add_triangles(w, m->t, m->n);
    *build_s = wall() - t0;
    if (st.code) {
        fprintf(stderr, "bench_tritree: %s\n", st.message);
        exit(1);
    }
    return w;
}

/* The mesh of case s: an icosphere of subdivision s (1 to 7), or at s = 8 three of s = 7 side by side. */
static ad_mesh mesh_of(int s)
{
    ad_mesh a, m = {0};
    if (ad_mesh_sphere(1.0, s < 8 ? s : 7, &a).code) exit(1);
    if (s < 8) return a;
    m.n = 3 * a.n;
    m.t = malloc(m.n * sizeof *m.t);
    for (int k = 0; k < 3; k++) {
        memcpy(m.t + k * a.n, a.t, a.n * sizeof *m.t);
        for (size_t i = 0; k > 0 && i < a.n; i++)
            for (int v = 0; v < 3; v++) m.t[k * a.n + i].v[v][0] += (float)(2.5 * k);
    }
    free(a.t);
    return m;
}

int main(int argc, char **argv)
{
    bench_args ba = {0};
    int smin = 1, smax = 8, cuda = 0;
    size_t nq = 200000;
    double radius = 0.01, budget = 1.0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--csv") == 0 && bench_arg(argc, argv, &i, &ba)) continue;
        if (!strcmp(argv[i], "--subdivisions") && i + 2 < argc) smin = atoi(argv[++i]), smax = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--queries") && i + 1 < argc) nq = (size_t)atof(argv[++i]);
        else if (!strcmp(argv[i], "--radius") && i + 1 < argc) radius = atof(argv[++i]);
        else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) budget = atof(argv[++i]);
        else if (!strcmp(argv[i], "--cuda")) cuda = 1;
        else {
            printf("usage: bench_tritree [--subdivisions MIN MAX (1..8; 8: three spheres of 7)] [--queries N]\n"
                   "                     [--radius R (m; the body is a unit sphere)] [--seconds S (per method)]\n"
                   "                     [--cuda] [--csv FILE]\n");
            return 2;
        }
    }
    FILE *csv = NULL;
    if (!bench_csv("bench_tritree", ba.csv,
                   "triangles,queries_set,method,device,queries_per_s,queries_run,touching,differ_from_tree,build_s\n",
                   &csv))
        return 1;
    float *q = malloc(nq * 6 * sizeof *q);
    ad_accum3 *res[M_COUNT];
    for (int m = 0; m < M_COUNT; m++) res[m] = malloc(nq * sizeof(ad_accum3));
    printf("%10s %5s %6s %5s %14s %10s %9s %7s %9s\n", "triangles", "set", "method", "dev", "queries/s", "run",
           "touching", "differ", "build s");
    for (int s = smin; s <= smax; s++) {
        ad_mesh mesh = mesh_of(s);
        double build[M_COUNT] = {0};
        ad_world *w = world_of(&mesh, radius, &build[M_TREE]);
        tri_grid g;
        double t0 = wall();
        grid_build(&g, mesh.t, mesh.n, radius);
        build[M_GRID] = wall() - t0;
        for (int near = 1; near >= 0; near--) {
            make_queries(w, near, nq, q);
            size_t done[M_COUNT], touching = 0;
            double qps[M_COUNT];
            for (int m = 0; m < M_COUNT; m++) qps[m] = run_method(m, w, &g, q, nq, budget, res[m], &done[m]);
            for (size_t k = 0; k < done[M_TREE]; k++) touching += res[M_TREE][k].pressure > 0;
            for (int m = 0; m < M_COUNT; m++) {
                size_t n = done[m] < done[M_TREE] ? done[m] : done[M_TREE];
                size_t diff = differing(res[m], res[M_TREE], n);
                printf("%10zu %5s %6s %5s %14.4g %10zu %9zu %7zu %9.3g\n", mesh.n, near ? "near" : "box",
                       method_name[m], "cpu", qps[m], done[m], touching, diff, build[m]);
                if (csv)
                    fprintf(csv, "%zu,%s,%s,cpu,%.6g,%zu,%zu,%zu,%.6g\n", mesh.n, near ? "near" : "box", method_name[m],
                            qps[m], done[m], touching, diff, build[m]);
            }
            if (cuda) bench_tritree_cuda(w, q, nq, near ? "near" : "box", res[M_TREE], done[M_TREE], csv);
        }
        AD_FREE_EACH(g.start, g.index, mesh.t);
        ad_world_destroy(w);
        fflush(stdout);
    }
    for (int m = 0; m < M_COUNT; m++) free(res[m]);
    free(q);
    if (csv) fclose(csv);
    return 0;
}
