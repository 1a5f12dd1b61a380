/* STL files and triangle meshes (core/stl.c, core/mesh_check.c, io/stl_write.c): a cube and a tetrahedron
 * written as ASCII (in several spellings) and binary (also with a header that starts with "solid") read back
 * exactly; the writer's round trip, unit normals and atomic refusals; malformed files each refused with what
 * is wrong and where; the mesh checks (open, flipped, degenerate, non-manifold, NaN) with the triangle
 * named, their edge counts against brute force on random meshes, the world taking what passes; and the
 * volume, area and bounds. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/mesh_check.h"
#include "core/stl.h"
#include "core/triangles.h"
#include "io/stl_write.h"
#include "test_util.h"

static char dir[256];

static const char *tmp_path(const char *name)
{
    static char p[8][512];
    static int k;
    k = (k + 1) % 8;
    snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
    return p[k];
}

/* ------------------------------------------------------------- shapes -- */

/* The surface of the cube [0, 1]^3 as n x n squares a face, two triangles each, counter-clockwise seen from
 * outside; shared vertices are exactly equal (the same i / n on every face). Returns 12 n^2 triangles. */
static size_t cube(int n, ad_triangle *t)
{
    size_t k = 0;
    for (int d = 0; d < 3; d++)
        for (int s = 0; s < 2; s++)
            for (int i = 0; i < n; i++)
                for (int j = 0; j < n; j++) {
                    float p[4][3];
                    int du[4] = {0, 1, 1, 0}, dv[4] = {0, 0, 1, 1};
                    for (int c = 0; c < 4; c++) {
                        p[c][d] = (float)s;
                        p[c][(d + 1) % 3] = (float)(i + du[c]) / (float)n;
                        p[c][(d + 2) % 3] = (float)(j + dv[c]) / (float)n;
                    }
                    int q[2][3] = {{0, 1, 2}, {0, 2, 3}}; /* normal +e_d: outward on the side s = 1 */
                    for (int h = 0; h < 2; h++, k++)
                        for (int c = 0; c < 3; c++) {
                            int c2 = s ? c : (3 - c) % 3; /* side 0: reversed */
                            memcpy(t[k].v[c], p[q[h][c2]], sizeof t[k].v[c]);
                        }
                }
    return k;
}

/* A tetrahedron with coordinates that are not short decimals, outward. */
static void tetra(ad_triangle t[4])
{
    float p[4][3] = {{0.1f, -0.2f, 1.0f / 3.0f}, {1.7f, 0.05f, 0.3f}, {0.2f, 1.3f, 0.4f}, {0.3f, 0.25f, 2.1f}};
    int f[4][3] = {{0, 2, 1}, {0, 1, 3}, {1, 2, 3}, {0, 3, 2}};
    for (int i = 0; i < 4; i++)
        for (int c = 0; c < 3; c++)
            memcpy(t[i].v[c], p[f[i][c]], sizeof t[i].v[c]);
}

static int same_tris(const ad_triangle *a, const ad_triangle *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (int j = 0; j < 3; j++)
            for (int d = 0; d < 3; d++)
                if (a[i].v[j][d] != b[i].v[j][d]) return 0;
    return 1;
}

/* -------------------------------------------------------------- files -- */

static void write_bytes(const char *path, const void *d, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(d, 1, n, f) != n) || fclose(f)) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
}

/* ASCII STL of t in one of three spellings; style 2 puts the triangles in two solids. */
static void write_ascii(const char *path, const ad_triangle *t, size_t n, int style)
{
    FILE *f = fopen(path, "w");
    if (!f) exit(1);
    const char *nl = style == 1 ? "\r\n" : "\n";
    fprintf(f, style == 1 ? "SOLID Test Part 1%s" : "solid test%s", nl);
    for (size_t i = 0; i < n; i++) {
        if (style == 2 && i == n / 2) fprintf(f, "endsolid test\n\n  solid second one\n");
        fprintf(f, style == 1 ? "\tFacet NORMAL 0 0 0%s\t OUTER\tloop%s" : "facet normal 1e0 -0 nan\n outer loop\n", nl,
                nl);
        for (int j = 0; j < 3; j++)
            fprintf(f, style == 1 ? "\t\tVERTEX   %.9g\t%.9g  %.9e%s" : "  vertex %.9g %.9g %.9g\n",
                    (double)t[i].v[j][0], (double)t[i].v[j][1], (double)t[i].v[j][2], nl);
        fprintf(f, style == 1 ? " ENDLOOP%sEndFacet%s" : " endloop\nendfacet\n", nl, nl);
    }
    fprintf(f, style == 1 ? "EndSolid Test Part 1%s" : "endsolid test\n", nl);
    fclose(f);
}

static void put32(unsigned char *p, uint32_t u)
{
    for (int k = 0; k < 4; k++)
        p[k] = (unsigned char)(u >> 8 * k);
}

/* Binary STL of t: the header text, the count given (count_delta from n), bytes cut from the end. Returns
 * the size of the record buffer for further changes through *buf (caller frees). */
static size_t binary(const ad_triangle *t, size_t n, const char *header, long count_delta, unsigned char **buf)
{
    size_t size = 84 + 50 * n;
    unsigned char *b = calloc(size, 1);
    if (!b) exit(1);
    memcpy(b, header, strlen(header) < 80 ? strlen(header) : 80);
    put32(b + 80, (uint32_t)((long)n + count_delta));
    for (size_t i = 0; i < n; i++)
        for (int j = 0; j < 3; j++)
            for (int d = 0; d < 3; d++) {
                uint32_t u;
                memcpy(&u, &t[i].v[j][d], 4);
                put32(b + 84 + 50 * i + 12 + 12 * j + 4 * d, u);
            }
    *buf = b;
    return size;
}

static void write_binary(const char *path, const ad_triangle *t, size_t n, const char *header)
{
    unsigned char *b;
    size_t size = binary(t, n, header, 0, &b);
    write_bytes(path, b, size);
    free(b);
}

/* ------------------------------------------------------ reading files -- */

static void load_ok(const char *path, const ad_triangle *want, size_t n)
{
    ad_mesh m;
    if (!ENSURE_OK(ad_stl_load(path, &m))) return;
    ENSURE_MSG(m.n == n, "%s: %zu triangles, expected %zu", path, m.n, n);
    ENSURE_MSG(m.n == n && same_tris(m.t, want, n), "%s: the triangles differ from those written", path);
    ad_mesh_free(&m);
    ENSURE(m.t == NULL && m.n == 0);
}

static void test_read(void)
{
    ad_triangle c[12], t[4];
    ENSURE(cube(1, c) == 12);
    tetra(t);
    for (int style = 0; style < 3; style++) {
        char name[32];
        snprintf(name, sizeof name, "cube_%d.stl", style);
        write_ascii(tmp_path(name), c, 12, style);
        load_ok(tmp_path(name), c, 12);
        snprintf(name, sizeof name, "tetra_%d.stl", style);
        write_ascii(tmp_path(name), t, 4, style);
        load_ok(tmp_path(name), t, 4);
    }
    write_binary(tmp_path("cube_bin.stl"), c, 12, "a binary cube");
    load_ok(tmp_path("cube_bin.stl"), c, 12);
    write_binary(tmp_path("tetra_bin.stl"), t, 4, "binary tetra");
    load_ok(tmp_path("tetra_bin.stl"), t, 4);
    /* as many exporters write them: a binary file whose header starts with "solid" */
    write_binary(tmp_path("solid_header.stl"), c, 12, "solid cube exported by a CAD program");
    load_ok(tmp_path("solid_header.stl"), c, 12);
    write_binary(tmp_path("solid_header_t.stl"), t, 4, "solid");
    load_ok(tmp_path("solid_header_t.stl"), t, 4);
    /* and a UTF-8 byte order mark before an ASCII file */
    const char *bom = "\xef\xbb\xbfsolid x\nfacet normal 0 0 1 outer loop vertex 0 0 0 vertex 1 0 0 vertex 0 1 0 "
                      "endloop endfacet endsolid";
    write_bytes(tmp_path("bom.stl"), bom, strlen(bom));
    ad_triangle one = {{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}};
    load_ok(tmp_path("bom.stl"), &one, 1);
}

static void test_write(void)
{
    ad_triangle c[12];
    cube(1, c);
    ad_mesh m = {c, 12};
    const char *p = tmp_path("written.stl");
    if (!ENSURE_OK(ad_stl_write(p, &m, "unit cube"))) return;
    load_ok(p, c, 12);
    ENSURE(access(tmp_path("written.stl.tmp"), F_OK) != 0);
    unsigned char b[84 + 50 * 12];
    FILE *f = fopen(p, "rb");
    ENSURE(f && fread(b, 1, sizeof b, f) == sizeof b && fgetc(f) == EOF);
    if (f) fclose(f);
    ENSURE(strncmp((const char *)b, "solid", 5) != 0);
    ENSURE(b[80] == 12 && b[81] == 0 && b[82] == 0 && b[83] == 0);
    for (int i = 0; i < 12; i++) { /* each normal of unit length, pointing out of the cube */
        float n[3];
        memcpy(n, b + 84 + 50 * i, sizeof n);
        double len = sqrt((double)n[0] * n[0] + (double)n[1] * n[1] + (double)n[2] * n[2]), out = 0;
        for (int d = 0; d < 3; d++)
            out += n[d] * ((c[i].v[0][d] + c[i].v[1][d] + c[i].v[2][d]) / 3.0 - 0.5);
        ENSURE_NEAR(len, 1.0, 1e-6);
        ENSURE_MSG(out > 0.4, "triangle %d's normal points in (%g)", i + 1, out);
    }
    /* refusals leave the file written before untouched, and no temporary */
    ad_triangle bad[12];
    memcpy(bad, c, sizeof bad);
    bad[6].v[1][2] = NAN;
    ad_mesh mb = {bad, 12}, empty = {NULL, 0};
    ad_status st = ad_stl_write(p, &mb, "x");
    ENSURE(st.code == AD_ERR_INVALID && strstr(st.message, "triangle 7 of 12"));
    st = ad_stl_write(p, &empty, "x");
    ENSURE(st.code == AD_ERR_INVALID && strstr(st.message, "no triangles"));
    load_ok(p, c, 12);
    st = ad_stl_write(tmp_path("no_such_dir/x.stl"), &m, "x");
    ENSURE(st.code == AD_ERR_IO);
    ENSURE(access(tmp_path("no_such_dir"), F_OK) != 0);
}

/* The file is refused with AD_ERR_FORMAT (or code), a message that starts with its path and holds each of the
 * words, and a zeroed mesh. */
static void refused(const char *path, ad_code code, const char *w1, const char *w2)
{
    ad_mesh m = {(ad_triangle *)&m, 99};
    ad_status st = ad_stl_load(path, &m);
    ENSURE_MSG(st.code == code, "%s: code %d, expected %d: %s", path, (int)st.code, (int)code, st.message);
    ENSURE_MSG(strncmp(st.message, path, strlen(path)) == 0, "the message does not start with the path: %s",
               st.message);
    ENSURE_MSG(strstr(st.message, w1) && (!w2 || strstr(st.message, w2)), "%s: message '%s' lacks '%s'%s%s%s", path,
               st.message, w1, w2 ? " or '" : "", w2 ? w2 : "", w2 ? "'" : "");
    ENSURE(m.t == NULL && m.n == 0);
    ENSURE(strcmp(st.field, "path") == 0);
}

static void refused_text(const char *name, const char *text, const char *w1, const char *w2)
{
    const char *p = tmp_path(name);
    write_bytes(p, text, strlen(text));
    refused(p, AD_ERR_FORMAT, w1, w2);
}

#define FACET(a) "facet normal 0 0 1\n outer loop\n" a " endloop\nendfacet\n"
#define VERTS "  vertex 0 0 0\n  vertex 1 0 0\n  vertex 0 1 0\n"

static void test_malformed_binary(void)
{
    ad_triangle c[12];
    cube(1, c);
    unsigned char *b;
    size_t size = binary(c, 12, "truncated", 0, &b);
    write_bytes(tmp_path("truncated.stl"), b, size - 7);
    refused(tmp_path("truncated.stl"), AD_ERR_FORMAT, "truncated", "ends inside triangle 12");
    write_bytes(tmp_path("truncated_solid.stl"), b, 120);
    refused(tmp_path("truncated_solid.stl"), AD_ERR_FORMAT, "truncated", "inside triangle 1");
    write_bytes(tmp_path("header_only.stl"), b, 60);
    refused(tmp_path("header_only.stl"), AD_ERR_FORMAT, "fewer than the 84", NULL);
    free(b);
    size = binary(c, 12, "count too big", 1, &b);
    write_bytes(tmp_path("count_big.stl"), b, size);
    refused(tmp_path("count_big.stl"), AD_ERR_FORMAT, "count of 13 triangles", "the size fits 12 triangles");
    free(b);
    size = binary(c, 12, "solid but the count is too small", -1, &b);
    write_bytes(tmp_path("count_small.stl"), b, size);
    refused(tmp_path("count_small.stl"), AD_ERR_FORMAT, "count is wrong", "fits 12");
    free(b);
    size = binary(c, 12, "nan", 0, &b);
    float nan = NAN, big = 2e9f;
    memcpy(b + 84 + 50 * 6 + 12 + 12 * 1 + 4 * 1, &nan, 4);
    write_bytes(tmp_path("nan_bin.stl"), b, size);
    refused(tmp_path("nan_bin.stl"), AD_ERR_FORMAT, "triangle 7 of 12: vertex 2 is NaN (its y)", NULL);
    memcpy(b + 84 + 50 * 6 + 12 + 12 * 1 + 4 * 1, &big, 4);
    write_bytes(tmp_path("big_bin.stl"), b, size);
    refused(tmp_path("big_bin.stl"), AD_ERR_FORMAT, "triangle 7 of 12: vertex 2's y = 2e+09 is beyond", NULL);
    free(b);
    size = binary(c, 0, "no triangles", 0, &b);
    write_bytes(tmp_path("zero.stl"), b, size);
    refused(tmp_path("zero.stl"), AD_ERR_FORMAT, "no triangles", NULL);
    free(b);
    unsigned char noise[300];
    for (size_t i = 0; i < sizeof noise; i++)
        noise[i] = (unsigned char)(i * 89 + 7);
    write_bytes(tmp_path("noise.stl"), noise, sizeof noise);
    refused(tmp_path("noise.stl"), AD_ERR_FORMAT, "not a valid binary STL file", "nor an ASCII one");
}

static void test_malformed_text(void)
{
    refused_text("vertx.stl", "solid a\n" FACET("  vertex 0 0 0\n  vertx 1 0 0\n  vertex 0 1 0\n") "endsolid a\n",
                 ":5: expected 'vertex', found 'vertx'", NULL);
    refused_text("no_endloop.stl", "solid a\nfacet normal 0 0 1\n outer loop\n" VERTS "endfacet\nendsolid a\n",
                 ":7: expected 'endloop', found 'endfacet'", "facet that began on line 2");
    refused_text("four.stl", "solid a\n" FACET(VERTS "  vertex 1 1 1\n") "endsolid\n",
                 ":7: expected 'endloop', found 'vertex'", "three vertices");
    refused_text("nan.stl",
                 "solid a\n" FACET(VERTS) FACET("  vertex 0 0 0\n  vertex 1 0 0\n  vertex 0 nan 0\n") "endsolid a\n",
                 ":13: triangle 2: vertex 3 is NaN (its y)", NULL);
    refused_text("inf.stl", "solid a\n" FACET("  vertex 0 0 0\n  vertex -INF 0 0\n  vertex 0 1 0\n") "endsolid a\n",
                 ":5: triangle 1: vertex 2 is minus infinite (its x)", NULL);
    refused_text("huge.stl", "solid a\n" FACET("  vertex 0 0 0\n  vertex 1 0 1e39\n  vertex 0 1 0\n") "endsolid a\n",
                 "vertex 2's z = 1e+39 is beyond +-1e+09", NULL);
    refused_text("two_numbers.stl", "solid a\n" FACET("  vertex 0 0 0\n  vertex 1 0\n  vertex 0 1 0\n") "endsolid\n",
                 ":5: 'vertex' has 2 numbers, expected 3", NULL);
    refused_text("word.stl", "solid a\n" FACET("  vertex 0 0 0\n  vertex 1 zero 0\n  vertex 0 1 0\n") "endsolid\n",
                 ":5: expected a number (the y after 'vertex'), found 'zero'", NULL);
    refused_text("no_normal.stl", "solid a\nfacet outer loop\n" VERTS " endloop\nendfacet\nendsolid\n",
                 ":2: expected 'normal', found 'outer'", NULL);
    refused_text("no_endsolid.stl", "solid a\n" FACET(VERTS),
                 "expected 'facet' or 'endsolid', found the end of the file", NULL);
    refused_text("cut.stl", "solid a\n" FACET(VERTS) "facet normal 0 0 1\n outer loop\n  vertex 0 0",
                 ":11: 'vertex' has 2 numbers", "found the end of the file");
    refused_text("no_facets.stl", "solid a\nendsolid a\nsolid b\nendsolid b\n", "no triangles", "2 solids");
    refused_text("garbage.stl", "hello world\nthis is not a mesh\n", ":1: expected 'solid'", "found 'hello'");
    refused_text("after.stl", "solid a\n" FACET(VERTS) "endsolid a\nfacet\n", ":10: expected 'solid' or the end", NULL);
    refused_text("spaces.stl", " \n\t\n", "only white space", NULL);
    const char nul[] = "solid a\n" FACET("  vertex 0 0 0\n  vertex 1\0 0 0\n  vertex 0 1 0\n") "endsolid a\n";
    write_bytes(tmp_path("nul.stl"), nul, sizeof nul - 1);
    refused(tmp_path("nul.stl"), AD_ERR_FORMAT, ":5: a NUL byte at column 11 is not text", "nor a binary one");
}

static void test_not_files(void)
{
    write_bytes(tmp_path("empty.stl"), "", 0);
    refused(tmp_path("empty.stl"), AD_ERR_FORMAT, "empty", NULL);
    refused(dir, AD_ERR_FORMAT, "a directory", NULL);
    if (access("/dev/zero", R_OK) == 0) refused("/dev/zero", AD_ERR_FORMAT, "a character device", NULL);
    const char *fifo = tmp_path("fifo.stl");
    if (mkfifo(fifo, 0600) == 0) refused(fifo, AD_ERR_FORMAT, "a FIFO", NULL);
    refused(tmp_path("missing.stl"), AD_ERR_IO, "cannot open", NULL);
    /* the caps, on sparse files (no disk space): a binary of more triangles than allowed, a file too big */
    unsigned char head[84] = "sparse";
    put32(head + 80, (uint32_t)AD_STL_MAX_TRIANGLES + 1);
    write_bytes(tmp_path("many.stl"), head, sizeof head);
    if (truncate(tmp_path("many.stl"), 84 + 50 * (AD_STL_MAX_TRIANGLES + 1)) == 0)
        refused(tmp_path("many.stl"), AD_ERR_FORMAT, "20000001 triangles, more than the 20000000", NULL);
    if (truncate(tmp_path("many.stl"), AD_STL_MAX_BYTES + 1) == 0)
        refused(tmp_path("many.stl"), AD_ERR_FORMAT, "1073741825 bytes, more than the 1073741824", NULL);
    remove(tmp_path("many.stl"));
    ad_mesh m;
    ENSURE(ad_stl_load(NULL, &m).code == AD_ERR_INVALID);
    ENSURE(ad_stl_load(tmp_path("empty.stl"), NULL).code == AD_ERR_INVALID);
}

/* ---------------------------------------------------------- mesh checks -- */

/* The check's status holds the words (code AD_ERR_INVALID). */
static void check_fails(const ad_mesh *m, int closed, const char *w1, const char *w2)
{
    ad_status st = ad_mesh_check(m, "part.stl", closed);
    ENSURE_MSG(st.code == AD_ERR_INVALID, "code %d: %s", (int)st.code, st.message);
    ENSURE_MSG(strncmp(st.message, "part.stl: ", 10) == 0, "%s", st.message);
    ENSURE_MSG(strstr(st.message, w1) && (!w2 || strstr(st.message, w2)), "message '%s' lacks '%s' or '%s'", st.message,
               w1, w2 ? w2 : "");
}

/* Brute force: every edge against every other, O(n^2). */
static ad_mesh_edges edges_brute(const ad_mesh *m)
{
    ad_mesh_edges e;
    memset(&e, 0, sizeof e);
    size_t ne = 3 * m->n;
#define EA(k) m->t[(k) / 3].v[(k) % 3]
#define EB(k) m->t[(k) / 3].v[((k) % 3 + 1) % 3]
#define EQ(p, q) ((p)[0] == (q)[0] && (p)[1] == (q)[1] && (p)[2] == (q)[2])
    for (size_t k = 0; k < ne; k++) {
        if (EQ(EA(k), EB(k))) continue;
        size_t uses = 1, other = 0, first = 1;
        int same_dir = 0;
        for (size_t l = 0; l < ne; l++) {
            if (l == k || EQ(EA(l), EB(l))) continue;
            int fwd = EQ(EA(k), EA(l)) && EQ(EB(k), EB(l)), back = EQ(EA(k), EB(l)) && EQ(EB(k), EA(l));
            if (!fwd && !back) continue;
            if (l < k) first = 0;
            uses++;
            other = l;
            same_dir = fwd;
        }
        if (!first) continue;
        e.edges++;
        if (uses == 1 && !e.open++) e.open_tri = k / 3, e.open_edge = (int)(k % 3);
        if (uses > 2 && !e.nonmanifold++) e.nm_tri[0] = k / 3, e.nm_uses = uses;
        if (uses == 2 && same_dir && !e.misoriented++) e.mis_tri[0] = k / 3, e.mis_tri[1] = other / 3;
    }
    return e;
}

static void compare_edges(const ad_mesh *m, const char *what)
{
    ad_mesh_edges f, r = edges_brute(m);
    if (!ENSURE_OK(ad_mesh_edges_find(m, &f))) return;
    int same = f.edges == r.edges && f.open == r.open && f.nonmanifold == r.nonmanifold &&
               f.misoriented == r.misoriented &&
               (!r.open || (f.open_tri == r.open_tri && f.open_edge == r.open_edge)) &&
               (!r.nonmanifold || (f.nm_tri[0] == r.nm_tri[0] && f.nm_uses == r.nm_uses)) &&
               (!r.misoriented || (f.mis_tri[0] == r.mis_tri[0] && f.mis_tri[1] == r.mis_tri[1]));
    ENSURE_MSG(same, "%s: edges %zu/%zu open %zu/%zu (tri %zu/%zu) non-manifold %zu/%zu misoriented %zu/%zu", what,
               f.edges, r.edges, f.open, r.open, f.open_tri, r.open_tri, f.nonmanifold, r.nonmanifold, f.misoriented,
               r.misoriented);
}

/* Closed meshes pass, and the world takes them as closed. */
static void test_checks(void)
{
    ad_triangle c[14], t[4];
    cube(1, c);
    tetra(t);
    ad_mesh mc = {c, 12}, mt = {t, 4};
    ENSURE_OK(ad_mesh_check(&mc, "cube.stl", 1));
    ENSURE_OK(ad_mesh_check(&mt, "tetra.stl", 1));
    compare_edges(&mc, "cube");
    ad_mesh_edges e;
    ENSURE_OK(ad_mesh_edges_find(&mc, &e));
    ENSURE(e.edges == 18 && e.open == 0 && e.nonmanifold == 0 && e.misoriented == 0);
    /* the world takes it as one closed surface */
    ad_tri made[12];
    ENSURE_OK(ad_triangles_make(c, 12, made));
    for (int i = 0; i < 12; i++)
        ENSURE(made[i].flags & AD_TRI_CLOSED);
    /* two cubes apart: two closed surfaces */
    ad_triangle two[24];
    memcpy(two, c, 12 * sizeof *c);
    memcpy(two + 12, c, 12 * sizeof *c);
    for (int i = 12; i < 24; i++)
        for (int j = 0; j < 3; j++)
            two[i].v[j][0] += 3.0f;
    ad_mesh m2 = {two, 24};
    ENSURE_OK(ad_mesh_check(&m2, "two.stl", 1));
    ENSURE_NEAR(ad_mesh_volume(&m2), 2.0, 1e-12);
}

/* Open, flipped, degenerate, NaN and non-manifold meshes, refused by triangle number. */
static void test_check_faults(void)
{
    ad_triangle c[14];
    cube(1, c);
    ad_mesh mc = {c, 12};
    ad_mesh_edges e;
    ad_tri made[12];

    /* one triangle removed: open edges, the first by the lowest triangle that borders the hole */
    ad_triangle o[12];
    memcpy(o, c, sizeof o);
    memmove(o + 4, o + 5, 7 * sizeof *o);
    ad_mesh mo = {o, 11};
    ENSURE_OK(ad_mesh_check(&mo, "part.stl", 0));
    ad_mesh_edges r = edges_brute(&mo);
    char want[64];
    snprintf(want, sizeof want, "triangle %zu's edge from", r.open_tri + 1);
    check_fails(&mo, 1, "not closed: 3 edges are used by one triangle only", want);
    compare_edges(&mo, "open cube");

    /* triangle 6 flipped: it runs each of its edges as its neighbours do */
    ad_triangle fl[12];
    memcpy(fl, c, sizeof fl);
    memcpy(fl[5].v[1], c[5].v[2], sizeof fl[5].v[1]);
    memcpy(fl[5].v[2], c[5].v[1], sizeof fl[5].v[2]);
    ad_mesh mf = {fl, 12};
    check_fails(&mf, 1, "oriented inconsistently", "(one of them is flipped; 3 such edges in all)");
    ENSURE_OK(ad_mesh_edges_find(&mf, &e));
    ENSURE(e.misoriented == 3 && (e.mis_tri[0] == 5 || e.mis_tri[1] == 5));
    ENSURE_OK(ad_mesh_check(&mf, "part.stl", 0)); /* orientation is a closed surface's matter */
    compare_edges(&mf, "flipped");

    /* degenerate triangles, by number and how */
    ad_triangle d[12];
    memcpy(d, c, sizeof d);
    memcpy(d[3].v[2], d[3].v[0], sizeof d[3].v[2]);
    ad_mesh md = {d, 12};
    check_fails(&md, 0, "triangle 4 of 12 is degenerate: its vertices 1 and 3 coincide at (", NULL);
    ENSURE(ad_triangles_make(d, 12, made).code == AD_ERR_INVALID); /* as the world refuses it */
    for (int dd = 0; dd < 3; dd++)
        d[3].v[2][dd] = 0.5f * (d[3].v[0][dd] + d[3].v[1][dd]);
    check_fails(&md, 0, "triangle 4 of 12 is degenerate", "collinear");
    ENSURE(ad_triangles_make(d, 12, made).code == AD_ERR_INVALID);
    memcpy(d[3].v[1], d[3].v[0], sizeof d[3].v[1]);
    memcpy(d[3].v[2], d[3].v[0], sizeof d[3].v[2]);
    check_fails(&md, 0, "triangle 4 of 12 is degenerate: its three vertices are one point", NULL);
    memcpy(d, c, sizeof d);
    d[8].v[1][0] = NAN;
    check_fails(&md, 0, "triangle 9 of 12: vertex 2 is NaN (its x)", NULL);

    /* a fin on an edge of the cube: three triangles share that edge */
    memcpy(c + 12, c + 0, sizeof *c);
    c[12].v[2][0] += 0.5f;
    c[12].v[2][1] -= 0.7f;
    mc.n = 13;
    check_fails(&mc, 0, "is shared by 3 triangles", "1 such edge in all");
    compare_edges(&mc, "fin");
    mc.n = 12;

    ad_mesh none = {NULL, 0};
    check_fails(&none, 0, "no triangles", NULL);
}

/* Random meshes on a 3 x 3 x 3 lattice (many shared, repeated and flipped edges; some zeros as -0): the edges
 * found against brute force. */
static void test_edges_random(void)
{
    uint64_t s = 12345;
    ad_triangle t[40];
    for (int trial = 0; trial < 400; trial++) {
        size_t n = 1 + (size_t)(trial % 40);
        for (size_t i = 0; i < n; i++)
            for (int j = 0; j < 3; j++)
                for (int d = 0; d < 3; d++) {
                    s = s * 6364136223846793005u + 1442695040888963407u;
                    int q = (int)(s >> 33) % 3;
                    t[i].v[j][d] = q == 0 && (s >> 20 & 1) ? -0.0f : (float)q;
                }
        ad_mesh m = {t, n};
        char what[32];
        snprintf(what, sizeof what, "random mesh %d", trial);
        compare_edges(&m, what);
    }
}

static void test_measures(void)
{
    ad_triangle c[12], t[4];
    cube(1, c);
    tetra(t);
    ad_mesh mc = {c, 12}, mt = {t, 4};
    ENSURE_NEAR(ad_mesh_volume(&mc), 1.0, 1e-12);
    ENSURE_NEAR(ad_mesh_area(&mc), 6.0, 1e-12);
    double lo[3], hi[3];
    ad_mesh_bounds(&mc, lo, hi);
    for (int d = 0; d < 3; d++) {
        ENSURE(lo[d] == 0.0);
        ENSURE(hi[d] == 1.0);
    }
    /* the tetrahedron: |det(b - a, c - a, d - a)| / 6 */
    double p[4][3] = {{0.1f, -0.2f, 1.0f / 3.0f}, {1.7f, 0.05f, 0.3f}, {0.2f, 1.3f, 0.4f}, {0.3f, 0.25f, 2.1f}};
    double u[3], v[3], w[3];
    for (int d = 0; d < 3; d++)
        u[d] = p[1][d] - p[0][d], v[d] = p[2][d] - p[0][d], w[d] = p[3][d] - p[0][d];
    double det =
        u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0]) + u[2] * (v[0] * w[1] - v[1] * w[0]);
    ENSURE_REL(ad_mesh_volume(&mt), fabs(det) / 6.0, 1e-12);
    for (int i = 0; i < 12; i++) { /* all faces turned in: the volume's sign turns */
        float tmp[3];
        memcpy(tmp, c[i].v[1], sizeof tmp);
        memcpy(c[i].v[1], c[i].v[2], sizeof tmp);
        memcpy(c[i].v[2], tmp, sizeof tmp);
    }
    ENSURE_NEAR(ad_mesh_volume(&mc), -1.0, 1e-12);
    ad_mesh none = {NULL, 0};
    ENSURE(ad_mesh_volume(&none) == 0.0 && ad_mesh_area(&none) == 0.0);
}

/* A fine cube (150 x 150 squares a face, 270 000 triangles) through the writer, the reader and the check:
 * the edges are matched in expected linear time, not O(n^2). */
static void test_large(void)
{
    int n = 150;
    size_t nt = 12 * (size_t)n * (size_t)n;
    ad_triangle *t = malloc(nt * sizeof *t);
    if (!t) exit(1);
    ENSURE(cube(n, t) == nt);
    ad_mesh m = {t, nt}, back;
    clock_t c0 = clock();
    ENSURE_OK(ad_stl_write(tmp_path("fine.stl"), &m, "fine cube"));
    if (ENSURE_OK(ad_stl_load(tmp_path("fine.stl"), &back))) {
        ENSURE(back.n == nt && same_tris(back.t, t, nt));
        ad_mesh_free(&back);
    }
    clock_t c1 = clock();
    ENSURE_OK(ad_mesh_check(&m, "fine.stl", 1));
    clock_t c2 = clock();
    ad_mesh_edges e;
    ENSURE_OK(ad_mesh_edges_find(&m, &e));
    ENSURE(e.edges == nt * 3 / 2 && e.open == 0);
    ENSURE_NEAR(ad_mesh_volume(&m), 1.0, 1e-9);
    ENSURE_NEAR(ad_mesh_area(&m), 6.0, 1e-9);
    printf("fine cube, %zu triangles: write + read %.3f s, check %.3f s\n", nt, (double)(c1 - c0) / CLOCKS_PER_SEC,
           (double)(c2 - c1) / CLOCKS_PER_SEC);
    free(t);
}

int main(void)
{
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/aerodem_stl_XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "cannot make a temporary folder: %s\n", strerror(errno));
        return 1;
    }
    test_read();
    test_write();
    test_malformed_binary();
    test_malformed_text();
    test_not_files();
    test_checks();
    test_check_faults();
    test_edges_random();
    test_measures();
    test_large();
    if (getenv("STL_KEEP")) return tu_finish("test_stl");
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return tu_finish("test_stl");
}
