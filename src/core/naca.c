/* NACA 4- and 5-digit sections with cosine spacing.
 *
 * NACA sections (Abbott & von Doenhoff, Theory of Wing Sections, ch. 6; NASA TM 4741):
 *   thickness  y_t = 5 t (0.2969 sqrt(x) - 0.1260 x - 0.3516 x^2 + 0.2843 x^3 - 0.1015 x^4)  (-0.1036: closed TE)
 *   surfaces   x_u = x - y_t sin(th), y_u = y_c + y_t cos(th);  x_l = x + y_t sin(th), y_l = y_c - y_t cos(th),
 *              th = atan(dy_c/dx): thickness is laid off normal to the mean line.
 *   4-digit mean line, max camber m at p:  y_c = m/p^2 (2 p x - x^2)                 x < p
 *                                          y_c = m/(1-p)^2 (1 - 2p + 2 p x - x^2)   x >= p
 *   5-digit mean line LPQ, design lift 0.15 L; tabulated r, k1 (and k2/k1 when reflexed, Q = 1) are for
 *   design lift 0.3, so y_c is scaled by L/2:
 *     standard   y_c = k1/6 (x^3 - 3 r x^2 + r^2 (3 - r) x)                      x < r
 *                y_c = k1 r^3/6 (1 - x)                                          x >= r
 *     reflexed   y_c = k1/6 ((x - r)^3 - k21 (1 - r)^3 x - r^3 x + r^3)           x < r
 *                y_c = k1/6 (k21 (x - r)^3 - k21 (1 - r)^3 x - r^3 x + r^3)      x >= r
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "outline_internal.h"
#include "world_internal.h"

#define AD_AIRFOIL_PI 3.14159265358979323846

typedef struct naca_def {
    int five;          /* 5-digit mean line */
    int reflexed;      /* 5-digit, Q = 1 */
    double m, p;       /* 4-digit: max camber and its position [chord] */
    double r, k1, k21; /* 5-digit: mean-line constants for design lift 0.3 */
    double scale;      /* 5-digit: design lift / 0.3 */
    double t;          /* max thickness [chord] */
} naca_def;

/* 5-digit mean-line constants as published for design lift 0.3 (Abbott & von Doenhoff, Theory of Wing Sections,
 * ch. 6; NASA TM 4741), indexed by P (camber position digit: max camber at p = 0.05 P chord). The reflexed k2/k1
 * column is (3 (r - p)^2 - r^3) / (1 - r)^3, which puts zero slope at p. Tabulated rather than solved for, so that
 * sections match the published ordinates. */
typedef struct naca5_line {
    double r, k1, k21;
} naca5_line;
static const naca5_line naca5_standard[6] = {{0, 0, 0},           {0.0580, 361.400, 0}, {0.1260, 51.640, 0},
                                             {0.2025, 15.957, 0}, {0.2900, 6.643, 0},   {0.3910, 3.230, 0}},
                        naca5_reflexed[6] = {{0, 0, 0},
                                             {0, 0, 0}, /* no 211 mean line was defined */
                                             {0.1300, 51.990, 0.000764},
                                             {0.2170, 15.793, 0.00677},
                                             {0.3180, 6.520, 0.0303},
                                             {0.4410, 3.191, 0.1355}};

static ad_status naca_parse(const char *digits, naca_def *d)
{
    memset(d, 0, sizeof *d);
    if (!digits) return ad_fail(AD_ERR_INVALID, "digits", "NACA digits are missing (NULL).");
    size_t len = strlen(digits);
    int ok = len == 4 || len == 5;
    for (size_t i = 0; ok && i < len; i++)
        ok = digits[i] >= '0' && digits[i] <= '9';
    if (!ok)
        return ad_fail(AD_ERR_INVALID, "digits",
                       "NACA \"%.40s\": expected 4 digits (\"2412\") or 5 digits (\"23012\").", digits);
    int v[5];
    for (size_t i = 0; i < len; i++)
        v[i] = digits[i] - '0';
    int tt = v[len - 2] * 10 + v[len - 1];
    if (tt == 0) return ad_fail(AD_ERR_INVALID, "digits", "NACA %s: the thickness (last two digits) is zero.", digits);
    d->t = tt / 100.0;
    if (len == 4) {
        d->m = v[0] / 100.0;
        d->p = v[1] / 10.0;
        if (v[0] > 0 && v[1] == 0)
            return ad_fail(AD_ERR_INVALID, "digits",
                           "NACA %s: %d%% camber needs a camber position (second digit) of 1 to 9, not 0.", digits,
                           v[0]);
        if (v[0] == 0 && v[1] != 0)
            return ad_fail(AD_ERR_INVALID, "digits",
                           "NACA %s: a symmetric section (first digit 0) has no camber position; write 00%02d.", digits,
                           tt);
        return ad_ok();
    }
    d->five = 1;
    if (v[0] == 0)
        return ad_fail(AD_ERR_INVALID, "digits", "NACA %s: the design lift digit (first) must be 1 to 9, not 0.",
                       digits);
    if (v[2] > 1)
        return ad_fail(AD_ERR_INVALID, "digits",
                       "NACA %s: the third digit must be 0 (standard) or 1 (reflexed mean line), not %d.", digits,
                       v[2]);
    d->reflexed = v[2];
    int lo = d->reflexed ? 2 : 1;
    if (v[1] < lo || v[1] > 5)
        return ad_fail(AD_ERR_INVALID, "digits",
                       "NACA %s: the camber position digit (second) must be %d to 5 for a %s mean line, not %d.",
                       digits, lo, d->reflexed ? "reflexed" : "standard", v[1]);
    naca5_line line = d->reflexed ? naca5_reflexed[v[1]] : naca5_standard[v[1]];
    d->r = line.r;
    d->k1 = line.k1;
    d->k21 = line.k21;
    d->scale = v[0] / 2.0;
    return ad_ok();
}

static double naca_thickness(const naca_def *d, double x, int closed_te)
{
    double a4 = closed_te ? -0.1036 : -0.1015;
    return 5.0 * d->t * (0.2969 * sqrt(x) + x * (-0.1260 + x * (-0.3516 + x * (0.2843 + x * a4))));
}

static void naca_camber(const naca_def *d, double x, double *yc, double *dyc)
{
    if (!d->five) {
        double m = d->m, p = d->p;
        if (m == 0.0) {
            *yc = *dyc = 0.0;
        } else if (x < p) {
            *yc = m / (p * p) * (2.0 * p * x - x * x);
            *dyc = 2.0 * m / (p * p) * (p - x);
        } else {
            double q = (1.0 - p) * (1.0 - p);
            *yc = m / q * (1.0 - 2.0 * p + 2.0 * p * x - x * x);
            *dyc = 2.0 * m / q * (p - x);
        }
        return;
    }
    double r = d->r, k = d->k1 / 6.0 * d->scale, r3 = r * r * r;
    if (!d->reflexed) {
        if (x < r) {
            *yc = k * (x * x * x - 3.0 * r * x * x + r * r * (3.0 - r) * x);
            *dyc = k * (3.0 * x * x - 6.0 * r * x + r * r * (3.0 - r));
        } else {
            *yc = k * r3 * (1.0 - x);
            *dyc = -k * r3;
        }
        return;
    }
    double k21 = d->k21, s = 1.0 - r, s3 = s * s * s, u = x - r;
    if (x < r) {
        *yc = k * (u * u * u - k21 * s3 * x - r3 * x + r3);
        *dyc = k * (3.0 * u * u - k21 * s3 - r3);
    } else {
        *yc = k * (k21 * u * u * u - k21 * s3 * x - r3 * x + r3);
        *dyc = k * (3.0 * k21 * u * u - k21 * s3 - r3);
    }
}

ad_status ad_airfoil_naca(const char *digits, int panels, int closed_te, ad_outline *out)
{
    if (!out) return ad_fail(AD_ERR_INVALID, "out", "ad_airfoil_naca: no output outline given.");
    memset(out, 0, sizeof *out);
    naca_def d;
    ad_status st = naca_parse(digits, &d);
    if (st.code != AD_OK) return st;
    if (panels < 8 || panels > AD_OUTLINE_MAX_PANELS)
        return ad_fail(AD_ERR_INVALID, "panels", "NACA %s: %d points per surface; give 8 to %d.", digits, panels,
                       AD_OUTLINE_MAX_PANELS);

    size_t np = (size_t)panels;
    size_t n = closed_te ? 2 * np - 2 : 2 * np - 1;
    st = ad_outline_alloc(n, 1, out, "digits");
    if (st.code != AD_OK) return st;

    size_t k = 0;
    /* upper surface TE -> LE, then lower surface after the LE; a closed TE drops the lower TE point, which
     * coincides with the upper one */
    for (int pass = 0; pass < 2; pass++) {
        size_t count = pass == 0 ? np : (closed_te ? np - 2 : np - 1);
        for (size_t j = 0; j < count; j++) {
            size_t i = pass == 0 ? np - 1 - j : j + 1;
            /* cosine spacing clusters points at both edges, where the curvature is */
            double x = i == 0        ? 0.0
                       : i == np - 1 ? 1.0
                                     : 0.5 * (1.0 - cos(AD_AIRFOIL_PI * (double)i / (double)(np - 1)));
            double yt = (closed_te && i == np - 1) ? 0.0 : naca_thickness(&d, x, closed_te);
            double yc, dyc;
            naca_camber(&d, x, &yc, &dyc);
            double th = atan(dyc), sn = sin(th), cs = cos(th);
            double side = pass == 0 ? 1.0 : -1.0;
            out->x[k] = x - side * yt * sn;
            out->y[k] = yc + side * yt * cs;
            k++;
        }
    }

    char what[64];
    snprintf(what, sizeof what, "NACA %s", digits);
    st = ad_outline_check(out, what);
    if (st.code != AD_OK) {
        /* extreme digits (e.g. "9999") can give a section that folds over itself */
        ad_outline_free(out);
        snprintf(st.field, sizeof st.field, "digits");
    }
    return st;
}
