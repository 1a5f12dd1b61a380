/* The wind-tunnel run: stepping in chunks between events (force rows, frames, checkpoints), progress, outputs. */
#include "tunnel.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "io/image.h"
#include "io/vtk.h"

static volatile int g_interrupt = 0;

static void on_signal(int sig)
{
    (void)sig;
    g_interrupt = 1;
}

static double wall(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* What a run measures, kept across checkpoints (the caller block of the file). */
typedef struct measure {
    double impulse_x, impulse_y, time; /* at the last force row */
    unsigned long long rows;           /* force rows written */
    unsigned long long n;              /* interval means averaged (after settling) */
    double sum_cd, sum_cd2, sum_cl, sum_cl2;
    unsigned long long frames;         /* particle frames written */
    int settled;                       /* averages were reset at settle_steps */
    int pad;
    unsigned long long last_checkpoint;
    ad_probe_sums probe_row;           /* the free-stream probe at the last force row */
    ad_probe_sums probe_settled;       /* and when averages started */
} measure;

typedef struct run {
    ad_scene sc;
    ad_world *w;
    measure m;
    char dir[AD_PATH_MAX];
    char *scene_ini;
    int quiet;
    unsigned long long total;  /* the step this run goes to */
    ad_flow_numbers flow;
    float *ox, *oy;            /* body outline [m] */
    size_t on;
    int oclosed;
    ad_field_def fd;
    ad_scene_layout layout;    /* the domain, the reservoir, the probe */
    int probe;                 /* the free stream is measured (a flow tunnel with room for the probe) */
} run;

static ad_status fail(ad_code code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static ad_status fail(ad_code code, const char *fmt, ...)
{
    ad_status s;
    memset(&s, 0, sizeof s);
    s.code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s.message, sizeof s.message, fmt, ap);
    va_end(ap);
    return s;
}

static ad_status ok(void) { return fail(AD_OK, "%s", ""); }

static void say(const run *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void say(const run *r, const char *fmt, ...)
{
    if (r->quiet) return;
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fflush(stdout);
}

static int report(ad_status st)
{
    fprintf(stderr, "aerodem: error: %s\n", st.message);
    return st.code == AD_ERR_INVALID || st.code == AD_ERR_FORMAT ? AD_EXIT_USAGE : AD_EXIT_ERROR;
}

static int mkdirs(const char *path)
{
    char buf[AD_PATH_MAX + 64];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
            *p = '/';
        }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
    return 0;
}

static void path_in(const run *r, char *buf, size_t n, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static void path_in(const run *r, char *buf, size_t n, const char *fmt, ...)
{
    int k = snprintf(buf, n, "%s/", r->dir);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + k, n - (size_t)k, fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------------ measuring -- */

static double mean_of(double s, double n) { return n > 0 ? s / n : NAN; }

/* The free stream the probe saw between two reads (ad_probe_between; NaN where it saw no disc). */
typedef ad_probe_stream free_stream;

static free_stream probe_between(const ad_probe_sums *a, const ad_probe_sums *b) { return ad_probe_between(a, b); }

static ad_probe_sums probe_now(const run *r)
{
    ad_probe_sums p;
    memset(&p, 0, sizeof p);
    if (r->probe) ad_world_read_probe(r->w, &p);
    return p;
}

static double se_of(double s, double s2, double n)
{
    if (n < 2) return NAN;
    double m = s / n;
    return sqrt(fmax(s2 / n - m * m, 0.0) * n / (n - 1) / n);
}

/* One row of forces.csv: the mean force over the interval since the last row,
 * from the body impulse the engine integrates every step. */
static ad_status force_row(run *r)
{
    ad_stats s;
    ad_world_get_stats(r->w, &s);
    double dt = s.time - r->m.time;
    if (!(dt > 0)) return ok();
    double fx = (s.body_impulse_x - r->m.impulse_x) / dt, fy = (s.body_impulse_y - r->m.impulse_y) / dt;
    r->m.impulse_x = s.body_impulse_x;
    r->m.impulse_y = s.body_impulse_y;
    r->m.time = s.time;
    /* 2D coefficients: density = mass per area of the free stream, reference length = chord */
    double q = r->flow.dynamic_pressure * r->sc.chord;
    double cd = q > 0 ? fx / q : NAN, cl = q > 0 ? fy / q : NAN;
    if (r->m.settled && isfinite(cd)) {
        r->m.n++;
        r->m.sum_cd += cd;
        r->m.sum_cd2 += cd * cd;
        r->m.sum_cl += cl;
        r->m.sum_cl2 += cl * cl;
    }
    double n = (double)r->m.n;
    ad_probe_sums pnow = probe_now(r);
    free_stream fs = probe_between(&r->m.probe_row, &pnow);
    r->m.probe_row = pnow;
    char path[AD_PATH_MAX + 32];
    path_in(r, path, sizeof path, "forces.csv");
    FILE *f = fopen(path, "a");
    if (!f) return fail(AD_ERR_IO, "cannot append to %s: %s", path, strerror(errno));
    if (r->m.rows == 0)
        fprintf(f, "step,time,drag,lift,cd,cl,cd_mean,cd_se,cl_mean,cl_se,averaged,kinetic_energy,dt,max_overlap,"
                   "max_cell_occupancy,discs,free_stream_density,free_stream_velocity,free_stream_temperature\n");
    fprintf(f, "%llu,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%llu,%.9g,%.6g,%.6g,%u,%zu,%.6g,%.6g,%.6g\n",
            (unsigned long long)s.step, s.time, fx, fy, cd, cl, mean_of(r->m.sum_cd, n),
            se_of(r->m.sum_cd, r->m.sum_cd2, n), mean_of(r->m.sum_cl, n), se_of(r->m.sum_cl, r->m.sum_cl2, n),
            r->m.n, s.kinetic_energy, s.dt, s.max_overlap, s.max_cell_occupancy, s.count, fs.density, fs.velocity,
            fs.temperature);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) return fail(AD_ERR_IO, "writing %s failed", path);
    r->m.rows++;
    return ok();
}

/* ------------------------------------------------------------- outputs -- */

/* Particle frame: PNG coloured by per-disc pressure and a .vtp, with the .pvd rewritten. */
static ad_status write_frame(run *r)
{
    ad_stats s;
    ad_world_get_stats(r->w, &s);
    size_t n = s.count, got = 0;
    ad_particle *p = malloc((n + 1) * sizeof *p);
    uint32_t *id = malloc((n + 1) * sizeof *id);
    float *pr = malloc((n + 1) * sizeof *pr), *x = malloc((n + 1) * sizeof *x), *y = malloc((n + 1) * sizeof *y);
    ad_status st = ok();
    if (!p || !id || !pr || !x || !y) st = fail(AD_ERR_NO_MEMORY, "out of memory for a frame of %zu discs", n);
    if (!st.code) {
        ad_particle_out o = {p, id, pr, NULL, NULL};
        st = ad_world_read(r->w, 0, n, &o, &got);
    }
    unsigned long long k = r->m.frames;
    char path[AD_PATH_MAX + 64];
    if (!st.code && r->sc.png) {
        for (size_t i = 0; i < got; i++) {
            x[i] = p[i].x;
            y[i] = p[i].y;
        }
        path_in(r, path, sizeof path, "frames/pressure_%06llu.png", k);
        ad_scatter_image im = {got, x, y, pr, 0, 0, r->sc.width, r->sc.height, r->sc.radius,
                               "disc pressure (sum of contact forces)", "N", NAN, NAN, r->ox, r->oy, r->on,
                               r->oclosed, 1200};
        st = ad_write_scatter_png(path, &im);
    }
    if (!st.code && r->sc.vtk) {
        path_in(r, path, sizeof path, "particles/particles_%06llu.vtp", k);
        st = ad_write_vtp_particles(path, got, p, id, pr);
    }
    free(p);
    free(id);
    free(pr);
    free(x);
    free(y);
    if (st.code) return st;
    r->m.frames++;
    return ok();
}

/* The .pvd files index frames 0..frames-1; their times follow from the frame steps. */
static ad_status write_pvds(run *r, const double *times, unsigned long long nframes)
{
    if (!r->sc.vtk || nframes == 0) return ok();
    ad_pvd_entry *e = malloc(nframes * sizeof *e);
    char(*names)[64] = malloc(nframes * sizeof *names);
    ad_status st = ok();
    if (!e || !names) st = fail(AD_ERR_NO_MEMORY, "out of memory");
    char path[AD_PATH_MAX + 64];
    for (int kind = 0; kind < 2 && !st.code; kind++) {
        for (unsigned long long k = 0; k < nframes; k++) {
            snprintf(names[k], sizeof names[k], kind == 0 ? "particles/particles_%06llu.vtp"
                                                          : "fields/fields_%06llu.vti", k);
            e[k] = (ad_pvd_entry){times[k], names[k]};
        }
        path_in(r, path, sizeof path, kind == 0 ? "particles.pvd" : "fields.pvd");
        st = ad_write_pvd(path, e, nframes);
    }
    free(e);
    free(names);
    return st;
}

static const ad_field FIELDS[] = {AD_FIELD_DENSITY,  AD_FIELD_VELOCITY_X, AD_FIELD_VELOCITY_Y, AD_FIELD_TEMPERATURE,
                                  AD_FIELD_PRESSURE, AD_FIELD_ACCEL_X,    AD_FIELD_ACCEL_Y,    AD_FIELD_CONTACT};
#define NFIELDS (sizeof FIELDS / sizeof FIELDS[0])

/* Fields as a .vti (time averages so far) under fields/, and, at the end, PNG heat maps. */
static ad_status write_fields(run *r, unsigned long long frame, int pictures)
{
    size_t cells = (size_t)r->fd.nx * r->fd.ny;
    float *v[NFIELDS];
    float *vel = malloc(2 * cells * sizeof *vel), *acc = malloc(2 * cells * sizeof *acc);
    float *speed = malloc(cells * sizeof *speed);
    ad_status st = ok();
    for (size_t k = 0; k < NFIELDS; k++) v[k] = malloc(cells * sizeof(float));
    for (size_t k = 0; k < NFIELDS; k++)
        if (!v[k]) st = fail(AD_ERR_NO_MEMORY, "out of memory for fields");
    if (!vel || !acc || !speed) st = fail(AD_ERR_NO_MEMORY, "out of memory for fields");
    uint64_t samples = 0;
    for (size_t k = 0; k < NFIELDS && !st.code; k++) st = ad_world_read_field(r->w, FIELDS[k], v[k], &samples);
    if (!st.code) {
        for (size_t c = 0; c < cells; c++) {
            vel[2 * c] = v[1][c];
            vel[2 * c + 1] = v[2][c];
            acc[2 * c] = v[5][c];
            acc[2 * c + 1] = v[6][c];
            speed[c] = hypotf(v[1][c], v[2][c]);
        }
    }
    double dx = (r->fd.x1 - r->fd.x0) / r->fd.nx, dy = (r->fd.y1 - r->fd.y0) / r->fd.ny;
    char path[AD_PATH_MAX + 64];
    if (!st.code && r->sc.vtk) {
        ad_vti_field f[] = {{"density", 1, v[0]},     {"velocity", 2, vel}, {"temperature", 1, v[3]},
                            {"pressure", 1, v[4]},    {"acceleration", 2, acc}, {"contact_force", 1, v[7]},
                            {"speed", 1, speed}};
        path_in(r, path, sizeof path, "fields/fields_%06llu.vti", frame);
        st = ad_write_vti(path, r->fd.nx, r->fd.ny, r->fd.x0, r->fd.y0, dx, dy, f, (int)(sizeof f / sizeof f[0]));
    }
    if (!st.code && pictures && r->sc.png && samples > 0) {
        float *amag = v[5]; /* reuse: |a| */
        for (size_t c = 0; c < cells; c++) amag[c] = hypotf(acc[2 * c], acc[2 * c + 1]);
        struct {
            const char *file, *title, *units;
            const float *data;
            int diverging;
        } pics[] = {
            {"density.png", "number density", "1/m^2", v[0], 0},
            {"speed.png", "flow speed", "m/s", speed, 0},
            {"velocity_x.png", "velocity along the stream", "m/s", v[1], 0},
            {"velocity_y.png", "velocity across the stream", "m/s", v[2], 1},
            {"temperature.png", "temperature kT", "J", v[3], 0},
            {"pressure.png", "pressure (kinetic + contact)", "N/m", v[4], 0},
            {"acceleration.png", "mean acceleration magnitude", "m/s^2", amag, 0},
        };
        for (size_t k = 0; k < sizeof pics / sizeof pics[0] && !st.code; k++) {
            path_in(r, path, sizeof path, "%s", pics[k].file);
            ad_heatmap h = {pics[k].data, r->fd.nx, r->fd.ny, r->fd.x0, r->fd.y0, r->fd.x1, r->fd.y1,
                            pics[k].title, pics[k].units, NAN, NAN, pics[k].diverging, r->ox, r->oy, r->on,
                            r->oclosed, 1200};
            st = ad_write_heatmap_png(path, &h);
        }
    }
    for (size_t k = 0; k < NFIELDS; k++) free(v[k]);
    free(vel);
    free(acc);
    free(speed);
    return st;
}

/* ---------------------------------------------------------- checkpoint -- */

/* The caller block: the resolved scene text, then the measurement state. */
static ad_status save_checkpoint(run *r, const char *name)
{
    size_t tl = strlen(r->scene_ini) + 1;
    size_t n = tl + sizeof(measure) + sizeof(unsigned long long);
    char *blk = malloc(n);
    if (!blk) return fail(AD_ERR_NO_MEMORY, "out of memory");
    memcpy(blk, r->scene_ini, tl);
    memcpy(blk + tl, &r->m, sizeof r->m);
    memcpy(blk + tl + sizeof r->m, &r->total, sizeof r->total);
    char path[AD_PATH_MAX + 64];
    path_in(r, path, sizeof path, "%s", name);
    ad_status st = ad_world_save(r->w, path, blk, n);
    free(blk);
    return st;
}

/* ------------------------------------------------------------------ loop -- */

static unsigned long long next_multiple(unsigned long long step, unsigned long long every)
{
    return every ? (step / every + 1) * every : ~0ull;
}

static void progress(run *r, double t_start, unsigned long long step0, int final)
{
    static double last = 0;
    double now = wall();
    if (r->quiet || (!final && now - last < (isatty(fileno(stderr)) ? 0.5 : 10.0))) return;
    last = now;
    ad_stats s;
    ad_world_get_stats(r->w, &s);
    double el = now - t_start, done = (double)(s.step - step0), left = (double)(r->total - s.step);
    double rate = el > 0 ? done / el : 0, eta = rate > 0 ? left / rate : 0;
    int eh = (int)(eta / 3600), em = (int)(fmod(eta, 3600) / 60), es = (int)fmod(eta, 60);
    fprintf(stderr, "%sstep %llu/%llu (%3.0f%%)  t = %.4g s  %.3g particle-steps/s  ETA %d:%02d:%02d%s",
            isatty(fileno(stderr)) ? "\r" : "", (unsigned long long)s.step, r->total,
            100.0 * (double)s.step / (double)r->total, s.time, rate * (double)s.count, eh, em, es,
            isatty(fileno(stderr)) && !final ? "   " : "\n");
    fflush(stderr);
}

static void print_start(run *r)
{
    ad_stats s;
    ad_world_get_stats(r->w, &s);
    const ad_flow_numbers *f = &r->flow;
    say(r, "aerodem: %s\n", r->sc.source);
    say(r, "  tunnel %g x %g m, %zu discs of radius %g m, area fraction %g, backend %s (%d threads)\n", r->sc.width,
        r->sc.height, s.count, r->sc.radius, r->sc.area_fraction, ad_backend_name(s.backend), s.threads);
    if (r->sc.kind == AD_TUNNEL_FLOW && r->sc.collisions)
        say(r, "  free stream U = %g m/s: speed ratio S = %.3g, Mach M = %.3g (dilute, gamma = 2) or %.3g (with the "
               "discs' excluded area, Z = %.3g), Knudsen Kn = %.3g (mean free path %.3g m over chord %g m)\n",
            r->sc.velocity, f->speed_ratio, f->mach, f->mach_dense, f->compressibility, f->knudsen, f->mean_free_path,
            r->sc.chord);
    else if (r->sc.kind == AD_TUNNEL_FLOW) /* no collisions: no sound speed, no mean free path */
        say(r, "  free stream U = %g m/s: speed ratio S = %.3g; free-molecular (the discs do not collide)\n",
            r->sc.velocity, f->speed_ratio);
    if (r->sc.kind == AD_TUNNEL_FLOW) {
        const ad_scene_layout *l = &r->layout;
        const char *walls = r->sc.walls == AD_BOUNDARY_OPEN ? "far field" : r->sc.walls == AD_BOUNDARY_SOLID ? "solid"
                                                                                                             : "periodic";
        if (l->reservoir > 0)
            say(r, "  open inlet and outlet, top and bottom %s; free-stream reservoir outside the open sides, %g m "
                   "wide (%g m upstream)\n",
                walls, l->band[1], l->band[0]);
        else
            say(r, "  open inlet and outlet, top and bottom %s; no reservoir\n", walls);
        if (r->probe)
            say(r, "  the free stream is measured in x [%g, %g] m, y [%g, %g] m\n", l->probe_x0, l->probe_x1,
                l->probe_y0, l->probe_y1);
    }
    say(r, "  contact time %.4g s, step %.4g s, grid %u x %u cells; output in %s/\n", s.contact_time, s.dt, s.grid_nx,
        s.grid_ny, r->dir);
    /* the dashpot switches on and off inside a step: the restitution's error is first order in
     * the step, up to about 3 (-ln e) / contact_steps (docs/VALIDATION.md, contact mechanics) */
    double e = fmin(r->sc.restitution, r->sc.wall_restitution), err = 3.0 * -log(e) / r->sc.contact_steps;
    if (e < 1.0 && err > 0.01)
        say(r, "  note: restitution %g is resolved to about %.0f %% at run.contact_steps = %g; "
               "run.contact_steps = %.0f brings it to about 1 %%\n",
            e, 100.0 * err, r->sc.contact_steps, ceil(3.0 * -log(e) / 0.01));

}

/* The free stream the probe measured since the averages started, against the nominal one the
 * coefficients use; a warning where they differ by more than 2 %. */
static void free_stream_summary(run *r, FILE *f, const ad_stats *s)
{
    if (r->sc.kind != AD_TUNNEL_FLOW) return;
    fprintf(f, "discs_entered %llu\ndiscs_left %llu\nreservoir_added %llu\nreservoir_removed %llu\n",
            (unsigned long long)s->entered, (unsigned long long)s->left, (unsigned long long)s->reservoir_added,
            (unsigned long long)s->reservoir_removed);
    if (s->entries_lost) {
        fprintf(f, "entries_lost %llu\n", (unsigned long long)s->entries_lost);
        say(r, "  warning: %llu discs of the free stream found no room at the open sides and were dropped (the "
               "stream is denser than the open sides can take in: give [tunnel] reservoir a width)\n",
            (unsigned long long)s->entries_lost);
    }
    if (!r->probe) return;
    ad_probe_sums now = probe_now(r);
    free_stream m = probe_between(&r->m.probe_settled, &now);
    double n0 = r->flow.number_density, u0 = r->sc.velocity, t0 = r->sc.temperature;
    double rn = m.density / n0, ru = m.velocity / u0, rt = t0 > 0 ? m.temperature / t0 : NAN;
    fprintf(f, "free_stream_density %.6g 1/m^2\nfree_stream_velocity %.6g m/s\nfree_stream_temperature %.6g m^2/s^2\n",
            m.density, m.velocity, m.temperature);
    fprintf(f, "free_stream_density_ratio %.6g\nfree_stream_velocity_ratio %.6g\nfree_stream_temperature_ratio %.6g\n",
            rn, ru, rt);
    fprintf(f, "free_stream_samples %.0f\n", m.samples);
    int off = fabs(rn - 1.0) > 0.02 || fabs(ru - 1.0) > 0.02 || (t0 > 0 && fabs(rt - 1.0) > 0.02);
    fprintf(f, "free_stream_off_nominal %s\n", off ? "yes" : "no");
    say(r, "  free stream measured ahead of the body: density %.4g (%+.1f %%), velocity %.4g m/s (%+.1f %%), "
           "kT/m %.4g (%+.1f %%) of the nominal\n",
        m.density, 100.0 * (rn - 1.0), m.velocity, 100.0 * (ru - 1.0), m.temperature, 100.0 * (rt - 1.0));
    if (off)
        say(r, "  warning: the measured free stream differs from the nominal by more than 2 %%: the body's influence "
               "reaches the probe (a shock standing far ahead, or in a rarefied gas discs it throws back colliding "
               "upstream), or the run is too short to settle; the coefficients use the nominal density and "
               "velocity (q = rho U^2 / 2). A longer tunnel ahead of the body (body.x) moves the probe away\n");
}

static ad_status write_summary(run *r, int interrupted)
{
    ad_stats s;
    ad_world_get_stats(r->w, &s);
    double n = (double)r->m.n;
    double cd = mean_of(r->m.sum_cd, n), cl = mean_of(r->m.sum_cl, n);
    double cdse = se_of(r->m.sum_cd, r->m.sum_cd2, n), clse = se_of(r->m.sum_cl, r->m.sum_cl2, n);
    char path[AD_PATH_MAX + 32];
    path_in(r, path, sizeof path, "summary.txt");
    FILE *f = fopen(path, "w");
    if (!f) return fail(AD_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    fprintf(f, "scene %s\nstatus %s\nsteps %llu\ntime %.9g\nparticles %zu\n", r->sc.source,
            interrupted ? "interrupted" : "finished", (unsigned long long)s.step, s.time, s.count);
    if (r->sc.kind == AD_TUNNEL_FLOW) {
        fprintf(f, "speed_ratio %.6g\n", r->flow.speed_ratio);
        if (r->sc.collisions)
            fprintf(f, "mach %.6g\nmach_dense %.6g\nknudsen %.6g\nmean_free_path %.6g m\n", r->flow.mach,
                    r->flow.mach_dense, r->flow.knudsen, r->flow.mean_free_path);
    }
    fprintf(f, "cd %.6g\ncd_se %.6g\ncl %.6g\ncl_se %.6g\naveraged_intervals %llu\n", cd, cdse, cl, clse, r->m.n);
    free_stream_summary(r, f, &s);
    fprintf(f, "max_overlap %.6g\nmax_cell_occupancy %u\n", s.max_overlap, s.max_cell_occupancy);
    /* pressures since the start: on the walls (impulse over time and length) and from
     * the virial, P = (2 <KE> + <sum r.F>) / (2 A); they agree for a gas in a box */
    double W = r->sc.width, H = r->sc.height, A = W * H;
    double p_virial = s.time > 0 ? (2.0 * s.kinetic_energy_integral + s.contact_virial_integral) / (2.0 * A * s.time)
                                 : NAN;
    fprintf(f, "virial_pressure %.6g\n", p_virial);
    if (r->sc.kind == AD_TUNNEL_BOX) {
        double p_wall = s.time > 0 ? (s.wall_impulse[0] + s.wall_impulse[1] + s.wall_impulse[2] + s.wall_impulse[3]) /
                                         (s.time * 2.0 * (W + H))
                                   : NAN;
        fprintf(f, "wall_pressure %.6g\n", p_wall);
        say(r, "  pressure since the start: %.5g N/m on the walls, %.5g N/m from the virial\n", p_wall, p_virial);
    }
    fclose(f);
    if (r->sc.kind == AD_TUNNEL_FLOW && r->sc.shape != AD_SHAPE_NONE)
        say(r, "  lift coefficient CL = %.4g +- %.2g, drag coefficient CD = %.4g +- %.2g (standard errors over %llu "
               "intervals)\n",
            cl, clse, cd, cdse, r->m.n);
    return ok();
}

static int have_ffmpeg(void)
{
    const char *path = getenv("PATH");
    if (!path) return 0;
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *d = strtok(buf, ":"); d; d = strtok(NULL, ":")) {
        char f[4200];
        snprintf(f, sizeof f, "%s/ffmpeg", d);
        if (access(f, X_OK) == 0) return 1;
    }
    return 0;
}

static void make_video(run *r)
{
    if (!r->sc.video || !r->sc.png || r->m.frames < 2) return;
    if (!have_ffmpeg()) {
        say(r, "  ffmpeg is not installed: no pressure.mp4 (the frames are in %s/frames/; install ffmpeg to get a "
               "video)\n",
            r->dir);
        return;
    }
    char cmd[4 * AD_PATH_MAX + 512];
    snprintf(cmd, sizeof cmd,
             "ffmpeg -y -loglevel error -framerate 10 -i '%s/frames/pressure_%%06d.png' -vf "
             "'scale=trunc(iw/2)*2:trunc(ih/2)*2' -pix_fmt yuv420p -c:v libx264 '%s/pressure.mp4.tmp.mp4' && mv "
             "'%s/pressure.mp4.tmp.mp4' '%s/pressure.mp4'",
             r->dir, r->dir, r->dir, r->dir);
    if (system(cmd) != 0) say(r, "  ffmpeg failed to make pressure.mp4 (the frames are in %s/frames/)\n", r->dir);
    else say(r, "  video: %s/pressure.mp4\n", r->dir);
}

/* Runs from the world's current step to r->total. */
static int run_loop(run *r)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    ad_world_set_interrupt(r->w, &g_interrupt);

    ad_stats s;
    ad_world_get_stats(r->w, &s);
    unsigned long long step = s.step, step0 = step;
    double *times = NULL;
    unsigned long long ntimes = 0;
    double t0 = wall();
    ad_status st = ok();
    const ad_scene *sc = &r->sc;
    unsigned long long frame_every = sc->frame_interval ? sc->frame_interval : r->total;
    /* frame times: frames are taken at multiples of frame_every and at the end */
    times = malloc((r->m.frames + r->total / frame_every + 4) * sizeof *times);
    if (!times) return report(fail(AD_ERR_NO_MEMORY, "out of memory"));
    /* frames.csv (index, step, time) carries the times of earlier frames across a resume */
    char fpath[AD_PATH_MAX + 32];
    path_in(r, fpath, sizeof fpath, "frames.csv");
    for (unsigned long long k = 0; k < r->m.frames; k++) times[k] = 0.0;
    FILE *ff = fopen(fpath, "r");
    if (ff) {
        unsigned long long k, fs;
        double ft;
        while (fscanf(ff, "%llu,%llu,%lf", &k, &fs, &ft) == 3)
            if (k < r->m.frames) times[k] = ft;
        fclose(ff);
    }
    ntimes = r->m.frames;

    while (step < r->total && !g_interrupt) {
        unsigned long long next = r->total;
        if (!r->m.settled && sc->settle_steps > step && sc->settle_steps < next) next = sc->settle_steps;
        unsigned long long ev[] = {next_multiple(step, sc->force_interval), next_multiple(step, frame_every),
                                   next_multiple(step, sc->checkpoint_interval)};
        for (int k = 0; k < 3; k++)
            if (ev[k] < next) next = ev[k];
        st = ad_world_step(r->w, next - step);
        ad_world_get_stats(r->w, &s);
        step = s.step;
        if (st.code) break;
        if (g_interrupt && step < next) break; /* stopped between events */
        if (step % sc->force_interval == 0 || step == r->total) {
            st = force_row(r);
            if (st.code) break;
        }
        if (step % frame_every == 0 || step == r->total) {
            times[ntimes++] = s.time;
            ff = fopen(fpath, ntimes == 1 ? "w" : "a");
            if (ff) {
                fprintf(ff, "%llu,%llu,%.9g\n", ntimes - 1, step, s.time);
                fclose(ff);
            }
            st = write_frame(r);
            if (!st.code) st = write_fields(r, r->m.frames - 1, step == r->total);
            if (!st.code) st = write_pvds(r, times, ntimes);
            if (st.code) break;
        }
        if (!r->m.settled && step >= sc->settle_steps) {
            /* averages start here: fields restart, force means count from the next row */
            st = ad_world_reset_fields(r->w);
            if (st.code) break;
            r->m.settled = 1;
            r->m.probe_settled = probe_now(r);
        }
        if (sc->checkpoint_interval && step % sc->checkpoint_interval == 0 && step != r->total) {
            st = save_checkpoint(r, "checkpoint.ckpt");
            if (st.code) break;
        }
        progress(r, t0, step0, 0);
    }
    progress(r, t0, step0, 1);
    free(times);
    ad_world_set_interrupt(r->w, NULL);
    if (st.code) return report(st);
    int interrupted = step < r->total;
    st = save_checkpoint(r, "checkpoint.ckpt");
    if (st.code) return report(st);
    st = write_summary(r, interrupted);
    if (st.code) return report(st);
    if (interrupted) {
        fprintf(stderr, "aerodem: interrupted at step %llu; checkpoint written to %s/checkpoint.ckpt\n"
                        "  continue with: aerodem resume %s/checkpoint.ckpt\n",
                step, r->dir, r->dir);
        return AD_EXIT_INTERRUPTED;
    }
    make_video(r);
    say(r, "  done: %llu steps in %.1f s; results in %s/\n", step - step0, wall() - t0, r->dir);
    return AD_EXIT_OK;
}

/* Everything a run needs besides the world. */
static ad_status prepare(run *r, const ad_run_options *opt)
{
    snprintf(r->dir, sizeof r->dir, "%s", opt->out_dir ? opt->out_dir : r->sc.dir);
    r->quiet = opt->quiet;
    r->flow = ad_scene_flow_numbers(&r->sc);
    ad_status st = ad_scene_outline(&r->sc, &r->ox, &r->oy, &r->on, &r->oclosed);
    if (st.code) return st;
    r->scene_ini = ad_scene_to_ini(&r->sc);
    if (!r->scene_ini) return fail(AD_ERR_NO_MEMORY, "out of memory");
    r->fd.nx = (int)ceil(r->sc.width / r->sc.field_cell);
    r->fd.ny = (int)ceil(r->sc.height / r->sc.field_cell);
    r->fd.x0 = 0;
    r->fd.y0 = 0;
    r->fd.x1 = r->fd.nx * r->sc.field_cell;
    r->fd.y1 = r->fd.ny * r->sc.field_cell;
    r->fd.interval = (uint32_t)(r->sc.field_interval > 0xFFFFFFFFull ? 0xFFFFFFFFull : r->sc.field_interval);
    st = ad_scene_layout_of(&r->sc, &r->layout);
    if (st.code) return st;
    r->probe = r->layout.probe_x1 > r->layout.probe_x0;
    return ok();
}

/* The probe, once the world and its fields exist (a resumed world has it already). */
static ad_status set_probe(run *r)
{
    if (!r->probe) return ok();
    /* the discs moving downstream: the stream as it comes, not what the body throws back */
    ad_probe_def p = {r->layout.probe_x0, r->layout.probe_y0, r->layout.probe_x1, r->layout.probe_y1, 1.0, 0.0};
    return ad_world_set_probe(r->w, &p);
}

/* The output folders, made only once the world exists: a run that fails earlier writes nothing. */
static ad_status make_dirs(const run *r)
{
    char sub[AD_PATH_MAX + 32];
    const char *subs[] = {"", "frames", "particles", "fields"};
    for (int k = 0; k < 4; k++) {
        if (k == 1 && !r->sc.png) continue;
        if (k > 1 && !r->sc.vtk) continue;
        path_in(r, sub, sizeof sub, "%s", subs[k]);
        if (mkdirs(sub) != 0) return fail(AD_ERR_IO, "cannot create the output folder %s: %s", sub, strerror(errno));
    }
    return ok();
}

static void cleanup(run *r)
{
    ad_world_destroy(r->w);
    free(r->scene_ini);
    free(r->ox);
    free(r->oy);
}

int ad_tunnel_run(ad_scene *scene, const ad_run_options *opt, ad_run_result *res)
{
    run r;
    memset(&r, 0, sizeof r);
    r.sc = *scene;
    r.total = opt->steps ? opt->steps : r.sc.steps;
    if (r.sc.settle_steps >= r.total) {
        fprintf(stderr, "aerodem: error: --steps %llu must exceed [run] settle_steps = %llu\n", r.total,
                r.sc.settle_steps);
        return AD_EXIT_USAGE;
    }
    ad_status st = prepare(&r, opt);
    if (!st.code) st = ad_scene_build(&r.sc, &r.w);
    if (!st.code) st = ad_world_set_fields(r.w, &r.fd);
    if (!st.code) st = set_probe(&r);
    if (!st.code) st = make_dirs(&r);
    if (st.code) {
        cleanup(&r);
        return report(st);
    }
    /* a fresh run starts fresh files */
    char path[AD_PATH_MAX + 32];
    path_in(&r, path, sizeof path, "forces.csv");
    unlink(path);
    path_in(&r, path, sizeof path, "scene.ini");
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "; the scene as run, every key resolved (from %s)\n%s", r.sc.source, r.scene_ini);
        fclose(f);
    }
    if (r.on && r.sc.vtk) {
        path_in(&r, path, sizeof path, "body.vtp");
        st = ad_write_vtp_outline(path, r.ox, r.oy, r.on, r.oclosed);
        if (st.code) {
            cleanup(&r);
            return report(st);
        }
    }
    print_start(&r);
    int rc = run_loop(&r);
    if (res) {
        double n = (double)r.m.n;
        ad_stats s;
        ad_world_get_stats(r.w, &s);
        res->cl = mean_of(r.m.sum_cl, n);
        res->cd = mean_of(r.m.sum_cd, n);
        res->cl_se = se_of(r.m.sum_cl, r.m.sum_cl2, n);
        res->cd_se = se_of(r.m.sum_cd, r.m.sum_cd2, n);
        res->steps = s.step;
        res->intervals = r.m.n;
    }
    cleanup(&r);
    return rc;
}

/* Drops rows of forces.csv past the checkpoint's step (written after it, before a crash). */
static void trim_csv(const run *r, unsigned long long step)
{
    char path[AD_PATH_MAX + 32], tmp[AD_PATH_MAX + 40];
    path_in(r, path, sizeof path, "forces.csv");
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *in = fopen(path, "r");
    if (!in) return;
    FILE *out = fopen(tmp, "w");
    if (!out) {
        fclose(in);
        return;
    }
    char line[1024];
    while (fgets(line, sizeof line, in)) {
        unsigned long long s;
        if (sscanf(line, "%llu,", &s) == 1 && s > step) continue;
        fputs(line, out);
    }
    fclose(in);
    fclose(out);
    rename(tmp, path);
}

int ad_tunnel_resume(const char *checkpoint, ad_backend backend, int threads, const ad_run_options *opt)
{
    run r;
    memset(&r, 0, sizeof r);
    void *blk = NULL;
    size_t n = 0;
    ad_status st = ad_world_load(checkpoint, backend, threads, &r.w, &blk, &n);
    if (st.code) return report(st);
    size_t tl = blk ? strnlen(blk, n) + 1 : 0;
    if (!blk || tl > n || n - tl != sizeof(measure) + sizeof(unsigned long long)) {
        free(blk);
        ad_world_destroy(r.w);
        return report(fail(AD_ERR_FORMAT, "%s holds a world but not an aerodem run (no scene in it)", checkpoint));
    }
    ad_scene_defaults(&r.sc);
    snprintf(r.sc.source, sizeof r.sc.source, "%s", checkpoint);
    st = ad_scene_load_string(&r.sc, blk, checkpoint);
    if (!st.code) st = ad_scene_finish(&r.sc);
    memcpy(&r.m, (char *)blk + tl, sizeof r.m);
    memcpy(&r.total, (char *)blk + tl + sizeof r.m, sizeof r.total);
    free(blk);
    if (opt->steps) r.total = opt->steps;
    ad_world *w = r.w;
    r.w = NULL;
    if (!st.code) st = prepare(&r, opt);
    r.w = w;
    if (!st.code) st = make_dirs(&r);
    if (st.code) {
        cleanup(&r);
        return report(st);
    }
    ad_stats s;
    ad_world_get_stats(r.w, &s);
    if (r.total <= s.step) {
        fprintf(stderr, "aerodem: error: %s is at step %llu already; --steps must be larger to continue (it is %llu)\n",
                checkpoint, (unsigned long long)s.step, r.total);
        cleanup(&r);
        return AD_EXIT_USAGE;
    }
    trim_csv(&r, s.step);
    say(&r, "aerodem: resuming %s at step %llu of %llu (t = %.4g s)\n", checkpoint, (unsigned long long)s.step,
        r.total, s.time);
    int rc = run_loop(&r);
    cleanup(&r);
    return rc;
}
