/* Drawing on an RGB canvas: a new white canvas, rectangles, 5x7 text, clipped lines, tick labels. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "image_internal.h"

ad_status ad_canvas_new(canvas *c, const ad_image_layout *l)
{
    c->w = l->image_w;
    c->h = l->image_h;
    c->px = malloc((size_t)c->w * (size_t)c->h * 3);
    if (!c->px)
        return ad_fail(AD_ERR_NO_MEMORY, "width", "No memory for a %d x %d picture.", c->w, c->h);
    memset(c->px, 255, (size_t)c->w * (size_t)c->h * 3);
    ad_canvas_clip_all(c);
    return ad_ok();
}

void ad_canvas_clip_all(canvas *c)
{
    c->cx0 = 0, c->cy0 = 0, c->cx1 = c->w, c->cy1 = c->h;
}

void ad_fill_rect(canvas *c, int x, int y, int w, int h, const uint8_t rgb[3])
{
    for (int j = y; j < y + h; j++)
        for (int i = x; i < x + w; i++) put(c, i, j, rgb);
}

void ad_frame_rect(canvas *c, int x, int y, int w, int h, const uint8_t rgb[3])
{
    ad_fill_rect(c, x - 1, y - 1, w + 2, 1, rgb);
    ad_fill_rect(c, x - 1, y + h, w + 2, 1, rgb);
    ad_fill_rect(c, x - 1, y, 1, h, rgb);
    ad_fill_rect(c, x + w, y, 1, h, rgb);
}

/* Text with its top-left corner at (x, y); characters outside the font show as '?'. */
void ad_draw_text(canvas *c, int x, int y, const char *s, const uint8_t rgb[3])
{
    for (; *s; s++, x += CHAR_ADV) {
        int ch = (unsigned char)*s;
        if (ch < AD_FONT_FIRST || ch > AD_FONT_LAST) ch = '?';
        const uint8_t *g = ad_font5x7[ch - AD_FONT_FIRST];
        for (int col = 0; col < AD_FONT_W; col++)
            for (int row = 0; row < AD_FONT_H; row++)
                if (g[col] >> row & 1)
                    ad_fill_rect(c, x + col * FONT_SCALE, y + row * FONT_SCALE, FONT_SCALE, FONT_SCALE, rgb);
    }
}

/* A 2-px line from (ax, ay) to (bx, by) in continuous pixel coordinates (pixel i spans
 * [i, i+1)), clipped to the canvas clip rectangle first (Liang-Barsky), then Bresenham. */
void ad_draw_line(canvas *c, double ax, double ay, double bx, double by, const uint8_t rgb[3])
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

/* -------------------------------------------------------------------- ticks -- */

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
void ad_tick_label(char *buf, size_t n, double v, double step, double big)
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
double ad_tick_step(double lo, double hi)
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
