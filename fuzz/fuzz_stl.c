/* libFuzzer harness for the STL reader (src/core/stl.c) and the mesh checks (src/core/mesh_check.c): any bytes
 * as an ASCII or binary STL file. A file is refused with a message that names it and a zeroed mesh, or loaded
 * into finite triangles within the coordinate bound; a loaded mesh is checked, and what the check passes the
 * world's triangle maker takes (as closed surfaces where the check asked for closed); its edges agree with a
 * brute-force count on small meshes. Never a crash, a leak, a hang or undefined behaviour. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/mesh_check.h"
#include "core/stl.h"
#include "core/triangles.h"
#include "fuzz_file.h"

/* The brute-force edge count is O(n^2): only small meshes. */
#define FUZZ_BRUTE_MAX_TRIANGLES 64

static int same(const float *p, const float *q)
{
    return p[0] == q[0] && p[1] == q[1] && p[2] == q[2];
}

/* Distinct edges, open ones and misoriented ones, every edge against every other. */
static void edges_brute(const ad_mesh *m, size_t *edges, size_t *open, size_t *nm, size_t *mis)
{
    size_t ne = 3 * m->n;
    *edges = *open = *nm = *mis = 0;
    for (size_t k = 0; k < ne; k++) {
        const float *a = m->t[k / 3].v[k % 3], *b = m->t[k / 3].v[(k % 3 + 1) % 3];
        if (same(a, b)) continue;
        size_t uses = 1, first = 1;
        int fwd = 0;
        for (size_t l = 0; l < ne; l++) {
            const float *c = m->t[l / 3].v[l % 3], *d = m->t[l / 3].v[(l % 3 + 1) % 3];
            if (l == k || same(c, d)) continue;
            int f = same(a, c) && same(b, d);
            if (!f && !(same(a, d) && same(b, c))) continue;
            first &= l > k;
            uses++;
            fwd = f;
        }
        if (!first) continue;
        ++*edges;
        *open += uses == 1;
        *nm += uses > 2;
        *mis += uses == 2 && fwd;
    }
}

static void check_mesh(const ad_mesh *m)
{
    for (size_t i = 0; i < m->n; i++)
        for (int j = 0; j < 3; j++)
            for (int d = 0; d < 3; d++)
                if (!(fabsf(m->t[i].v[j][d]) <= AD_STL_MAX_COORD)) {
                    fprintf(stderr, "triangle %zu: a coordinate not finite or beyond the bound was loaded\n", i);
                    abort();
                }
    double lo[3], hi[3];
    ad_mesh_bounds(m, lo, hi);
    if (!isfinite(ad_mesh_area(m)) || !isfinite(ad_mesh_volume(m)) || !(lo[0] <= hi[0])) abort();
    ad_mesh_edges e;
    if (ad_mesh_edges_find(m, &e).code) abort();
    if (m->n <= FUZZ_BRUTE_MAX_TRIANGLES) {
        size_t edges, open, nm, mis;
        edges_brute(m, &edges, &open, &nm, &mis);
        if (edges != e.edges || open != e.open || nm != e.nonmanifold || mis != e.misoriented) {
            fprintf(stderr, "edges %zu/%zu open %zu/%zu non-manifold %zu/%zu misoriented %zu/%zu (found/brute)\n",
                    e.edges, edges, e.open, open, e.nonmanifold, nm, e.misoriented, mis);
            abort();
        }
    }
    ad_tri *made = malloc(m->n * sizeof *made);
    if (!made) abort();
    ad_status world = ad_triangles_make(m->t, m->n, made);
    for (int closed = 0; closed < 2; closed++) {
        ad_status st = ad_mesh_check(m, "fuzz.stl", closed);
        if (st.code && (st.code != AD_ERR_INVALID || strncmp(st.message, "fuzz.stl: ", 10) != 0)) {
            fprintf(stderr, "mesh check: code %d, message '%s'\n", (int)st.code, st.message);
            abort();
        }
        if (!st.code && world.code) {
            fprintf(stderr, "the check passed a mesh the world refuses: %s\n", world.message);
            abort();
        }
        for (size_t i = 0; !st.code && closed && i < m->n; i++)
            if (!(made[i].flags & AD_TRI_CLOSED)) {
                fprintf(stderr, "the check passed as closed a mesh whose triangle %zu the world sees as open\n", i);
                abort();
            }
    }
    free(made);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size, ".stl");
    ad_mesh m = {(ad_triangle *)data, 7};
    ad_status st = ad_stl_load(path, &m);
    if (st.code) {
        if (m.t || m.n || strncmp(st.message, path, strlen(path)) != 0 || st.code == AD_ERR_INVALID) {
            fprintf(stderr, "a refusal without the path or with a mesh left: code %d, '%s'\n", (int)st.code,
                    st.message);
            abort();
        }
        return 0;
    }
    if (m.n == 0 || !m.t) abort();
    check_mesh(&m);
    ad_mesh_free(&m);
    return 0;
}
