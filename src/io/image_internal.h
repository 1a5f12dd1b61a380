/* What the picture writers of src/io share: the layout constants, the ink, colour tables, the canvas. */
#ifndef AD_IO_IMAGE_INTERNAL_H
#define AD_IO_IMAGE_INTERNAL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "font.h"
#include "image.h"

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

/* ------------------------------------------------- colour tables (colormap.c) -- */

typedef struct lut {
    uint8_t rgb[256][3];
    double lo, scale; /* t = (v - lo) * scale */
} lut;

/* Maps are used as 256-entry tables, like matplotlib's; ad_colormap quantizes the same way. */
static inline int lut_index(double t)
{
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    return (int)lrint(t * 255.0);
}

static inline const uint8_t *lut_get(const lut *l, double v)
{
    if (isnan(v)) return NODATA;
    return l->rgb[lut_index((v - l->lo) * l->scale)];
}

/* The 256 colours of a map and the scale that puts [lo, hi] on them. */
void ad_lut_build(lut *l, int diverging, double lo, double hi);

/* ------------------------------------------------------- the canvas (canvas.c) -- */

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

/* A white canvas of the layout's picture size, clipped to all of it. */
ad_status ad_canvas_new(canvas *c, const ad_image_layout *l);
void ad_canvas_clip_all(canvas *c);
void ad_fill_rect(canvas *c, int x, int y, int w, int h, const uint8_t rgb[3]);
/* A 1-px frame just outside the rectangle. */
void ad_frame_rect(canvas *c, int x, int y, int w, int h, const uint8_t rgb[3]);
/* Text with its top-left corner at (x, y); characters outside the font show as '?'. */
void ad_draw_text(canvas *c, int x, int y, const char *s, const uint8_t rgb[3]);
/* A 2-px line in continuous pixel coordinates, clipped to the clip rectangle. */
void ad_draw_line(canvas *c, double ax, double ay, double bx, double by, const uint8_t rgb[3]);
/* Axis and colour bar ticks: a 1-2-2.5-5 step giving about five ticks in [lo, hi], and
 * the label of value v on it (`big` is the largest |value| shown). */
double ad_tick_step(double lo, double hi);
void ad_tick_label(char *buf, size_t n, double v, double step, double big);

/* ------------------------------------------------------- the file (png_write.c) -- */

/* Writes the canvas as an 8-bit RGB PNG (path.tmp, then renamed). */
ad_status ad_write_png(const char *path, const canvas *c);

#endif
