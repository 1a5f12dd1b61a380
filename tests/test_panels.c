/* The body's panels as the surface outputs describe them (core/panel_frame.c): outward normals of either
 * orientation, lengths, arc length, x/c in the chord frame of a placed airfoil at any angle of attack, the sides,
 * a line body's two faces, triangles' areas and normals, and an interval's coefficients from synthetic sums. */
#include <math.h>
#include <stdlib.h>

#include "core/airfoil.h"
#include "core/panel_frame.h"
#include "test_util.h"

/* A unit square, counter-clockwise or clockwise: normals point out, lengths 1, arc length at the midpoints. */
static void test_square(void)
{
    const float x[4] = {0, 1, 1, 0}, y[4] = {0, 0, 1, 1}, rx[4] = {0, 0, 1, 1}, ry[4] = {0, 1, 1, 0};
    ad_chord_frame f = {1.0, 0.0, {0.25, 0.5, 0}, 0};
    for (int cw = 0; cw < 2; cw++) {
        ad_panel_geom *g;
        size_t n;
        REQUIRE_OK(ad_panels_2d(cw ? rx : x, cw ? ry : y, 4, 1, &f, &g, &n));
        ENSURE(n == 4);
        for (size_t i = 0; i < n; i++) {
            /* outward: from the centre (0.5, 0.5) through the midpoint */
            double ox = g[i].c[0] - 0.5, oy = g[i].c[1] - 0.5;
            ENSURE_NEAR(g[i].n[0], 2 * ox, 1e-12);
            ENSURE_NEAR(g[i].n[1], 2 * oy, 1e-12);
            ENSURE_NEAR(g[i].size, 1, 1e-12);
            ENSURE_NEAR(g[i].s, 0.5 + (double)i, 1e-12);
            ENSURE_NEAR(g[i].xc, g[i].c[0], 1e-12); /* pivot at the quarter chord, chord 1, aoa 0 */
            ENSURE(g[i].side == (g[i].n[1] >= 0 ? AD_SIDE_UPPER : AD_SIDE_LOWER));
            /* the tangent is along the panel and points towards the trailing edge (+x) where it can */
            ENSURE_NEAR(g[i].t[0] * g[i].n[0] + g[i].t[1] * g[i].n[1], 0, 1e-12);
            if (fabs(g[i].n[1]) > 0.5) ENSURE_NEAR(g[i].t[0], 1, 1e-12);
            /* the face towards the stream (-x) is at 0 degrees, the lee face at 180 */
            if (g[i].n[0] < -0.5) ENSURE_NEAR(g[i].theta, 0, 1e-9);
            if (g[i].n[0] > 0.5) ENSURE_NEAR(g[i].theta, 180, 1e-9);
        }
        free(g);
    }
}

/* A NACA 2412 placed at 12 degrees: each panel's x/c is its midpoint's x in the section's own frame, the
 * sides follow the outline (upper first in Selig order). */
static void test_airfoil_frame(void)
{
    ad_outline o;
    REQUIRE_OK(ad_airfoil_naca("2412", 40, 0, &o));
    double chord = 20, aoa = 12, px = 60, py = 30;
    ad_segment *segs;
    size_t ns;
    REQUIRE_OK(ad_outline_place(&o, chord, aoa, px, py, &segs, &ns));
    float *x = malloc(ns * sizeof *x), *y = malloc(ns * sizeof *y);
    for (size_t i = 0; i < ns; i++) x[i] = segs[i].x0, y[i] = segs[i].y0;
    ad_chord_frame f = {chord, aoa, {px, py, 0}, 0};
    ad_panel_geom *g;
    size_t n;
    REQUIRE_OK(ad_panels_2d(x, y, ns, o.closed, &f, &g, &n));
    ENSURE(n == ns);
    int upper = 0, lower = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j = (i + 1) % o.n;
        double xc = 0.5 * (o.x[i] + o.x[j]);
        ENSURE_NEAR(g[i].xc, xc, 2e-6); /* the placed points are floats: a few ulps of 60 m over 20 m */
        /* away from the leading edge, the upper surface comes first in Selig order, then the lower */
        if (xc > 0.1) ENSURE(g[i].side == (i < n / 2 ? AD_SIDE_UPPER : AD_SIDE_LOWER));
        upper += g[i].side == AD_SIDE_UPPER, lower += g[i].side == AD_SIDE_LOWER;
    }
    /* Selig order: the upper surface from the trailing edge to the leading edge, then the lower */
    ENSURE(upper > 30 && lower > 30);
    free(g);
    free(x);
    free(y);
    free(segs);
    ad_outline_free(&o);
}

/* A line (a plate of thickness 0) at 30 degrees: one face each panel, normal on the upper side, side "both". */
static void test_line(void)
{
    double a = 30 * TU_PI / 180;
    float x[3], y[3];
    for (int k = 0; k < 3; k++) x[k] = (float)(10 + 0.5 * k * cos(a)), y[k] = (float)(10 - 0.5 * k * sin(a));
    ad_chord_frame f = {1.0, 30, {10 + 0.25 * cos(a), 10 - 0.25 * sin(a), 0}, 0};
    ad_panel_geom *g;
    size_t n;
    REQUIRE_OK(ad_panels_2d(x, y, 3, 0, &f, &g, &n));
    ENSURE(n == 2);
    for (size_t i = 0; i < n; i++) {
        ENSURE(g[i].side == AD_SIDE_BOTH);
        ENSURE_NEAR(g[i].n[0], sin(a), 1e-6);
        ENSURE_NEAR(g[i].n[1], cos(a), 1e-6);
        ENSURE_NEAR(g[i].xc, 0.25 + 0.5 * (double)i, 1e-6);
        ENSURE_NEAR(g[i].t[0], cos(a), 1e-6); /* towards the trailing edge */
    }
    free(g);
}

/* A tetrahedron with outward corners: areas, unit normals out, and the closed surface's sum of n area = 0. */
static void test_triangles(void)
{
    const float p[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    const int f[4][3] = {{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {1, 2, 3}};
    ad_triangle t[4];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++)
            for (int d = 0; d < 3; d++) t[i].v[j][d] = p[f[i][j]][d];
    ad_mesh m = {t, 4};
    ad_chord_frame fr = {0, 0, {0.25, 0.25, 0.25}, 0};
    ad_panel_geom *g;
    REQUIRE_OK(ad_panels_3d(&m, &fr, &g));
    double sum[3] = {0, 0, 0};
    for (int i = 0; i < 4; i++) {
        /* out: away from the centroid (0.25, 0.25, 0.25) */
        double dot = 0;
        for (int d = 0; d < 3; d++) dot += (g[i].c[d] - 0.25) * g[i].n[d], sum[d] += g[i].n[d] * g[i].size;
        ENSURE(dot > 0);
        ENSURE(isnan(g[i].xc) && isnan(g[i].s));
    }
    ENSURE_NEAR(g[0].size, 0.5, 1e-12);
    ENSURE_NEAR(g[3].size, 0.5 * sqrt(3.0), 1e-7);
    for (int d = 0; d < 3; d++) ENSURE_NEAR(sum[d], 0, 1e-7);
    ENSURE_NEAR(g[2].theta, 0, 1e-9); /* the face x = 0 faces the stream */
    free(g);
}

/* An interval's coefficients from synthetic sums: a panel of length 2 facing +y, the gas pushing it down. */
static void test_coefficients(void)
{
    ad_panel_geom g = {{0, 0, 0}, {0, 1, 0}, {1, 0, 0}, 2.0, 0, 0.5, 90, AD_SIDE_UPPER};
    ad_stream_scales k = {0.5, 0.25, 2.0};
    ad_panel_sums a = {{1, 1, 0}, 1, 5}, b = {{1.3, -3, 0}, 4, 15};
    double v[AD_PQ_COUNT];
    ad_panel_interval(&g, &k, &a, &b, 2.0, v);
    /* F = (0.15, -2): p = 2 / 2 = 1, Cp = (1 - 0.25) / 0.5; Cf = 0.15 / (2 x 0.5); Ch = (3 / 2) / (2 x 2) */
    ENSURE_NEAR(v[AD_PQ_CP], 1.5, 1e-12);
    ENSURE_NEAR(v[AD_PQ_CF], 0.15, 1e-12);
    ENSURE_NEAR(v[AD_PQ_CH], 0.375, 1e-12);
    ENSURE_NEAR(v[AD_PQ_RATE], 2.5, 1e-12); /* 10 contacts in 2 s on 2 m */
    ENSURE_NEAR(v[AD_PQ_FX], 0.15, 1e-12);
    ENSURE_NEAR(v[AD_PQ_FY], -2, 1e-12);
    /* a line's panel: upper minus lower face, the stream's pressure cancelling */
    g.side = AD_SIDE_BOTH;
    ad_panel_interval(&g, &k, &a, &b, 2.0, v);
    ENSURE_NEAR(v[AD_PQ_CP], 2.0, 1e-12);
}

int main(void)
{
    test_square();
    test_airfoil_frame();
    test_line();
    test_triangles();
    test_coefficients();
    return tu_finish("test_panels");
}
