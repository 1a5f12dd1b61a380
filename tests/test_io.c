/* Output writers: PNG heat maps and disc frames decoded back with libpng; .vtp/.vti/.pvd written
 * for vtk_readback.py to check; failed writes report the path and leave no file behind. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* mkdir, stat, clock_gettime */
#endif
#include <errno.h>
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "io/image.h"
#include "io/vtk.h"
#include "test_util.h"
#include "test_files.h"



static int mkdir_p(const char *path)
{
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(tmp, 0777) != 0 && errno != EEXIST) return -1;
            *p = '/';
        }
    return mkdir(tmp, 0777) != 0 && errno != EEXIST ? -1 : 0;
}


static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}



/* The PNG written at path, decoded, and the layout of a plot `width` px wide of [0, x1] x [0, y1]:
 * 0 (a failed check) where the file does not decode. */
static int read_plot(const char *path, int width, double x1, double y1, ad_image_layout *l, picture *pic)
{
    ENSURE_OK(ad_image_layout_for(width, 0, 0, x1, y1, l));
    if (!read_png(path, pic)) {
        ENSURE(0);
        return 0;
    }
    return 1;
}

/* The line plot's rows above its plot area (image_internal.h: HEADER_H + 10). */
enum { HEADER_PX = 14 + 12 + 10 };

static const uint8_t *pixel(const picture *pic, int x, int y)
{
    static const uint8_t none[3] = {255, 0, 255};
    if (x < 0 || y < 0 || x >= pic->w || y >= pic->h) return none;
    return pic->px + ((size_t)y * (size_t)pic->w + (size_t)x) * 3;
}

/* The pixel of the plot area at metres (x, y). */
static const uint8_t *pixel_at(const picture *pic, const ad_image_layout *l, double x, double y, double x0, double y0,
                               double x1, double y1)
{
    int px = l->plot_x + (int)floor((x - x0) / (x1 - x0) * l->plot_w);
    int py = l->plot_y + (int)floor((y1 - y) / (y1 - y0) * l->plot_h);
    return pixel(pic, px, py);
}

#define ENSURE_RGB(got, want)                                                                                        \
    ENSURE_MSG((got)[0] == (want)[0] && (got)[1] == (want)[1] && (got)[2] == (want)[2],                             \
               "pixel (%d, %d, %d), expected (%d, %d, %d)", (got)[0], (got)[1], (got)[2], (want)[0], (want)[1],       \
               (want)[2])


/* ---------------------------------------------------------------- heat map -- */

static void test_heatmap(void)
{
    enum { NX = 7, NY = 5 };
    float v[NX * NY];
    for (int j = 0; j < NY; j++)
        for (int i = 0; i < NX; i++) v[j * NX + i] = (float)(10 * j + i);
    v[4 * NX + 0] = NAN; /* top-left cell: no data */
    /* a rectangle through cell centres, 1 m cells */
    const float ox[4] = {1.5f, 5.5f, 5.5f, 1.5f}, oy[4] = {1.5f, 1.5f, 3.5f, 3.5f};
    ad_heatmap h = {.values = v, .nx = NX, .ny = NY, .x0 = 0, .y0 = 0, .x1 = 7, .y1 = 5, .title = "value",
                    .units = "Pa", .vmin = 0, .vmax = 64, .outline_x = ox, .outline_y = oy, .outline_n = 4,
                    .outline_closed = 1, .width = 700};
    for (int pass = 0; pass < 2; pass++) {
        /* pass 1: automatic range; with 34 finite values the percentiles are min and max */
        if (pass == 1) h.vmin = h.vmax = NAN;
        double lo, hi;
        ad_color_range(v, NX * NY, h.vmin, h.vmax, 0, &lo, &hi);
        ENSURE(lo == 0 && hi == (pass ? 46 : 64));
        const char *path = out(pass ? "heat_auto.png" : "heat.png");
        if (!ENSURE_OK(ad_write_heatmap_png(path, &h))) continue;
        ENSURE(exists(path));
        char tmp[1100];
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        ENSURE(!exists(tmp));
        ad_image_layout l;
        picture pic;
        if (!read_plot(path, 700, 7, 5, &l, &pic)) continue;
        ENSURE(l.plot_w == 700 && l.plot_h == 500);
        ENSURE(pic.w == l.image_w && pic.h == l.image_h);
        for (int j = 0; j < NY; j++)
            for (int i = 0; i < NX; i++) {
                if ((i == 1 || i == 5) && j >= 1 && j <= 3) continue; /* under the outline */
                if ((j == 1 || j == 3) && i >= 1 && i <= 5) continue;
                uint8_t want[3];
                ad_colormap(0, (v[j * NX + i] - lo) / (hi - lo), want); /* NaN gives the no-data grey */
                const uint8_t *got = pixel_at(&pic, &l, i + 0.5, j + 0.5, 0, 0, 7, 5);
                ENSURE_RGB(got, want);
                /* the whole cell is one block: check a pixel near its corner too */
                got = pixel_at(&pic, &l, i + 0.03, j + 0.97, 0, 0, 7, 5);
                ENSURE_RGB(got, want);
            }
        const uint8_t grey[3] = {128, 128, 128};
        ENSURE_RGB(pixel_at(&pic, &l, 0.5, 4.5, 0, 0, 7, 5), grey);
        /* the outline: 2 px wide and dark along each edge */
        for (double t = 0.1; t < 1.0; t += 0.2) {
            int xl = l.plot_x + 150, yb = l.plot_y + (int)lrint(500 - 150);
            int ym = l.plot_y + (int)lrint(500 - (150 + 200 * t)), xm = l.plot_x + (int)lrint(150 + 400 * t);
            ENSURE(dark(pixel(&pic, xl - 1, ym)) && dark(pixel(&pic, xl, ym)));
            ENSURE(dark(pixel(&pic, xm, yb - 1)) && dark(pixel(&pic, xm, yb)));
            ENSURE(!dark(pixel(&pic, xl + 3, ym)) && !dark(pixel(&pic, xl - 4, ym)));
        }
        /* the colour bar: top is vmax, bottom vmin */
        uint8_t top[3], bottom[3];
        ad_colormap(0, 1, top);
        ad_colormap(0, 0, bottom);
        ENSURE_RGB(pixel(&pic, l.bar_x + l.bar_w / 2, l.bar_y), top);
        ENSURE_RGB(pixel(&pic, l.bar_x + l.bar_w / 2, l.bar_y + l.bar_h - 1), bottom);
        /* some ink (labels) right of the bar and in the title line */
        int ink = 0, title_ink = 0;
        for (int y = l.bar_y; y < l.bar_y + l.bar_h; y++)
            for (int x = l.bar_x + l.bar_w + 8; x < pic.w; x++) ink += dark(pixel(&pic, x, y));
        for (int y = 0; y < l.plot_y - 2; y++)
            for (int x = 0; x < l.plot_x + l.plot_w; x++) title_ink += dark(pixel(&pic, x, y));
        ENSURE_MSG(ink > 200, "%d dark pixels of tick labels", ink);
        ENSURE_MSG(title_ink > 50, "%d dark pixels of title", title_ink);
        free(pic.px);
    }
}

/* A signed field: symmetric range, blue below zero, white-ish at zero, red above. */
static void test_heatmap_diverging(void)
{
    enum { NX = 4, NY = 2 };
    const float v[NX * NY] = {-3, -1, 0, 2, -2, 0, 1, 3};
    ad_heatmap h = {.values = v, .nx = NX, .ny = NY, .x0 = 0, .y0 = 0, .x1 = 4, .y1 = 2, .title = "vorticity",
                    .units = "1/s", .vmin = NAN, .vmax = NAN, .diverging = 1, .width = 400};
    double lo, hi;
    ad_color_range(v, NX * NY, NAN, NAN, 1, &lo, &hi);
    ENSURE(lo == -3 && hi == 3);
    const char *path = out("heat_diverging.png");
    if (!ENSURE_OK(ad_write_heatmap_png(path, &h))) return;
    ad_image_layout l;
    picture pic;
    if (!read_plot(path, 400, 4, 2, &l, &pic)) return;
    const uint8_t *neg = pixel_at(&pic, &l, 0.5, 0.5, 0, 0, 4, 2); /* -3 */
    const uint8_t *zero = pixel_at(&pic, &l, 2.5, 0.5, 0, 0, 4, 2);
    const uint8_t *pos = pixel_at(&pic, &l, 3.5, 1.5, 0, 0, 4, 2); /* +3 */
    ENSURE(neg[2] > 150 && neg[0] < 100);
    ENSURE(pos[0] > 150 && pos[2] < 100);
    ENSURE(zero[0] > 200 && zero[1] > 200 && zero[2] > 200);
    uint8_t want[3];
    ad_colormap(1, (0 + 3) / 6.0, want);
    ENSURE_RGB(zero, want);
    free(pic.px);
}

/* ----------------------------------------------------------- colour range -- */

static void test_color_range(void)
{
    float v[1000];
    for (int i = 0; i < 1000; i++) v[(i * 7919) % 1000] = (float)i; /* a permutation of 0..999 */
    double lo, hi;
    ad_color_range(v, 1000, NAN, NAN, 0, &lo, &hi);
    ENSURE(lo == 9 && hi == 990);
    ad_color_range(v, 1000, -5, NAN, 0, &lo, &hi);
    ENSURE(lo == -5 && hi == 990);
    for (int i = 0; i < 1000; i++) v[i] = i < 995 ? 0.0f : 1.0f; /* mostly zero, like disc pressures */
    ad_color_range(v, 1000, NAN, NAN, 0, &lo, &hi);
    ENSURE(lo == 0 && hi == 1);
    for (int i = 0; i < 1000; i++) v[i] = 4.0f;
    ad_color_range(v, 1000, NAN, NAN, 0, &lo, &hi);
    ENSURE(lo < 4 && hi > 4);
    ad_color_range(v, 0, NAN, NAN, 0, &lo, &hi);
    ENSURE(lo == 0 && hi == 1);
    /* the two maps: viridis ends, cool-warm ends and middle */
    uint8_t c[3];
    ad_colormap(0, 0, c);
    ENSURE(c[0] == 68 && c[1] == 1 && c[2] == 84);
    ad_colormap(0, 1, c);
    ENSURE(c[0] == 253 && c[1] == 231 && c[2] == 37);
    ad_colormap(0, 0.5, c); /* entry 128 */
    ENSURE(c[0] == 33 && c[1] == 145 && c[2] == 140);
    ad_colormap(1, 0, c);
    ENSURE(abs(c[0] - 59) <= 1 && abs(c[1] - 76) <= 1 && abs(c[2] - 192) <= 1);
    ad_colormap(1, 1, c);
    ENSURE(abs(c[0] - 180) <= 1 && abs(c[1] - 4) <= 1 && abs(c[2] - 38) <= 1);
    ad_colormap(1, 0.5, c);
    ENSURE(abs(c[0] - 221) <= 2 && abs(c[1] - 221) <= 2 && abs(c[2] - 221) <= 2);
}

/* ---------------------------------------------------------------- scatter -- */

static void test_scatter(void)
{
    enum { N = 1000, COLS = 40 };
    float x[N], y[N], val[N];
    for (int i = 0; i < N; i++) {
        x[i] = (float)(i % COLS) + 0.5f;
        y[i] = (float)(i / COLS) + 0.5f;
        val[i] = 2.0f * (float)i;
    }
    const float ox[3] = {10, 30, 20}, oy[3] = {5, 5, 20};
    ad_scatter_image s = {.n = N, .x = x, .y = y, .value = val, .x0 = 0, .y0 = 0, .x1 = 40, .y1 = 25,
                          .radius = 0.4, .title = "disc pressure", .units = "N", .vmin = NAN, .vmax = NAN,
                          .outline_x = ox, .outline_y = oy, .outline_n = 3, .outline_closed = 1, .width = 800};
    const char *path = out("scatter.png");
    if (!ENSURE_OK(ad_write_scatter_png(path, &s))) return;
    ad_image_layout l;
    picture pic;
    if (!read_plot(path, 800, 40, 25, &l, &pic)) return;
    ENSURE(pic.w == l.image_w && pic.h == l.image_h);
    double lo, hi;
    ad_color_range(val, N, NAN, NAN, 0, &lo, &hi);
    ENSURE(lo == 18 && hi == 1980);
    const int probe[] = {0, 5, 41, 500, 777, 999};
    for (size_t k = 0; k < sizeof probe / sizeof probe[0]; k++) {
        int i = probe[k];
        uint8_t want[3];
        ad_colormap(0, (val[i] - lo) / (hi - lo), want);
        ENSURE_RGB(pixel_at(&pic, &l, x[i], y[i], 0, 0, 40, 25), want);
        ENSURE_RGB(pixel_at(&pic, &l, x[i] + 0.3, y[i], 0, 0, 40, 25), want); /* inside the disc */
        const uint8_t white[3] = {255, 255, 255};
        if (i != 999) ENSURE_RGB(pixel_at(&pic, &l, x[i] + 0.5, y[i] + 0.5, 0, 0, 40, 25), white); /* between discs */
    }
    ENSURE(dark(pixel_at(&pic, &l, 20, 5, 0, 0, 40, 25)));
    ENSURE(dark(pixel_at(&pic, &l, 15, 12.5, 0, 0, 40, 25)));
    free(pic.px);

    /* a million tiny discs: every one drawn, at least one pixel each, quickly */
    size_t big = 1000000;
    float *bx = malloc(big * sizeof *bx), *by = malloc(big * sizeof *by), *bv = malloc(big * sizeof *bv);
    if (!bx || !by || !bv) {
        ENSURE(0);
        free(bx), free(by), free(bv);
        return;
    }
    uint64_t r = 12345;
    for (size_t i = 0; i < big; i++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        bx[i] = (float)((r >> 11) % 100000) * 1e-3f;
        by[i] = (float)((r >> 35) % 50000) * 1e-3f;
        bv[i] = (i % 10 == 0) ? (float)(r >> 40) : 0.0f;
    }
    ad_scatter_image m = {.n = big, .x = bx, .y = by, .value = bv, .x0 = 0, .y0 = 0, .x1 = 100, .y1 = 50,
                          .radius = 0.01, .title = "million", .units = "N", .vmin = NAN, .vmax = NAN};
    double t0 = now();
    ENSURE_OK(ad_write_scatter_png(out("scatter_million.png"), &m));
    double dt = now() - t0;
    printf("scatter of %zu discs: %.3f s\n", big, dt);
    ENSURE_LE(dt, 20.0); /* generous: sanitizer builds; about 0.1 s optimized */
    free(bx), free(by), free(bv);
}

/* -------------------------------------------------------- a legible picture -- */

/* Potential flow past a cylinder of radius 1 m: pressure relative to the free stream
 * (NaN inside the body), for looking at the picture by eye. */
static void demo_picture(void)
{
    enum { NX = 160, NY = 80, NO = 96 };
    static float p[NX * NY];
    float ox[NO], oy[NO];
    double x0 = -4, x1 = 4, y0 = -2, y1 = 2, rho = 1.2, u = 30;
    for (int j = 0; j < NY; j++)
        for (int i = 0; i < NX; i++) {
            double x = x0 + (i + 0.5) * (x1 - x0) / NX, y = y0 + (j + 0.5) * (y1 - y0) / NY;
            double r2 = x * x + y * y;
            if (r2 < 1) {
                p[j * NX + i] = NAN;
                continue;
            }
            /* u - i v = U (1 - 1/z^2) */
            double zr = (x * x - y * y) / (r2 * r2), zi = -2 * x * y / (r2 * r2);
            double ur = u * (1 - zr), vi = -u * zi;
            p[j * NX + i] = (float)(0.5 * rho * (u * u - (ur * ur + vi * vi)));
        }
    for (int k = 0; k < NO; k++) {
        ox[k] = (float)cos(2 * TU_PI * k / NO);
        oy[k] = (float)sin(2 * TU_PI * k / NO);
    }
    ad_heatmap h = {.values = p, .nx = NX, .ny = NY, .x0 = x0, .y0 = y0, .x1 = x1, .y1 = y1,
                    .title = "pressure - p_inf (cylinder)", .units = "Pa", .vmin = NAN, .vmax = NAN, .diverging = 1,
                    .outline_x = ox, .outline_y = oy, .outline_n = NO, .outline_closed = 1};
    ENSURE_OK(ad_write_heatmap_png(out("demo_pressure.png"), &h));
    h.diverging = 0;
    h.title = "pressure, sequential map";
    for (int k = 0; k < NX * NY; k++) p[k] = p[k] * 3.0f + 25000.0f;
    ENSURE_OK(ad_write_heatmap_png(out("demo_sequential.png"), &h));
}

/* -------------------------------------------------------------------- VTK -- */

static void test_vtk(void)
{
    enum { N = 1000 };
    ad_particle pt[N];
    uint32_t id[N];
    float pres[N];
    for (int i = 0; i < N; i++) {
        pt[i] = (ad_particle){(float)i, 0.5f * (float)i, 1.0f + (float)i, -(float)i};
        id[i] = (uint32_t)(3 * i + 7);
        pres[i] = 2.0f * (float)i;
    }
    ENSURE_OK(ad_write_vtp_particles(out("particles.vtp"), N, pt, id, pres));
    ENSURE_OK(ad_write_vtp_particles(out("particles_empty.vtp"), 0, NULL, NULL, NULL));

    const float ox[5] = {0, 1, 1.5f, 1, 0}, oy[5] = {0, 0, 0.5f, 1, 1};
    ENSURE_OK(ad_write_vtp_outline(out("outline.vtp"), ox, oy, 5, 1));
    ENSURE_OK(ad_write_vtp_outline(out("outline_open.vtp"), ox, oy, 5, 0));
    /* the outline as its panels, one line cell per segment, with per-panel cell data (vtk_readback.py) */
    const float cp[5] = {0, 1, 2, 3, 4}, cf[5] = {0, -0.5f, -1, -1.5f, -2};
    ad_vtp_cells cells[2] = {{"Cp", cp}, {"Cf", cf}};
    ENSURE_OK(ad_write_vtp_panels(out("panels.vtp"), ox, oy, 5, 1, cells, 2));
    ENSURE_OK(ad_write_vtp_panels(out("panels_open.vtp"), ox, oy, 5, 0, cells, 2));
    ad_vtp_cells nameless = {"", cp};
    ENSURE(ad_write_vtp_panels(out("bad.vtp"), ox, oy, 5, 1, &nameless, 1).code == AD_ERR_INVALID);

    enum { NX = 7, NY = 5 };
    float val[NX * NY], vel[2 * NX * NY];
    for (int j = 0; j < NY; j++)
        for (int i = 0; i < NX; i++) {
            val[j * NX + i] = (float)(10 * j + i);
            vel[2 * (j * NX + i)] = (float)i + 0.25f;
            vel[2 * (j * NX + i) + 1] = -(float)j;
        }
    ad_vti_field f[2] = {{"value", 1, val}, {"velocity", 2, vel}};
    ENSURE_OK(ad_write_vti(out("field.vti"), NX, NY, -1.0, 2.0, 0.5, 0.25, f, 2));
    ad_vti_field bad = {"value", 3, val};
    ENSURE(ad_write_vti(out("bad.vti"), NX, NY, 0, 0, 1, 1, &bad, 1).code == AD_ERR_INVALID);
    ad_vti_field twice[2] = {{"value", 1, val}, {"value", 1, val}};
    ENSURE(ad_write_vti(out("bad.vti"), NX, NY, 0, 0, 1, 1, twice, 2).code == AD_ERR_INVALID);
    ENSURE(!exists(out("bad.vti")));

    /* a time series in a subfolder, indexed by a .pvd rewritten after each frame */
    char dir[1100];
    snprintf(dir, sizeof dir, "%s/frames", out_dir);
    ENSURE(mkdir_p(dir) == 0);
    ad_pvd_entry e[3], ef[3];
    char names[3][64], fnames[3][64];
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i < N; i++) pt[i].x = (float)i + 0.5f * (float)k;
        snprintf(names[k], sizeof names[k], "frames/p_%04d.vtp", k);
        snprintf(fnames[k], sizeof fnames[k], "frames/f_%04d.vti", k);
        ENSURE_OK(ad_write_vtp_particles(out(names[k]), N, pt, id, pres));
        for (int c = 0; c < NX * NY; c++) val[c] = (float)(10 * (c / NX) + c % NX + 100 * k);
        ENSURE_OK(ad_write_vti(out(fnames[k]), NX, NY, -1.0, 2.0, 0.5, 0.25, f, 2));
        e[k] = (ad_pvd_entry){0.1 * k, names[k]};
        ef[k] = (ad_pvd_entry){0.1 * k, fnames[k]};
        ENSURE_OK(ad_write_pvd(out("particles.pvd"), e, (size_t)k + 1));
        ENSURE_OK(ad_write_pvd(out("fields.pvd"), ef, (size_t)k + 1));
    }
    ENSURE(!exists(out("particles.pvd.tmp")));
}

/* A pressure distribution's plot: the y axis inverted (larger values lower in the picture), points without lines. */
static void test_plot_inverted(void)
{
    const double x[2] = {0, 1}, y[2] = {-1, 1}, e[2] = {0.1, 0.1};
    ad_plot_series s = {"upper", 2, x, y, e, {210, 60, 40}, 1};
    for (int down = 0; down < 2; down++) {
        ad_line_plot p = {"Cp", "x/c", "Cp", &s, 1, 400, 300, down, down ? "negative up" : NULL};
        const char *name = down ? "plot_down.png" : "plot_up.png";
        if (!ENSURE_OK(ad_write_line_plot_png(out(name), &p))) continue;
        picture pic;
        if (!read_png(out(name), &pic)) continue;
        /* the rows of the series' colour in the left and the right half of the plot area */
        double row[2] = {0, 0}, cnt[2] = {0, 0};
        for (int j = 0; j < pic.h; j++)
            for (int i = 110; i < 110 + 400; i++) {
                const uint8_t *c = pixel(&pic, i, j);
                if (c[0] == 210 && c[1] == 60 && c[2] == 40) row[i >= 310] += j, cnt[i >= 310]++;
            }
        ENSURE(cnt[0] > 0 && cnt[1] > 0);
        /* y = -1 on the left, +1 on the right: the right higher up (a smaller row) unless the axis is inverted */
        ENSURE_MSG(down ? row[1] / cnt[1] > row[0] / cnt[0] : row[1] / cnt[1] < row[0] / cnt[0],
                   "y_down %d: left row %.1f, right row %.1f", down, row[0] / cnt[0], row[1] / cnt[1]);
        /* no line joins the points: half way between them the plot holds no pixel of the colour */
        int between = 0;
        for (int j = 0; j < pic.h; j++) {
            const uint8_t *c = pixel(&pic, 310, j);
            between += c[0] == 210 && c[1] == 60 && c[2] == 40;
        }
        ENSURE(between == 0);
        ENSURE(pic.h == 300 + HEADER_PX + (down ? 80 + 24 : 80));
        free(pic.px);
    }
}

/* ----------------------------------------------------------------- errors -- */

static void test_errors(void)
{
    float v[4] = {1, 2, 3, 4};
    ad_heatmap h = {.values = v, .nx = 2, .ny = 2, .x0 = 0, .y0 = 0, .x1 = 1, .y1 = 1, .vmin = NAN, .vmax = NAN};
    const char *missing = out("no_such_dir/heat.png");
    ad_status s = ad_write_heatmap_png(missing, &h);
    ENSURE(s.code == AD_ERR_IO);
    ENSURE_MSG(strstr(s.message, missing) != NULL, "message: %s", s.message);
    ENSURE_MSG(strstr(s.message, strerror(ENOENT)) != NULL, "message: %s", s.message);

    /* the rename fails (the target is a folder): the temporary file is removed */
    char dir[1100];
    snprintf(dir, sizeof dir, "%s/a_folder.pvd", out_dir);
    ENSURE(mkdir_p(dir) == 0);
    ad_pvd_entry e = {0, "x.vtp"};
    s = ad_write_pvd(dir, &e, 1);
    ENSURE(s.code == AD_ERR_IO);
    ENSURE_MSG(strstr(s.message, dir) != NULL, "message: %s", s.message);
    char tmp[1200];
    snprintf(tmp, sizeof tmp, "%s.tmp", dir);
    ENSURE(!exists(tmp));
    s = ad_write_vtp_particles(out("no_such_dir/p.vtp"), 0, NULL, NULL, NULL);
    ENSURE(s.code == AD_ERR_IO && strstr(s.message, "no_such_dir/p.vtp") != NULL);

    /* bad arguments */
    h.x1 = 0;
    ENSURE(ad_write_heatmap_png(out("bad.png"), &h).code == AD_ERR_INVALID);
    h.x1 = 1;
    h.vmin = 2, h.vmax = 1;
    ENSURE(ad_write_heatmap_png(out("bad.png"), &h).code == AD_ERR_INVALID);
    h.vmin = h.vmax = NAN;
    h.y1 = 1e6; /* 1000 px wide, a billion high */
    ENSURE(ad_write_heatmap_png(out("bad.png"), &h).code == AD_ERR_INVALID);
    ENSURE(!exists(out("bad.png")));
    ENSURE(ad_write_vtp_outline(out("bad.vtp"), v, v, 1, 0).code == AD_ERR_INVALID);
}

static long file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

static int same_bytes(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int same = fa && fb;
    while (same) {
        int ca = fgetc(fa), cb = fgetc(fb);
        if (ca != cb) same = 0;
        if (ca == EOF || cb == EOF) break;
    }
    if (fa) fclose(fa);
    if (fb) fclose(fb);
    return same;
}

/* A full disk (a file-size limit, SIGXFSZ ignored as the program does): every writer fails with the
 * path and the reason, removes its temporary file and leaves the file it replaces as it was. */
static void test_full_disk(void)
{
    enum { N = 256 };
    static float v[N * N];
    for (int k = 0; k < N * N; k++) v[k] = (float)((k * 7919) % 1013); /* compresses badly */
    ad_heatmap h = {.values = v, .nx = N, .ny = N, .x0 = 0, .y0 = 0, .x1 = 1, .y1 = 1, .vmin = NAN, .vmax = NAN,
                    .width = 1000};
    ad_vti_field f = {"v", 1, v};
    ad_pvd_entry e[64];
    for (int k = 0; k < 64; k++) e[k] = (ad_pvd_entry){k, "particles/a_rather_long_name_of_a_frame_file.vtp"};
    const char *names[3] = {"full.png", "full.vti", "full.pvd"};
    /* the files as they were: small ones, under the limit */
    ad_heatmap small = h;
    small.nx = small.ny = 2;
    small.width = 20;
    ENSURE(ad_write_heatmap_png(out(names[0]), &small).code == AD_OK);
    ENSURE(ad_write_vti(out(names[1]), 2, 2, 0, 0, 1, 1, &f, 1).code == AD_OK);
    ENSURE(ad_write_pvd(out(names[2]), e, 1).code == AD_OK);
    char keep[3][1100];
    for (int k = 0; k < 3; k++) {
        snprintf(keep[k], sizeof keep[k], "%s.keep", out(names[k]));
        ENSURE(rename(out(names[k]), keep[k]) == 0);
        FILE *a = fopen(keep[k], "rb"), *b = fopen(out(names[k]), "wb");
        for (int c; a && b && (c = fgetc(a)) != EOF;) fputc(c, b);
        if (a) fclose(a);
        if (b) fclose(b);
    }
    struct rlimit old, lim;
    ENSURE(getrlimit(RLIMIT_FSIZE, &old) == 0);
    lim = old;
    lim.rlim_cur = 2048;
    void (*was)(int) = signal(SIGXFSZ, SIG_IGN);
    ENSURE(setrlimit(RLIMIT_FSIZE, &lim) == 0);
    ad_status s[3];
    s[0] = ad_write_heatmap_png(out(names[0]), &h);
    s[1] = ad_write_vti(out(names[1]), N, N, 0, 0, 1, 1, &f, 1);
    s[2] = ad_write_pvd(out(names[2]), e, 64);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, was);
    for (int k = 0; k < 3; k++) {
        char tmp[1200];
        snprintf(tmp, sizeof tmp, "%s.tmp", out(names[k]));
        ENSURE_MSG(s[k].code == AD_ERR_IO, "%s: code %d", names[k], s[k].code);
        ENSURE_MSG(strstr(s[k].message, out(names[k])) != NULL, "message: %s", s[k].message);
        ENSURE_MSG(strstr(s[k].message, strerror(EFBIG)) != NULL, "message: %s", s[k].message);
        ENSURE_MSG(!exists(tmp), "%s left behind", tmp);
        ENSURE_MSG(same_bytes(out(names[k]), keep[k]) && file_size(keep[k]) > 0, "%s changed", names[k]);
    }
}

int main(int argc, char **argv)
{
    out_dir = argc > 1 ? argv[1] : "io_out";
    if (mkdir_p(out_dir) != 0) {
        fprintf(stderr, "cannot create %s: %s\n", out_dir, strerror(errno));
        return 1;
    }
    test_color_range();
    test_heatmap();
    test_heatmap_diverging();
    test_scatter();
    demo_picture();
    test_vtk();
    test_plot_inverted();
    test_errors();
    test_full_disk();
    return tu_finish("test_io");
}
