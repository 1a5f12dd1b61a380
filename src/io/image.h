/* PNG pictures of a run: heat maps of gridded fields and frames of coloured discs. */
#ifndef AD_IO_IMAGE_H
#define AD_IO_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "aerodem/aerodem.h"

/* A field on a regular grid drawn as blocks of colour (nearest cell, no smoothing). */
typedef struct ad_heatmap {
    const float *values;   /* nx*ny, row-major, row 0 is the bottom (y = y0); NaN = no data (grey) */
    int nx, ny;            /* cells along x and y [-] */
    double x0, y0, x1, y1; /* physical extent [m] */
    const char *title;     /* e.g. "pressure"; NULL = none */
    const char *units;     /* e.g. "Pa" or "N/m" (2D); printed on the colour bar; NULL = none */
    double vmin, vmax;     /* colour range; NaN = auto from the finite values (1st..99th percentile) */
    int diverging;         /* 1: symmetric range around 0, blue-white-red map (signed quantities) */
    const float *outline_x, *outline_y; /* body outline [m], drawn as a 2-px dark line; NULL = none */
    size_t outline_n;
    int outline_closed;    /* 1: the last vertex joins the first */
    int width;             /* width of the plot area [px] (height from the aspect); 0 = 1000 */
} ad_heatmap;

ad_status ad_write_heatmap_png(const char *path, const ad_heatmap *h);

/* What a heat map of a slice of a 3D field adds (slice.h). Apart from ad_heatmap, whose callers fill it by
 * position: a field added there would leave their initialisers short (-Wmissing-field-initializers). */
typedef struct ad_heatmap_overlay {
    const float *segments; /* nsegments line segments, x0 y0 x1 y1 each [m] (a body's section from
                              ad_mesh_slice_segments), drawn as the outline is; NULL = none */
    size_t nsegments;
    const char *x_name, *y_name; /* the picture's axes on the extent line under the plot; NULL = "x", "y" */
} ad_heatmap_overlay;

/* ad_write_heatmap_png with the overlay o drawn too; o NULL or zeroed: the same picture as without. */
ad_status ad_write_heatmap_png_overlay(const char *path, const ad_heatmap *h, const ad_heatmap_overlay *o);

/* Discs as filled circles (at least one pixel each), coloured by a value per disc. O(n). */
typedef struct ad_scatter_image {
    size_t n;
    const float *x, *y, *value; /* centres [m] and the value that colours each disc (NaN = grey) */
    double x0, y0, x1, y1;      /* extent [m] */
    double radius;              /* disc radius [m] */
    const char *title, *units;
    double vmin, vmax;          /* NaN = auto (1st..99th percentile of the finite values) */
    const float *outline_x, *outline_y;
    size_t outline_n;
    int outline_closed;
    int width;                  /* 0 = 1000 */
} ad_scatter_image;

ad_status ad_write_scatter_png(const char *path, const ad_scatter_image *s);
/* The same with the overlay o (a 3D body's section, the axes' names) drawn too; o NULL: as without. */
ad_status ad_write_scatter_png_overlay(const char *path, const ad_scatter_image *s, const ad_heatmap_overlay *o);

/* Where the plot area lies in a picture: both writers use this layout, so a
 * caller (or a test) can map metres to pixels. Pixel (0, 0) is the top left. */
typedef struct ad_image_layout {
    int image_w, image_h;  /* whole picture [px] */
    int plot_x, plot_y;    /* top-left pixel of the plot area */
    int plot_w, plot_h;    /* plot area [px]; plot_w = width (or 1000), plot_h from the aspect */
    int bar_x, bar_y, bar_w, bar_h; /* the colour bar; its top row is vmax, its bottom row vmin */
} ad_image_layout;

/* The layout for a plot area `width` pixels wide (0 = 1000) over the extent; fails with
 * AD_ERR_INVALID on an empty or non-finite extent, or a picture side above 16384 px. */
ad_status ad_image_layout_for(int width, double x0, double y0, double x1, double y1, ad_image_layout *out);

/* The colour of t in [0, 1] (clamped; NaN gives the no-data grey): viridis, or the
 * diverging cool-warm map. */
void ad_colormap(int diverging, double t, uint8_t rgb[3]);

/* The colour range the writers use: NaN ends taken from the 1st/99th percentile of the
 * finite values; diverging makes it symmetric about 0; an empty range is widened. */
void ad_color_range(const float *v, size_t n, double vmin, double vmax, int diverging, double *lo, double *hi);

/* A line plot with points and optional error bars (a lift/drag polar, a pressure distribution). */
typedef struct ad_plot_series {
    const char *label;          /* legend text; NULL = none */
    size_t n;
    const double *x, *y, *err;  /* err: half-height of the error bar, may be NULL */
    uint8_t rgb[3];
    int points_only;            /* 1: the points and their bars, not joined by lines */
} ad_plot_series;

typedef struct ad_line_plot {
    const char *title, *xlabel, *ylabel;
    const ad_plot_series *series;
    int nseries;
    int width, height;          /* plot area [px]; 0 = 800 x 500 */
    int y_down;                 /* 1: the y axis inverted, larger values down (Cp: negative up) */
    const char *note;           /* a line under the x axis's label (a convention); NULL = none */
} ad_line_plot;

ad_status ad_write_line_plot_png(const char *path, const ad_line_plot *p);

#endif
