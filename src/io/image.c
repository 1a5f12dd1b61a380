/* PNG heat maps and disc frames: colour maps, a colour bar with labels, the body outline. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "image.h"

#include <errno.h>
#include <math.h>
#include <png.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "font.h"
#include "vtk.h" /* ad_io_file: the path.tmp + rename writer shared by src/io */

enum {
    FONT_SCALE = 2,                              /* 5x7 glyphs drawn as 10x14 */
    CHAR_ADV = (AD_FONT_W + 1) * FONT_SCALE,     /* 12 px per character */
    TEXT_H = AD_FONT_H * FONT_SCALE,             /* 14 px */
    MARGIN = 16,
    HEADER_H = TEXT_H + 12,                      /* title line above the plot */
    BAR_GAP = 24, BAR_W = 24, TICK_LEN = 6,
    LABEL_CHARS = 9,                             /* room for "-1.25e+03" */
    BAR_MIN_H = 160,
    MAX_SIDE = 16384,
};

static const uint8_t INK[3] = {25, 25, 25};
static const uint8_t NODATA[3] = {128, 128, 128};

/* -------------------------------------------------------------- colour maps -- */

/* viridis (van der Walt and Smith, matplotlib's default map; CC0): the published 256-entry
 * table (matplotlib's _viridis_data) rounded to bytes. */
static const uint8_t VIRIDIS[256][3] = {
    {68, 1, 84}, {68, 2, 86}, {69, 4, 87}, {69, 5, 89}, {70, 7, 90}, {70, 8, 92},
    {70, 10, 93}, {70, 11, 94}, {71, 13, 96}, {71, 14, 97}, {71, 16, 99}, {71, 17, 100},
    {71, 19, 101}, {72, 20, 103}, {72, 22, 104}, {72, 23, 105}, {72, 24, 106}, {72, 26, 108},
    {72, 27, 109}, {72, 28, 110}, {72, 29, 111}, {72, 31, 112}, {72, 32, 113}, {72, 33, 115},
    {72, 35, 116}, {72, 36, 117}, {72, 37, 118}, {72, 38, 119}, {72, 40, 120}, {72, 41, 121},
    {71, 42, 122}, {71, 44, 122}, {71, 45, 123}, {71, 46, 124}, {71, 47, 125}, {70, 48, 126},
    {70, 50, 126}, {70, 51, 127}, {70, 52, 128}, {69, 53, 129}, {69, 55, 129}, {69, 56, 130},
    {68, 57, 131}, {68, 58, 131}, {68, 59, 132}, {67, 61, 132}, {67, 62, 133}, {66, 63, 133},
    {66, 64, 134}, {66, 65, 134}, {65, 66, 135}, {65, 68, 135}, {64, 69, 136}, {64, 70, 136},
    {63, 71, 136}, {63, 72, 137}, {62, 73, 137}, {62, 74, 137}, {62, 76, 138}, {61, 77, 138},
    {61, 78, 138}, {60, 79, 138}, {60, 80, 139}, {59, 81, 139}, {59, 82, 139}, {58, 83, 139},
    {58, 84, 140}, {57, 85, 140}, {57, 86, 140}, {56, 88, 140}, {56, 89, 140}, {55, 90, 140},
    {55, 91, 141}, {54, 92, 141}, {54, 93, 141}, {53, 94, 141}, {53, 95, 141}, {52, 96, 141},
    {52, 97, 141}, {51, 98, 141}, {51, 99, 141}, {50, 100, 142}, {50, 101, 142}, {49, 102, 142},
    {49, 103, 142}, {49, 104, 142}, {48, 105, 142}, {48, 106, 142}, {47, 107, 142}, {47, 108, 142},
    {46, 109, 142}, {46, 110, 142}, {46, 111, 142}, {45, 112, 142}, {45, 113, 142}, {44, 113, 142},
    {44, 114, 142}, {44, 115, 142}, {43, 116, 142}, {43, 117, 142}, {42, 118, 142}, {42, 119, 142},
    {42, 120, 142}, {41, 121, 142}, {41, 122, 142}, {41, 123, 142}, {40, 124, 142}, {40, 125, 142},
    {39, 126, 142}, {39, 127, 142}, {39, 128, 142}, {38, 129, 142}, {38, 130, 142}, {38, 130, 142},
    {37, 131, 142}, {37, 132, 142}, {37, 133, 142}, {36, 134, 142}, {36, 135, 142}, {35, 136, 142},
    {35, 137, 142}, {35, 138, 141}, {34, 139, 141}, {34, 140, 141}, {34, 141, 141}, {33, 142, 141},
    {33, 143, 141}, {33, 144, 141}, {33, 145, 140}, {32, 146, 140}, {32, 146, 140}, {32, 147, 140},
    {31, 148, 140}, {31, 149, 139}, {31, 150, 139}, {31, 151, 139}, {31, 152, 139}, {31, 153, 138},
    {31, 154, 138}, {30, 155, 138}, {30, 156, 137}, {30, 157, 137}, {31, 158, 137}, {31, 159, 136},
    {31, 160, 136}, {31, 161, 136}, {31, 161, 135}, {31, 162, 135}, {32, 163, 134}, {32, 164, 134},
    {33, 165, 133}, {33, 166, 133}, {34, 167, 133}, {34, 168, 132}, {35, 169, 131}, {36, 170, 131},
    {37, 171, 130}, {37, 172, 130}, {38, 173, 129}, {39, 173, 129}, {40, 174, 128}, {41, 175, 127},
    {42, 176, 127}, {44, 177, 126}, {45, 178, 125}, {46, 179, 124}, {47, 180, 124}, {49, 181, 123},
    {50, 182, 122}, {52, 182, 121}, {53, 183, 121}, {55, 184, 120}, {56, 185, 119}, {58, 186, 118},
    {59, 187, 117}, {61, 188, 116}, {63, 188, 115}, {64, 189, 114}, {66, 190, 113}, {68, 191, 112},
    {70, 192, 111}, {72, 193, 110}, {74, 193, 109}, {76, 194, 108}, {78, 195, 107}, {80, 196, 106},
    {82, 197, 105}, {84, 197, 104}, {86, 198, 103}, {88, 199, 101}, {90, 200, 100}, {92, 200, 99},
    {94, 201, 98}, {96, 202, 96}, {99, 203, 95}, {101, 203, 94}, {103, 204, 92}, {105, 205, 91},
    {108, 205, 90}, {110, 206, 88}, {112, 207, 87}, {115, 208, 86}, {117, 208, 84}, {119, 209, 83},
    {122, 209, 81}, {124, 210, 80}, {127, 211, 78}, {129, 211, 77}, {132, 212, 75}, {134, 213, 73},
    {137, 213, 72}, {139, 214, 70}, {142, 214, 69}, {144, 215, 67}, {147, 215, 65}, {149, 216, 64},
    {152, 216, 62}, {155, 217, 60}, {157, 217, 59}, {160, 218, 57}, {162, 218, 55}, {165, 219, 54},
    {168, 219, 52}, {170, 220, 50}, {173, 220, 48}, {176, 221, 47}, {178, 221, 45}, {181, 222, 43},
    {184, 222, 41}, {186, 222, 40}, {189, 223, 38}, {192, 223, 37}, {194, 223, 35}, {197, 224, 33},
    {200, 224, 32}, {202, 225, 31}, {205, 225, 29}, {208, 225, 28}, {210, 226, 27}, {213, 226, 26},
    {216, 226, 25}, {218, 227, 25}, {221, 227, 24}, {223, 227, 24}, {226, 228, 24}, {229, 228, 25},
    {231, 228, 25}, {234, 229, 26}, {236, 229, 27}, {239, 229, 28}, {241, 229, 29}, {244, 230, 30},
    {246, 230, 32}, {248, 230, 33}, {251, 231, 35}, {253, 231, 37},
};

/* Moreland's diverging "cool to warm" map (K. Moreland, Diverging Color Maps for Scientific
 * Visualization, 2009): blue (59, 76, 192) to red (180, 4, 38) interpolated in Msh, the polar
 * form of CIELAB, through a near-white middle. The same map as ParaView's "Cool to Warm". */
static double srgb_to_linear(double c)
{
    return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4);
}

static double linear_to_srgb(double c)
{
    return c <= 0.0031308 ? 12.92 * c : 1.055 * pow(c, 1.0 / 2.4) - 0.055;
}

static const double WHITE[3] = {0.95047, 1.0, 1.08883}; /* D65 */

static double lab_f(double t)
{
    return t > 0.008856 ? cbrt(t) : 7.787 * t + 16.0 / 116.0;
}

static double lab_finv(double t)
{
    return t > 0.206893 ? t * t * t : (t - 16.0 / 116.0) / 7.787;
}

static void rgb_to_msh(const double rgb[3], double msh[3])
{
    double r = srgb_to_linear(rgb[0]), g = srgb_to_linear(rgb[1]), b = srgb_to_linear(rgb[2]);
    double x = 0.4124 * r + 0.3576 * g + 0.1805 * b;
    double y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
    double z = 0.0193 * r + 0.1192 * g + 0.9505 * b;
    double fx = lab_f(x / WHITE[0]), fy = lab_f(y / WHITE[1]), fz = lab_f(z / WHITE[2]);
    double L = 116.0 * fy - 16.0, A = 500.0 * (fx - fy), B = 200.0 * (fy - fz);
    msh[0] = sqrt(L * L + A * A + B * B);
    msh[1] = msh[0] > 0 ? acos(L / msh[0]) : 0;
    msh[2] = atan2(B, A);
}

static void msh_to_rgb(const double msh[3], double rgb[3])
{
    double L = msh[0] * cos(msh[1]), A = msh[0] * sin(msh[1]) * cos(msh[2]), B = msh[0] * sin(msh[1]) * sin(msh[2]);
    double fy = (L + 16.0) / 116.0, fx = fy + A / 500.0, fz = fy - B / 200.0;
    double x = WHITE[0] * lab_finv(fx), y = WHITE[1] * lab_finv(fy), z = WHITE[2] * lab_finv(fz);
    double lin[3] = {3.2406 * x - 1.5372 * y - 0.4986 * z, -0.9689 * x + 1.8758 * y + 0.0415 * z,
                     0.0557 * x - 0.2040 * y + 1.0570 * z};
    for (int c = 0; c < 3; c++) rgb[c] = linear_to_srgb(lin[c] < 0 ? 0 : lin[c]);
}

/* Hue for the unsaturated end so the path to white does not swing through other hues. */
static double adjust_hue(const double sat[3], double m_unsat)
{
    if (sat[0] >= m_unsat) return sat[2];
    double spin = sat[1] * sqrt(m_unsat * m_unsat - sat[0] * sat[0]) / (sat[0] * sin(sat[1]));
    const double pi = 3.14159265358979323846;
    return sat[2] > -pi / 3 ? sat[2] + spin : sat[2] - spin;
}

static void coolwarm(double t, double c[3])
{
    const double cool[3] = {59 / 255.0, 76 / 255.0, 192 / 255.0}, warm[3] = {180 / 255.0, 4 / 255.0, 38 / 255.0};
    double a[3], b[3];
    rgb_to_msh(cool, a);
    rgb_to_msh(warm, b);
    double mid = fmax(fmax(a[0], b[0]), 88.0);
    if (t < 0.5) {
        b[0] = mid, b[1] = 0, b[2] = 0;
        t = 2 * t;
    } else {
        a[0] = mid, a[1] = 0, a[2] = 0;
        t = 2 * t - 1;
    }
    if (a[1] < 0.05 && b[1] > 0.05) a[2] = adjust_hue(b, a[0]);
    else if (b[1] < 0.05 && a[1] > 0.05) b[2] = adjust_hue(a, b[0]);
    double m[3] = {(1 - t) * a[0] + t * b[0], (1 - t) * a[1] + t * b[1], (1 - t) * a[2] + t * b[2]};
    msh_to_rgb(m, c);
}

static uint8_t to_byte(double v)
{
    v = v < 0 ? 0 : v > 1 ? 1 : v;
    return (uint8_t)lrint(v * 255.0);
}

/* Maps are used as 256-entry tables, like matplotlib's; ad_colormap quantizes the same way. */
static int lut_index(double t)
{
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    return (int)lrint(t * 255.0);
}

static void lut_colour(int diverging, int i, uint8_t rgb[3])
{
    if (!diverging) {
        memcpy(rgb, VIRIDIS[i], 3);
        return;
    }
    double c[3];
    coolwarm(i / 255.0, c);
    for (int ch = 0; ch < 3; ch++) rgb[ch] = to_byte(c[ch]);
}

void ad_colormap(int diverging, double t, uint8_t rgb[3])
{
    if (isnan(t)) {
        memcpy(rgb, NODATA, 3);
        return;
    }
    lut_colour(diverging, lut_index(t), rgb);
}

typedef struct lut {
    uint8_t rgb[256][3];
    double lo, scale; /* t = (v - lo) * scale */
} lut;

static void lut_build(lut *l, int diverging, double lo, double hi)
{
    for (int i = 0; i < 256; i++) lut_colour(diverging, i, l->rgb[i]);
    l->lo = lo;
    l->scale = 1.0 / (hi - lo);
}

static inline const uint8_t *lut_get(const lut *l, double v)
{
    if (isnan(v)) return NODATA;
    return l->rgb[lut_index((v - l->lo) * l->scale)];
}

/* ------------------------------------------------------------ colour range -- */

/* The k-th smallest of a[0..n) (a is reordered); three-way partition, so runs of equal
 * values (discs with zero pressure) cost nothing. Expected O(n). */
static float select_kth(float *a, size_t n, size_t k)
{
    size_t lo = 0, hi = n; /* the answer lies in a[lo..hi) */
    uint64_t rng = 0x9E3779B97F4A7C15ull;
    while (hi - lo > 1) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        float pivot = a[lo + (size_t)(rng % (hi - lo))];
        size_t lt = lo, i = lo, gt = hi; /* [lo,lt) < pivot, [lt,i) == pivot, [gt,hi) > pivot */
        while (i < gt) {
            float v = a[i];
            if (v < pivot) {
                a[i] = a[lt];
                a[lt++] = v;
                i++;
            } else if (v > pivot) {
                a[i] = a[--gt];
                a[gt] = v;
            } else {
                i++;
            }
        }
        if (k < lt) hi = lt;
        else if (k >= gt) lo = gt;
        else return pivot;
    }
    return a[lo];
}

void ad_color_range(const float *v, size_t n, double vmin, double vmax, int diverging, double *lo, double *hi)
{
    double a = vmin, b = vmax;
    if (isnan(a) || isnan(b)) {
        size_t m = 0;
        float *buf = malloc((n ? n : 1) * sizeof *buf);
        float fmin = INFINITY, fmax = -INFINITY;
        for (size_t i = 0; i < n; i++) {
            if (!isfinite(v[i])) continue;
            if (buf) buf[m] = v[i];
            m++;
            fmin = fminf(fmin, v[i]);
            fmax = fmaxf(fmax, v[i]);
        }
        double p1 = 0, p99 = 1;
        if (m > 0 && buf) {
            p1 = select_kth(buf, m, (size_t)floor(0.01 * (double)(m - 1)));
            p99 = select_kth(buf, m, (size_t)ceil(0.99 * (double)(m - 1)));
        }
        /* no memory for the copy, or a few outliers over a constant (a dilute gas: most discs
         * touch nothing and have zero pressure): the full range */
        if (m > 0 && (!buf || !(p99 > p1))) {
            p1 = fmin;
            p99 = fmax;
        }
        free(buf);
        if (isnan(a)) a = isnan(b) || p1 <= b ? p1 : b;
        if (isnan(b)) b = p99 >= a ? p99 : a;
    }
    if (a > b) {
        double t = a;
        a = b;
        b = t;
    }
    if (diverging) {
        double m = fmax(fabs(a), fabs(b));
        if (!(m > 0)) m = 1;
        a = -m;
        b = m;
    } else if (!(b > a)) {
        double d = a != 0 ? 0.5 * fabs(a) : 1.0;
        a -= d;
        b += d;
    }
    *lo = a;
    *hi = b;
}

/* ------------------------------------------------------------------ canvas -- */

typedef struct canvas {
    int w, h;
    uint8_t *px; /* RGB rows, top first */
    int cx0, cy0, cx1, cy1; /* clip rectangle, half-open */
} canvas;

static inline void put(canvas *c, int x, int y, const uint8_t rgb[3])
{
    if (x < c->cx0 || y < c->cy0 || x >= c->cx1 || y >= c->cy1) return;
    uint8_t *p = c->px + ((size_t)y * (size_t)c->w + (size_t)x) * 3;
    p[0] = rgb[0], p[1] = rgb[1], p[2] = rgb[2];
}

static void clip_all(canvas *c)
{
    c->cx0 = 0, c->cy0 = 0, c->cx1 = c->w, c->cy1 = c->h;
}

static void fill_rect(canvas *c, int x, int y, int w, int h, const uint8_t rgb[3])
{
    for (int j = y; j < y + h; j++)
        for (int i = x; i < x + w; i++) put(c, i, j, rgb);
}

static void frame_rect(canvas *c, int x, int y, int w, int h, const uint8_t rgb[3])
{
    fill_rect(c, x - 1, y - 1, w + 2, 1, rgb);
    fill_rect(c, x - 1, y + h, w + 2, 1, rgb);
    fill_rect(c, x - 1, y, 1, h, rgb);
    fill_rect(c, x + w, y, 1, h, rgb);
}

/* Text with its top-left corner at (x, y); characters outside the font show as '?'. */
static void draw_text(canvas *c, int x, int y, const char *s, const uint8_t rgb[3])
{
    for (; *s; s++, x += CHAR_ADV) {
        int ch = (unsigned char)*s;
        if (ch < AD_FONT_FIRST || ch > AD_FONT_LAST) ch = '?';
        const uint8_t *g = ad_font5x7[ch - AD_FONT_FIRST];
        for (int col = 0; col < AD_FONT_W; col++)
            for (int row = 0; row < AD_FONT_H; row++)
                if (g[col] >> row & 1)
                    fill_rect(c, x + col * FONT_SCALE, y + row * FONT_SCALE, FONT_SCALE, FONT_SCALE, rgb);
    }
}

/* A 2-px line from (ax, ay) to (bx, by) in continuous pixel coordinates (pixel i spans
 * [i, i+1)), clipped to the canvas clip rectangle first (Liang-Barsky), then Bresenham. */
static void draw_line(canvas *c, double ax, double ay, double bx, double by, const uint8_t rgb[3])
{
    double t0 = 0, t1 = 1, dx = bx - ax, dy = by - ay;
    double p[4] = {-dx, dx, -dy, dy};
    double q[4] = {ax - (c->cx0 - 1), (c->cx1 + 1) - ax, ay - (c->cy0 - 1), (c->cy1 + 1) - ay};
    for (int k = 0; k < 4; k++) {
        if (p[k] == 0) {
            if (q[k] < 0) return;
        } else {
            double r = q[k] / p[k];
            if (p[k] < 0) t0 = fmax(t0, r);
            else t1 = fmin(t1, r);
        }
    }
    if (t0 > t1) return;
    int x0 = (int)floor(ax + t0 * dx - 0.5), y0 = (int)floor(ay + t0 * dy - 0.5);
    int x1 = (int)floor(ax + t1 * dx - 0.5), y1 = (int)floor(ay + t1 * dy - 0.5);
    int sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
    int ex = abs(x1 - x0), ey = -abs(y1 - y0), err = ex + ey;
    for (;;) {
        put(c, x0, y0, rgb), put(c, x0 + 1, y0, rgb), put(c, x0, y0 + 1, rgb), put(c, x0 + 1, y0 + 1, rgb);
        if (x0 == x1 && y0 == y1) break;
        int e2 = 2 * err;
        if (e2 >= ey) err += ey, x0 += sx;
        if (e2 <= ex) err += ex, y0 += sy;
    }
}

/* ------------------------------------------------------------------ layout -- */

ad_status ad_image_layout_for(int width, double x0, double y0, double x1, double y1, ad_image_layout *out)
{
    if (width == 0) width = 1000;
    if (width < 1 || width > MAX_SIDE)
        return ad_fail(AD_ERR_INVALID, "width", "The plot width %d px is outside 1..%d.", width, MAX_SIDE);
    if (!(isfinite(x0) && isfinite(x1) && x1 > x0))
        return ad_fail(AD_ERR_INVALID, "x1", "The extent along x [%g, %g] m is empty or not finite.", x0, x1);
    if (!(isfinite(y0) && isfinite(y1) && y1 > y0))
        return ad_fail(AD_ERR_INVALID, "y1", "The extent along y [%g, %g] m is empty or not finite.", y0, y1);
    double ph = width * (y1 - y0) / (x1 - x0);
    if (!(ph < MAX_SIDE))
        return ad_fail(AD_ERR_INVALID, "width", "The plot would be %.0f px high, above %d; give a smaller width.", ph,
                       MAX_SIDE);
    ad_image_layout l;
    l.plot_w = width;
    l.plot_h = ph < 1 ? 1 : (int)lrint(ph);
    l.plot_x = MARGIN;
    l.plot_y = MARGIN + HEADER_H;
    l.bar_x = l.plot_x + l.plot_w + BAR_GAP;
    l.bar_y = l.plot_y;
    l.bar_w = BAR_W;
    l.bar_h = l.plot_h < BAR_MIN_H ? BAR_MIN_H : l.plot_h;
    l.image_w = l.bar_x + BAR_W + TICK_LEN + 4 + LABEL_CHARS * CHAR_ADV + MARGIN;
    l.image_h = l.plot_y + l.bar_h + 10 + TEXT_H + MARGIN; /* the extent line under the plot */
    *out = l;
    return ad_ok();
}

/* ------------------------------------------------------------- colour bar -- */

/* Decimals that print step exactly (0.25 -> 2), at most 9. */
static int decimals_of(double step)
{
    for (int d = 0; d < 9; d++) {
        double m = step * pow(10.0, d);
        if (fabs(m - nearbyint(m)) < 1e-6 * m) return d;
    }
    return 9;
}

/* Tick label text: fixed point with as many decimals as the step needs, or a mantissa and
 * exponent (1.2e+03) when the numbers are large or small; `big` is the largest |value| on the
 * bar, so all labels show the same number of significant digits. */
static void tick_label(char *buf, size_t n, double v, double step, double big)
{
    int expo = big >= 1e5 || big < 1e-3;
    if (v == 0) {
        snprintf(buf, n, "0");
    } else if (!expo) {
        snprintf(buf, n, "%.*f", decimals_of(step), v);
    } else {
        int e = (int)floor(log10(big) + 1e-9), ks = (int)floor(log10(step) + 1e-9);
        int digits = e - ks + decimals_of(step / pow(10.0, ks));
        digits = digits < 0 ? 0 : digits > 5 ? 5 : digits;
        snprintf(buf, n, "%.*e", digits, v);
    }
}

/* A step of 1, 2, 2.5 or 5 times a power of ten that puts about five ticks in [lo, hi]. */
static double tick_step(double lo, double hi)
{
    static const double mant[4] = {1, 2, 2.5, 5};
    int k0 = (int)floor(log10((hi - lo) / 5.0));
    double best = 0;
    int best_err = 1 << 30;
    for (int k = k0 - 1; k <= k0 + 1; k++)
        for (int m = 0; m < 4; m++) {
            double step = mant[m] * pow(10.0, k);
            int count = (int)(floor(hi / step + 1e-9) - ceil(lo / step - 1e-9)) + 1;
            int err = abs(count - 5) * 2 + (count < 5); /* a tie goes to more ticks */
            if (err < best_err) best_err = err, best = step;
        }
    return best;
}

static void draw_colour_bar(canvas *c, const ad_image_layout *l, const lut *map, double lo, double hi,
                            const char *units)
{
    for (int r = 0; r < l->bar_h; r++) {
        double t = l->bar_h > 1 ? 1.0 - (double)r / (l->bar_h - 1) : 0.5;
        fill_rect(c, l->bar_x, l->bar_y + r, l->bar_w, 1, map->rgb[lut_index(t)]);
    }
    frame_rect(c, l->bar_x, l->bar_y, l->bar_w, l->bar_h, INK);
    if (units && units[0]) {
        char u[64];
        snprintf(u, sizeof u, "[%s]", units);
        draw_text(c, l->bar_x, l->bar_y - HEADER_H + 4, u, INK);
    }
    double step = tick_step(lo, hi);
    double big = fmax(fabs(lo), fabs(hi));
    for (double i = ceil(lo / step - 1e-9); i * step <= hi + step * 1e-9; i++) {
        double v = i * step;
        if (fabs(v) < step * 1e-9) v = 0;
        int y = l->bar_y + (int)lrint((hi - v) / (hi - lo) * (l->bar_h - 1));
        fill_rect(c, l->bar_x + l->bar_w, y, TICK_LEN, 1, INK);
        char buf[32];
        tick_label(buf, sizeof buf, v, step, big);
        draw_text(c, l->bar_x + l->bar_w + TICK_LEN + 4, y - TEXT_H / 2, buf, INK);
    }
}

/* Title above the plot and the extent under it. */
static void draw_frame(canvas *c, const ad_image_layout *l, const char *title, double x0, double y0, double x1,
                       double y1)
{
    frame_rect(c, l->plot_x, l->plot_y, l->plot_w, l->plot_h, INK);
    if (title && title[0]) {
        c->cx1 = l->bar_x - 4; /* a long title stops before the units over the bar */
        draw_text(c, l->plot_x, l->plot_y - HEADER_H + 4, title, INK);
        clip_all(c);
    }
    char buf[160];
    snprintf(buf, sizeof buf, "x %.4g..%.4g m  y %.4g..%.4g m", x0, x1, y0, y1);
    int y = l->plot_y + (l->plot_h > l->bar_h ? l->plot_h : l->bar_h) + 10;
    draw_text(c, l->plot_x, y, buf, INK);
}

static void draw_outline(canvas *c, const ad_image_layout *l, const float *ox, const float *oy, size_t n, int closed,
                         double x0, double y0, double x1, double y1)
{
    if (!ox || !oy || n < 2) return;
    c->cx0 = l->plot_x, c->cy0 = l->plot_y, c->cx1 = l->plot_x + l->plot_w, c->cy1 = l->plot_y + l->plot_h;
    double sx = l->plot_w / (x1 - x0), sy = l->plot_h / (y1 - y0);
    size_t segs = closed ? n : n - 1;
    for (size_t i = 0; i < segs; i++) {
        size_t j = (i + 1) % n;
        double ax = l->plot_x + (ox[i] - x0) * sx, ay = l->plot_y + (y1 - oy[i]) * sy;
        double bx = l->plot_x + (ox[j] - x0) * sx, by = l->plot_y + (y1 - oy[j]) * sy;
        if (isfinite(ax) && isfinite(ay) && isfinite(bx) && isfinite(by)) draw_line(c, ax, ay, bx, by, INK);
    }
    clip_all(c);
}

/* -------------------------------------------------------------------- PNG -- */

typedef struct png_err {
    jmp_buf jmp;
    int err;
    char msg[160];
} png_err;

/* libpng must never print: its errors come here and end in a longjmp, warnings are dropped. */
static void on_png_error(png_structp png, png_const_charp msg)
{
    png_err *e = png_get_error_ptr(png);
    e->err = errno;
    snprintf(e->msg, sizeof e->msg, "%s", msg);
    longjmp(e->jmp, 1);
}

static void on_png_warning(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;
}

static ad_status write_png(const char *path, const canvas *c)
{
    png_bytep *rows = malloc((size_t)c->h * sizeof *rows);
    if (!rows) return ad_fail(AD_ERR_NO_MEMORY, "path", "No memory for the rows of '%s'.", path);
    for (int y = 0; y < c->h; y++) rows[y] = c->px + (size_t)y * (size_t)c->w * 3;
    ad_io_file io;
    ad_status s = ad_io_open(&io, path);
    if (s.code != AD_OK) {
        free(rows);
        return s;
    }
    png_err e;
    e.err = 0;
    e.msg[0] = 0;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &e, on_png_error, on_png_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        png_destroy_write_struct(&png, &info);
        ad_io_discard(&io);
        free(rows);
        return ad_fail(AD_ERR_NO_MEMORY, "path", "libpng could not start writing '%s'.", path);
    }
    if (setjmp(e.jmp)) {
        png_destroy_write_struct(&png, &info);
        s = e.err ? ad_io_error(&io, e.err)
                  : ad_fail(AD_ERR_IO, "path", "cannot write '%s': libpng: %s", path, e.msg);
        ad_io_discard(&io);
        free(rows);
        return s;
    }
    png_init_io(png, io.f);
    png_set_IHDR(png, info, (png_uint_32)c->w, (png_uint_32)c->h, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    png_write_image(png, rows);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    free(rows);
    return ad_io_commit(&io);
}

static ad_status canvas_new(canvas *c, const ad_image_layout *l)
{
    c->w = l->image_w;
    c->h = l->image_h;
    c->px = malloc((size_t)c->w * (size_t)c->h * 3);
    if (!c->px)
        return ad_fail(AD_ERR_NO_MEMORY, "width", "No memory for a %d x %d picture.", c->w, c->h);
    memset(c->px, 255, (size_t)c->w * (size_t)c->h * 3);
    clip_all(c);
    return ad_ok();
}

static ad_status check_range(double vmin, double vmax)
{
    if (isinf(vmin) || isinf(vmax))
        return ad_fail(AD_ERR_INVALID, isinf(vmin) ? "vmin" : "vmax", "The colour range is infinite.");
    if (vmin > vmax)
        return ad_fail(AD_ERR_INVALID, "vmin", "The colour range [%g, %g] is reversed.", vmin, vmax);
    return ad_ok();
}

/* ---------------------------------------------------------------- writers -- */

ad_status ad_write_heatmap_png(const char *path, const ad_heatmap *h)
{
    if (!h) return ad_fail(AD_ERR_INVALID, "h", "No heat map given.");
    if (h->nx < 1 || h->ny < 1)
        return ad_fail(AD_ERR_INVALID, h->nx < 1 ? "nx" : "ny", "The heat map has %d x %d cells.", h->nx, h->ny);
    if (!h->values) return ad_fail(AD_ERR_INVALID, "values", "The heat map has no values.");
    ad_status s = check_range(h->vmin, h->vmax);
    if (s.code != AD_OK) return s;
    ad_image_layout l;
    s = ad_image_layout_for(h->width, h->x0, h->y0, h->x1, h->y1, &l);
    if (s.code != AD_OK) return s;

    size_t cells = (size_t)h->nx * (size_t)h->ny;
    double lo, hi;
    ad_color_range(h->values, cells, h->vmin, h->vmax, h->diverging, &lo, &hi);
    lut map;
    lut_build(&map, h->diverging, lo, hi);

    canvas c;
    s = canvas_new(&c, &l);
    if (s.code != AD_OK) return s;
    int *col = malloc((size_t)l.plot_w * sizeof *col);
    if (!col) {
        free(c.px);
        return ad_fail(AD_ERR_NO_MEMORY, "width", "No memory for a %d px wide picture.", l.plot_w);
    }
    /* nearest cell of each pixel centre: blocks, no smoothing */
    for (int px = 0; px < l.plot_w; px++) col[px] = (int)(((px + 0.5) / l.plot_w) * h->nx);
    for (int py = 0; py < l.plot_h; py++) {
        int j = h->ny - 1 - (int)(((py + 0.5) / l.plot_h) * h->ny);
        const float *row = h->values + (size_t)j * (size_t)h->nx;
        uint8_t *out = c.px + ((size_t)(l.plot_y + py) * (size_t)c.w + (size_t)l.plot_x) * 3;
        for (int px = 0; px < l.plot_w; px++, out += 3) memcpy(out, lut_get(&map, row[col[px]]), 3);
    }
    free(col);
    draw_outline(&c, &l, h->outline_x, h->outline_y, h->outline_n, h->outline_closed, h->x0, h->y0, h->x1, h->y1);
    draw_frame(&c, &l, h->title, h->x0, h->y0, h->x1, h->y1);
    draw_colour_bar(&c, &l, &map, lo, hi, h->units);
    s = write_png(path, &c);
    free(c.px);
    return s;
}

ad_status ad_write_scatter_png(const char *path, const ad_scatter_image *si)
{
    if (!si) return ad_fail(AD_ERR_INVALID, "s", "No scatter picture given.");
    if (si->n > 0 && (!si->x || !si->y || !si->value))
        return ad_fail(AD_ERR_INVALID, !si->x ? "x" : !si->y ? "y" : "value", "%zu discs given with no array.",
                       si->n);
    if (!(si->radius >= 0 && isfinite(si->radius)))
        return ad_fail(AD_ERR_INVALID, "radius", "The disc radius %g m is not finite and >= 0.", si->radius);
    ad_status s = check_range(si->vmin, si->vmax);
    if (s.code != AD_OK) return s;
    ad_image_layout l;
    s = ad_image_layout_for(si->width, si->x0, si->y0, si->x1, si->y1, &l);
    if (s.code != AD_OK) return s;

    double lo, hi;
    ad_color_range(si->value, si->n, si->vmin, si->vmax, 0, &lo, &hi);
    lut map;
    lut_build(&map, 0, lo, hi);
    canvas c;
    s = canvas_new(&c, &l);
    if (s.code != AD_OK) return s;

    /* plot-relative pixel coordinates; a pixel is covered when its centre lies in the disc,
     * and the pixel under the centre always is, so every disc shows */
    double sx = l.plot_w / (si->x1 - si->x0), sy = l.plot_h / (si->y1 - si->y0);
    double r = si->radius * sx, r2 = r * r;
    int W = l.plot_w, H = l.plot_h;
    for (size_t k = 0; k < si->n; k++) {
        double cx = (si->x[k] - si->x0) * sx, cy = (si->y1 - si->y[k]) * sy;
        if (!(cx > -r - 1 && cx < W + r + 1 && cy > -r - 1 && cy < H + r + 1)) continue; /* NaN too */
        const uint8_t *rgb = lut_get(&map, si->value[k]);
        /* clamped in double: a disc far larger than the picture must not overflow an int */
        int ylo = (int)fmax(0.0, ceil(cy - r - 0.5)), yhi = (int)fmin(H - 1.0, floor(cy + r - 0.5));
        for (int py = ylo; py <= yhi; py++) {
            double dy = py + 0.5 - cy, hw2 = r2 - dy * dy;
            if (hw2 < 0) continue;
            double hw = sqrt(hw2);
            int xlo = (int)fmax(0.0, ceil(cx - hw - 0.5)), xhi = (int)fmin(W - 1.0, floor(cx + hw - 0.5));
            uint8_t *out = c.px + ((size_t)(l.plot_y + py) * (size_t)c.w + (size_t)(l.plot_x + xlo)) * 3;
            for (int px = xlo; px <= xhi; px++, out += 3) out[0] = rgb[0], out[1] = rgb[1], out[2] = rgb[2];
        }
        int px = (int)floor(cx), py = (int)floor(cy);
        if (px >= 0 && px < W && py >= 0 && py < H) put(&c, l.plot_x + px, l.plot_y + py, rgb);
    }
    draw_outline(&c, &l, si->outline_x, si->outline_y, si->outline_n, si->outline_closed, si->x0, si->y0, si->x1,
                 si->y1);
    draw_frame(&c, &l, si->title, si->x0, si->y0, si->x1, si->y1);
    draw_colour_bar(&c, &l, &map, lo, hi, si->units);
    s = write_png(path, &c);
    free(c.px);
    return s;
}

/* -------------------------------------------------------------- line plot -- */

/* Axis ticks along one side: labels at multiples of a 1-2-2.5-5 step. */
static void axis_ticks(canvas *c, int horizontal, int x0, int y0, int len, double lo, double hi)
{
    double step = tick_step(lo, hi), big = fmax(fabs(lo), fabs(hi));
    for (double i = ceil(lo / step - 1e-9); i * step <= hi + step * 1e-9; i++) {
        double v = i * step;
        if (fabs(v) < step * 1e-9) v = 0;
        char buf[32];
        tick_label(buf, sizeof buf, v, step, big);
        int w = (int)strlen(buf) * CHAR_ADV;
        if (horizontal) {
            int x = x0 + (int)lrint((v - lo) / (hi - lo) * (len - 1));
            fill_rect(c, x, y0, 1, TICK_LEN, INK);
            draw_text(c, x - w / 2, y0 + TICK_LEN + 4, buf, INK);
        } else {
            int y = y0 + (int)lrint((hi - v) / (hi - lo) * (len - 1));
            fill_rect(c, x0 - TICK_LEN, y, TICK_LEN, 1, INK);
            draw_text(c, x0 - TICK_LEN - 6 - w, y - TEXT_H / 2, buf, INK);
        }
    }
}

ad_status ad_write_line_plot_png(const char *path, const ad_line_plot *p)
{
    if (!p || p->nseries < 1 || !p->series) return ad_fail(AD_ERR_INVALID, "series", "No data series to plot.");
    double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
    for (int s = 0; s < p->nseries; s++)
        for (size_t i = 0; i < p->series[s].n; i++) {
            const ad_plot_series *q = &p->series[s];
            double e = q->err && isfinite(q->err[i]) ? q->err[i] : 0;
            if (!isfinite(q->x[i]) || !isfinite(q->y[i])) continue;
            xlo = fmin(xlo, q->x[i]), xhi = fmax(xhi, q->x[i]);
            ylo = fmin(ylo, q->y[i] - e), yhi = fmax(yhi, q->y[i] + e);
        }
    if (!(xlo <= xhi) || !(ylo <= yhi)) return ad_fail(AD_ERR_INVALID, "series", "The plot has no finite points.");
    if (ylo > 0 && ylo < 0.3 * yhi) ylo = 0; /* show the zero when it is near */
    if (yhi < 0 && yhi > 0.3 * ylo) yhi = 0;
    double dx = xhi > xlo ? 0.05 * (xhi - xlo) : 1, dy = yhi > ylo ? 0.08 * (yhi - ylo) : 1;
    xlo -= dx, xhi += dx, ylo -= dy, yhi += dy;
    int pw = p->width > 0 ? p->width : 800, ph = p->height > 0 ? p->height : 500;
    int left = 110, top = HEADER_H + 10, bottom = 80, right = 40 + 12 * CHAR_ADV;
    canvas c;
    ad_image_layout l = {pw + left + right, ph + top + bottom, left, top, pw, ph, 0, 0, 0, 0};
    ad_status st = canvas_new(&c, &l);
    if (st.code) return st;
    frame_rect(&c, left, top, pw, ph, INK);
    if (ylo < 0 && yhi > 0) { /* the zero line */
        int y = top + (int)lrint(yhi / (yhi - ylo) * (ph - 1));
        static const uint8_t GRID[3] = {200, 200, 200};
        fill_rect(&c, left, y, pw, 1, GRID);
    }
    axis_ticks(&c, 1, left, top + ph, pw, xlo, xhi);
    axis_ticks(&c, 0, left, top, ph, ylo, yhi);
    if (p->title) draw_text(&c, left, top - HEADER_H + 4, p->title, INK);
    if (p->xlabel) draw_text(&c, left + pw / 2 - (int)strlen(p->xlabel) * CHAR_ADV / 2, top + ph + 40, p->xlabel, INK);
    if (p->ylabel) { /* on the title's line, left of the frame: clear of the top tick's label */
        c.cx1 = left - 8;
        draw_text(&c, 8, top - HEADER_H + 4, p->ylabel, INK);
        clip_all(&c);
    }
    double sx = (pw - 1) / (xhi - xlo), sy = (ph - 1) / (yhi - ylo);
    for (int s = 0; s < p->nseries; s++) {
        const ad_plot_series *q = &p->series[s];
        c.cx0 = left, c.cy0 = top, c.cx1 = left + pw, c.cy1 = top + ph;
        double px = NAN, py = NAN;
        for (size_t i = 0; i < q->n; i++) {
            if (!isfinite(q->x[i]) || !isfinite(q->y[i])) continue;
            double X = left + (q->x[i] - xlo) * sx, Y = top + (yhi - q->y[i]) * sy;
            if (isfinite(px)) draw_line(&c, px, py, X, Y, q->rgb);
            px = X, py = Y;
            fill_rect(&c, (int)X - 3, (int)Y - 3, 7, 7, q->rgb);
            if (q->err && isfinite(q->err[i]) && q->err[i] > 0) {
                int ya = (int)(top + (yhi - q->y[i] - q->err[i]) * sy), yb = (int)(top + (yhi - q->y[i] + q->err[i]) * sy);
                fill_rect(&c, (int)X, ya, 1, yb - ya + 1, q->rgb);
                fill_rect(&c, (int)X - 4, ya, 9, 1, q->rgb);
                fill_rect(&c, (int)X - 4, yb, 9, 1, q->rgb);
            }
        }
        clip_all(&c);
        if (q->label) { /* the legend, right of the plot */
            int y = top + 10 + s * (TEXT_H + 10);
            fill_rect(&c, left + pw + 16, y + 2, 12, TEXT_H - 4, q->rgb);
            draw_text(&c, left + pw + 34, y, q->label, INK);
        }
    }
    st = write_png(path, &c);
    free(c.px);
    return st;
}
