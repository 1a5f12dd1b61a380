/* Body outlines: NACA sections, UIUC coordinate files, simple shapes, validity check, placement as segments.
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
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "airfoil.h"
#include "world_internal.h"

#define AD_AIRFOIL_PI 3.14159265358979323846

/* Edges shorter than this fraction of the outline's size are zero-length: far below any disc radius, and short
 * enough that float segments could collapse. Loading drops such repeats instead of failing on them. */
#define AD_OUTLINE_MIN_EDGE 1e-9

void ad_outline_free(ad_outline *o)
{
    if (!o) return;
    free(o->x);
    free(o->y);
    o->x = o->y = NULL;
    o->n = 0;
    o->closed = 0;
}

static ad_status outline_alloc(size_t n, int closed, ad_outline *out, const char *field)
{
    out->x = malloc(n * sizeof *out->x);
    out->y = malloc(n * sizeof *out->y);
    out->n = n;
    out->closed = closed;
    if (!out->x || !out->y) {
        ad_outline_free(out);
        return ad_fail(AD_ERR_NO_MEMORY, field, "Cannot allocate an outline of %zu points.", n);
    }
    return ad_ok();
}

/* ---------------------------------------------------------------- check -- */

typedef enum check_kind {
    CHECK_OK = 0,
    CHECK_NULL,      /* no points array, or closed flag not 0/1 */
    CHECK_FEW,       /* too few points */
    CHECK_NONFINITE, /* point i */
    CHECK_SHORT,     /* edge i */
    CHECK_CROSS,     /* edges i and j meet */
} check_kind;

typedef struct check_result {
    check_kind kind;
    size_t i, j;
} check_result;

typedef struct edge_box {
    double x0, x1; /* extent along x */
    size_t e;      /* edge index: from point e to point e+1 (mod n when closed) */
} edge_box;

static int edge_box_cmp(const void *a, const void *b)
{
    const edge_box *p = a, *q = b;
    if (p->x0 != q->x0) return p->x0 < q->x0 ? -1 : 1;
    return (p->e > q->e) - (p->e < q->e); /* ties by index: qsort is not stable, the report should be */
}

static double orient(double ax, double ay, double bx, double by, double cx, double cy)
{
    return (bx - ax) * (cy - ay) - (by - ay) * (cx - ax);
}

static int sgn(double v)
{
    return (v > 0) - (v < 0);
}

/* c lies within the bounding box of a-b (used only when a, b, c are collinear) */
static int within(double ax, double ay, double bx, double by, double cx, double cy)
{
    return fmin(ax, bx) <= cx && cx <= fmax(ax, bx) && fmin(ay, by) <= cy && cy <= fmax(ay, by);
}

/* Closed segments a-b and c-d share at least one point (touching counts). */
static int segments_meet(double ax, double ay, double bx, double by, double cx, double cy, double dx, double dy)
{
    int d1 = sgn(orient(cx, cy, dx, dy, ax, ay));
    int d2 = sgn(orient(cx, cy, dx, dy, bx, by));
    int d3 = sgn(orient(ax, ay, bx, by, cx, cy));
    int d4 = sgn(orient(ax, ay, bx, by, dx, dy));
    if (d1 * d2 < 0 && d3 * d4 < 0) return 1;
    if (d1 == 0 && within(cx, cy, dx, dy, ax, ay)) return 1;
    if (d2 == 0 && within(cx, cy, dx, dy, bx, by)) return 1;
    if (d3 == 0 && within(ax, ay, bx, by, cx, cy)) return 1;
    if (d4 == 0 && within(ax, ay, bx, by, dx, dy)) return 1;
    return 0;
}

/* The outline's size: the larger side of its bounding box. */
static double outline_size(const double *x, const double *y, size_t n)
{
    if (n == 0) return 0.0;
    double x0 = x[0], x1 = x[0], y0 = y[0], y1 = y[0];
    for (size_t i = 1; i < n; i++) {
        x0 = fmin(x0, x[i]);
        x1 = fmax(x1, x[i]);
        y0 = fmin(y0, y[i]);
        y1 = fmax(y1, y[i]);
    }
    return fmax(x1 - x0, y1 - y0);
}

static check_result check_core(const ad_outline *o)
{
    check_result r = {CHECK_OK, 0, 0};
    if ((o->n > 0 && (!o->x || !o->y)) || (o->closed != 0 && o->closed != 1)) {
        r.kind = CHECK_NULL;
        return r;
    }
    size_t n = o->n;
    if (n < (o->closed ? (size_t)AD_OUTLINE_MIN_CLOSED : 2)) {
        r.kind = CHECK_FEW;
        return r;
    }
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(o->x[i]) || !isfinite(o->y[i])) {
            r.kind = CHECK_NONFINITE;
            r.i = i;
            return r;
        }
    }
    const double *x = o->x, *y = o->y;
    size_t m = o->closed ? n : n - 1; /* edges */
    double min_len = AD_OUTLINE_MIN_EDGE * outline_size(x, y, n);
    for (size_t e = 0; e < m; e++) {
        size_t f = (e + 1) % n;
        if (!(hypot(x[f] - x[e], y[f] - y[e]) > min_len)) {
            r.kind = CHECK_SHORT;
            r.i = e;
            return r;
        }
    }

    /* Neighbouring edges share a point by construction; they only overlap if the outline folds straight back. */
    size_t joints = o->closed ? n : n - 2; /* vertices with an edge on each side */
    for (size_t e = 0; e < joints; e++) {
        size_t a = e, b = (e + 1) % n, c = (e + 2) % n;
        double cr = orient(x[a], y[a], x[b], y[b], x[c], y[c]);
        double dot = (x[b] - x[a]) * (x[c] - x[b]) + (y[b] - y[a]) * (y[c] - y[b]);
        if (cr == 0.0 && dot < 0.0) {
            r.kind = CHECK_CROSS;
            r.i = e;
            r.j = (e + 1) % m;
            return r;
        }
    }

    /* Sweep along x: only edges whose x extents overlap can meet, which keeps this near linear for airfoils. */
    edge_box *box = malloc(m * sizeof *box);
    if (!box) {
        /* Too little memory for the sweep: fall back to every pair, which needs none. */
        for (size_t e = 0; e < m; e++) {
            for (size_t g = e + 2; g < m; g++) {
                if (o->closed && e == 0 && g == m - 1) continue;
                size_t e1 = (e + 1) % n, g1 = (g + 1) % n;
                if (segments_meet(x[e], y[e], x[e1], y[e1], x[g], y[g], x[g1], y[g1])) {
                    r.kind = CHECK_CROSS;
                    r.i = e;
                    r.j = g;
                    return r;
                }
            }
        }
        return r;
    }
    for (size_t e = 0; e < m; e++) {
        size_t f = (e + 1) % n;
        box[e].x0 = fmin(x[e], x[f]);
        box[e].x1 = fmax(x[e], x[f]);
        box[e].e = e;
    }
    qsort(box, m, sizeof *box, edge_box_cmp);
    size_t best_i = 0, best_j = 0;
    int found = 0;
    for (size_t s = 0; s < m; s++) {
        for (size_t t = s + 1; t < m && box[t].x0 <= box[s].x1; t++) {
            size_t e = box[s].e < box[t].e ? box[s].e : box[t].e;
            size_t g = box[s].e < box[t].e ? box[t].e : box[s].e;
            if (g == e + 1 || (o->closed && e == 0 && g == m - 1)) continue; /* neighbours, handled above */
            size_t e1 = (e + 1) % n, g1 = (g + 1) % n;
            if (!segments_meet(x[e], y[e], x[e1], y[e1], x[g], y[g], x[g1], y[g1])) continue;
            /* report the first crossing in outline order, whatever order the sweep finds them in */
            if (!found || e < best_i || (e == best_i && g < best_j)) {
                best_i = e;
                best_j = g;
                found = 1;
            }
        }
    }
    free(box);
    if (found) {
        r.kind = CHECK_CROSS;
        r.i = best_i;
        r.j = best_j;
    }
    return r;
}

ad_status ad_outline_check(const ad_outline *o, const char *what)
{
    const char *w = what && what[0] ? what : "outline";
    if (!o) return ad_fail(AD_ERR_INVALID, "body", "%s: no outline given.", w);
    check_result r = check_core(o);
    size_t n = o->n;
    switch (r.kind) {
    case CHECK_OK:
        return ad_ok();
    case CHECK_NULL:
        return ad_fail(AD_ERR_INVALID, "body",
                       "%s: the outline has no point arrays or its closed flag is %d, not 0 or 1.", w, o->closed);
    case CHECK_FEW:
        return ad_fail(AD_ERR_INVALID, "body", "%s: %s outline has %zu points, at least %d are needed.", w,
                       o->closed ? "a closed" : "an open", n, o->closed ? AD_OUTLINE_MIN_CLOSED : 2);
    case CHECK_NONFINITE:
        return ad_fail(AD_ERR_INVALID, "body", "%s: point %zu is not finite (%g, %g).", w, r.i, o->x[r.i], o->y[r.i]);
    case CHECK_SHORT: {
        size_t f = (r.i + 1) % n;
        return ad_fail(AD_ERR_INVALID, "body", "%s: the edge from point %zu (%.9g, %.9g) to point %zu has zero length.",
                       w, r.i, o->x[r.i], o->y[r.i], f);
    }
    case CHECK_CROSS:
        return ad_fail(AD_ERR_INVALID, "body",
                       "%s: the outline crosses itself: the edge from point %zu to %zu meets the edge from point %zu "
                       "to %zu near (%.6g, %.6g).",
                       w, r.i, (r.i + 1) % n, r.j, (r.j + 1) % n, o->x[r.j], o->y[r.j]);
    }
    return ad_fail(AD_ERR_INVALID, "body", "%s: invalid outline.", w);
}

/* ----------------------------------------------------------------- NACA -- */

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
    st = outline_alloc(n, 1, out, "digits");
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

/* ---------------------------------------------------------------- files -- */

typedef struct pt_buf {
    double *x, *y;
    int *line;  /* source line of each point */
    int *block; /* Lednicer: block of each point (blocks are separated by blank lines) */
    size_t n, cap;
} pt_buf;

static void pt_buf_free(pt_buf *b)
{
    free(b->x);
    free(b->y);
    free(b->line);
    free(b->block);
    memset(b, 0, sizeof *b);
}

static int pt_buf_push(pt_buf *b, double x, double y, int line, int block)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 256;
        double *nx = realloc(b->x, cap * sizeof *nx);
        if (nx) b->x = nx;
        double *ny = realloc(b->y, cap * sizeof *ny);
        if (ny) b->y = ny;
        int *nl = realloc(b->line, cap * sizeof *nl);
        if (nl) b->line = nl;
        int *nb = realloc(b->block, cap * sizeof *nb);
        if (nb) b->block = nb;
        if (!nx || !ny || !nl || !nb) return 0;
        b->cap = cap;
    }
    b->x[b->n] = x;
    b->y[b->n] = y;
    b->line[b->n] = line;
    b->block[b->n] = block;
    b->n++;
    return 1;
}

typedef enum line_kind { LINE_BLANK, LINE_PAIR, LINE_OTHER, LINE_NONFINITE } line_kind;

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

static line_kind parse_line(const char *s, double *x, double *y)
{
    while (is_space(*s))
        s++;
    if (!*s) return LINE_BLANK;
    char *end;
    *x = strtod(s, &end);
    if (end == s) return LINE_OTHER;
    s = end;
    *y = strtod(s, &end);
    if (end == s) return LINE_OTHER;
    s = end;
    while (is_space(*s))
        s++;
    if (*s) return LINE_OTHER;
    if (!isfinite(*x) || !isfinite(*y)) return LINE_NONFINITE; /* strtod takes "nan" and "inf" */
    return LINE_PAIR;
}

/* Two integers >= 2: the point counts of a Lednicer file, not a point in any unit a Selig file uses at its
 * trailing edge (whose y is near 0). */
static int looks_like_counts(double a, double b)
{
    return a >= 2.0 && b >= 2.0 && a <= 1e6 && b <= 1e6 && floor(a) == a && floor(b) == b;
}

/* A line for messages: trailing newline cut, long lines shortened. */
static void line_excerpt(const char *s, char *out, size_t n)
{
    size_t len = strcspn(s, "\r\n");
    if (len < n) {
        memcpy(out, s, len);
        out[len] = '\0';
    } else {
        memcpy(out, s, n - 4);
        memcpy(out + n - 4, "...", 4);
    }
}

/* Drops points closer than min_len to the one before, and a last point that repeats the first. */
static void drop_repeats(pt_buf *b, double min_len)
{
    size_t k = 0;
    for (size_t i = 0; i < b->n; i++) {
        if (k > 0 && !(hypot(b->x[i] - b->x[k - 1], b->y[i] - b->y[k - 1]) > min_len)) continue;
        b->x[k] = b->x[i];
        b->y[k] = b->y[i];
        b->line[k] = b->line[i];
        b->block[k] = b->block[i];
        k++;
    }
    while (k > 1 && !(hypot(b->x[k - 1] - b->x[0], b->y[k - 1] - b->y[0]) > min_len))
        k--;
    b->n = k;
}

static void pt_swap(pt_buf *b, size_t i, size_t j)
{
    double tx = b->x[i], ty = b->y[i];
    int tl = b->line[i], tb = b->block[i];
    b->x[i] = b->x[j];
    b->y[i] = b->y[j];
    b->line[i] = b->line[j];
    b->block[i] = b->block[j];
    b->x[j] = tx;
    b->y[j] = ty;
    b->line[j] = tl;
    b->block[j] = tb;
}

/* Rotates the points so that point `first` comes first (three reversals: no extra memory). */
static void pt_rotate(pt_buf *b, size_t first)
{
    if (first == 0) return;
    for (size_t i = 0, j = first - 1; i < j; i++, j--)
        pt_swap(b, i, j);
    for (size_t i = first, j = b->n - 1; i < j; i++, j--)
        pt_swap(b, i, j);
    for (size_t i = 0, j = b->n - 1; i < j; i++, j--)
        pt_swap(b, i, j);
}

static double shoelace(const double *x, const double *y, size_t n)
{
    if (n < 3) return 0.0;
    /* relative to the first point: keeps the products small for outlines far from the origin */
    double s = 0.0;
    for (size_t i = 1; i + 1 < n; i++)
        s += (x[i] - x[0]) * (y[i + 1] - y[0]) - (x[i + 1] - x[0]) * (y[i] - y[0]);
    return 0.5 * s;
}

ad_status ad_airfoil_load(const char *path, ad_outline *out)
{
    if (!out) return ad_fail(AD_ERR_INVALID, "out", "ad_airfoil_load: no output outline given.");
    memset(out, 0, sizeof *out);
    if (!path || !path[0]) return ad_fail(AD_ERR_INVALID, "path", "ad_airfoil_load: no file name given.");

    FILE *f = fopen(path, "r");
    if (!f) return ad_fail(AD_ERR_IO, "path", "%s: cannot open: %s.", path, strerror(errno));

    ad_status st = ad_ok();
    pt_buf raw = {0}, pts = {0};
    char buf[1024], excerpt[48];
    int lineno = 0, last_line = 0;
    int lednicer = 0, counts_line = 0, data_seen = 0;
    long n_upper = 0, n_lower = 0;
    int block = 0, block_open = 0;

    while (fgets(buf, sizeof buf, f)) {
        lineno++;
        size_t len = strlen(buf);
        if (len == sizeof buf - 1 && buf[len - 1] != '\n' && !feof(f)) {
            st =
                ad_fail(AD_ERR_FORMAT, "path", "%s:%d: line longer than %zu characters.", path, lineno, sizeof buf - 2);
            goto done;
        }
        double x = 0, y = 0;
        line_kind kind = parse_line(buf, &x, &y);
        if (lineno == 1 && kind != LINE_PAIR) continue; /* the airfoil's name */
        if (kind == LINE_BLANK) {
            if (block_open) block++;
            block_open = 0;
            continue;
        }
        if (kind != LINE_PAIR) {
            line_excerpt(buf + strspn(buf, " \t"), excerpt, sizeof excerpt);
            if (kind == LINE_NONFINITE)
                st = ad_fail(AD_ERR_FORMAT, "path", "%s:%d: \"%s\" holds a number that is not finite.", path, lineno,
                             excerpt);
            else
                st = ad_fail(AD_ERR_FORMAT, "path", "%s:%d: expected two numbers \"x y\", found \"%s\".", path, lineno,
                             excerpt);
            goto done;
        }
        if (!data_seen) {
            data_seen = 1;
            if (looks_like_counts(x, y)) {
                lednicer = 1;
                counts_line = lineno;
                n_upper = (long)x;
                n_lower = (long)y;
                continue;
            }
        }
        if (!pt_buf_push(&raw, x, y, lineno, block)) {
            st = ad_fail(AD_ERR_NO_MEMORY, "path", "%s:%d: out of memory reading points.", path, lineno);
            goto done;
        }
        block_open = 1;
        last_line = lineno;
    }
    if (ferror(f)) {
        st = ad_fail(AD_ERR_IO, "path", "%s:%d: read error: %s.", path, lineno + 1, strerror(errno));
        goto done;
    }
    if (raw.n == 0) {
        st = ad_fail(AD_ERR_FORMAT, "path", "%s:%d: no coordinates found.", path, lineno);
        goto done;
    }

    if (lednicer) {
        size_t nu = (size_t)n_upper, nl = (size_t)n_lower, upper_end;
        int nblocks = raw.block[raw.n - 1] - raw.block[0] + 1;
        if (nblocks > 2) {
            size_t i = 0;
            while (raw.block[i] - raw.block[0] < 2)
                i++;
            st = ad_fail(AD_ERR_FORMAT, "path",
                         "%s:%d: a third block of points; a Lednicer file has two (upper surface, lower surface).",
                         path, raw.line[i]);
            goto done;
        }
        if (nblocks == 2) {
            upper_end = 0;
            while (raw.block[upper_end] == raw.block[0])
                upper_end++;
            size_t got_l = raw.n - upper_end;
            if (upper_end != nu) {
                st = ad_fail(AD_ERR_FORMAT, "path",
                             "%s:%d: the Lednicer counts on line %d give %zu upper-surface points, but the upper block "
                             "(lines %d-%d) has %zu.",
                             path, raw.line[0], counts_line, nu, raw.line[0], raw.line[upper_end - 1], upper_end);
                goto done;
            }
            if (got_l != nl) {
                st = ad_fail(AD_ERR_FORMAT, "path",
                             "%s:%d: the Lednicer counts on line %d give %zu lower-surface points, but the lower block "
                             "(lines %d-%d) has %zu.",
                             path, raw.line[upper_end], counts_line, nl, raw.line[upper_end], raw.line[raw.n - 1],
                             got_l);
                goto done;
            }
        } else {
            /* no blank line between the surfaces: the counts alone split them */
            if (raw.n != nu + nl) {
                st = ad_fail(AD_ERR_FORMAT, "path",
                             "%s:%d: the Lednicer counts give %zu upper and %zu lower points (%zu in all), but %zu "
                             "points follow (lines %d-%d).",
                             path, counts_line, nu, nl, nu + nl, raw.n, raw.line[0], raw.line[raw.n - 1]);
                goto done;
            }
            upper_end = nu;
        }
        /* upper surface reversed (TE -> LE), then the lower surface (LE -> TE): Selig order */
        for (size_t j = 0; j < raw.n; j++) {
            size_t i = j < upper_end ? upper_end - 1 - j : j;
            if (!pt_buf_push(&pts, raw.x[i], raw.y[i], raw.line[i], raw.block[i])) {
                st = ad_fail(AD_ERR_NO_MEMORY, "path", "%s: out of memory.", path);
                goto done;
            }
        }
    } else {
        pts = raw;
        memset(&raw, 0, sizeof raw);
    }

    /* chord units: leftmost point at the origin, chord 1; a file already close to that is left exactly as typed */
    size_t le = 0;
    double xmax = pts.x[0];
    for (size_t i = 1; i < pts.n; i++) {
        if (pts.x[i] < pts.x[le]) le = i;
        xmax = fmax(xmax, pts.x[i]);
    }
    double chord = xmax - pts.x[le];
    if (!(chord > 0.0) || !isfinite(chord)) {
        st = ad_fail(AD_ERR_FORMAT, "path", "%s:%d: the points have no extent along x (chord %g).", path, pts.line[le],
                     chord);
        goto done;
    }
    if (!(fabs(pts.x[le]) <= 0.02 && fabs(xmax - 1.0) <= 0.02)) {
        double x0 = pts.x[le], y0 = pts.y[le];
        for (size_t i = 0; i < pts.n; i++) {
            pts.x[i] = (pts.x[i] - x0) / chord;
            pts.y[i] = (pts.y[i] - y0) / chord;
        }
    }

    drop_repeats(&pts, AD_OUTLINE_MIN_EDGE * outline_size(pts.x, pts.y, pts.n));
    if (pts.n < AD_OUTLINE_MIN_CLOSED) {
        st = ad_fail(AD_ERR_FORMAT, "path", "%s:%d: too few points: %zu (after dropping repeats), an outline needs %d.",
                     path, last_line, pts.n, AD_OUTLINE_MIN_CLOSED);
        goto done;
    }
    /* Selig order runs counter-clockwise from the trailing edge: a file that goes over the lower surface first is
     * turned round, and one that starts elsewhere is rotated to start at the rearmost point (the upper one of
     * two, so that the closing edge is the trailing-edge gap) */
    if (shoelace(pts.x, pts.y, pts.n) < 0.0)
        for (size_t i = 0, j = pts.n - 1; i < j; i++, j--)
            pt_swap(&pts, i, j);
    size_t te = 0;
    for (size_t i = 1; i < pts.n; i++)
        if (pts.x[i] > pts.x[te] || (pts.x[i] == pts.x[te] && pts.y[i] > pts.y[te])) te = i;
    pt_rotate(&pts, te);

    ad_outline o = {pts.x, pts.y, pts.n, 1};
    check_result r = check_core(&o);
    if (r.kind == CHECK_CROSS) {
        size_t i1 = (r.i + 1) % pts.n, j1 = (r.j + 1) % pts.n;
        st = ad_fail(AD_ERR_FORMAT, "path",
                     "%s:%d: the outline crosses itself: the edge from line %d to line %d meets the edge from line %d "
                     "to line %d.",
                     path, pts.line[r.i], pts.line[r.i], pts.line[i1], pts.line[r.j], pts.line[j1]);
        goto done;
    }
    if (r.kind != CHECK_OK) {
        /* cannot happen after parsing and dropping repeats, but keep the file's name in any message */
        st = ad_outline_check(&o, path);
        st.code = AD_ERR_FORMAT;
        snprintf(st.field, sizeof st.field, "path");
        goto done;
    }
    out->x = pts.x;
    out->y = pts.y;
    out->n = pts.n;
    out->closed = 1;
    free(pts.line);
    free(pts.block);
    memset(&pts, 0, sizeof pts);

done:
    fclose(f);
    pt_buf_free(&raw);
    pt_buf_free(&pts);
    return st;
}

/* --------------------------------------------------------------- shapes -- */

ad_status ad_shape_plate(double thickness, ad_outline *out)
{
    if (!out) return ad_fail(AD_ERR_INVALID, "out", "ad_shape_plate: no output outline given.");
    memset(out, 0, sizeof *out);
    if (!(thickness >= 0.0 && thickness <= 1.0))
        return ad_fail(AD_ERR_INVALID, "thickness", "plate thickness %g is outside [0, 1] chord.", thickness);
    if (thickness == 0.0) {
        ad_status st = outline_alloc(2, 0, out, "thickness");
        if (st.code != AD_OK) return st;
        out->x[0] = 0.0;
        out->y[0] = 0.0;
        out->x[1] = 1.0;
        out->y[1] = 0.0;
        return ad_ok();
    }
    double h = 0.5 * thickness;
    /* TE midpoint first, as a Selig file starts; the long sides are split so the outline has enough points */
    static const double px[] = {1.0, 1.0, 0.75, 0.5, 0.25, 0.0, 0.0, 0.0, 0.25, 0.5, 0.75, 1.0};
    static const double py[] = {0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, -1.0, -1.0, -1.0, -1.0, -1.0};
    size_t n = sizeof px / sizeof px[0];
    ad_status st = outline_alloc(n, 1, out, "thickness");
    if (st.code != AD_OK) return st;
    for (size_t i = 0; i < n; i++) {
        out->x[i] = px[i];
        out->y[i] = py[i] * h;
    }
    return ad_ok();
}

ad_status ad_shape_wedge(double half_angle_deg, ad_outline *out)
{
    if (!out) return ad_fail(AD_ERR_INVALID, "out", "ad_shape_wedge: no output outline given.");
    memset(out, 0, sizeof *out);
    if (!(half_angle_deg > 0.0 && half_angle_deg < 90.0))
        return ad_fail(AD_ERR_INVALID, "half_angle", "wedge half-angle %g deg is outside (0, 90).", half_angle_deg);
    double h = tan(half_angle_deg * AD_AIRFOIL_PI / 180.0);
    static const double px[] = {1.0, 1.0, 0.75, 0.5, 0.25, 0.0, 0.25, 0.5, 0.75, 1.0};
    static const double side[] = {0.0, 1.0, 1.0, 1.0, 1.0, 0.0, -1.0, -1.0, -1.0, -1.0};
    size_t n = sizeof px / sizeof px[0];
    ad_status st = outline_alloc(n, 1, out, "half_angle");
    if (st.code != AD_OK) return st;
    for (size_t i = 0; i < n; i++) {
        out->x[i] = px[i];
        out->y[i] = side[i] * h * px[i];
    }
    return ad_ok();
}

ad_status ad_shape_circle(int panels, ad_outline *out)
{
    if (!out) return ad_fail(AD_ERR_INVALID, "out", "ad_shape_circle: no output outline given.");
    memset(out, 0, sizeof *out);
    if (panels < AD_OUTLINE_MIN_CLOSED || panels > AD_OUTLINE_MAX_PANELS)
        return ad_fail(AD_ERR_INVALID, "panels", "circle with %d points; give %d to %d.", panels, AD_OUTLINE_MIN_CLOSED,
                       AD_OUTLINE_MAX_PANELS);
    size_t n = (size_t)panels;
    ad_status st = outline_alloc(n, 1, out, "panels");
    if (st.code != AD_OK) return st;
    for (size_t i = 0; i < n; i++) {
        double a = 2.0 * AD_AIRFOIL_PI * (double)i / (double)n;
        out->x[i] = 0.5 + 0.5 * cos(a);
        out->y[i] = 0.5 * sin(a);
    }
    if (n % 2 == 0) {
        /* the leading edge exactly at the origin, as for the other bodies */
        out->x[n / 2] = 0.0;
        out->y[n / 2] = 0.0;
    }
    return ad_ok();
}

/* ------------------------------------------------------------ placement -- */

ad_status ad_outline_area(const ad_outline *o, double *area)
{
    if (!o || !area) return ad_fail(AD_ERR_INVALID, "body", "ad_outline_area: no outline or no result given.");
    if (o->n > 0 && (!o->x || !o->y)) return ad_fail(AD_ERR_INVALID, "body", "ad_outline_area: no point arrays.");
    *area = shoelace(o->x, o->y, o->n);
    return ad_ok();
}

ad_status ad_outline_place(const ad_outline *o, double chord, double aoa_deg, double pivot_x, double pivot_y,
                           ad_segment **segs, size_t *nseg)
{
    if (!segs || !nseg) return ad_fail(AD_ERR_INVALID, "segs", "ad_outline_place: no output given.");
    *segs = NULL;
    *nseg = 0;
    if (!(chord > 0.0) || !isfinite(chord))
        return ad_fail(AD_ERR_INVALID, "chord", "chord %g m must be positive and finite.", chord);
    if (!isfinite(aoa_deg)) return ad_fail(AD_ERR_INVALID, "aoa", "angle of attack %g deg is not finite.", aoa_deg);
    if (!isfinite(pivot_x) || !isfinite(pivot_y))
        return ad_fail(AD_ERR_INVALID, "pivot", "pivot (%g, %g) m is not finite.", pivot_x, pivot_y);
    ad_status st = ad_outline_check(o, "body outline");
    if (st.code != AD_OK) return st;

    size_t n = o->n, m = o->closed ? n : n - 1;
    float *vx = malloc(n * sizeof *vx), *vy = malloc(n * sizeof *vy);
    ad_segment *s = malloc(m * sizeof *s);
    if (!vx || !vy || !s) {
        free(vx);
        free(vy);
        free(s);
        return ad_fail(AD_ERR_NO_MEMORY, "body", "Cannot allocate %zu segments.", m);
    }
    /* nose up for flow along +x is a clockwise turn */
    double a = aoa_deg * AD_AIRFOIL_PI / 180.0, c = cos(a), sn = sin(a);
    for (size_t i = 0; i < n; i++) {
        double dx = o->x[i] - 0.25, dy = o->y[i];
        vx[i] = (float)(pivot_x + chord * (dx * c + dy * sn));
        vy[i] = (float)(pivot_y + chord * (-dx * sn + dy * c));
        if (!isfinite(vx[i]) || !isfinite(vy[i])) {
            st = ad_fail(AD_ERR_INVALID, "chord", "point %zu lands outside float range (chord %g m, pivot %g, %g).", i,
                         chord, pivot_x, pivot_y);
            goto fail;
        }
    }
    /* Rounding to float must not collapse an edge or fold the outline over itself (a small body far from the
     * origin): check the rounded outline as it will be used, reusing s as scratch for its double copy. */
    {
        double *fx = malloc(n * sizeof *fx), *fy = malloc(n * sizeof *fy);
        if (!fx || !fy) {
            free(fx);
            free(fy);
            st = ad_fail(AD_ERR_NO_MEMORY, "body", "Cannot allocate %zu points.", n);
            goto fail;
        }
        for (size_t i = 0; i < n; i++) {
            fx[i] = vx[i];
            fy[i] = vy[i];
        }
        ad_outline rounded = {fx, fy, n, o->closed};
        check_result r = check_core(&rounded);
        free(fx);
        free(fy);
        if (r.kind != CHECK_OK) {
            st = ad_fail(AD_ERR_INVALID, "chord",
                         "the outline %s in float precision (chord %g m at pivot %g, %g m, edge %zu); use a larger "
                         "chord, fewer points, or a pivot nearer the origin.",
                         r.kind == CHECK_SHORT ? "loses an edge" : "folds over itself", chord, pivot_x, pivot_y, r.i);
            goto fail;
        }
    }
    /* every vertex is rounded once, so neighbouring segments share it bit for bit */
    for (size_t k = 0; k < m; k++) {
        size_t k1 = (k + 1) % n;
        s[k] = (ad_segment){vx[k], vy[k], vx[k1], vy[k1]};
    }
    free(vx);
    free(vy);
    *segs = s;
    *nseg = m;
    return ad_ok();

fail:
    free(vx);
    free(vy);
    free(s);
    return st;
}
