/* The run's side of the live view: the history of the force rows (kept from the start, viewer or
 * not: a few numbers a row), and the frames, built only when a viewer wants one (live_wanted), at the
 * end of a stretch of steps, from the run's own read-back. */
#include "run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "io/image.h"
#include "physics/grid.h"

#define PI_LIVE 3.14159265358979323846
enum { HISTORY_ROWS = 4096 }; /* past this, every other row goes and rows are kept half as often */

struct live_feed {
    double *hist; /* LIVE_HISTORY_COLUMNS a row */
    size_t nh;
    unsigned long long every, seen; /* a row is kept every `every` force rows */
    ad_particle *p;                 /* the read-back, kept between frames */
    float *pressure;
    size_t cap;
    uint32_t *cells;                /* discs per cell of the neighbourhood grid */
    size_t ncells;
    double last_wall, rate;
    unsigned long long last_step;
    double build_s, next_build; /* the last frame's cost, and when the next may be built (LIVE_SHARE) */
    char label[320];
};

static double wall_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void load_history(run *r);

void live_begin(run *r, const char *label)
{
    if (!r->live) return;
    if (r->sc.dimensions == 3) { /* its pictures are the plane's: the run goes on without them */
        fprintf(stderr, "aerodem: note: the live view shows 2D runs; this 3D run goes on without it (its frames and "
                        "heat maps are in %s/)\n", r->dir);
        r->live = NULL;
        return;
    }
    r->feed = calloc(1, sizeof *r->feed);
    if (!r->feed) return; /* no view of this run: it runs all the same */
    r->feed->hist = malloc(HISTORY_ROWS * LIVE_HISTORY_COLUMNS * sizeof(double));
    r->feed->every = 1;
    snprintf(r->feed->label, sizeof r->feed->label, "%s", label);
    if (r->from) load_history(r);
}

void live_end(run *r)
{
    if (!r->feed) return;
    free(r->feed->hist);
    free(r->feed->p);
    free(r->feed->pressure);
    free(r->feed->cells);
    free(r->feed);
    r->feed = NULL;
}

/* One row of the history (time, cl, cd, cl_mean, cl_se, cd_mean, cd_se), kept every f->every rows. */
static void keep_row(live_feed *f, const double row[LIVE_HISTORY_COLUMNS])
{
    if (!f->hist || f->seen++ % f->every) return;
    if (f->nh == HISTORY_ROWS) { /* keep every other row, and from now on every other one */
        for (size_t i = 0; i < HISTORY_ROWS / 2; i++)
            memcpy(&f->hist[i * LIVE_HISTORY_COLUMNS], &f->hist[2 * i * LIVE_HISTORY_COLUMNS],
                   LIVE_HISTORY_COLUMNS * sizeof(double));
        f->nh = HISTORY_ROWS / 2;
        f->every *= 2;
    }
    memcpy(&f->hist[f->nh++ * LIVE_HISTORY_COLUMNS], row, LIVE_HISTORY_COLUMNS * sizeof(double));
}

void live_row(run *r)
{
    if (!r->feed) return;
    double n = (double)r->m.n;
    double row[LIVE_HISTORY_COLUMNS] = {r->m.time,
                                        r->row_cl,
                                        r->row_cd,
                                        mean_of(r->m.sum_cl, n),
                                        se_of(r->m.sum_cl, r->m.sum_cl2, n),
                                        mean_of(r->m.sum_cd, n),
                                        se_of(r->m.sum_cd, r->m.sum_cd2, n)};
    keep_row(r->feed, row);
}

/* A resumed run's history so far, from its forces.csv (trimmed to the checkpoint by then): the
 * page shows the whole run, not only what came after the resume. Rows it cannot read are skipped. */
static void load_history(run *r)
{
    char path[AD_PATH_MAX + 32], line[1024];
    if (path_in(r, path, sizeof path, "forces.csv").code) return;
    FILE *in = fopen(path, "r");
    if (!in) return;
    while (fgets(line, sizeof line, in)) {
        unsigned long long step;
        double t, drag, lift, cd, cl, cdm, cds, clm, cls;
        if (sscanf(line, "%llu,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf", &step, &t, &drag, &lift, &cd, &cl, &cdm, &cds,
                   &clm, &cls) != 10)
            continue; /* the header */
        double row[LIVE_HISTORY_COLUMNS] = {t, cl, cd, clm, cls, cdm, cds};
        keep_row(r->feed, row);
    }
    fclose(in);
}

/* v[0..n) as bytes over [lo, hi] (255 where NaN); lo and hi from the values where not given. */
static int quantise(live_values *out, const float *v, size_t n, double lo, double hi)
{
    out->q = malloc(n ? n : 1);
    if (!out->q) return 0;
    if (isnan(lo) || isnan(hi)) ad_color_range(v, n, lo, hi, 0, &lo, &hi);
    out->lo = lo;
    out->hi = hi;
    double s = hi > lo ? 254.0 / (hi - lo) : 0.0;
    for (size_t i = 0; i < n; i++) {
        double x = v[i];
        out->q[i] = isnan(x) ? 255 : s == 0.0 ? 127 : (uint8_t)fmin(254.0, fmax(0.0, round((x - lo) * s)));
    }
    return 1;
}

static void name_values(live_values *v, const char *name, const char *title, const char *units)
{
    v->name = name;
    v->title = title;
    v->units = units;
}

/* The area fraction of each sampled disc's neighbourhood: the discs whose centres lie in the 3 x 3
 * cells of side 3 radii around its own cell, times a disc's area over that square's. */
static int neighbourhood(live_feed *f, const run *r, size_t n, size_t stride, float *out)
{
    double h = 3.0 * r->sc.radius;
    int cx = (int)fmax(1.0, ceil(r->sc.width / h)), cy = (int)fmax(1.0, ceil(r->sc.height / h));
    while ((double)cx * cy > 4e6) { /* a coarser grid for very large domains */
        h *= 2.0;
        cx = (int)fmax(1.0, ceil(r->sc.width / h));
        cy = (int)fmax(1.0, ceil(r->sc.height / h));
    }
    size_t cells = (size_t)cx * (size_t)cy;
    if (cells > f->ncells) {
        uint32_t *c = realloc(f->cells, cells * sizeof *c);
        if (!c) return 0;
        f->cells = c;
        f->ncells = cells;
    }
    memset(f->cells, 0, cells * sizeof *f->cells);
    float inv = (float)(1.0 / h); /* the cells of grid.h's one clamp */
    for (size_t k = 0; k < n; k++) {
        int i = ad_cell_coord(f->p[k].x, 0.0f, inv, cx), j = ad_cell_coord(f->p[k].y, 0.0f, inv, cy);
        f->cells[(size_t)j * cx + i]++;
    }
    double area = PI_LIVE * r->sc.radius * r->sc.radius / (9.0 * h * h);
    for (size_t k = 0, s = 0; k < n; k += stride, s++) {
        int i = ad_cell_coord(f->p[k].x, 0.0f, inv, cx), j = ad_cell_coord(f->p[k].y, 0.0f, inv, cy);
        uint32_t sum = 0;
        for (int b = j - 1; b <= j + 1; b++)
            for (int a = i - 1; a <= i + 1; a++)
                if (a >= 0 && a < cx && b >= 0 && b < cy) sum += f->cells[(size_t)b * cx + a];
        out[s] = (float)(sum * area);
    }
    return 1;
}

/* The discs: every stride-th of the read-back (its cell order: an even sample over the domain). */
static int frame_discs(live_feed *f, const run *r, const ad_stats *s, live_frame *fr)
{
    size_t n = s->count, got = 0;
    if (n + 1 > f->cap) {
        ad_particle *p = realloc(f->p, (n + 1) * sizeof *p);
        if (p) f->p = p;
        float *pr = realloc(f->pressure, (n + 1) * sizeof *pr);
        if (pr) f->pressure = pr;
        if (!p || !pr) return 0;
        f->cap = n + 1;
    }
    ad_particle_out o = {f->p, NULL, f->pressure, NULL, NULL, NULL};
    if (ad_world_read(r->w, 0, n, &o, &got).code) return 0;
    size_t stride = got > LIVE_MAX_DISCS ? (got + LIVE_MAX_DISCS - 1) / LIVE_MAX_DISCS : 1;
    size_t nd = got ? (got - 1) / stride + 1 : 0;
    float *v = malloc(3 * (nd + 1) * sizeof *v);
    fr->xy = malloc(4 * nd + 1);
    if (!v || !fr->xy) {
        free(v);
        return 0;
    }
    fr->nd = nd;
    double sx = 65535.0 / r->sc.width, sy = 65535.0 / r->sc.height;
    for (size_t k = 0, i = 0; k < got; k += stride, i++) {
        unsigned x = (unsigned)fmin(65535.0, fmax(0.0, f->p[k].x * sx + 0.5));
        unsigned y = (unsigned)fmin(65535.0, fmax(0.0, f->p[k].y * sy + 0.5));
        uint8_t *b = &fr->xy[4 * i];
        b[0] = x & 255, b[1] = x >> 8, b[2] = y & 255, b[3] = y >> 8;
        v[i] = hypotf(f->p[k].vx, f->p[k].vy);
        v[nd + i] = f->pressure[k];
    }
    int okay = neighbourhood(f, r, got, stride, v + 2 * nd);
    /* speed on the frames' scale: 0 to the stream's |U| + 3 sigma */
    double top = fabs(r->sc.velocity) + 3.0 * sqrt(r->sc.temperature);
    name_values(&fr->disc[0], "speed", "disc speed", "m/s");
    name_values(&fr->disc[1], "pressure", "disc pressure (sum of contact forces)", "N");
    name_values(&fr->disc[2], "density", "area fraction of the neighbourhood", "");
    okay = okay && quantise(&fr->disc[0], v, nd, top > 0 ? 0.0 : NAN, top > 0 ? top : NAN);
    okay = okay && quantise(&fr->disc[1], v + nd, nd, NAN, NAN);
    okay = okay && quantise(&fr->disc[2], v + 2 * nd, nd, 0.0, NAN);
    free(v);
    return okay;
}

/* The averaged fields so far: density, flow speed, pressure, temperature. */
static int frame_fields(const run *r, live_frame *fr)
{
    size_t cells = (size_t)r->fd.nx * (size_t)r->fd.ny;
    float *v = malloc(5 * cells * sizeof *v);
    if (!v) return 0;
    static const ad_field read[5] = {AD_FIELD_DENSITY, AD_FIELD_VELOCITY_X, AD_FIELD_VELOCITY_Y, AD_FIELD_PRESSURE,
                                     AD_FIELD_TEMPERATURE};
    int okay = 1;
    for (int k = 0; k < 5 && okay; k++) okay = !ad_world_read_field(r->w, read[k], v + k * cells, &fr->samples).code;
    for (size_t c = 0; c < cells && okay; c++) v[cells + c] = hypotf(v[cells + c], v[2 * cells + c]);
    fr->nx = r->fd.nx;
    fr->ny = r->fd.ny;
    name_values(&fr->map[0], "density", "number density", "1/m^2");
    name_values(&fr->map[1], "speed", "flow speed", "m/s");
    name_values(&fr->map[2], "pressure", "pressure (kinetic + contact)", "N/m");
    name_values(&fr->map[3], "temperature", "temperature kT", "J");
    const float *src[LIVE_MAPS] = {v, v + cells, v + 3 * cells, v + 4 * cells};
    for (int k = 0; k < LIVE_MAPS && okay; k++) okay = quantise(&fr->map[k], src[k], cells, NAN, NAN);
    free(v);
    return okay;
}

/* The run, its progress, the body, the history. */
static int frame_run(live_feed *f, const run *r, const ad_stats *sp, live_frame *fr, double now)
{
    const ad_stats s = *sp;
    snprintf(fr->label, sizeof fr->label, "%s", f->label);
    snprintf(fr->dir, sizeof fr->dir, "%s", r->dir);
    snprintf(fr->backend, sizeof fr->backend, "%s", ad_backend_name(s.backend));
    fr->threads = s.threads;
    fr->scene = strdup(r->scene_ini ? r->scene_ini : "");
    fr->step = s.step;
    fr->total = r->total;
    fr->settle_steps = r->sc.settle_steps;
    fr->settled = r->m.settled;
    fr->time = s.time;
    fr->dt = s.dt;
    fr->count = s.count;
    if (f->last_wall > 0 && now > f->last_wall && s.step > f->last_step) {
        double recent = (double)(s.step - f->last_step) / (now - f->last_wall);
        f->rate = f->rate > 0 ? 0.5 * (f->rate + recent) : recent;
    }
    f->last_wall = now;
    f->last_step = s.step;
    fr->rate = f->rate > 0 ? f->rate : NAN;
    fr->eta = f->rate > 0 ? (double)(r->total - s.step) / f->rate : NAN;
    fr->width = r->sc.width;
    fr->height = r->sc.height;
    fr->radius = r->sc.radius;
    fr->on = r->on;
    fr->oclosed = r->oclosed;
    fr->ox = malloc((r->on + 1) * sizeof *fr->ox);
    fr->oy = malloc((r->on + 1) * sizeof *fr->oy);
    fr->nh = f->nh;
    fr->history = malloc((f->nh * LIVE_HISTORY_COLUMNS + 1) * sizeof *fr->history);
    if (!fr->scene || !fr->ox || !fr->oy || !fr->history) return 0;
    if (r->on) memcpy(fr->ox, r->ox, r->on * sizeof *fr->ox);
    if (r->on) memcpy(fr->oy, r->oy, r->on * sizeof *fr->oy);
    if (f->nh) memcpy(fr->history, f->hist, f->nh * LIVE_HISTORY_COLUMNS * sizeof *fr->history);
    return 1;
}

/* A frame, where a viewer wants one and the last one's cost allows: frames take at most LIVE_SHARE of
 * the run's time (a world of millions of discs on a GPU, whose read-back takes tens of milliseconds,
 * is shown less often, not slowed down). */
void live_offer(run *r)
{
    live_feed *f = r->feed;
    double now = wall_now();
    if (!f || now < f->next_build || !live_wanted(r->live, now)) return;
    live_frame *fr = calloc(1, sizeof *fr);
    if (!fr) return;
    fr->build_ms = f->build_s > 0 ? 1e3 * f->build_s : NAN; /* the first frame: not known yet */
    /* a frame that cannot be made (out of memory) is skipped: the view is no reason to stop a run */
    ad_stats s;
    ad_world_get_stats(r->w, &s);
    if (frame_run(f, r, &s, fr, now) && frame_discs(f, r, &s, fr) && frame_fields(r, fr))
        live_publish(r->live, fr, now);
    else live_frame_free(fr);
    double end = wall_now();
    f->build_s = end - now;
    f->next_build = end + f->build_s * (1.0 - LIVE_SHARE) / LIVE_SHARE;
}
