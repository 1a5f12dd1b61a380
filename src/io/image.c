/* Heat maps and disc frames: the layout of a map picture, its colour bar, title, extent and body outline. */
#include "image.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "image_internal.h"

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

static void draw_colour_bar(canvas *c, const ad_image_layout *l, const lut *map, double lo, double hi,
                            const char *units)
{
    for (int r = 0; r < l->bar_h; r++) {
        double t = l->bar_h > 1 ? 1.0 - (double)r / (l->bar_h - 1) : 0.5;
        ad_fill_rect(c, l->bar_x, l->bar_y + r, l->bar_w, 1, map->rgb[lut_index(t)]);
    }
    ad_frame_rect(c, l->bar_x, l->bar_y, l->bar_w, l->bar_h, INK);
    if (units && units[0]) {
        char u[64];
        snprintf(u, sizeof u, "[%s]", units);
        ad_draw_text(c, l->bar_x, l->bar_y - HEADER_H + 4, u, INK);
    }
    double step = ad_tick_step(lo, hi);
    double big = fmax(fabs(lo), fabs(hi));
    for (double i = ceil(lo / step - 1e-9); i * step <= hi + step * 1e-9; i++) {
        double v = i * step;
        if (fabs(v) < step * 1e-9) v = 0;
        int y = l->bar_y + (int)lrint((hi - v) / (hi - lo) * (l->bar_h - 1));
        ad_fill_rect(c, l->bar_x + l->bar_w, y, TICK_LEN, 1, INK);
        char buf[32];
        ad_tick_label(buf, sizeof buf, v, step, big);
        ad_draw_text(c, l->bar_x + l->bar_w + TICK_LEN + 4, y - TEXT_H / 2, buf, INK);
    }
}

/* Title above the plot and the extent under it, its axes named xn and yn (NULL: x and y). */
static void draw_frame(canvas *c, const ad_image_layout *l, const char *title, const char *xn, const char *yn,
                       double x0, double y0, double x1, double y1)
{
    ad_frame_rect(c, l->plot_x, l->plot_y, l->plot_w, l->plot_h, INK);
    if (title && title[0]) {
        c->cx1 = l->bar_x - 4; /* a long title stops before the units over the bar */
        ad_draw_text(c, l->plot_x, l->plot_y - HEADER_H + 4, title, INK);
        ad_canvas_clip_all(c);
    }
    char buf[160];
    snprintf(buf, sizeof buf, "%s %.4g..%.4g m  %s %.4g..%.4g m", xn ? xn : "x", x0, x1, yn ? yn : "y", y0, y1);
    int y = l->plot_y + (l->plot_h > l->bar_h ? l->plot_h : l->bar_h) + 10;
    ad_draw_text(c, l->plot_x, y, buf, INK);
}

/* Lines in metres on the plot: n segments, segment i from (x[i], y[i]) to (x[j], y[j]) with j = next(i) for an
 * outline, or from (x0 y0) to (x1 y1) of seg[4 i .. 4 i + 3] for a segment list (x, y NULL). */
static void draw_lines(canvas *c, const ad_image_layout *l, const float *ox, const float *oy, size_t n, int closed,
                       const float *seg, size_t nseg, double x0, double y0, double x1, double y1)
{
    c->cx0 = l->plot_x, c->cy0 = l->plot_y, c->cx1 = l->plot_x + l->plot_w, c->cy1 = l->plot_y + l->plot_h;
    double sx = l->plot_w / (x1 - x0), sy = l->plot_h / (y1 - y0);
    size_t outline_segs = ox && oy && n >= 2 ? (closed ? n : n - 1) : 0;
    for (size_t i = 0; i < outline_segs + (seg ? nseg : 0); i++) {
        float a[2], b[2];
        if (i < outline_segs) {
            size_t j = (i + 1) % n;
            a[0] = ox[i], a[1] = oy[i], b[0] = ox[j], b[1] = oy[j];
        } else {
            const float *s = seg + 4 * (i - outline_segs);
            a[0] = s[0], a[1] = s[1], b[0] = s[2], b[1] = s[3];
        }
        double ax = l->plot_x + (a[0] - x0) * sx, ay = l->plot_y + (y1 - a[1]) * sy;
        double bx = l->plot_x + (b[0] - x0) * sx, by = l->plot_y + (y1 - b[1]) * sy;
        if (isfinite(ax) && isfinite(ay) && isfinite(bx) && isfinite(by)) ad_draw_line(c, ax, ay, bx, by, INK);
    }
    ad_canvas_clip_all(c);
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
    return ad_write_heatmap_png_overlay(path, h, NULL);
}

ad_status ad_write_heatmap_png_overlay(const char *path, const ad_heatmap *h, const ad_heatmap_overlay *o)
{
    static const ad_heatmap_overlay none;
    if (!o) o = &none;
    if (!h) return ad_fail(AD_ERR_INVALID, "h", "No heat map given.");
    if (h->nx < 1 || h->ny < 1)
        return ad_fail(AD_ERR_INVALID, h->nx < 1 ? "nx" : "ny", "The heat map has %d x %d cells.", h->nx, h->ny);
    if (!h->values) return ad_fail(AD_ERR_INVALID, "values", "The heat map has no values.");
    if (o->nsegments > 0 && !o->segments)
        return ad_fail(AD_ERR_INVALID, "segments", "%zu segments given with no array.", o->nsegments);
    ad_status s = check_range(h->vmin, h->vmax);
    if (s.code != AD_OK) return s;
    ad_image_layout l;
    s = ad_image_layout_for(h->width, h->x0, h->y0, h->x1, h->y1, &l);
    if (s.code != AD_OK) return s;

    size_t cells = (size_t)h->nx * (size_t)h->ny;
    double lo, hi;
    ad_color_range(h->values, cells, h->vmin, h->vmax, h->diverging, &lo, &hi);
    lut map;
    ad_lut_build(&map, h->diverging, lo, hi);

    canvas c;
    s = ad_canvas_new(&c, &l);
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
    draw_lines(&c, &l, h->outline_x, h->outline_y, h->outline_n, h->outline_closed, o->segments, o->nsegments, h->x0,
               h->y0, h->x1, h->y1);
    draw_frame(&c, &l, h->title, o->x_name, o->y_name, h->x0, h->y0, h->x1, h->y1);
    draw_colour_bar(&c, &l, &map, lo, hi, h->units);
    s = ad_write_png(path, &c);
    free(c.px);
    return s;
}

ad_status ad_write_scatter_png(const char *path, const ad_scatter_image *si)
{
    return ad_write_scatter_png_overlay(path, si, NULL);
}

ad_status ad_write_scatter_png_overlay(const char *path, const ad_scatter_image *si, const ad_heatmap_overlay *o)
{
    static const ad_heatmap_overlay none;
    if (!o) o = &none;
    if (o->nsegments > 0 && !o->segments)
        return ad_fail(AD_ERR_INVALID, "segments", "%zu segments given with no array.", o->nsegments);
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
    ad_lut_build(&map, 0, lo, hi);
    canvas c;
    s = ad_canvas_new(&c, &l);
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
    draw_lines(&c, &l, si->outline_x, si->outline_y, si->outline_n, si->outline_closed, o->segments, o->nsegments,
               si->x0, si->y0, si->x1, si->y1);
    draw_frame(&c, &l, si->title, o->x_name, o->y_name, si->x0, si->y0, si->x1, si->y1);
    draw_colour_bar(&c, &l, &map, lo, hi, si->units);
    s = ad_write_png(path, &c);
    free(c.px);
    return s;
}
