/* The run's files: force rows, frames, fields, .pvd, summary.txt, scene.ini, the video. Whole files
 * are written under NAME.tmp and renamed (src/io's ad_io_file), so a kill leaves the old file or the
 * new one; appended rows are formatted whole before one write, and resume trims them (resume.c). */
#include "run.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/free_each.h"
#include "io/image.h"
#include "io/vtk.h"
#include "ranks.h"

enum { PICTURE_PX = 1200 }; /* width of the plot area of every picture */

/* Appends one formatted row; the header first where the file is new or empty (a fresh folder). */
ad_status out_append_row(const run *r, const char *name, const char *header, const char *row)
{
    char path[AD_PATH_MAX + 32];
    ad_status st = path_in(r, path, sizeof path, "%s", name);
    if (st.code) return st;
    FILE *f = fopen(path, "a");
    if (!f) return fail(AD_ERR_IO, "cannot append to %s: %s", path, strerror(errno));
    struct stat sb;
    int err = fstat(fileno(f), &sb) != 0 ? errno : 0;
    if (!err && sb.st_size == 0 && header && fputs(header, f) == EOF) err = errno ? errno : EIO;
    if (!err && fputs(row, f) == EOF) err = errno ? errno : EIO;
    if (!err && fflush(f) != 0) err = errno ? errno : EIO;
    if (fclose(f) != 0 && !err) err = errno ? errno : EIO;
    if (err) return fail(AD_ERR_IO, "cannot append to %s: %s", path, strerror(err));
    return ok();
}

ad_status out_open(const run *r, ad_io_file *io, char *path, size_t n, const char *name)
{
    ad_status st = path_in(r, path, n, "%s", name);
    return st.code ? st : ad_io_open(io, path);
}

ad_probe_stream out_probe_row(run *r, measure *m)
{
    ad_probe_sums now;
    memset(&now, 0, sizeof now);
    if (r->probe) ad_world_read_probe(r->w, &now);
    ad_probe_stream fs = ad_probe_between(&m->probe_row, &now);
    m->probe_row = now;
    return fs;
}

/* One row of forces.csv: the mean force over the interval since the last row,
 * from the body impulse the engine integrates every step. */
ad_status out_force_row(run *r)
{
    if (r->sc.dimensions == 3) return out3_force_row(r);
    ad_stats s;
    ad_world_get_stats(r->w, &s);
    double dt = s.time - r->m.time;
    if (!(dt > 0)) return ok();
    double fx = (s.body_impulse_x - r->m.impulse_x) / dt, fy = (s.body_impulse_y - r->m.impulse_y) / dt;
    /* 2D coefficients: density = mass per area of the free stream, reference length = chord */
    double q = r->flow.dynamic_pressure * r->sc.chord;
    double cd = q > 0 ? fx / q : NAN, cl = q > 0 ? fy / q : NAN;
    if (s.max_overlap > r->max_overlap_seen) r->max_overlap_seen = s.max_overlap;
    measure m = r->m; /* the run state changes only once the row is written */
    m.impulse_x = s.body_impulse_x;
    m.impulse_y = s.body_impulse_y;
    m.time = s.time;
    if (m.settled && isfinite(cd)) {
        m.n++;
        m.sum_cd += cd;
        m.sum_cd2 += cd * cd;
        m.sum_cl += cl;
        m.sum_cl2 += cl * cl;
    }
    double n = (double)m.n;
    ad_probe_stream fs = out_probe_row(r, &m);
    char row[1024];
    snprintf(row, sizeof row, "%llu,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%llu,%.9g,%.6g,%.6g,%u,%zu,%.6g,%.6g,%.6g\n",
             (unsigned long long)s.step, s.time, fx, fy, cd, cl, mean_of(m.sum_cd, n), se_of(m.sum_cd, m.sum_cd2, n),
             mean_of(m.sum_cl, n), se_of(m.sum_cl, m.sum_cl2, n), m.n, s.kinetic_energy, s.dt, s.max_overlap,
             s.max_cell_occupancy, s.count, fs.density, fs.velocity, fs.temperature);
    ad_status st = out_append_row(r, "forces.csv",
                              "step,time,drag,lift,cd,cl,cd_mean,cd_se,cl_mean,cl_se,averaged,kinetic_energy,dt,"
                              "max_overlap,max_cell_occupancy,discs,free_stream_density,free_stream_velocity,"
                              "free_stream_temperature\n",
                              row);
    if (st.code) return st;
    m.rows++;
    r->m = m;
    r->row_cd = cd;
    r->row_cl = cl;
    return ok();
}

static ad_status keep_frame(run *r, unsigned long long k, double t)
{
    if (r->nf == r->fcap) {
        size_t cap = r->fcap ? 2 * r->fcap : 64;
        unsigned long long *ix = realloc(r->fidx, cap * sizeof *ix);
        if (!ix) return fail(AD_ERR_NO_MEMORY, "out of memory for the frame list");
        r->fidx = ix;
        double *tt = realloc(r->ftime, cap * sizeof *tt);
        if (!tt) return fail(AD_ERR_NO_MEMORY, "out of memory for the frame list");
        r->ftime = tt;
        r->fcap = cap;
    }
    r->fidx[r->nf] = k;
    r->ftime[r->nf] = t;
    r->nf++;
    return ok();
}

/* frames.csv (its header, then index, step, time): the times of the frames for the .pvd files across
 * resumes. */
ad_status out_frame_row(run *r)
{
    ad_stats s;
    ad_world_get_stats(r->w, &s);
    unsigned long long k = r->m.frames;
    char row[128];
    /* all the digits: the .pvd files list the same times after a resume as without one */
    snprintf(row, sizeof row, "%llu,%llu,%.17g\n", k, (unsigned long long)s.step, s.time);
    ad_status st = out_append_row(r, "frames.csv", AD_FRAMES_HEADER, row);
    if (!st.code) st = keep_frame(r, k, s.time);
    if (st.code) return st;
    r->m.frames++;
    return ok();
}

ad_status out_load_frames(run *r, unsigned long long step)
{
    r->nf = 0;
    char path[AD_PATH_MAX + 32];
    ad_status st = path_in(r, path, sizeof path, "frames.csv");
    if (st.code) return st;
    FILE *f = fopen(path, "r");
    if (!f) return ok(); /* a new folder: no frames yet */
    /* whole rows only; the header line (AD_FRAMES_HEADER) is no row, and a folder of an aerodem older
     * than it has none */
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while (!st.code && (len = getline(&line, &cap, f)) > 0 && line[len - 1] == '\n') {
        unsigned long long k, fs;
        double t;
        if (sscanf(line, "%llu,%llu,%lf", &k, &fs, &t) != 3) continue;
        if (k < r->m.frames && fs <= step && (r->nf == 0 || k > r->fidx[r->nf - 1])) st = keep_frame(r, k, t);
    }
    free(line);
    fclose(f);
    return st;
}

/* What colours the frames' discs, as their files and the video are named. */
const char *out_frame_name(const run *r) { return r->sc.frame_colour == AD_FRAME_PRESSURE ? "pressure" : "speed"; }

/* The frames' colour scale, one for the whole run so that the video does not flicker: speed from 0 to
 * the stream's |U| + 3 sigma (the fastest discs of a Maxwellian, sigma^2 = kT/m per component; the
 * auto range where that is 0), pressure the first frame's range, kept. */
void out_frame_scale(run *r, const float *v, size_t n)
{
    if (!isnan(r->frame_hi)) return;
    double top = fabs(r->sc.velocity) + 3.0 * sqrt(r->sc.temperature);
    if (r->sc.frame_colour == AD_FRAME_SPEED && top > 0) {
        r->frame_lo = 0.0;
        r->frame_hi = top;
    } else {
        ad_color_range(v, n, NAN, NAN, 0, &r->frame_lo, &r->frame_hi);
    }
    say(r, "  frames: %s coloured by their %s, %.4g to %.4g %s on every frame of the run\n",
        r->sc.dimensions == 3 ? "spheres" : "discs", out_frame_name(r),
        r->frame_lo, r->frame_hi, r->sc.frame_colour == AD_FRAME_PRESSURE ? "N" : "m/s");
}

/* Particle frame k: PNG coloured by per-disc speed or pressure (with the time and step in its title),
 * and a .vtp. */
ad_status out_frame_read(run *r, frame_data *f)
{
    ad_stats s;
    ad_world_get_stats(r->w, &s);
    size_t n = s.count;
    int three = r->sc.dimensions == 3;
    memset(f, 0, sizeof *f);
    if (three) f->state3 = malloc((n + 1) * sizeof *f->state3);
    else f->state = malloc((n + 1) * sizeof *f->state);
    f->id = malloc((n + 1) * sizeof *f->id);
    f->pressure = malloc((n + 1) * sizeof(float));
    f->x = malloc((n + 1) * sizeof(float));
    f->y = malloc((n + 1) * sizeof(float));
    f->colour = malloc((n + 1) * sizeof(float));
    if (!(f->state || f->state3) || !f->id || !f->pressure || !f->x || !f->y || !f->colour)
        return fail(AD_ERR_NO_MEMORY, "out of memory for a frame of %zu %s", n, three ? "spheres" : "discs");
    ad_particle_out o = {f->state, f->id, f->pressure, NULL, NULL, f->state3};
    return ad_world_read(r->w, 0, n, &o, &f->got);
}

void out_frame_free(frame_data *f) { AD_FREE_EACH(f->state, f->state3, f->id, f->pressure, f->x, f->y, f->colour); }

static ad_status write_particles(run *r, unsigned long long k)
{
    ad_stats s;
    ad_world_get_stats(r->w, &s);
    frame_data f;
    ad_status st = out_frame_read(r, &f);
    size_t got = f.got;
    const ad_particle *p = f.state;
    float *x = f.x, *y = f.y, *c = f.colour, *pr = f.pressure;
    const uint32_t *id = f.id;
    char path[AD_PATH_MAX + 64];
    if (!st.code && r->sc.png) {
        int speed = r->sc.frame_colour == AD_FRAME_SPEED;
        for (size_t i = 0; i < got; i++) {
            x[i] = p[i].x;
            y[i] = p[i].y;
            c[i] = speed ? hypotf(p[i].vx, p[i].vy) : pr[i];
        }
        out_frame_scale(r, c, got);
        char title[160];
        snprintf(title, sizeof title, "%s   t = %.5g s, step %llu",
                 speed ? "disc speed" : "disc pressure (sum of contact forces)", s.time, (unsigned long long)s.step);
        st = path_in(r, path, sizeof path, "frames/%s_%06llu.png", out_frame_name(r), k);
        ad_scatter_image im = {got, x, y, c, 0, 0, r->sc.width, r->sc.height, r->sc.radius,
                               title, speed ? "m/s" : "N", r->frame_lo, r->frame_hi, r->ox, r->oy, r->on,
                               r->oclosed, PICTURE_PX};
        if (!st.code) st = ad_write_scatter_png(path, &im);
    }
    if (!st.code && r->sc.vtk) {
        st = path_in(r, path, sizeof path, "particles/particles_%06llu.vtp", k);
        if (!st.code) st = ad_write_vtp_particles(path, got, p, id, pr);
    }
    out_frame_free(&f);
    return st;
}

/* The .pvd files index the frames this folder holds (frames.csv), each at its time. */
ad_status out_write_pvds(run *r)
{
    if (!r->sc.vtk || r->nf == 0) return ok();
    ad_pvd_entry *e = malloc(r->nf * sizeof *e);
    char(*names)[64] = malloc(r->nf * sizeof *names);
    ad_status st = ok();
    if (!e || !names) st = fail(AD_ERR_NO_MEMORY, "out of memory");
    char path[AD_PATH_MAX + 64];
    for (int kind = 0; kind < 2 && !st.code; kind++) {
        for (size_t k = 0; k < r->nf; k++) {
            snprintf(names[k], sizeof names[k], kind == 0 ? "particles/particles_%06llu.vtp"
                                                          : "fields/fields_%06llu.vti", r->fidx[k]);
            e[k] = (ad_pvd_entry){r->ftime[k], names[k]};
        }
        st = path_in(r, path, sizeof path, kind == 0 ? "particles.pvd" : "fields.pvd");
        if (!st.code) st = ad_write_pvd(path, e, r->nf);
    }
    free(e);
    free(names);
    return st;
}

static const ad_field FIELDS[] = {AD_FIELD_DENSITY,  AD_FIELD_VELOCITY_X, AD_FIELD_VELOCITY_Y, AD_FIELD_TEMPERATURE,
                                  AD_FIELD_PRESSURE, AD_FIELD_ACCEL_X,    AD_FIELD_ACCEL_Y,    AD_FIELD_CONTACT};
#define NFIELDS (sizeof FIELDS / sizeof FIELDS[0])

static ad_status write_heatmaps(run *r, float *const v[NFIELDS], const float *speed, const float *acc)
{
    size_t cells = (size_t)r->fd.nx * r->fd.ny;
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
    ad_status st = ok();
    char path[AD_PATH_MAX + 64];
    for (size_t k = 0; k < sizeof pics / sizeof pics[0] && !st.code; k++) {
        st = path_in(r, path, sizeof path, "%s", pics[k].file);
        ad_heatmap h = {pics[k].data, r->fd.nx, r->fd.ny, r->fd.x0, r->fd.y0, r->fd.x1, r->fd.y1,
                        pics[k].title, pics[k].units, NAN, NAN, pics[k].diverging, r->ox, r->oy, r->on,
                        r->oclosed, PICTURE_PX};
        if (!st.code) st = ad_write_heatmap_png(path, &h);
    }
    return st;
}

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
        st = path_in(r, path, sizeof path, "fields/fields_%06llu.vti", frame);
        if (!st.code)
            st = ad_write_vti(path, r->fd.nx, r->fd.ny, r->fd.x0, r->fd.y0, dx, dy, f, (int)(sizeof f / sizeof f[0]));
    }
    if (!st.code && pictures && r->sc.png && samples > 0) st = write_heatmaps(r, v, speed, acc);
    if (!st.code && pictures && r->sc.png && samples == 0)
        say(r, "  no heat maps: the fields were not sampled after the settling (every output.field_interval = %llu "
               "steps from run.settle_steps = %llu on): a longer run, or a shorter settling\n",
            r->sc.field_interval, r->sc.settle_steps);
    for (size_t k = 0; k < NFIELDS; k++) free(v[k]);
    free(vel);
    free(acc);
    free(speed);
    return st;
}

ad_status out_frame_files(run *r, unsigned long long k, int pictures)
{
    if (r->sc.dimensions == 3) return out3_frame_files(r, k, pictures);
    ad_status st = write_particles(r, k);
    if (!st.code) st = write_fields(r, k, pictures);
    if (!st.code) st = out_write_pvds(r);
    return st;
}

/* ------------------------------------------------------------- summary -- */

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
    ad_probe_sums now;
    memset(&now, 0, sizeof now);
    ad_world_read_probe(r->w, &now);
    ad_probe_stream m = ad_probe_between(&r->m.probe_settled, &now);
    double n0 = r->flow.number_density, u0 = r->sc.velocity, t0 = r->sc.temperature;
    double rn = m.density / n0, ru = m.velocity / u0, rt = t0 > 0 ? m.temperature / t0 : NAN;
    fprintf(f, "free_stream_density %.6g %s\nfree_stream_velocity %.6g m/s\nfree_stream_temperature %.6g m^2/s^2\n",
            m.density, r->sc.dimensions == 3 ? "1/m^3" : "1/m^2", m.velocity, m.temperature);
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

/* Discs pressed deeply into each other: the contact stiffness is too low for the flow (the gas is
 * no longer a gas of hard discs, and the forces on the body change with it). Past a fifth of a
 * radius at any force row of the run, where the shipped scenes stay below a tenth. */
static void overlap_warning(const run *r)
{
    if (!(r->max_overlap_seen > 0.2)) return;
    /* the stiffness that stops a disc of the stream's fast speed (U + 3 sigma) on the body within a
     * tenth of a radius: m v^2 / 2 = k d^2 / 2, d = 0.1 r */
    double v = fabs(r->sc.velocity) + 3.0 * sqrt(r->sc.temperature);
    double k = r->sc.mass * v * v / (0.01 * r->sc.radius * r->sc.radius);
    say(r, "  warning: discs overlapped by up to %.2g of a radius (contacts this soft change the gas and the forces "
           "on the body): raise gas.stiffness (now %.3g N/m; about %.2g N/m keeps overlaps near a tenth of a radius "
           "at this stream), or slow the stream\n",
        r->max_overlap_seen, r->sc.stiffness, k);
}

ad_status out_summary(run *r, int interrupted)
{
    ad_stats s;
    ad_world_get_stats(r->w, &s);
    double n = (double)r->m.n;
    double cd = mean_of(r->m.sum_cd, n), cl = mean_of(r->m.sum_cl, n);
    double cdse = se_of(r->m.sum_cd, r->m.sum_cd2, n), clse = se_of(r->m.sum_cl, r->m.sum_cl2, n);
    char path[AD_PATH_MAX + 32];
    ad_io_file io;
    ad_status st = out_open(r, &io, path, sizeof path, "summary.txt");
    if (st.code) return st;
    FILE *f = io.f;
    /* the run's identity is in scene.ini: summary.txt stays equal between equal runs */
    fprintf(f, "scene %s\nstatus %s\nsteps %llu\ntime %.9g s\nparticles %zu\n", r->origin,
            interrupted ? "interrupted" : "finished", (unsigned long long)s.step, s.time, s.count);
    if (r->sc.kind == AD_TUNNEL_FLOW) {
        fprintf(f, "speed_ratio %.6g\n", r->flow.speed_ratio);
        if (r->sc.collisions)
            fprintf(f, "mach %.6g\nmach_dense %.6g\nknudsen %.6g\nmean_free_path %.6g m\n", r->flow.mach,
                    r->flow.mach_dense, r->flow.knudsen, r->flow.mean_free_path);
    }
    if (r->sc.dimensions == 3) out3_summary_coefficients(r, f);
    else fprintf(f, "cd %.6g\ncd_se %.6g\ncl %.6g\ncl_se %.6g\naveraged_intervals %llu\n", cd, cdse, cl, clse, r->m.n);
    free_stream_summary(r, f, &s);
    fprintf(f, "max_overlap %.6g radius\nmax_cell_occupancy %u\n", s.max_overlap, s.max_cell_occupancy);
    /* pressures since the start: on the walls (impulse over time and length) and from
     * the virial, P = (2 <KE> + <sum r.F>) / (2 A); they agree for a gas in a box */
    int three = r->sc.dimensions == 3;
    double W = r->sc.width, H = r->sc.height, D = three ? r->sc.depth : 1.0, A = W * H * D;
    double p_virial = s.time > 0 ? (2.0 * s.kinetic_energy_integral + s.contact_virial_integral) /
                                       ((three ? 3.0 : 2.0) * A * s.time)
                                 : NAN;
    const char *punit = three ? "N/m^2" : "N/m";
    fprintf(f, "virial_pressure %.6g %s\n", p_virial, punit);
    if (r->sc.kind == AD_TUNNEL_BOX) {
        double imp = 0.0;
        for (int k = 0; k < (three ? 6 : 4); k++) imp += s.wall_impulse[k];
        double walls = three ? 2.0 * (W * H + W * D + H * D) : 2.0 * (W + H);
        double p_wall = s.time > 0 ? imp / (s.time * walls) : NAN;
        fprintf(f, "wall_pressure %.6g %s\n", p_wall, punit);
        say(r, "  pressure since the start: %.5g %s on the walls, %.5g %s from the virial\n", p_wall, punit, p_virial,
            punit);
    }
    st = ad_io_commit(&io);
    if (st.code) return st;
    if (r->sc.kind == AD_TUNNEL_FLOW && r->sc.shape != AD_SHAPE_NONE) {
        if (r->m.n >= 2 && three) out3_say_coefficients(r);
        else if (r->m.n >= 2)
            say(r, "  lift coefficient CL = %.4g +- %.2g, drag coefficient CD = %.4g +- %.2g (standard errors over %llu "
                   "intervals)\n",
                cl, clse, cd, cdse, r->m.n);
        else
            say(r, "  lift and drag not averaged: %llu interval(s) of output.force_interval = %llu steps after "
                   "run.settle_steps = %llu, where a mean and its error need 2 or more: a longer run, a shorter "
                   "settling or a shorter force_interval\n",
                r->m.n, r->sc.force_interval, r->sc.settle_steps);
    }
    overlap_warning(r);
    return ok();
}

/* scene.ini: the scene as run, and the run's identity (resume.c reads it back). */
ad_status out_scene_ini(run *r)
{
    char path[AD_PATH_MAX + 32];
    ad_io_file io;
    ad_status st = out_open(r, &io, path, sizeof path, "scene.ini");
    if (st.code) return st;
    fprintf(io.f, "; the scene as run, every key resolved (from %s)\n; run_id %016llx\n%s", r->origin,
            (unsigned long long)r->id, r->scene_ini);
    return ad_io_commit(&io);
}

/* ------------------------------------------------------------- video -- */

int out_have_ffmpeg(void)
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

/* A folder name that the shell command quotes safely: no quote, no control character. */
static int shell_safe(const char *s)
{
    for (; *s; s++)
        if (*s == '\'' || (unsigned char)*s < 32) return 0;
    return 1;
}

void out_video(run *r)
{
    /* the movie of the run's folder: made once, by the lead of an MPI job (ranks.h) */
    if (!r->sc.video || !r->sc.png || r->nf < 2 || !ranks_lead()) return;
    const char *q = out_frame_name(r);
    if (!out_have_ffmpeg()) {
        say(r, "  ffmpeg is not installed: no %s.mp4 (the frames are in %s/frames/; install ffmpeg to get a video)\n",
            q, r->dir);
        return;
    }
    if (!shell_safe(r->dir)) {
        say(r, "  no %s.mp4: the folder name holds a quote or a control character (the frames are in %s/frames/)\n",
            q, r->dir);
        return;
    }
    /* ffmpeg writes a temporary name that out_remove_temps knows, renamed when complete */
    char cmd[4 * AD_PATH_MAX + 512];
    snprintf(cmd, sizeof cmd,
             "ffmpeg -y -loglevel error -framerate 10 -start_number %llu -i '%s/frames/%s_%%06d.png' -vf "
             "'scale=trunc(iw/2)*2:trunc(ih/2)*2' -pix_fmt yuv420p -c:v libx264 '%s/%s.mp4.tmp.mp4' && mv "
             "'%s/%s.mp4.tmp.mp4' '%s/%s.mp4'",
             r->fidx[0], r->dir, q, r->dir, q, r->dir, q, r->dir, q);
    if (system(cmd) != 0) {
        char tmp[AD_PATH_MAX + 32];
        if (!path_in(r, tmp, sizeof tmp, "%s.mp4.tmp.mp4", q).code) unlink(tmp);
        say(r, "  ffmpeg failed to make %s.mp4 (the frames are in %s/frames/)\n", q, r->dir);
    } else say(r, "  video: %s/%s.mp4\n", r->dir, q);
}

/* ------------------------------------------------------ temporary files -- */

/* NAME.tmp where NAME is one of the program's outputs (checkpoint, CSV, picture, ParaView, text). */
static int is_our_temp(const char *name)
{
    static const char *ext[] = {".ckpt.tmp", ".csv.tmp", ".txt.tmp", ".ini.tmp", ".png.tmp",
                                ".vtp.tmp",  ".vti.tmp", ".pvd.tmp", ".mp4.tmp.mp4"};
    size_t n = strlen(name);
    for (size_t k = 0; k < sizeof ext / sizeof ext[0]; k++) {
        size_t e = strlen(ext[k]);
        if (n > e && !strcmp(name + n - e, ext[k])) return 1;
    }
    return 0;
}

void out_remove_temps(const run *r)
{
    const char *subs[] = {"", "frames", "particles", "fields"};
    char dir[AD_PATH_MAX + 32], file[2 * AD_PATH_MAX + 300];
    for (int k = 0; k < 4; k++) {
        if (path_in(r, dir, sizeof dir, "%s", subs[k]).code) continue;
        DIR *d = opendir(dir);
        if (!d) continue;
        for (struct dirent *e; (e = readdir(d));)
            if (is_our_temp(e->d_name)) {
                snprintf(file, sizeof file, "%s/%s", dir, e->d_name);
                unlink(file);
            }
        closedir(d);
    }
}

/* ------------------------------------------------------ checks at start -- */

int ad_tunnel_make_dirs(const char *path)
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
    struct stat sb;
    if (stat(buf, &sb) != 0) return -1;
    if (!S_ISDIR(sb.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

/* The output folders exist and take a file (a read-only file system, a full quota). */
ad_status out_make_dirs(const run *r)
{
    char sub[AD_PATH_MAX + 32];
    const char *subs[] = {"", "frames", "particles", "fields"};
    for (int k = 0; k < 4; k++) {
        if (k == 1 && !r->sc.png) continue;
        if (k > 1 && !r->sc.vtk) continue;
        ad_status st = k == 0 ? ok() : path_in(r, sub, sizeof sub, "%s", subs[k]);
        if (st.code) return st;
        if (k == 0) snprintf(sub, sizeof sub, "%s", r->dir);
        if (ad_tunnel_make_dirs(sub) != 0)
            return fail(AD_ERR_IO, "cannot create the output folder %s: %s", sub, strerror(errno));
    }
    ad_status st = path_in(r, sub, sizeof sub, "write_test.txt");
    ad_io_file io;
    if (!st.code) st = ad_io_open(&io, sub);
    if (st.code) return fail(AD_ERR_IO, "the output folder %s is not writable: %s", r->dir, st.message);
    if (fputs("aerodem\n", io.f) == EOF || fflush(io.f) != 0) {
        int e = errno;
        ad_io_discard(&io);
        return fail(AD_ERR_IO, "the output folder %s is not writable: %s", r->dir, strerror(e));
    }
    ad_io_discard(&io);
    return ok();
}

ad_status out_check(run *r)
{
    ad_image_layout l;
    if (r->sc.png) {
        ad_status st = ad_image_layout_for(PICTURE_PX, 0, 0, r->sc.width, r->sc.height, &l);
        if (st.code)
            return fail(AD_ERR_INVALID, "the frames of the %g x %g m tunnel cannot be drawn: %s (PNG pictures are %d px "
                        "wide; [output] png = no turns them off)", r->sc.width, r->sc.height, st.message, PICTURE_PX);
        st = ad_image_layout_for(PICTURE_PX, r->fd.x0, r->fd.y0, r->fd.x1, r->fd.y1, &l);
        /* 3D: the slice across the stream is depth x height */
        if (!st.code && r->sc.dimensions == 3) st = ad_image_layout_for(PICTURE_PX, 0, 0, r->sc.depth, r->sc.height, &l);
        if (st.code)
            return fail(AD_ERR_INVALID, "the field pictures of %d x %d cells of [output] field_cell = %g m cannot be "
                        "drawn: %s ([output] png = no turns them off)", r->fd.nx, r->fd.ny, r->sc.field_cell,
                        st.message);
    }
    /* the longest names the run will build, with the largest frame index it can reach */
    unsigned long long every = r->sc.frame_interval ? r->sc.frame_interval : r->total;
    unsigned long long last = r->m.frames + r->total / every + 2;
    char path[AD_PATH_MAX + 64];
    ad_status st = path_in(r, path, sizeof path, "particles/particles_%06llu.vtp.tmp", last);
    if (!st.code) st = path_in(r, path, sizeof path, "%s.mp4.tmp.mp4", out_frame_name(r));
    if (st.code) return st;
    if (r->sc.video && r->sc.png && !out_have_ffmpeg())
        say(r, "  note: ffmpeg is not installed: the run will make no %s.mp4 (the frames go to %s/frames/)\n",
            out_frame_name(r), r->dir);
    return ok();
}
