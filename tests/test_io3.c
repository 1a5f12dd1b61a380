/* The io layer's 3D outputs: cell fields as .vti and spheres as .vtp read back by VTK (vtk_readback.py; that part
 * skipped without it), slices of a 3D field and a body's section in picture coordinates, a slice as a PNG, the 2D
 * files unchanged byte for byte, bad arguments refused by name. */
#include <dirent.h>
#include <errno.h>
#include <png.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "core/body3.h"
#include "core/mesh.h"
#include "core/mesh_check.h"
#include "io/image.h"
#include "io/slice.h"
#include "io/vtk.h"
#include "test_util.h"
#include "test_files.h"




/* The call failed with AD_ERR_INVALID naming `field`. */
#define REFUSED(expr, name)                                                                                        \
    do {                                                                                                           \
        ad_status s_ = (expr);                                                                                     \
        ENSURE_MSG(s_.code == AD_ERR_INVALID && strcmp(s_.field, name) == 0,                                     \
                   "%s: code %d, field '%s' (expected '%s'): %s", #expr, (int)s_.code, s_.field, name, s_.message); \
    } while (0)

/* 0 passed, 1 failed, 77 skipped (no /usr/bin/python3 or no vtk in it) */
static int readback(const char *args)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s/tests/vtk_readback.py' %s", AD_SOURCE_DIR, args);
    fflush(stdout); /* the script's lines after this test's */
    int rc = system(cmd);
    if (rc == -1 || !WIFEXITED(rc) || WEXITSTATUS(rc) == 127) return 77;
    return WEXITSTATUS(rc);
}

static int vtk_skipped;

static void expect_readback(const char *what, const char *args)
{
    int rc = readback(args);
    if (rc == 77) vtk_skipped = 1;
    else ENSURE_MSG(rc == 0, "%s read back: exit %d", what, rc);
}

/* ------------------------------------------------------------- the grid -- */

/* 8 x 6 x 4 cells of 0.5 x 0.5 x 0.75 m from (1, 2, 3) m: x 1..5, y 2..5, z 3..6 */
enum { NX = 8, NY = 6, NZ = 4, NC = NX * NY * NZ };
static const int N3[3] = {NX, NY, NZ};
static const double O3[3] = {1, 2, 3}, H3[3] = {0.5, 0.5, 0.75};

static size_t cell(int i, int j, int k)
{
    return ((size_t)k * NY + (size_t)j) * NX + (size_t)i;
}

static double centre(int axis, int i)
{
    return O3[axis] + (i + 0.5) * H3[axis];
}

static float f_scalar[NC], f_vector[3 * NC], f_layer[NC];

/* f = x + 10 y + 100 z at the cell centres; the vector (i + 0.25, -j, 0.5 k); the layer k */
static void fill_fields(void)
{
    for (int k = 0; k < NZ; k++)
        for (int j = 0; j < NY; j++)
            for (int i = 0; i < NX; i++) {
                size_t c = cell(i, j, k);
                f_scalar[c] = (float)(centre(0, i) + 10 * centre(1, j) + 100 * centre(2, k));
                f_vector[3 * c] = (float)i + 0.25f;
                f_vector[3 * c + 1] = -(float)j;
                f_vector[3 * c + 2] = 0.5f * (float)k;
                f_layer[c] = (float)k;
            }
}

/* ----------------------------------------------------------------- .vti -- */

static void test_vti3(void)
{
    ad_vti3_field f[3] = {{"f", 1, f_scalar}, {"velocity", 3, f_vector}, {"layer", 1, f_layer}};
    const char *path = out("field3.vti");
    ENSURE_OK(ad_write_vti3(path, NX, NY, NZ, O3[0], O3[1], O3[2], H3[0], H3[1], H3[2], f, 3));
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    ENSURE(exists(path) && !exists(tmp));

    /* the corners, whose order shows x fastest, then y, then z, and one inside */
    const int at[6][3] = {{0, 0, 0}, {NX - 1, 0, 0}, {0, NY - 1, 0}, {0, 0, NZ - 1}, {NX - 1, NY - 1, NZ - 1},
                          {3, 2, 1}};
    char args[4096];
    int len = snprintf(args, sizeof args, "--image3 '%s' %d %d %d %.17g %.17g %.17g %.17g %.17g %.17g "
                                          "f:1,velocity:3,layer:1", path, NX, NY, NZ, O3[0], O3[1], O3[2], H3[0],
                       H3[1], H3[2]);
    for (int q = 0; q < 6; q++) {
        size_t c = cell(at[q][0], at[q][1], at[q][2]);
        len += snprintf(args + len, sizeof args - (size_t)len, " %d,%d,%d,%.9g,%.9g,%.9g,%.9g,%.9g", at[q][0],
                        at[q][1], at[q][2], f_scalar[c], f_vector[3 * c], f_vector[3 * c + 1], f_vector[3 * c + 2],
                        f_layer[c]);
    }
    expect_readback("field3.vti", args);

    const char *bad = out("bad3.vti");
    REFUSED(ad_write_vti3(bad, 0, NY, NZ, 0, 0, 0, 1, 1, 1, f, 3), "nx");
    REFUSED(ad_write_vti3(bad, NX, -1, NZ, 0, 0, 0, 1, 1, 1, f, 3), "ny");
    REFUSED(ad_write_vti3(bad, NX, NY, 0, 0, 0, 0, 1, 1, 1, f, 3), "nz");
    REFUSED(ad_write_vti3(bad, 1 << 20, 1 << 20, 1 << 20, 0, 0, 0, 1, 1, 1, f, 3), "nz"); /* 2^60 cells */
    REFUSED(ad_write_vti3(bad, NX, NY, NZ, NAN, 0, 0, 1, 1, 1, f, 3), "x0");
    REFUSED(ad_write_vti3(bad, NX, NY, NZ, 0, 0, INFINITY, 1, 1, 1, f, 3), "z0");
    REFUSED(ad_write_vti3(bad, NX, NY, NZ, 0, 0, 0, 1, 0, 1, f, 3), "dy");
    REFUSED(ad_write_vti3(bad, NX, NY, NZ, 0, 0, 0, 1, 1, NAN, f, 3), "dz");
    REFUSED(ad_write_vti3(bad, NX, NY, NZ, 0, 0, 1e308, 1, 1, 1e308, f, 3), "dz"); /* its far end overflows */
    REFUSED(ad_write_vti3(bad, NX, NY, NZ, 0, 0, 0, 1, 1, 1, NULL, 1), "fields");
    REFUSED(ad_write_vti3(bad, NX, NY, NZ, 0, 0, 0, 1, 1, 1, f, -1), "fields");
    ad_vti3_field two = {"v", 2, f_vector}, none = {"v", 1, NULL}, nameless = {NULL, 1, f_scalar};
    ad_vti3_field twice[2] = {{"v", 1, f_scalar}, {"v", 3, f_vector}};
    REFUSED(ad_write_vti3(bad, NX, NY, NZ, 0, 0, 0, 1, 1, 1, &two, 1), "fields");
    REFUSED(ad_write_vti3(bad, NX, NY, NZ, 0, 0, 0, 1, 1, 1, &none, 1), "fields");
    REFUSED(ad_write_vti3(bad, NX, NY, NZ, 0, 0, 0, 1, 1, 1, &nameless, 1), "fields");
    REFUSED(ad_write_vti3(bad, NX, NY, NZ, 0, 0, 0, 1, 1, 1, twice, 2), "fields");
    ENSURE(!exists(bad));
}

/* ------------------------------------------------------------ particles -- */

static void test_particles3(void)
{
    enum { N = 50 };
    ad_particle3 p[N];
    uint32_t id[N];
    float pres[N];
    for (int i = 0; i < N; i++) {
        p[i] = (ad_particle3){0.5f * (float)i - 3, 0.25f * (float)i, 7 - 0.125f * (float)i,
                              1 + (float)i, -(float)i, 0.5f * (float)i};
        id[i] = (uint32_t)(3 * i + 7);
        pres[i] = 2.0f * (float)i + 0.5f;
    }
    const char *full = out("particles3.vtp"), *bare = out("particles3_bare.vtp"), *empty = out("particles3_empty.vtp");
    ENSURE_OK(ad_write_vtp_particles3(full, N, p, id, pres));
    ENSURE_OK(ad_write_vtp_particles3(bare, N, p, NULL, NULL));
    ENSURE_OK(ad_write_vtp_particles3(empty, 0, NULL, NULL, NULL));

    char args[4096];
    int len = snprintf(args, sizeof args, "--particles3 '%s' %d id,velocity,pressure", full, N);
    const int at[4] = {0, 1, 17, N - 1};
    for (int q = 0; q < 4; q++) {
        const ad_particle3 *s = &p[at[q]];
        len += snprintf(args + len, sizeof args - (size_t)len, " %d,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%u,%.9g", at[q],
                        s->x, s->y, s->z, s->vx, s->vy, s->vz, id[at[q]], pres[at[q]]);
    }
    expect_readback("particles3.vtp", args);
    snprintf(args, sizeof args, "--particles3 '%s' %d velocity %d,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g", bare, N, N - 1,
             p[N - 1].x, p[N - 1].y, p[N - 1].z, p[N - 1].vx, p[N - 1].vy, p[N - 1].vz);
    expect_readback("particles3_bare.vtp", args);
    snprintf(args, sizeof args, "--particles3 '%s' 0 velocity", empty);
    expect_readback("particles3_empty.vtp", args);

    REFUSED(ad_write_vtp_particles3(out("bad3.vtp"), 5, NULL, NULL, NULL), "p");
    REFUSED(ad_write_vtp_particles3(out("bad3.vtp"), SIZE_MAX / 8, p, NULL, NULL), "n"); /* byte counts overflow */
    REFUSED(ad_write_vtp_particles3("", 1, p, NULL, NULL), "path");
    ENSURE(!exists(out("bad3.vtp")));
}

/* ------------------------------------------------- the 2D files unchanged -- */

/* FNV-1a of a file's bytes */
static uint64_t file_hash(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint64_t h = 1469598103934665603ull;
    for (int c; f && (c = fgetc(f)) != EOF;) h = (h ^ (uint64_t)c) * 1099511628211ull;
    if (f) fclose(f);
    return h;
}

/* The 2D writers share their code with the 3D ones: their files must stay as they were, byte for byte (the
 * hashes of the files written before the 3D writers came). */
static void test_2d_unchanged(void)
{
    enum { N = 16, MX = 7, MY = 5 };
    ad_particle p[N];
    uint32_t id[N];
    float pres[N], val[MX * MY], vel[2 * MX * MY];
    for (int i = 0; i < N; i++) {
        p[i] = (ad_particle){(float)i * 0.75f, 0.5f * (float)i - 1, 1.0f + (float)i, -(float)i};
        id[i] = (uint32_t)(3 * i + 7);
        pres[i] = 2.0f * (float)i;
    }
    for (int c = 0; c < MX * MY; c++) {
        val[c] = (float)(10 * (c / MX) + c % MX) + 0.125f;
        vel[2 * c] = (float)(c % MX) + 0.25f;
        vel[2 * c + 1] = -(float)(c / MX);
    }
    ad_vti_field f[2] = {{"value", 1, val}, {"velocity", 2, vel}};
    ENSURE_OK(ad_write_vtp_particles(out("particles2.vtp"), N, p, id, pres));
    ENSURE_OK(ad_write_vtp_particles(out("particles2_bare.vtp"), N, p, NULL, NULL));
    ENSURE_OK(ad_write_vti(out("field2.vti"), MX, MY, -1.0, 2.0, 0.5, 0.25, f, 2));
    const char *names[3] = {"particles2.vtp", "particles2_bare.vtp", "field2.vti"};
    const uint64_t want[3] = {0x23f8026ba4401cf6ull, 0xc61a6e3da930e1a1ull, 0x904c0506a26c52c0ull};
    for (int k = 0; k < 3; k++) {
        uint64_t h = file_hash(out(names[k]));
        ENSURE_MSG(h == want[k], "%s: hash 0x%016llx, expected 0x%016llx", names[k], (unsigned long long)h,
                   (unsigned long long)want[k]);
    }
}

/* ---------------------------------------------------------------- slices -- */

/* The value of picture cell (h, v) of the slice normal to axis through layer L, mapped by hand as slice.h
 * documents it: normal z -> (x, y), normal y -> (x, z), normal x -> (z, y). */
static size_t source_cell(int axis, int layer, int h, int v)
{
    switch (axis) {
    case 2: return cell(h, v, layer);
    case 1: return cell(h, layer, v);
    default: return cell(layer, v, h);
    }
}

static void test_slice_values(void)
{
    const double where[5] = {0, 0.3, 0.5, 0.99, 1};
    const int layer[3][5] = {{0, 2, 4, 7, 7}, {0, 1, 3, 5, 5}, {0, 1, 2, 3, 3}}; /* floor(where n), 1 -> n - 1 */
    const int side[3][2] = {{NZ, NY}, {NX, NZ}, {NX, NY}};
    static float pic[NX * NY * NZ];
    for (int axis = 0; axis < 3; axis++)
        for (int q = 0; q < 5; q++) {
            int w = -1, h = -1, L = layer[axis][q];
            if (!ENSURE_OK(ad_field_slice(f_scalar, 1, 0, NX, NY, NZ, axis, where[q], pic, &w, &h))) continue;
            ENSURE_MSG(w == side[axis][0] && h == side[axis][1], "axis %d: %d x %d", axis, w, h);
            int bad = 0;
            for (int v = 0; v < h; v++)
                for (int u = 0; u < w; u++) bad += pic[v * w + u] != f_scalar[source_cell(axis, L, u, v)];
            ENSURE_MSG(bad == 0, "axis %d at %g: %d cells differ from their source", axis, where[q], bad);
            /* the corners: bottom-left is the lowest of both picture axes, right is +horizontal, up +vertical */
            size_t bl = axis == 0 ? cell(L, 0, 0) : axis == 1 ? cell(0, L, 0) : cell(0, 0, L);
            size_t br = axis == 0 ? cell(L, 0, NZ - 1) : axis == 1 ? cell(NX - 1, L, 0) : cell(NX - 1, 0, L);
            size_t tl = axis == 0 ? cell(L, NY - 1, 0) : axis == 1 ? cell(0, L, NZ - 1) : cell(0, NY - 1, L);
            ENSURE(pic[0] == f_scalar[bl] && pic[w - 1] == f_scalar[br] && pic[(h - 1) * w] == f_scalar[tl]);
            /* one component of a vector field */
            if (!ENSURE_OK(ad_field_slice(f_vector, 3, 2, NX, NY, NZ, axis, where[q], pic, &w, &h))) continue;
            bad = 0;
            for (int v = 0; v < h; v++)
                for (int u = 0; u < w; u++) bad += pic[v * w + u] != f_vector[3 * source_cell(axis, L, u, v) + 2];
            ENSURE_MSG(bad == 0, "axis %d at %g: %d vector cells differ", axis, where[q], bad);
        }
    int w = 0, h = 0;
    ENSURE_OK(ad_field_slice(f_scalar, 1, 0, NX, NY, NZ, 0, 0.5, NULL, &w, &h)); /* the sides only */
    ENSURE(w == NZ && h == NY);
}

static void test_slice_frame(void)
{
    /* horizontal x vertical points at the viewer: +z, -y (seen from below), -x (seen from upstream) */
    const int want_h[3] = {2, 0, 0}, want_v[3] = {1, 2, 1}, towards_viewer[3][3] = {{-1, 0, 0}, {0, -1, 0}, {0, 0, 1}};
    for (int axis = 0; axis < 3; axis++) {
        ad_slice_frame fr;
        if (!ENSURE_OK(ad_field_slice_frame(NX, NY, NZ, O3[0], O3[1], O3[2], H3[0], H3[1], H3[2], axis, 0.5, &fr)))
            continue;
        int ha = fr.h_axis, va = fr.v_axis;
        ENSURE(fr.axis == axis && ha == want_h[axis] && va == want_v[axis]);
        int eh[3] = {0}, ev[3] = {0};
        eh[ha] = ev[va] = 1;
        for (int d = 0; d < 3; d++)
            ENSURE(eh[(d + 1) % 3] * ev[(d + 2) % 3] - eh[(d + 2) % 3] * ev[(d + 1) % 3] == towards_viewer[axis][d]);
        ENSURE(fr.layer == N3[axis] / 2 && fr.coordinate == centre(axis, N3[axis] / 2));
        ENSURE(fr.x0 == O3[ha] && fr.x1 == O3[ha] + N3[ha] * H3[ha]);
        ENSURE(fr.y0 == O3[va] && fr.y1 == O3[va] + N3[va] * H3[va]);
        ENSURE(fr.x_name[0] == "xyz"[ha] && fr.y_name[0] == "xyz"[va] && !fr.x_name[1] && !fr.y_name[1]);
    }
    int h = -2, v = -2;
    ad_slice_axes(3, &h, &v);
    ENSURE(h == -1 && v == -1);
}

static void test_slice_refusals(void)
{
    float pic[NC];
    int w, h;
    REFUSED(ad_field_slice(NULL, 1, 0, NX, NY, NZ, 2, 0.5, pic, &w, &h), "data");
    REFUSED(ad_field_slice(f_scalar, 0, 0, NX, NY, NZ, 2, 0.5, pic, &w, &h), "components");
    REFUSED(ad_field_slice(f_vector, 3, 3, NX, NY, NZ, 2, 0.5, pic, &w, &h), "component");
    REFUSED(ad_field_slice(f_vector, 3, -1, NX, NY, NZ, 2, 0.5, pic, &w, &h), "component");
    REFUSED(ad_field_slice(f_scalar, 1, 0, 0, NY, NZ, 2, 0.5, pic, &w, &h), "nx");
    REFUSED(ad_field_slice(f_scalar, 1, 0, NX, NY, -4, 2, 0.5, pic, &w, &h), "nz");
    REFUSED(ad_field_slice(f_scalar, 16, 0, 1 << 20, 1 << 20, 1 << 20, 2, 0.5, pic, &w, &h), "nz"); /* 2^66 bytes */
    REFUSED(ad_field_slice(f_scalar, 1, 0, NX, NY, NZ, 3, 0.5, pic, &w, &h), "axis");
    REFUSED(ad_field_slice(f_scalar, 1, 0, NX, NY, NZ, -1, 0.5, pic, &w, &h), "axis");
    REFUSED(ad_field_slice(f_scalar, 1, 0, NX, NY, NZ, 2, -0.1, pic, &w, &h), "where_fraction");
    REFUSED(ad_field_slice(f_scalar, 1, 0, NX, NY, NZ, 2, 1.5, pic, &w, &h), "where_fraction");
    REFUSED(ad_field_slice(f_scalar, 1, 0, NX, NY, NZ, 2, NAN, pic, &w, &h), "where_fraction");
    REFUSED(ad_field_slice(f_scalar, 1, 0, NX, NY, NZ, 2, 0.5, pic, NULL, &h), "out_nx");
    ad_slice_frame fr;
    REFUSED(ad_field_slice_frame(NX, NY, NZ, 0, 0, 0, 1, 1, 1, 1, 0.5, NULL), "out");
    REFUSED(ad_field_slice_frame(NX, 0, NZ, 0, 0, 0, 1, 1, 1, 1, 0.5, &fr), "ny");
    REFUSED(ad_field_slice_frame(NX, NY, NZ, 0, 0, NAN, 1, 1, 1, 1, 0.5, &fr), "z0");
    REFUSED(ad_field_slice_frame(NX, NY, NZ, 0, 0, 0, -1, 1, 1, 1, 0.5, &fr), "dx");
    REFUSED(ad_field_slice_frame(NX, NY, NZ, 0, 0, 0, 1, 1, 1, 5, 0.5, &fr), "axis");
    REFUSED(ad_field_slice_frame(NX, NY, NZ, 0, 0, 0, 1, 1, 1, 1, 2, &fr), "where_fraction");
}

/* -------------------------------------------------------- a body's section -- */

/* The cube [lo, lo + 1]^3: 12 triangles wound counter-clockwise seen from outside. */
static ad_mesh cube_at(const float lo[3])
{
    /* corner c has x = lo + (c & 1), y = lo + (c >> 1 & 1), z = lo + (c >> 2 & 1) */
    static const int face[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
    ad_mesh m = {malloc(12 * sizeof(ad_triangle)), 12};
    for (int f = 0; m.t && f < 6; f++)
        for (int half = 0; half < 2; half++) {
            const int corner[3] = {face[f][0], face[f][1 + half], face[f][2 + half]};
            for (int j = 0; j < 3; j++)
                for (int d = 0; d < 3; d++) m.t[2 * f + half].v[j][d] = lo[d] + (float)(corner[j] >> d & 1);
        }
    return m;
}

/* A section's length, its signed area (positive counter-clockwise) and whether it is closed: every segment's
 * end is exactly the start of one segment. */
static int section_closed(const float *s, size_t n, double *length, double *area)
{
    int closed = 1;
    *length = *area = 0;
    for (size_t i = 0; i < n; i++) {
        const float *a = s + 4 * i;
        *length += hypot((double)a[2] - a[0], (double)a[3] - a[1]);
        *area += 0.5 * ((double)a[0] * a[3] - (double)a[2] * a[1]);
        int next = 0;
        for (size_t j = 0; j < n; j++) next += s[4 * j] == a[2] && s[4 * j + 1] == a[3];
        closed &= next == 1;
    }
    return closed && n > 0;
}

static void test_cube_section(void)
{
    const float lo[3] = {2, 3, 4}; /* apart on every axis, so a swapped pair of picture axes shows */
    ad_mesh m = cube_at(lo);
    REQUIRE_OK(m.t ? ad_ok() : ad_fail(AD_ERR_NO_MEMORY, "mesh", "no memory"));
    ENSURE_NEAR(ad_mesh_volume(&m), 1.0, 1e-12); /* closed and outward */
    for (int axis = 0; axis < 3; axis++) {
        int ha, va;
        ad_slice_axes(axis, &ha, &va);
        const double cuts[2] = {lo[axis] + 0.5, lo[axis] + 1.0}; /* mid-height, and the top face's plane */
        for (int q = 0; q < 2; q++) {
            float *s = NULL;
            size_t n = 0;
            if (!ENSURE_OK(ad_mesh_slice_segments(&m, axis, cuts[q], &s, &n))) continue;
            double len, area;
            ENSURE_MSG(section_closed(s, n, &len, &area), "axis %d at %g: %zu segments not closed", axis, cuts[q], n);
            /* mid-height: both triangles of each side face; the top: the one with an edge on it (the other
             * touches it in a point, left out) */
            ENSURE_MSG(n == (q ? 4u : 8u), "axis %d at %g: %zu segments", axis, cuts[q], n);
            ENSURE_NEAR(len, 4.0, 1e-6);
            ENSURE_NEAR(area, 1.0, 1e-6); /* counter-clockwise around the inside */
            int on_square = 1, collinear = 1;
            for (size_t k = 0; k < 2 * n; k++) {
                float u = s[2 * k], v = s[2 * k + 1];
                int on_h = u == lo[ha] || u == lo[ha] + 1, on_v = v == lo[va] || v == lo[va] + 1;
                on_square &= (on_h && v >= lo[va] && v <= lo[va] + 1) || (on_v && u >= lo[ha] && u <= lo[ha] + 1);
            }
            for (size_t k = 0; k < n; k++) collinear &= s[4 * k] == s[4 * k + 2] || s[4 * k + 1] == s[4 * k + 3];
            ENSURE_MSG(on_square && collinear, "axis %d at %g: the section is not the square's sides", axis, cuts[q]);
            free(s);
        }
        /* the bottom face's plane: its vertices count as above it, so nothing is cut; nor outside the cube */
        float *s = (float *)&m;
        size_t n = 99;
        ENSURE_OK(ad_mesh_slice_segments(&m, axis, lo[axis], &s, &n));
        ENSURE(n == 0 && s == NULL);
        ENSURE_OK(ad_mesh_slice_segments(&m, axis, lo[axis] - 1, &s, &n));
        ENSURE(n == 0 && s == NULL);
    }
    float *s;
    size_t n;
    REFUSED(ad_mesh_slice_segments(NULL, 2, 0.5, &s, &n), "mesh");
    REFUSED(ad_mesh_slice_segments(&m, 3, 0.5, &s, &n), "axis");
    REFUSED(ad_mesh_slice_segments(&m, 2, NAN, &s, &n), "coordinate");
    REFUSED(ad_mesh_slice_segments(&m, 2, 0.5, NULL, &n), "x0y0x1y1");
    REFUSED(ad_mesh_slice_segments(&m, 2, 0.5, &s, NULL), "nseg");
    m.t[7].v[2][1] = NAN;
    REFUSED(ad_mesh_slice_segments(&m, 2, 0.5, &s, &n), "mesh");
    ad_mesh_free(&m);
}

/* A curved body: an icosphere's sections are closed, counter-clockwise and inside the sphere's circle. */
static void test_sphere_section(void)
{
    ad_mesh m;
    REQUIRE_OK(ad_mesh_sphere(1, 3, &m));
    const double cuts[4] = {0.3, -0.55, 0.0, 0.9};
    for (int q = 0; q < 4; q++)
        for (int axis = 0; axis < 3; axis++) {
            float *s;
            size_t n;
            if (!ENSURE_OK(ad_mesh_slice_segments(&m, axis, cuts[q], &s, &n))) continue;
            double len, area, r = sqrt(1 - cuts[q] * cuts[q]), circle = 2 * TU_PI * r;
            ENSURE_MSG(section_closed(s, n, &len, &area), "axis %d at %g: %zu segments not closed", axis, cuts[q], n);
            ENSURE_MSG(len <= circle && len > 0.97 * circle, "axis %d at %g: length %g of %g", axis, cuts[q], len,
                       circle);
            ENSURE_MSG(area > 0 && area <= TU_PI * r * r, "axis %d at %g: area %g", axis, cuts[q], area);
            free(s);
        }
    ad_mesh_free(&m);
}

/* ------------------------------------------------------------ a slice's PNG -- */



/* The pixel of the plot area over the point (u, v) [m] of a picture of the frame's extent. */
static const uint8_t *pixel_at(const picture *pic, const ad_image_layout *l, const ad_slice_frame *fr, double u,
                               double v, int dx, int dy)
{
    static const uint8_t none[3] = {255, 0, 255};
    int x = l->plot_x + (int)floor((u - fr->x0) / (fr->x1 - fr->x0) * l->plot_w) + dx;
    int y = l->plot_y + (int)floor((fr->y1 - v) / (fr->y1 - fr->y0) * l->plot_h) + dy;
    if (x < 0 || y < 0 || x >= pic->w || y >= pic->h) return none;
    return pic->px + ((size_t)y * (size_t)pic->w + (size_t)x) * 3;
}


/* A dark pixel within 2 px of the point. */
static int ink_near(const picture *pic, const ad_image_layout *l, const ad_slice_frame *fr, double u, double v)
{
    for (int dy = -2; dy <= 2; dy++)
        for (int dx = -2; dx <= 2; dx++)
            if (dark(pixel_at(pic, l, fr, u, v, dx, dy))) return 1;
    return 0;
}

#define SAME_RGB(a, b) ((a)[0] == (b)[0] && (a)[1] == (b)[1] && (a)[2] == (b)[2])

/* The slice normal to y through the cube's section (x 2..3, z 4..5, at y = 3.75 inside the cube's 3..4): the
 * picture's size from the layout, cells in the colours of their values, the section drawn where it lies. */
static void test_slice_png(void)
{
    enum { WIDTH = 400 };
    static float pic_v[NC];
    ad_slice_frame fr;
    int w, h;
    REQUIRE_OK(ad_field_slice_frame(NX, NY, NZ, O3[0], O3[1], O3[2], H3[0], H3[1], H3[2], 1, 0.5, &fr));
    REQUIRE_OK(ad_field_slice(f_scalar, 1, 0, NX, NY, NZ, 1, 0.5, pic_v, &w, &h));
    const float lo3[3] = {2, 3, 4};
    ad_mesh m = cube_at(lo3);
    float *seg = NULL;
    size_t nseg = 0;
    ENSURE_OK(ad_mesh_slice_segments(&m, fr.axis, fr.coordinate, &seg, &nseg));
    ad_mesh_free(&m);
    ENSURE(nseg == 8);
    double vmin = pic_v[0], vmax = pic_v[w * h - 1], lo, hi;
    ad_heatmap hm = {.values = pic_v, .nx = w, .ny = h, .x0 = fr.x0, .y0 = fr.y0, .x1 = fr.x1, .y1 = fr.y1,
                     .title = "f = x + 10 y + 100 z at y = 3.75", .units = "m", .vmin = vmin, .vmax = vmax,
                     .width = WIDTH};
    ad_heatmap_overlay over = {seg, nseg, fr.x_name, fr.y_name}, names = {NULL, 0, fr.x_name, fr.y_name};
    ad_color_range(pic_v, (size_t)w * (size_t)h, vmin, vmax, 0, &lo, &hi);
    const char *path = out("slice_y.png"), *plain_path = out("slice_y_plain.png");
    ENSURE_OK(ad_write_heatmap_png_overlay(path, &hm, &over));
    ENSURE_OK(ad_write_heatmap_png_overlay(plain_path, &hm, &names));
    over.segments = NULL;
    REFUSED(ad_write_heatmap_png_overlay(out("bad_slice.png"), &hm, &over), "segments");
    free(seg);

    ad_image_layout l;
    picture pic, pic_plain;
    REQUIRE_OK(ad_image_layout_for(WIDTH, fr.x0, fr.y0, fr.x1, fr.y1, &l));
    if (!read_png(path, &pic) || !read_png(plain_path, &pic_plain)) return;
    ENSURE_MSG(pic.w == l.image_w && pic.h == l.image_h, "%d x %d px, expected %d x %d", pic.w, pic.h, l.image_w,
               l.image_h);
    ENSURE(l.plot_w == WIDTH && l.plot_h == WIDTH * 3 / 4); /* x 1..5 by z 3..6 */
    /* cells away from the section: bottom-left, top-right, one inside the square */
    const int at[3][2] = {{0, 0}, {NX - 1, NZ - 1}, {3, 1}};
    for (int q = 0; q < 3; q++) {
        int u = at[q][0], v = at[q][1];
        uint8_t want[3];
        ad_colormap(0, (pic_v[v * w + u] - lo) / (hi - lo), want);
        const uint8_t *got = pixel_at(&pic, &l, &fr, centre(0, u), centre(2, v), 0, 0);
        ENSURE_MSG(SAME_RGB(got, want), "cell (%d, %d): (%d, %d, %d), expected (%d, %d, %d)", u, v, got[0], got[1],
                   got[2], want[0], want[1], want[2]);
    }
    /* the square's sides (x = 2, 3; z = 4, 5) drawn, and only with the segments given */
    const double side_mid[4][2] = {{2, 4.5}, {3, 4.5}, {2.5, 4}, {2.5, 5}};
    for (int q = 0; q < 4; q++) {
        ENSURE_MSG(ink_near(&pic, &l, &fr, side_mid[q][0], side_mid[q][1]), "no section at (%g, %g)",
                   side_mid[q][0], side_mid[q][1]);
        ENSURE(!ink_near(&pic_plain, &l, &fr, side_mid[q][0], side_mid[q][1]));
    }
    ENSURE(!dark(pixel_at(&pic, &l, &fr, 2.5, 4.5, 0, 0))); /* inside the square: the field */
    free(pic.px);
    free(pic_plain.px);

    /* the other two slices: valid pictures of their layouts' sizes */
    for (int axis = 0; axis < 3; axis += 2) {
        REQUIRE_OK(ad_field_slice_frame(NX, NY, NZ, O3[0], O3[1], O3[2], H3[0], H3[1], H3[2], axis, 0.5, &fr));
        REQUIRE_OK(ad_field_slice(f_scalar, 1, 0, NX, NY, NZ, axis, 0.5, pic_v, &w, &h));
        ad_heatmap s = {.values = pic_v, .nx = w, .ny = h, .x0 = fr.x0, .y0 = fr.y0, .x1 = fr.x1, .y1 = fr.y1,
                        .title = axis ? "normal z" : "normal x", .units = "m", .vmin = NAN, .vmax = NAN,
                        .width = WIDTH};
        ad_heatmap_overlay names = {NULL, 0, fr.x_name, fr.y_name};
        const char *p = out(axis ? "slice_z.png" : "slice_x.png");
        if (!ENSURE_OK(ad_write_heatmap_png_overlay(p, &s, &names)) || !read_png(p, &pic)) continue;
        REQUIRE_OK(ad_image_layout_for(WIDTH, fr.x0, fr.y0, fr.x1, fr.y1, &l));
        ENSURE(pic.w == l.image_w && pic.h == l.image_h);
        free(pic.px);
    }
}

/* No temporary file left in the output folder. */
static void test_no_leftovers(void)
{
    DIR *d = opendir(out_dir);
    int tmp = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        tmp += n > 4 && strcmp(e->d_name + n - 4, ".tmp") == 0;
    }
    if (d) closedir(d);
    ENSURE_MSG(d && tmp == 0, "%d temporary files left in %s", tmp, out_dir);
}

int main(int argc, char **argv)
{
    out_dir = argc > 1 ? argv[1] : "io3_out";
    if (mkdir(out_dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "cannot create %s: %s\n", out_dir, strerror(errno));
        return 1;
    }
    fill_fields();
    test_vti3();
    test_particles3();
    test_2d_unchanged();
    test_slice_values();
    test_slice_frame();
    test_slice_refusals();
    test_cube_section();
    test_sphere_section();
    test_slice_png();
    test_no_leftovers();
    if (vtk_skipped) printf("test_io3: VTK read-back SKIPPED (no /usr/bin/python3 with vtk)\n");
    return tu_finish("test_io3");
}
