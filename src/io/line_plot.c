/* Line plots with points and error bars (a lift/drag polar): axes, ticks, the legend. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "image_internal.h"

/* Axis ticks along one side: labels at multiples of a 1-2-2.5-5 step; `down`: a vertical axis whose values
 * grow downwards. */
static void axis_ticks(canvas *c, int horizontal, int down, int x0, int y0, int len, double lo, double hi)
{
    double step = ad_tick_step(lo, hi), big = fmax(fabs(lo), fabs(hi));
    for (double i = ceil(lo / step - 1e-9); i * step <= hi + step * 1e-9; i++) {
        double v = i * step;
        if (fabs(v) < step * 1e-9) v = 0;
        char buf[32];
        ad_tick_label(buf, sizeof buf, v, step, big);
        int w = (int)strlen(buf) * CHAR_ADV;
        if (horizontal) {
            int x = x0 + (int)lrint((v - lo) / (hi - lo) * (len - 1));
            ad_fill_rect(c, x, y0, 1, TICK_LEN, INK);
            ad_draw_text(c, x - w / 2, y0 + TICK_LEN + 4, buf, INK);
        } else {
            int y = y0 + (int)lrint((down ? v - lo : hi - v) / (hi - lo) * (len - 1));
            ad_fill_rect(c, x0 - TICK_LEN, y, TICK_LEN, 1, INK);
            ad_draw_text(c, x0 - TICK_LEN - 6 - w, y - TEXT_H / 2, buf, INK);
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
    int left = 110, top = HEADER_H + 10, bottom = p->note ? 80 + TEXT_H + 10 : 80, right = 40 + 12 * CHAR_ADV;
    canvas c;
    ad_image_layout l = {pw + left + right, ph + top + bottom, left, top, pw, ph, 0, 0, 0, 0};
    ad_status st = ad_canvas_new(&c, &l);
    if (st.code) return st;
    ad_frame_rect(&c, left, top, pw, ph, INK);
    if (ylo < 0 && yhi > 0) { /* the zero line */
        int y = top + (int)lrint((p->y_down ? -ylo : yhi) / (yhi - ylo) * (ph - 1));
        static const uint8_t GRID[3] = {200, 200, 200};
        ad_fill_rect(&c, left, y, pw, 1, GRID);
    }
    axis_ticks(&c, 1, 0, left, top + ph, pw, xlo, xhi);
    axis_ticks(&c, 0, p->y_down, left, top, ph, ylo, yhi);
    if (p->title) ad_draw_text(&c, left, top - HEADER_H + 4, p->title, INK);
    if (p->xlabel) ad_draw_text(&c, left + pw / 2 - (int)strlen(p->xlabel) * CHAR_ADV / 2, top + ph + 40, p->xlabel, INK);
    if (p->note) ad_draw_text(&c, 8, top + ph + 40 + TEXT_H + 10, p->note, INK);
    if (p->ylabel) { /* on the title's line, left of the frame: clear of the top tick's label */
        c.cx1 = left - 8;
        ad_draw_text(&c, 8, top - HEADER_H + 4, p->ylabel, INK);
        ad_canvas_clip_all(&c);
    }
    double sx = (pw - 1) / (xhi - xlo), sy = (ph - 1) / (yhi - ylo);
    /* the y of a value on the picture: down from the top, or up from it where the axis is inverted */
    double ytop = p->y_down ? ylo : yhi, ysign = p->y_down ? -1.0 : 1.0;
    for (int s = 0; s < p->nseries; s++) {
        const ad_plot_series *q = &p->series[s];
        c.cx0 = left, c.cy0 = top, c.cx1 = left + pw, c.cy1 = top + ph;
        double px = NAN, py = NAN;
        for (size_t i = 0; i < q->n; i++) {
            if (!isfinite(q->x[i]) || !isfinite(q->y[i])) continue;
            double X = left + (q->x[i] - xlo) * sx, Y = top + ysign * (ytop - q->y[i]) * sy;
            if (isfinite(px) && !q->points_only) ad_draw_line(&c, px, py, X, Y, q->rgb);
            px = X, py = Y;
            ad_fill_rect(&c, (int)X - 3, (int)Y - 3, 7, 7, q->rgb);
            if (q->err && isfinite(q->err[i]) && q->err[i] > 0) {
                int ya = (int)(Y - q->err[i] * sy), yb = (int)(Y + q->err[i] * sy);
                ad_fill_rect(&c, (int)X, ya, 1, yb - ya + 1, q->rgb);
                ad_fill_rect(&c, (int)X - 4, ya, 9, 1, q->rgb);
                ad_fill_rect(&c, (int)X - 4, yb, 9, 1, q->rgb);
            }
        }
        ad_canvas_clip_all(&c);
        if (q->label) { /* the legend, right of the plot */
            int y = top + 10 + s * (TEXT_H + 10);
            ad_fill_rect(&c, left + pw + 16, y + 2, 12, TEXT_H - 4, q->rgb);
            ad_draw_text(&c, left + pw + 34, y, q->label, INK);
        }
    }
    st = ad_write_png(path, &c);
    free(c.px);
    return st;
}
