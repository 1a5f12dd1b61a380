/* The 3D body's geometry (physics/triangle.h, core/triangles.c, core/components.c): the closest point on
 * a triangle against an exact reference in double precision on 200 000 random cases with every feature
 * met; one contact per connected surface (a flat pair, a fan, a ridge, a cube's face, edge and corner,
 * two cubes); bad triangles refused by name; the components of segments as before; and spheres
 * bouncing off a face, an edge and a corner of a cube under the shared contact law, whose restitution
 * and contact time must be within 1 % and 2 % of the law's closed forms. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/components.h"
#include "core/triangles.h"
#include "physics/contact.h"
#include "test_util.h"

/* ------------------------------------------------ the exact reference -- */

typedef struct dvec {
    double x, y, z;
} dvec;

static dvec dv(double x, double y, double z) { return (dvec){x, y, z}; }
static dvec dsub(dvec a, dvec b) { return dv(a.x - b.x, a.y - b.y, a.z - b.z); }
static double ddot(dvec a, dvec b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static dvec daxpy(dvec a, double s, dvec b) { return dv(a.x + s * b.x, a.y + s * b.y, a.z + s * b.z); }

/* The nearest point of segment a-b to p, and its parameter. */
static dvec seg_closest(dvec p, dvec a, dvec b, double *t)
{
    dvec e = dsub(b, a);
    double s = ddot(dsub(p, a), e) / ddot(e, e);
    s = s < 0 ? 0 : s > 1 ? 1 : s;
    *t = s;
    return daxpy(a, s, e);
}

/* The nearest point of triangle abc to p: the projection on its plane where it falls inside (solving
 * for barycentric coordinates), else the nearest of its three edges'. *feature as in triangle.h;
 * *margin how far the case is from a feature's boundary (barycentric or edge parameter). */
static dvec reference_closest(dvec p, dvec a, dvec b, dvec c, int *feature, double *margin)
{
    dvec e0 = dsub(b, a), e1 = dsub(c, a), w = dsub(p, a);
    double a00 = ddot(e0, e0), a01 = ddot(e0, e1), a11 = ddot(e1, e1), b0 = ddot(w, e0), b1 = ddot(w, e1);
    double det = a00 * a11 - a01 * a01, v = (a11 * b0 - a01 * b1) / det, u = (a00 * b1 - a01 * b0) / det;
    if (v >= 0 && u >= 0 && v + u <= 1) {
        *feature = AD_TRI_FACE;
        *margin = fmin(fmin(v, u), 1 - v - u);
        return daxpy(daxpy(a, v, e0), u, e1);
    }
    dvec ends[3][2] = {{a, b}, {b, c}, {c, a}};
    dvec best = a;
    double bd = INFINITY, bt = 0;
    int be = 0;
    for (int k = 0; k < 3; k++) {
        double t;
        dvec q = seg_closest(p, ends[k][0], ends[k][1], &t);
        double d = ddot(dsub(p, q), dsub(p, q));
        if (d < bd) bd = d, best = q, bt = t, be = k;
    }
    static const int edge[3] = {AD_TRI_EDGE_AB, AD_TRI_EDGE_BC, AD_TRI_EDGE_CA};
    static const int start[3] = {AD_TRI_VERTEX_A, AD_TRI_VERTEX_B, AD_TRI_VERTEX_C};
    static const int end[3] = {AD_TRI_VERTEX_B, AD_TRI_VERTEX_C, AD_TRI_VERTEX_A};
    *feature = bt <= 0 ? start[be] : bt >= 1 ? end[be] : edge[be];
    *margin = bt <= 0 || bt >= 1 ? fmin(-fmin(v, u), fabs(v + u - 1)) : fmin(bt, 1 - bt);
    return best;
}

static double urand(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) / 9007199254740992.0;
}

static void check_closest_points(void)
{
    uint64_t s = 12345;
    long count[7] = {0}, wrong_feature = 0, cases = 200000;
    double worst = 0, worst_sliver = 0;
    for (long k = 0; k < cases; k++) {
        dvec v[3];
        for (int j = 0; j < 3; j++) v[j] = dv(urand(&s) * 2 - 1, urand(&s) * 2 - 1, urand(&s) * 2 - 1);
        if (k % 4 == 0) v[2] = daxpy(v[0], 0.9 + 0.2 * urand(&s), dsub(v[1], v[0])), v[2].z += 0.05; /* slivers */
        dvec e0 = dsub(v[1], v[0]), e1 = dsub(v[2], v[0]);
        dvec n = dv(e0.y * e1.z - e0.z * e1.y, e0.z * e1.x - e0.x * e1.z, e0.x * e1.y - e0.y * e1.x);
        if (sqrt(ddot(n, n)) < 1e-3) continue;
        dvec p = dv(urand(&s) * 4 - 2, urand(&s) * 4 - 2, urand(&s) * 4 - 2);
        int rf, f;
        double margin;
        dvec q0 = reference_closest(p, v[0], v[1], v[2], &rf, &margin);
        ad_vec3 a = ad_v3((float)v[0].x, (float)v[0].y, (float)v[0].z);
        ad_vec3 b = ad_v3((float)v[1].x, (float)v[1].y, (float)v[1].z);
        ad_vec3 c = ad_v3((float)v[2].x, (float)v[2].y, (float)v[2].z);
        ad_vec3 q = ad_closest_on_triangle(ad_v3((float)p.x, (float)p.y, (float)p.z), a, ad_v3_sub(b, a),
                                           ad_v3_sub(c, a), &f);
        double err = sqrt(ddot(dsub(dv(q.x, q.y, q.z), q0), dsub(dv(q.x, q.y, q.z), q0)));
        if (k % 4 == 0 && err > worst_sliver) worst_sliver = err;
        if (k % 4 != 0 && err > worst) worst = err;
        count[f]++;
        if (margin > 1e-3 && f != rf) wrong_feature++;
    }
    ENSURE_MSG(worst < 1e-5, "the closest point on a triangle: worst distance from the exact one %.3g (tolerance 1e-5)",
               worst);
    ENSURE_MSG(worst_sliver < 2e-4, "the closest point on a sliver: worst distance from the exact one %.3g (tolerance "
               "2e-4)", worst_sliver);
    ENSURE_MSG(wrong_feature == 0, "the feature of the closest point: %ld cases away from a boundary named wrongly",
          wrong_feature);
    for (int f = 0; f < 7; f++) ENSURE_MSG(count[f] > 1000, "feature %d met %ld times in %ld cases", f, count[f], cases);
    printf("closest point on a triangle: %ld cases, worst error %.2g (slivers %.2g), features met: face %ld, edges %ld %ld %ld, "
           "vertices %ld %ld %ld\n",
           cases, worst, worst_sliver, count[0], count[1], count[2], count[3], count[4], count[5], count[6]);
}

/* --------------------------------------------------- meshes and contacts -- */

/* A unit cube's 12 triangles, corner (x0, y0, z0), side h, outward windings. */
static size_t cube(ad_triangle *t, float x0, float y0, float z0, float h)
{
    static const int face[6][4] = {{0, 1, 3, 2}, {4, 6, 7, 5}, {0, 4, 5, 1}, {2, 3, 7, 6}, {0, 2, 6, 4}, {1, 5, 7, 3}};
    float corner[8][3];
    for (int i = 0; i < 8; i++) {
        corner[i][0] = x0 + h * (float)((i >> 2) & 1);
        corner[i][1] = y0 + h * (float)((i >> 1) & 1);
        corner[i][2] = z0 + h * (float)(i & 1);
    }
    size_t n = 0;
    for (int f = 0; f < 6; f++) {
        const int *q = face[f];
        int tri[2][3] = {{q[0], q[1], q[2]}, {q[0], q[2], q[3]}};
        for (int k = 0; k < 2; k++, n++)
            for (int j = 0; j < 3; j++) memcpy(t[n].v[j], corner[tri[k][j]], sizeof corner[0]);
    }
    return n;
}

static void set(ad_triangle *t, float a0, float a1, float a2, float b0, float b1, float b2, float c0, float c1, float c2)
{
    float v[9] = {a0, a1, a2, b0, b1, b2, c0, c1, c2};
    memcpy(t->v, v, sizeof v);
}

/* The touches of a sphere (c, r) with triangles, one component each; *each receives how many triangles
 * touch it one by one. */
static ad_tri_touches touches(const ad_tri *t, size_t n, ad_vec3 c, float r, int *each)
{
    ad_tri_touches tt;
    tt.n = 0;
    *each = 0;
    for (size_t i = 0; i < n; i++) {
        ad_vec3 q;
        int f;
        ad_vec3 p = ad_closest_on_triangle(c, t[i].a, t[i].ab, t[i].ac, &f);
        ad_vec3 d = ad_v3_sub(c, p);
        if (ad_v3_dot(d, d) < r * r) (*each)++;
        if (ad_tri_touch(&t[i], (uint32_t)i, c, r, &tt, &q)) ENSURE_MSG(0, "the touch table overflowed");
    }
    return tt;
}

static void expect_one(const char *what, const ad_tri *t, size_t n, ad_vec3 c, float r, ad_vec3 want)
{
    int each;
    ad_tri_touches tt = touches(t, n, c, r, &each);
    ENSURE_MSG(tt.n == 1, "%s: %d contacts, expected one (%d triangles touch one by one)", what, tt.n, each);
    if (tt.n == 1) {
        ad_vec3 d = ad_v3_sub(tt.q[0], want);
        ENSURE_MSG(sqrtf(ad_v3_dot(d, d)) < 1e-6f, "%s: the contact at (%g, %g, %g), expected (%g, %g, %g)", what,
              tt.q[0].x, tt.q[0].y, tt.q[0].z, want.x, want.y, want.z);
    }
    printf("  %s: one contact (%d triangles within reach)\n", what, each);
}

static void check_meshes(void)
{
    ad_triangle raw[32];
    ad_tri t[32];
    /* a flat square of two triangles, a sphere over their shared diagonal */
    set(&raw[0], 0, 0, 0, 1, 0, 0, 1, 1, 0);
    set(&raw[1], 0, 0, 0, 1, 1, 0, 0, 1, 0);
    ENSURE_MSG(!ad_triangles_make(raw, 2, t).code, "a square");
    expect_one("a sphere over the shared diagonal of a flat square", t, 2, ad_v3(0.5f, 0.5f, 0.3f), 0.5f,
               ad_v3(0.5f, 0.5f, 0));
    /* a flat fan of six triangles round a shared vertex, a sphere over it */
    for (int k = 0; k < 6; k++) {
        double a0 = k * AD_PI / 3, a1 = (k + 1) * AD_PI / 3;
        set(&raw[k], 0, 0, 0, (float)cos(a0), (float)sin(a0), 0, (float)cos(a1), (float)sin(a1), 0);
    }
    ENSURE_MSG(!ad_triangles_make(raw, 6, t).code, "a fan");
    expect_one("a sphere over the shared vertex of a flat fan", t, 6, ad_v3(0, 0, 0.2f), 0.5f, ad_v3(0, 0, 0));
    /* a ridge: two faces at 90 degrees, a sphere over the shared edge */
    set(&raw[0], 0, 0, 0, 1, 0, 0, 1, 0, -1);
    set(&raw[1], 0, 0, 0, 0, 0, -1, 1, 0, -1);
    set(&raw[2], 0, 0, 0, 1, 0, 0, 1, -1, 0);
    set(&raw[3], 0, 0, 0, 1, -1, 0, 0, -1, 0);
    ENSURE_MSG(!ad_triangles_make(raw, 4, t).code, "a ridge");
    expect_one("a sphere over a ridge", t, 4, ad_v3(0.5f, 0.2f, 0.2f), 0.5f, ad_v3(0.5f, 0, 0));
    /* a cube: face, edge, corner */
    size_t n = cube(raw, 0, 0, 0, 1);
    ENSURE_MSG(!ad_triangles_make(raw, n, t).code, "a cube");
    expect_one("a sphere on a cube's face, over its diagonal", t, n, ad_v3(0.5f, 0.5f, 1.3f), 0.5f,
               ad_v3(0.5f, 0.5f, 1));
    expect_one("a sphere on a cube's edge", t, n, ad_v3(0.5f, 1.2f, 1.2f), 0.5f, ad_v3(0.5f, 1, 1));
    expect_one("a sphere on a cube's corner", t, n, ad_v3(1.2f, 1.2f, 1.2f), 0.5f, ad_v3(1, 1, 1));
    /* two cubes, one sphere between them: one contact each */
    size_t m = n + cube(raw + n, 2, 0, 0, 1);
    ENSURE_MSG(!ad_triangles_make(raw, m, t).code, "two cubes");
    ENSURE_MSG((t[0].flags >> AD_TRI_COMP_SHIFT) == 0 && (t[n].flags >> AD_TRI_COMP_SHIFT) == 1,
          "two cubes: components 0 and 1 (got %u and %u)", t[0].flags >> AD_TRI_COMP_SHIFT,
          t[n].flags >> AD_TRI_COMP_SHIFT);
    int each;
    ad_tri_touches tt = touches(t, m, ad_v3(1.5f, 0.5f, 0.5f), 0.6f, &each);
    ENSURE_MSG(tt.n == 2, "a sphere between two cubes: %d contacts, expected 2", tt.n);
    printf("  a sphere between two cubes: %d contacts (%d triangles within reach)\n", tt.n, each);
}

static void check_refusals(void)
{
    ad_triangle raw[2];
    ad_tri t[2];
    set(&raw[0], 0, 0, 0, 1, 0, 0, 0, 1, 0);
    set(&raw[1], 0, 0, 0, 1, 0, 0, 0, 1, NAN);
    ad_status st = ad_triangles_make(raw, 2, t);
    ENSURE_MSG(st.code == AD_ERR_INVALID && strstr(st.message, "triangle 1: vertex 2's z is nan"), "NaN: %s", st.message);
    set(&raw[1], 0, 0, 0, 1, 1, 1, 2, 2, 2);
    st = ad_triangles_make(raw, 2, t);
    ENSURE_MSG(st.code == AD_ERR_INVALID && strstr(st.message, "triangle 1 is degenerate") &&
              strstr(st.message, "on a line"), "collinear: %s", st.message);
    set(&raw[1], 3, 3, 3, 3, 3, 3, 3, 3, 3);
    st = ad_triangles_make(raw, 2, t);
    ENSURE_MSG(st.code == AD_ERR_INVALID && strstr(st.message, "one point"), "one point: %s", st.message);
    set(&raw[1], 0, 0, 0, 1, 0, 0, 0.5f, 1e-9f, 0);
    st = ad_triangles_make(raw, 2, t);
    ENSURE_MSG(st.code == AD_ERR_INVALID && strstr(st.message, "degenerate"), "a sliver of area 5e-10: %s", st.message);
    printf("bad triangles refused by name: a NaN vertex, collinear vertices, one point, a sliver\n");
}

/* Segments: a chain of three, a lone one, a closed triangle; their components and shared ends. */
static void check_segment_components(void)
{
    float pts[] = {0, 0, 1, 0, 1, 0, 2, 0, 2, 0, 3, 1, 9, 9, 8, 8, 5, 5, 6, 5, 6, 5, 5, 6, 5, 6, 5, 5};
    uint32_t comp[7];
    unsigned char shared[14];
    ENSURE_MSG(!ad_label_components(pts, 2, 2, 7, comp, shared).code, "segment components");
    uint32_t want[7] = {0, 0, 0, 1, 2, 2, 2};
    unsigned char want_shared[14] = {0, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1};
    ENSURE_MSG(!memcmp(comp, want, sizeof want), "segment components %u %u %u %u %u %u %u", comp[0], comp[1], comp[2],
          comp[3], comp[4], comp[5], comp[6]);
    ENSURE_MSG(!memcmp(shared, want_shared, sizeof want_shared), "the shared ends of segments");
    ENSURE_MSG(ad_label_components(pts, 4, 2, 1, comp, NULL).code == AD_ERR_INVALID, "4 dimensions refused");
}

/* --------------------------------------------------- bounces off a cube -- */

/* A sphere (mass m, radius r) thrown at speed v0 along -n at the cube's face, edge or corner (n the
 * outward direction of that feature): symplectic Euler with the shared law at dt = t_c / 200; the
 * restitution (speed out / speed in) and the time in contact against the closed forms. */
static void bounce(const ad_tri *t, size_t n, const char *what, ad_vec3 at, ad_vec3 dir)
{
    const double m = 1, k = 1e4, e = 0.9, r = 0.5, v0 = 1;
    double gamma = ad_damping_for_restitution(e, m, k), tc = ad_contact_duration(m, k, gamma), dt = tc / 200;
    double s = 1 / sqrt(ad_v3_dot(dir, dir));
    ad_vec3 u = ad_v3_scale(dir, (float)s);
    ad_vec3 c = ad_v3_axpy(at, (float)(r + 0.01), u), vel = ad_v3_scale(u, (float)-v0);
    double in_contact = 0;
    int touched = 0;
    for (int step = 0; step < 100000; step++) {
        ad_tri_touches tt;
        tt.n = 0;
        ad_vec3 q, force = ad_v3(0, 0, 0);
        for (size_t i = 0; i < n; i++) ENSURE_MSG(!ad_tri_touch(&t[i], (uint32_t)i, c, (float)r, &tt, &q), "the table held");
        for (int j = 0; j < tt.n; j++) {
            ad_vec3 d = ad_v3_sub(c, tt.q[j]);
            float dist = sqrtf(ad_v3_dot(d, d));
            ad_vec3 nrm = ad_v3_scale(d, 1.0f / dist);
            float f = ad_normal_force((float)k, (float)gamma, (float)r - dist, ad_v3_dot(vel, nrm));
            force = ad_v3_axpy(force, f, nrm);
        }
        if (tt.n) touched = 1, in_contact += dt;
        vel = ad_v3_axpy(vel, (float)(dt / m), force);
        c = ad_v3_axpy(c, (float)dt, vel);
        if (touched && !tt.n) break;
    }
    double out = sqrt(ad_v3_dot(vel, vel)) / v0, along = ad_v3_dot(vel, u) / sqrt(ad_v3_dot(vel, vel));
    ENSURE_MSG(fabs(out / e - 1) < 0.01, "%s: restitution %.5f, expected %.3f within 1 %%", what, out, e);
    ENSURE_MSG(fabs(in_contact / tc - 1) < 0.02, "%s: contact time %.5g s, expected %.5g s within 2 %%", what, in_contact,
          tc);
    ENSURE_MSG(along > 0.9999, "%s: the sphere leaves along the feature's normal (cosine %.6f)", what, along);
    printf("  %s: restitution %.4f (law %.3f), contact time %.4g s (law %.4g s)\n", what, out, e, in_contact, tc);
}

static void check_bounces(void)
{
    ad_triangle raw[12];
    ad_tri t[12];
    size_t n = cube(raw, 0, 0, 0, 2);
    ENSURE_MSG(!ad_triangles_make(raw, n, t).code, "the cube");
    printf("spheres off a cube (e = 0.9, k = 1e4 N/m, m = 1 kg, 200 steps a contact):\n");
    bounce(t, n, "head-on onto a face, over its diagonal", ad_v3(1, 1, 2), ad_v3(0, 0, 1));
    bounce(t, n, "head-on onto an edge", ad_v3(1, 2, 2), ad_v3(0, 1, 1));
    bounce(t, n, "head-on onto a corner", ad_v3(2, 2, 2), ad_v3(1, 1, 1));
}

int main(void)
{
    check_closest_points();
    printf("one contact per connected surface:\n");
    check_meshes();
    check_refusals();
    check_segment_components();
    check_bounces();
    return tu_finish("triangle");
}
