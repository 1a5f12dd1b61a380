/* Colour maps (viridis, Moreland's cool-warm), their 256-entry tables, and the colour range of a picture. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "image_internal.h"

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

void ad_lut_build(lut *l, int diverging, double lo, double hi)
{
    for (int i = 0; i < 256; i++) lut_colour(diverging, i, l->rgb[i]);
    l->lo = lo;
    l->scale = 1.0 / (hi - lo);
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
