/* Tests of body geometry: NACA sections, coordinate files, error messages, shapes, placement as segments.
 * NACA sections are held to published ordinates and thin-airfoil values; both file layouts load to one outline;
 * errors name file and line; placed segments chain bit for bit. test_airfoil_robust.h: the check's sweep against its
 * reference and its time, and files that must be refused (devices, binary, caps, files cut short).
 * Usage: test_airfoil [source-dir]; data files are found under the source dir (default AD_SOURCE_DIR, else "."). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/airfoil.h"
#include "test_util.h"

#ifndef AD_SOURCE_DIR
#define AD_SOURCE_DIR "."
#endif

static const char *g_root = AD_SOURCE_DIR;

/* A path under the source tree; two rotating buffers so a test can hold two paths at once. */
static const char *src_path(const char *rel)
{
    static char buf[2][1024];
    static int k = 0;
    k ^= 1;
    snprintf(buf[k], sizeof buf[k], "%s/%s", g_root, rel);
    return buf[k];
}

/* ------------------------------------------------------------- helpers -- */

/* y of a NACA outline (open TE, `np` points per surface) at chord station x, by linear interpolation. The upper
 * surface is points 0..np-1 (TE to LE), the lower np-1..n-1 (LE to TE). Walking from the TE takes the first
 * bracket, which matters only very near the LE of a cambered section where x_u dips below 0. */
static double surface_y(const ad_outline *o, size_t np, int upper, double x)
{
    if (upper) {
        for (size_t i = 0; i + 1 < np; i++) {
            double a = o->x[i], b = o->x[i + 1];
            if ((a - x) * (b - x) <= 0.0 && a != b) return o->y[i] + (o->y[i + 1] - o->y[i]) * (x - a) / (b - a);
        }
    } else {
        for (size_t i = o->n - 1; i > np - 1; i--) {
            double a = o->x[i], b = o->x[i - 1];
            if ((a - x) * (b - x) <= 0.0 && a != b) return o->y[i] + (o->y[i - 1] - o->y[i]) * (x - a) / (b - a);
        }
    }
    return NAN;
}

/* Station i (0 = LE) of a NACA outline with `np` points per surface: the upper and lower points are laid off
 * from the mean line by +-y_t normal to it, so their midpoint is (x, y_c) and half their distance is y_t. */
static void station(const ad_outline *o, size_t np, size_t i, double *x, double *yc, double *yt)
{
    size_t u = np - 1 - i, l = np - 1 + i;
    *x = 0.5 * (o->x[u] + o->x[l]);
    *yc = 0.5 * (o->y[u] + o->y[l]);
    *yt = 0.5 * hypot(o->x[u] - o->x[l], o->y[u] - o->y[l]);
}

/* Thin-airfoil theory from the mean line of a NACA outline: with x = (1 - cos th)/2 and
 * A_n = 2/pi int_0^pi dz/dx cos(n th) dth, the zero-lift angle is -1/pi int dz/dx (cos th - 1) dth, the design
 * (ideal-angle) lift pi A1 and the quarter-chord moment pi/4 (A2 - A1). The slope is constant between stations,
 * so each interval integrates cos exactly. */
typedef struct thin_airfoil {
    double alpha_l0_deg, cl_ideal, cm_c4;
} thin_airfoil;

static thin_airfoil thin_airfoil_of(const ad_outline *o, size_t np)
{
    double i0 = 0, i1 = 0, i2 = 0, xa, za, t;
    station(o, np, 0, &xa, &za, &t);
    for (size_t i = 1; i < np; i++) {
        double xb, zb;
        station(o, np, i, &xb, &zb, &t);
        double slope = (zb - za) / (xb - xa);
        double ta = acos(1.0 - 2.0 * xa), tb = acos(fmax(-1.0, 1.0 - 2.0 * xb));
        i0 += slope * ((sin(tb) - sin(ta)) - (tb - ta));
        i1 += slope * (sin(tb) - sin(ta));
        i2 += slope * (sin(2.0 * tb) - sin(2.0 * ta)) / 2.0;
        xa = xb;
        za = zb;
    }
    thin_airfoil r;
    r.alpha_l0_deg = -i0 / TU_PI * 180.0 / TU_PI;
    r.cl_ideal = TU_PI * (2.0 / TU_PI) * i1;
    r.cm_c4 = TU_PI / 4.0 * (2.0 / TU_PI) * (i2 - i1);
    return r;
}

static int contains(const char *hay, const char *needle)
{
    return strstr(hay, needle) != NULL;
}

/* --------------------------------------------------------------- NACA -- */

static const double k_stations[17] = {0.0125, 0.025, 0.05, 0.075, 0.10, 0.15, 0.20, 0.25, 0.30,
                                      0.40,   0.50,  0.60, 0.70,  0.80, 0.90, 0.95, 1.00};

/* Compares an open-TE section with a table of ordinates in percent chord at k_stations (TE last). */
static void check_ordinates(const char *digits, const double *upper, const double *lower, double tol)
{
    const size_t np = 400; /* interpolation error ~ h^2 y''/8 stays below 1e-6 even at x = 0.0125 */
    ad_outline o;
    if (!ENSURE_OK(ad_airfoil_naca(digits, (int)np, 0, &o))) return;
    ENSURE(o.n == 2 * np - 1 && o.closed == 1);
    for (size_t k = 0; k < 16; k++) {
        double x = k_stations[k];
        ENSURE_MSG(fabs(surface_y(&o, np, 1, x) - upper[k] / 100.0) <= tol, "NACA %s upper at x=%.4f: %.6f vs %.6f",
                   digits, x, surface_y(&o, np, 1, x), upper[k] / 100.0);
        ENSURE_MSG(fabs(surface_y(&o, np, 0, x) - lower[k] / 100.0) <= tol, "NACA %s lower at x=%.4f: %.6f vs %.6f",
                   digits, x, surface_y(&o, np, 0, x), lower[k] / 100.0);
    }
    /* trailing edge: the open-TE points themselves */
    ENSURE_NEAR(o.y[0], upper[16] / 100.0, tol);
    ENSURE_NEAR(o.y[o.n - 1], lower[16] / 100.0, tol);
    ad_outline_free(&o);
}

static void test_naca_tables(void)
{
    /* NACA 0012, Abbott & von Doenhoff, Theory of Wing Sections (Dover 1959), Appendix I (basic thickness forms),
     * y in percent chord. The table is the open-TE formula rounded to 1e-5 chord, so it is held to 2e-5. */
    static const double u0012[17] = {1.894, 2.615, 3.555, 4.200, 4.683, 5.345, 5.737, 5.941, 6.002,
                                     5.803, 5.294, 4.563, 3.664, 2.623, 1.448, 0.807, 0.126};
    double l0012[17];
    for (int k = 0; k < 17; k++)
        l0012[k] = -u0012[k];
    check_ordinates("0012", u0012, l0012, 2e-5);

    /* NACA 2412 and 4412, same book, Appendix III (airfoil ordinates; the UIUC database files naca2412.dat and
     * naca4412.dat carry the same numbers), rounded to 1e-4 chord. Most ordinates sit within 1e-4 of the
     * formulas; the 2412 lower surface at x = 0.6 and 0.7 (-2.76, -2.14) is 1.8e-4 and 1.4e-4 thinner than the
     * formulas give (-2.778, -2.154), so the tolerance is 2e-4 chord. */
    static const double u2412[17] = {2.15, 2.99, 4.13, 4.96, 5.63, 6.61, 7.26, 7.67, 7.88,
                                     7.80, 7.24, 6.36, 5.18, 3.75, 2.08, 1.14, 0.13};
    static const double l2412[17] = {-1.65, -2.27, -3.01, -3.46, -3.75, -4.10, -4.23, -4.22, -4.12,
                                     -3.80, -3.34, -2.76, -2.14, -1.50, -0.82, -0.48, -0.13};
    check_ordinates("2412", u2412, l2412, 2e-4);
    static const double u4412[17] = {2.44, 3.39, 4.73, 5.76, 6.59, 7.89, 8.80, 9.41, 9.76,
                                     9.80, 9.19, 8.14, 6.69, 4.89, 2.71, 1.47, 0.13};
    static const double l4412[17] = {-1.43, -1.95, -2.49, -2.74, -2.86, -2.88, -2.74, -2.50, -2.26,
                                     -1.80, -1.40, -1.00, -0.65, -0.39, -0.22, -0.16, -0.13};
    check_ordinates("4412", u4412, l4412, 2e-4);
}

static void test_naca_properties(void)
{
    const size_t np = 401;
    ad_outline o;

    /* NACA 0012: half-thickness 0.06002 at x = 0.3 (open-TE formula), maximum 12% near x = 0.30 */
    if (ENSURE_OK(ad_airfoil_naca("0012", (int)np, 0, &o))) {
        ENSURE_NEAR(surface_y(&o, np, 1, 0.3), 0.06002, 1e-5);
        ENSURE_NEAR(surface_y(&o, np, 0, 0.3), -0.06002, 1e-5);
        size_t top = 0;
        for (size_t i = 0; i < o.n; i++)
            if (o.y[i] > o.y[top]) top = i;
        ENSURE_NEAR(2.0 * o.y[top], 0.12, 1e-4);
        ENSURE_NEAR(o.x[top], 0.30, 0.01);
        ENSURE_NEAR(o.x[np - 1], 0.0, 0.0); /* LE exactly at the origin */
        ENSURE_NEAR(o.y[np - 1], 0.0, 0.0);
        ENSURE_NEAR(o.y[0], 0.00126, 1e-6); /* open TE: 0.252% chord thick */
        double area;
        ENSURE_OK(ad_outline_area(&o, &area));
        ENSURE_NEAR(area, 0.0821, 2e-4); /* 0.685 t c^2 for the 4-digit thickness form */
        ad_outline_free(&o);
    }

    /* closed TE (-0.1036): both surfaces end on (1,0), one point fewer */
    if (ENSURE_OK(ad_airfoil_naca("0012", (int)np, 1, &o))) {
        ENSURE(o.n == 2 * np - 2);
        ENSURE_NEAR(o.x[0], 1.0, 0.0);
        ENSURE_NEAR(o.y[0], 0.0, 0.0);
        ENSURE_NEAR(surface_y(&o, np, 1, 0.3), 0.06002, 5e-5); /* the x^4 change barely moves mid-chord */
        ENSURE_OK(ad_outline_check(&o, "naca 0012 closed"));
        ad_outline_free(&o);
    }

    /* NACA 2412: max camber 2% at x = 0.4; thin-airfoil zero-lift angle -2.077 deg and cm_c/4 = -0.053
     * (Anderson, Fundamentals of Aerodynamics, Example 4.6) */
    if (ENSURE_OK(ad_airfoil_naca("2412", (int)np, 0, &o))) {
        double best = -1, best_x = 0, x, yc, yt, tmax = 0;
        for (size_t i = 0; i < np; i++) {
            station(&o, np, i, &x, &yc, &yt);
            if (yc > best) best = yc, best_x = x;
            if (yt > tmax) tmax = yt;
        }
        ENSURE_NEAR(best, 0.02, 1e-5);
        ENSURE_NEAR(best_x, 0.4, 0.005);
        ENSURE_NEAR(2.0 * tmax, 0.12, 1e-4);
        thin_airfoil ta = thin_airfoil_of(&o, np);
        ENSURE_NEAR(ta.alpha_l0_deg, -2.077, 0.003);
        ENSURE_NEAR(ta.cm_c4, -0.053, 0.0005);
        ad_outline_free(&o);
    }

    /* NACA 23012: mean line 230 with r = 0.2025, k1 = 15.957 (Abbott & von Doenhoff, Theory of Wing Sections, ch. 6):
     * y_c = k1/6 (x^3 - 3 r x^2 + r^2 (3 - r) x) ahead of r, k1 r^3/6 (1 - x) behind. Max camber at 0.15 chord of
     * k1/6 (0.15^3 - 3 r 0.15^2 + r^2 (3 - r) 0.15) = 0.018386; design lift pi A1 = 0.3 (first digit 2 -> 0.15*2);
     * thickness is the 0012 one. */
    if (ENSURE_OK(ad_airfoil_naca("23012", (int)np, 0, &o))) {
        double best = -1, best_x = 0, x, yc, yt;
        const double r = 0.2025, k1 = 15.957;
        for (size_t i = 0; i < np; i++) {
            station(&o, np, i, &x, &yc, &yt);
            if (yc > best) best = yc, best_x = x;
            double ref = x < r ? k1 / 6.0 * (x * x * x - 3.0 * r * x * x + r * r * (3.0 - r) * x)
                               : k1 * r * r * r / 6.0 * (1.0 - x);
            double t =
                0.6 * (0.2969 * sqrt(x) - 0.1260 * x - 0.3516 * x * x + 0.2843 * x * x * x - 0.1015 * x * x * x * x);
            ENSURE_MSG(fabs(yc - ref) < 1e-12 && fabs(yt - t) < 1e-12,
                       "23012 station %zu x=%.5f: yc %.8f vs %.8f, yt %.8f vs %.8f", i, x, yc, ref, yt, t);
        }
        ENSURE_NEAR(best, 0.018386, 2e-6);
        ENSURE_NEAR(best_x, 0.15, 0.005);
        /* the 0012 thickness at x = 0.3, laid off normal to the mean line */
        ENSURE_NEAR(surface_y(&o, np, 1, 0.3) - surface_y(&o, np, 0, 0.3), 2 * 0.06002, 1e-4);
        thin_airfoil ta = thin_airfoil_of(&o, np);
        ENSURE_NEAR(ta.cl_ideal, 0.300, 0.002);
        ENSURE(ta.cm_c4 < -0.01); /* the plain 230 line pitches nose down */
        ad_outline_free(&o);
    }

    /* NACA 43012: first digit 4 -> design lift 0.6, twice the camber of 23012 */
    if (ENSURE_OK(ad_airfoil_naca("43012", (int)np, 0, &o))) {
        thin_airfoil ta = thin_airfoil_of(&o, np);
        ENSURE_NEAR(ta.cl_ideal, 0.600, 0.004);
        ad_outline_free(&o);
    }

    /* NACA 23112: reflexed mean line 231 (r = 0.2170, k1 = 15.793, k2/k1 = 0.00677): max camber still at 0.15, the
     * same design lift 0.3, and the point of the reflex, a quarter-chord moment near zero (thin-airfoil theory
     * gives +0.001 with the tabulated constants, against -0.013 for the plain 230 line) */
    if (ENSURE_OK(ad_airfoil_naca("23112", (int)np, 0, &o))) {
        double best = -1, best_x = 0, x, yc, yt;
        for (size_t i = 0; i < np; i++) {
            station(&o, np, i, &x, &yc, &yt);
            if (yc > best) best = yc, best_x = x;
        }
        ENSURE_NEAR(best_x, 0.15, 0.005);
        station(&o, np, np - 1, &x, &yc, &yt);
        ENSURE_NEAR(yc, 0.0, 1e-12); /* mean line ends on the chord */
        thin_airfoil ta = thin_airfoil_of(&o, np);
        ENSURE_NEAR(ta.cl_ideal, 0.300, 0.004);
        ENSURE_NEAR(ta.cm_c4, 0.0, 0.002);
        ad_outline_free(&o);
    }

    /* every 5-digit mean line in the tables gives a valid section */
    static const char *five[] = {"21012", "22012", "23012", "24012", "25012", "22112", "23112", "24112", "25112"};
    for (size_t k = 0; k < sizeof five / sizeof five[0]; k++) {
        if (ENSURE_OK(ad_airfoil_naca(five[k], 64, k % 2, &o))) {
            ENSURE_OK(ad_outline_check(&o, five[k]));
            double area;
            ENSURE_OK(ad_outline_area(&o, &area));
            ENSURE_NEAR(area, 0.0821, 3e-3); /* camber barely changes the area */
            ad_outline_free(&o);
        }
    }
}

static void expect_invalid(const char *digits, int panels, const char *field, const char *needle)
{
    ad_outline o = {(double *)1, (double *)1, 7, 1}; /* junk: must come back zeroed */
    ad_status st = ad_airfoil_naca(digits, panels, 0, &o);
    ENSURE_MSG(st.code == AD_ERR_INVALID, "naca \"%s\": code %d", digits ? digits : "(null)", (int)st.code);
    ENSURE_MSG(strcmp(st.field, field) == 0, "naca \"%s\": field '%s'", digits ? digits : "(null)", st.field);
    ENSURE_MSG(contains(st.message, needle), "naca \"%s\": message '%s' lacks '%s'", digits ? digits : "(null)",
               st.message, needle);
    ENSURE(o.x == NULL && o.y == NULL && o.n == 0);
}

static void test_naca_invalid(void)
{
    expect_invalid("2a12", 50, "digits", "2a12");
    expect_invalid("123", 50, "digits", "123");
    expect_invalid("241234", 50, "digits", "241234");
    expect_invalid("", 50, "digits", "\"\"");
    expect_invalid(NULL, 50, "digits", "NULL");
    expect_invalid("2012", 50, "digits", "2012");   /* camber without a position */
    expect_invalid("0412", 50, "digits", "0412");   /* a position without camber */
    expect_invalid("2400", 50, "digits", "2400");   /* no thickness */
    expect_invalid("23212", 50, "digits", "23212"); /* third digit 0 or 1 */
    expect_invalid("21112", 50, "digits", "21112"); /* no reflexed 211 line */
    expect_invalid("26012", 50, "digits", "26012"); /* camber position beyond the table */
    expect_invalid("03012", 50, "digits", "03012"); /* no design lift */
    expect_invalid("2412", 7, "panels", "2412");
}

/* -------------------------------------------------------------- files -- */

static int same_outline(const ad_outline *a, const ad_outline *b, double tol)
{
    if (a->n != b->n || a->closed != b->closed) return 0;
    for (size_t i = 0; i < a->n; i++)
        if (!(fabs(a->x[i] - b->x[i]) <= tol && fabs(a->y[i] - b->y[i]) <= tol)) return 0;
    return 1;
}

static void test_load(void)
{
    ad_outline selig, led, o;
    REQUIRE_OK(ad_airfoil_load(src_path("scenes/airfoils/naca2412.dat"), &selig));
    REQUIRE_OK(ad_airfoil_load(src_path("scenes/airfoils/naca2412_lednicer.dat"), &led));

    /* 18 stations per surface sharing the LE: 35 points, no repeated closing point (open TE) */
    ENSURE(selig.n == 35 && selig.closed == 1);
    ENSURE_MSG(same_outline(&selig, &led, 0.0), "Selig and Lednicer NACA 2412 differ (n %zu vs %zu)", selig.n, led.n);
    /* Selig order: upper TE first, LE in the middle, lower TE last; counter-clockwise */
    ENSURE_NEAR(selig.x[0], 1.0, 0.0);
    ENSURE_NEAR(selig.y[0], 0.0013, 1e-15);
    ENSURE_NEAR(selig.x[17], 0.0, 0.0);
    ENSURE_NEAR(selig.y[17], 0.0, 0.0);
    ENSURE_NEAR(selig.y[34], -0.0013, 1e-15);
    double area;
    ENSURE_OK(ad_outline_area(&selig, &area));
    ENSURE(area > 0.08 && area < 0.09);
    ENSURE_OK(ad_outline_check(&selig, "naca2412.dat"));

    /* the file's Abbott ordinates agree with the generated section as the tables do */
    ad_outline gen;
    const size_t np = 400;
    if (ENSURE_OK(ad_airfoil_naca("2412", (int)np, 0, &gen))) {
        for (size_t i = 1; i < 17; i++) {
            ENSURE_NEAR(selig.y[i], surface_y(&gen, np, 1, selig.x[i]), 2e-4);
            ENSURE_NEAR(selig.y[34 - i], surface_y(&gen, np, 0, selig.x[34 - i]), 2e-4);
        }
        ad_outline_free(&gen);
    }

    /* the same section in percent chord, in millimetres away from the origin, without blank lines, and running
     * clockwise with a repeated closing point: all normalise to the same outline */
    static const char *variants[] = {"tests/data/airfoils/naca2412_percent.dat", "tests/data/airfoils/naca2412_mm.dat",
                                     "tests/data/airfoils/naca2412_lednicer_noblank.dat",
                                     "tests/data/airfoils/naca2412_clockwise.dat"};
    for (size_t k = 0; k < sizeof variants / sizeof variants[0]; k++) {
        if (!ENSURE_OK(ad_airfoil_load(src_path(variants[k]), &o))) continue;
        ENSURE_MSG(same_outline(&selig, &o, 1e-12), "%s does not load to the NACA 2412 outline (n = %zu)", variants[k],
                   o.n);
        ad_outline_free(&o);
    }

    /* the other scene files load and pass the check; 4412 (Lednicer) and 0012 match the generator */
    static const struct {
        const char *path, *digits;
        double tol;
    } scene_files[] = {{"scenes/airfoils/naca4412.dat", "4412", 2e-4}, {"scenes/airfoils/naca0012.dat", "0012", 2e-5}};
    for (size_t k = 0; k < sizeof scene_files / sizeof scene_files[0]; k++) {
        if (!ENSURE_OK(ad_airfoil_load(src_path(scene_files[k].path), &o))) continue;
        if (ENSURE_OK(ad_airfoil_naca(scene_files[k].digits, (int)np, 0, &gen))) {
            for (size_t i = 1; i + 1 < o.n; i++) {
                int upper = i < o.n / 2;
                ENSURE_NEAR(o.y[i], surface_y(&gen, np, upper, o.x[i]), scene_files[k].tol);
            }
            ad_outline_free(&gen);
        }
        ad_outline_free(&o);
    }
    ad_outline_free(&selig);
    ad_outline_free(&led);
}

/* The rest of a load of `what` into o that had to fail with st: the message holds each of the (up to three)
 * needles, o is left empty; the message printed after `shown`. */
static void failed_load(const char *what, const char *shown, ad_status st, ad_outline *o, const char *n1,
                        const char *n2, const char *n3)
{
    const char *needles[3] = {n1, n2, n3};
    for (int k = 0; k < 3; k++)
        if (needles[k])
            ENSURE_MSG(contains(st.message, needles[k]), "%s: message '%s' lacks '%s'", what, st.message, needles[k]);
    ENSURE(o->x == NULL && o->n == 0);
    if (st.code == AD_OK)
        ad_outline_free(o);
    else
        printf("  %-44s -> %s\n", shown, st.message);
}

/* Loading `rel` fails with `code`, and the message holds each of the (up to three) needles. */
static void expect_load_error(const char *rel, ad_code code, const char *n1, const char *n2, const char *n3)
{
    ad_outline o;
    ad_status st = ad_airfoil_load(src_path(rel), &o);
    ENSURE_MSG(st.code == code, "%s: code %d (%s), expected %d: %s", rel, (int)st.code, ad_code_name(st.code),
               (int)code, st.message);
    failed_load(rel, rel, st, &o, n1, n2, n3);
}

static void test_load_errors(void)
{
    expect_load_error("tests/data/airfoils/no_such_file.dat", AD_ERR_IO, "no_such_file.dat", NULL, NULL);
    expect_load_error("tests/data/airfoils/bad_number.dat", AD_ERR_FORMAT, "bad_number.dat:7:", "0.06S6", NULL);
    expect_load_error("tests/data/airfoils/not_finite.dat", AD_ERR_FORMAT, "not_finite.dat:11:", "not finite", NULL);
    /* the header (line 2) says 18 upper points; the upper block starting on line 4 has 17 */
    expect_load_error("tests/data/airfoils/lednicer_counts.dat", AD_ERR_FORMAT, "lednicer_counts.dat:4:", "line 2",
                      "has 17");
    expect_load_error("tests/data/airfoils/too_few.dat", AD_ERR_FORMAT, "too_few.dat:6:", "too few", NULL);
    expect_load_error("tests/data/airfoils/empty.dat", AD_ERR_FORMAT, "empty.dat:", "no coordinates", NULL);
    /* figure 8: the edge from line 4 to line 5 crosses the one from line 7 to line 8 */
    expect_load_error("tests/data/airfoils/figure8_te.dat", AD_ERR_FORMAT, "figure8_te.dat:", "crosses itself", NULL);
    ad_outline o;
    ad_status st = ad_airfoil_load(src_path("tests/data/airfoils/figure8_te.dat"), &o);
    ENSURE(contains(st.message, "line 4") && contains(st.message, "line 5") && contains(st.message, "line 7") &&
           contains(st.message, "line 8"));
}

#include "test_airfoil_robust.h"

/* -------------------------------------------------------------- check -- */

static void test_check(void)
{
    /* figure 8 in memory: the edge 2-3 crosses the edge 5-6 */
    double fx[8] = {1.0, 0.75, 0.5, 0.25, 0.0, 0.25, 0.5, 0.75};
    double fy[8] = {0.0, 0.1, 0.1, -0.1, 0.0, 0.1, -0.1, -0.1};
    ad_outline f8 = {fx, fy, 8, 1};
    ad_status st = ad_outline_check(&f8, "my figure 8");
    ENSURE(st.code == AD_ERR_INVALID && strcmp(st.field, "body") == 0);
    ENSURE_MSG(contains(st.message, "my figure 8") && contains(st.message, "crosses"), "%s", st.message);
    ENSURE_MSG(contains(st.message, "point 2 to 3") && contains(st.message, "point 5 to 6"), "%s", st.message);

    /* a square with a point repeated: zero-length edge */
    double sx[9] = {1, 1, 0.5, 0, 0, 0, 0.5, 1, 1};
    double sy[9] = {0, 1, 1, 1, 0, -1, -1, -1, -1};
    ad_outline sq = {sx, sy, 9, 1};
    st = ad_outline_check(&sq, "square");
    ENSURE_MSG(st.code == AD_ERR_INVALID && contains(st.message, "zero length"), "%s", st.message);
    sq.n = 8; /* without the repeat it is fine */
    ENSURE_OK(ad_outline_check(&sq, "square"));
    /* the outline touching itself at a vertex counts as crossing */
    double tx[8] = {1, 0.5, 0, 0.5, 1, 0.75, 0.5, 0.75};
    double ty[8] = {1, 0, 1, 0, -1, -0.5, 0, 0.5};
    ad_outline touch = {tx, ty, 8, 1};
    ENSURE(ad_outline_check(&touch, "touch").code == AD_ERR_INVALID);
    /* too few points for a closed outline; enough for an open one */
    sq.n = 7;
    st = ad_outline_check(&sq, "seven");
    ENSURE_MSG(st.code == AD_ERR_INVALID && contains(st.message, "seven"), "%s", st.message);
    sq.closed = 0;
    ENSURE_OK(ad_outline_check(&sq, "open seven"));
    /* an open polyline folding back onto itself */
    double px[3] = {0, 1, 0.5}, py[3] = {0, 0, 0};
    ad_outline fold = {px, py, 3, 0};
    ENSURE(ad_outline_check(&fold, "fold").code == AD_ERR_INVALID);
    /* not finite */
    double nx[8], ny[8];
    memcpy(nx, sx, sizeof nx);
    memcpy(ny, sy, sizeof ny);
    ny[3] = NAN;
    ad_outline nan_o = {nx, ny, 8, 1};
    st = ad_outline_check(&nan_o, "nan");
    ENSURE_MSG(st.code == AD_ERR_INVALID && contains(st.message, "not finite"), "%s", st.message);
    ENSURE(ad_outline_check(NULL, "null").code == AD_ERR_INVALID);
}

/* -------------------------------------------------------------- shapes -- */

static void test_shapes(void)
{
    ad_outline o;
    double area;
    if (ENSURE_OK(ad_shape_plate(0.0, &o))) {
        ENSURE(o.n == 2 && o.closed == 0);
        ENSURE(o.x[0] == 0.0 && o.y[0] == 0.0 && o.x[1] == 1.0 && o.y[1] == 0.0);
        ENSURE_OK(ad_outline_check(&o, "plate"));
        ENSURE_OK(ad_outline_area(&o, &area));
        ENSURE_NEAR(area, 0.0, 0.0);
        ad_outline_free(&o);
    }
    if (ENSURE_OK(ad_shape_plate(0.02, &o))) {
        ENSURE(o.closed == 1 && o.n >= AD_OUTLINE_MIN_CLOSED);
        ENSURE_OK(ad_outline_check(&o, "thick plate"));
        ENSURE_OK(ad_outline_area(&o, &area));
        ENSURE_NEAR(area, 0.02, 1e-15);
        ad_outline_free(&o);
    }
    if (ENSURE_OK(ad_shape_wedge(10.0, &o))) {
        ENSURE_OK(ad_outline_check(&o, "wedge"));
        ENSURE_OK(ad_outline_area(&o, &area));
        ENSURE_NEAR(area, tan(10.0 * TU_PI / 180.0), 1e-14); /* base 2 tan(h), height 1 */
        ad_outline_free(&o);
    }
    if (ENSURE_OK(ad_shape_circle(256, &o))) {
        ENSURE_OK(ad_outline_check(&o, "circle"));
        ENSURE_OK(ad_outline_area(&o, &area));
        ENSURE_NEAR(area, 256 / 2.0 * 0.25 * sin(2.0 * TU_PI / 256), 1e-14); /* inscribed polygon, r = 0.5 */
        ENSURE_NEAR(area, TU_PI / 4.0, 1e-4);
        ENSURE(o.x[128] == 0.0 && o.y[128] == 0.0 && o.x[0] == 1.0);
        ad_outline_free(&o);
    }
    ENSURE(ad_shape_plate(-0.1, &o).code == AD_ERR_INVALID);
    ENSURE(ad_shape_plate(NAN, &o).code == AD_ERR_INVALID);
    ENSURE(ad_shape_wedge(0.0, &o).code == AD_ERR_INVALID);
    ENSURE(ad_shape_wedge(90.0, &o).code == AD_ERR_INVALID);
    ENSURE(ad_shape_circle(7, &o).code == AD_ERR_INVALID);
}

/* ------------------------------------------------------------- placing -- */

static int same_bits(float a, float b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

static void test_place(void)
{
    const size_t np = 100;
    const double chord = 2.0, aoa = 10.0, px = 30.0, py = 20.0;
    ad_outline o;
    REQUIRE_OK(ad_airfoil_naca("2412", (int)np, 1, &o)); /* closed TE: point 0 is (1,0) */
    ad_segment *s = NULL;
    size_t ns = 0;
    if (ENSURE_OK(ad_outline_place(&o, chord, aoa, px, py, &s, &ns))) {
        ENSURE(ns == o.n);
        int chained = 1;
        for (size_t k = 0; k < ns; k++) {
            size_t k1 = (k + 1) % ns;
            chained &= same_bits(s[k].x1, s[k1].x0) && same_bits(s[k].y1, s[k1].y0);
        }
        ENSURE_MSG(chained, "segment ends and the next starts differ");
        /* LE (point np-1) above TE (point 0): positive aoa is nose up for flow along +x */
        float lex = s[np - 1].x0, ley = s[np - 1].y0, tex = s[0].x0, tey = s[0].y0;
        ENSURE(ley > tey);
        ENSURE(lex < tex);
        double a = aoa * TU_PI / 180.0;
        ENSURE_NEAR(ley - tey, chord * sin(a), 1e-5);
        ENSURE_NEAR(tex - lex, chord * cos(a), 1e-5);
        /* the quarter-chord point (0.25, 0) = 3/4 LE + 1/4 TE lands on the pivot */
        ENSURE_NEAR(0.75 * lex + 0.25 * tex, px, 1e-5);
        ENSURE_NEAR(0.75 * ley + 0.25 * tey, py, 1e-5);
        /* a rigid motion and a scaling: the area grows by chord^2 */
        double area = 0, ref;
        for (size_t k = 0; k < ns; k++)
            area += 0.5 *
                    (((double)s[k].x0 - px) * ((double)s[k].y1 - py) - ((double)s[k].x1 - px) * ((double)s[k].y0 - py));
        ENSURE_OK(ad_outline_area(&o, &ref));
        ENSURE_REL(area, chord * chord * ref, 1e-5);
        free(s);
    }

    /* aoa 0: chord along +x, quarter chord on the pivot */
    if (ENSURE_OK(ad_outline_place(&o, chord, 0.0, px, py, &s, &ns))) {
        ENSURE_NEAR(s[np - 1].x0, px - 0.25 * chord, 1e-5);
        ENSURE_NEAR(s[np - 1].y0, py, 1e-6);
        ENSURE_NEAR(s[0].x0, px + 0.75 * chord, 1e-5);
        free(s);
    }

    /* an open plate: one segment */
    ad_outline plate;
    if (ENSURE_OK(ad_shape_plate(0.0, &plate))) {
        if (ENSURE_OK(ad_outline_place(&plate, 1.0, 90.0, 5.0, 5.0, &s, &ns))) {
            ENSURE(ns == 1);
            ENSURE_NEAR(s[0].x0, 5.0, 1e-6); /* vertical, LE on top */
            ENSURE_NEAR(s[0].y0, 5.25, 1e-6);
            ENSURE_NEAR(s[0].y1, 4.25, 1e-6);
            free(s);
        }
        ad_outline_free(&plate);
    }

    /* bad arguments; float precision that would collapse edges */
    ENSURE(ad_outline_place(&o, 0.0, 0.0, 0.0, 0.0, &s, &ns).code == AD_ERR_INVALID && s == NULL && ns == 0);
    ENSURE(ad_outline_place(&o, 1.0, NAN, 0.0, 0.0, &s, &ns).code == AD_ERR_INVALID);
    ad_status st = ad_outline_place(&o, 1e-3, 0.0, 1e7, 0.0, &s, &ns);
    ENSURE_MSG(st.code == AD_ERR_INVALID && contains(st.message, "float"), "%s", st.message);
    ENSURE(s == NULL);
    if (st.code == AD_OK) free(s);
    ad_outline_free(&o);
}

int main(int argc, char **argv)
{
    if (argc > 1) g_root = argv[1];
    test_naca_tables();
    test_naca_properties();
    test_naca_invalid();
    test_load();
    test_load_errors();
    test_load_refused();
    test_load_refused_data();
    test_check();
    test_check_vs_reference();
    test_check_time();
    test_shapes();
    test_place();
    return tu_finish("test_airfoil");
}
