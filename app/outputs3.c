/* A 3D run's files: force rows with the side force and the pitching moment, frames of the spheres near the
 * slice along the stream, 3D fields (.vti) and heat maps of two slices, the body's surface, the summary's
 * coefficients. The run loop, the checkpoints and resume are the 2D run's (tunnel.c, resume.c). */
#include "run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/free_each.h"
#include "io/image.h"
#include "io/slice.h"
#include "io/vtk.h"

enum { PICTURE_PX = 1200 };

ad_status out3_prepare(run *r)
{
    const ad_scene *sc = &r->sc;
    ad_status st = ad_scene_body_mesh(sc, &r->mesh, &r->ref);
    if (st.code) return st;
    r->fd.nz = (int)ceil(sc->depth / sc->field_cell);
    r->fd.z0 = 0;
    r->fd.z1 = r->fd.nz * sc->field_cell;
    if (r->mesh.n) st = ad_mesh_slice_segments(&r->mesh, AD_SLICE_Z, sc->slice_z, &r->section, &r->nsection);
    if (!st.code) memcpy(r->m3.magic, AD_MEASURE3_TAG, sizeof r->m3.magic);
    /* the Knudsen number on the body's reference length (the chord of a wing, a diameter, an STL's length) */
    if (!st.code && r->ref.length > 0) r->flow.knudsen = r->flow.mean_free_path / r->ref.length;
    return st;
}

/* The slab of spheres the frames show: within two diameters of the slice along the stream. */
static double slab_half(const run *r) { return 4.0 * r->sc.radius; }

/* ------------------------------------------------------------ forces -- */

/* The interval's mean force and moment about the pivot, from the impulses the engine integrates. */
typedef struct loads {
    double f[3], m[3]; /* N, N m */
    double cd, cl, cy, cm;
} loads;

static loads interval_loads(const run *r, const ad_stats *s, double dt)
{
    loads l;
    double imp[3] = {s->body_impulse_x, s->body_impulse_y, s->body_impulse_z};
    double was[3] = {r->m.impulse_x, r->m.impulse_y, r->m3.impulse_z};
    double ang[3] = {s->body_angular_impulse_x, s->body_angular_impulse_y, s->body_angular_impulse_z}, t[3];
    for (int k = 0; k < 3; k++) {
        l.f[k] = (imp[k] - was[k]) / dt;
        t[k] = (ang[k] - r->m3.angular[k]) / dt;
    }
    /* about the pivot p: sum (x - p) x f = T - p x F */
    const double *p = r->ref.pivot;
    l.m[0] = t[0] - (p[1] * l.f[2] - p[2] * l.f[1]);
    l.m[1] = t[1] - (p[2] * l.f[0] - p[0] * l.f[2]);
    l.m[2] = t[2] - (p[0] * l.f[1] - p[1] * l.f[0]);
    double q = r->flow.dynamic_pressure * r->ref.area;
    l.cd = q > 0 ? l.f[0] / q : NAN;
    l.cl = q > 0 ? l.f[1] / q : NAN;
    l.cy = q > 0 ? l.f[2] / q : NAN;
    /* nose up positive: a nose-up moment turns the body about -z (x downstream, y up) */
    l.cm = q > 0 ? -l.m[2] / (q * r->ref.length) : NAN;
    return l;
}

ad_status out3_force_row(run *r)
{
    ad_stats s;
    ad_world_get_stats(r->w, &s);
    double dt = s.time - r->m.time;
    if (!(dt > 0)) return ok();
    loads l = interval_loads(r, &s, dt);
    if (s.max_overlap > r->max_overlap_seen) r->max_overlap_seen = s.max_overlap;
    measure m = r->m; /* the run state changes only once the row is written */
    measure3 m3 = r->m3;
    m.impulse_x = s.body_impulse_x;
    m.impulse_y = s.body_impulse_y;
    m3.impulse_z = s.body_impulse_z;
    m3.angular[0] = s.body_angular_impulse_x;
    m3.angular[1] = s.body_angular_impulse_y;
    m3.angular[2] = s.body_angular_impulse_z;
    m.time = s.time;
    if (m.settled && isfinite(l.cd)) {
        m.n++;
        m.sum_cd += l.cd, m.sum_cd2 += l.cd * l.cd;
        m.sum_cl += l.cl, m.sum_cl2 += l.cl * l.cl;
        m3.sum_cy += l.cy, m3.sum_cy2 += l.cy * l.cy;
        m3.sum_cm += l.cm, m3.sum_cm2 += l.cm * l.cm;
    }
    double n = (double)m.n;
    ad_probe_stream fs = out_probe_row(r, &m);
    char row[1536];
    snprintf(row, sizeof row,
             "%llu,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,"
             "%llu,%.9g,%.6g,%.6g,%u,%zu,%.6g,%.6g,%.6g\n",
             (unsigned long long)s.step, s.time, l.f[0], l.f[1], l.f[2], l.m[0], l.m[1], l.m[2], l.cd, l.cl, l.cy, l.cm,
             mean_of(m.sum_cd, n), se_of(m.sum_cd, m.sum_cd2, n), mean_of(m.sum_cl, n), se_of(m.sum_cl, m.sum_cl2, n),
             mean_of(m3.sum_cy, n), se_of(m3.sum_cy, m3.sum_cy2, n), mean_of(m3.sum_cm, n),
             se_of(m3.sum_cm, m3.sum_cm2, n), m.n, s.kinetic_energy, s.dt, s.max_overlap, s.max_cell_occupancy, s.count,
             fs.density, fs.velocity, fs.temperature);
    ad_status st = out_append_row(r, "forces.csv",
                                  "step,time,drag,lift,side,moment_x,moment_y,moment_z,cd,cl,cy,cm,cd_mean,cd_se,"
                                  "cl_mean,cl_se,cy_mean,cy_se,cm_mean,cm_se,averaged,kinetic_energy,dt,max_overlap,"
                                  "max_cell_occupancy,spheres,free_stream_density,free_stream_velocity,"
                                  "free_stream_temperature\n",
                                  row);
    if (st.code) return st;
    m.rows++;
    r->m = m;
    r->m3 = m3;
    r->row_cd = l.cd;
    r->row_cl = l.cl;
    r->row_cy = l.cy;
    r->row_cm = l.cm;
    return ok();
}

/* ------------------------------------------------------------ frames -- */

/* The spheres near the slice along the stream as a picture (coloured by speed or pressure, the body's
 * section drawn), every sphere in a .vtp. */
static ad_status write_spheres(run *r, unsigned long long k)
{
    ad_stats s;
    ad_world_get_stats(r->w, &s);
    frame_data f;
    ad_status st = out_frame_read(r, &f);
    size_t got = f.got, near = 0;
    const ad_particle3 *p = f.state3;
    float *x = f.x, *y = f.y, *c = f.colour, *pr = f.pressure;
    const uint32_t *id = f.id;
    char path[AD_PATH_MAX + 64];
    if (!st.code && r->sc.png) {
        int speed = r->sc.frame_colour == AD_FRAME_SPEED;
        double h = slab_half(r);
        for (size_t i = 0; i < got; i++) {
            if (!(fabs(p[i].z - r->sc.slice_z) <= h)) continue;
            x[near] = p[i].x;
            y[near] = p[i].y;
            c[near] = speed ? sqrtf(p[i].vx * p[i].vx + p[i].vy * p[i].vy + p[i].vz * p[i].vz) : pr[i];
            near++;
        }
        out_frame_scale(r, c, near);
        char title[200];
        snprintf(title, sizeof title, "%s, spheres within %g m of z = %g m   t = %.5g s, step %llu",
                 speed ? "sphere speed" : "sphere pressure (sum of contact forces)", h, r->sc.slice_z, s.time,
                 (unsigned long long)s.step);
        st = path_in(r, path, sizeof path, "frames/%s_%06llu.png", out_frame_name(r), k);
        ad_scatter_image im = {near, x, y, c, 0, 0, r->sc.width, r->sc.height, r->sc.radius, title,
                               speed ? "m/s" : "N", r->frame_lo, r->frame_hi, NULL, NULL, 0, 0, PICTURE_PX};
        ad_heatmap_overlay ov = {r->section, r->nsection, "x", "y"};
        if (!st.code) st = ad_write_scatter_png_overlay(path, &im, &ov);
    }
    if (!st.code && r->sc.vtk) {
        st = path_in(r, path, sizeof path, "particles/particles_%06llu.vtp", k);
        if (!st.code) st = ad_write_vtp_particles3(path, got, p, id, pr);
    }
    out_frame_free(&f);
    return st;
}

/* The fields read back, each nx*ny*nz (vectors interleaved by three). */
enum { F_DENSITY, F_VEL, F_TEMPERATURE, F_PRESSURE, F_ACC, F_CONTACT, F_SPEED, F_COUNT };

typedef struct fields3 {
    float *v[F_COUNT];
    uint64_t samples;
} fields3;

static ad_status read_fields(run *r, fields3 *f, size_t cells)
{
    memset(f, 0, sizeof *f);
    for (int k = 0; k < F_COUNT; k++) {
        f->v[k] = malloc((k == F_VEL || k == F_ACC ? 3 : 1) * cells * sizeof(float));
        if (!f->v[k]) return fail(AD_ERR_NO_MEMORY, "out of memory for the 3D fields (%zu cells)", cells);
    }
    static const ad_field scalar[] = {AD_FIELD_DENSITY, AD_FIELD_TEMPERATURE, AD_FIELD_PRESSURE, AD_FIELD_CONTACT};
    static const int where[] = {F_DENSITY, F_TEMPERATURE, F_PRESSURE, F_CONTACT};
    ad_status st = ok();
    for (int k = 0; k < 4 && !st.code; k++) st = ad_world_read_field(r->w, scalar[k], f->v[where[k]], &f->samples);
    static const ad_field vec[2][3] = {{AD_FIELD_VELOCITY_X, AD_FIELD_VELOCITY_Y, AD_FIELD_VELOCITY_Z},
                                       {AD_FIELD_ACCEL_X, AD_FIELD_ACCEL_Y, AD_FIELD_ACCEL_Z}};
    float *tmp = malloc(cells * sizeof *tmp);
    if (!tmp && !st.code) st = fail(AD_ERR_NO_MEMORY, "out of memory for the 3D fields (%zu cells)", cells);
    for (int v = 0; v < 2 && !st.code; v++)
        for (int c = 0; c < 3 && !st.code; c++) {
            st = ad_world_read_field(r->w, vec[v][c], tmp, NULL);
            float *out = f->v[v ? F_ACC : F_VEL];
            for (size_t i = 0; i < cells && !st.code; i++) out[3 * i + (size_t)c] = tmp[i];
        }
    free(tmp);
    const float *u = f->v[F_VEL];
    for (size_t i = 0; i < cells; i++)
        f->v[F_SPEED][i] = sqrtf(u[3 * i] * u[3 * i] + u[3 * i + 1] * u[3 * i + 1] + u[3 * i + 2] * u[3 * i + 2]);
    return st;
}

static void free_fields(fields3 *f)
{
    for (int k = 0; k < F_COUNT; k++) free(f->v[k]);
}

/* The heat maps of one slice: along the stream (axis z, files NAME.png) or across it (axis x, NAME_x.png). */
static ad_status slice_pictures(run *r, const fields3 *f, int axis)
{
    const ad_field_def *d = &r->fd;
    double dx = (d->x1 - d->x0) / d->nx, dy = (d->y1 - d->y0) / d->ny, dz = (d->z1 - d->z0) / d->nz;
    double at = axis == AD_SLICE_Z ? r->sc.slice_z : r->sc.slice_x;
    double lo = axis == AD_SLICE_Z ? d->z0 : d->x0, hi = axis == AD_SLICE_Z ? d->z1 : d->x1;
    double frac = fmin(1.0, fmax(0.0, (at - lo) / (hi - lo)));
    ad_slice_frame fr;
    AD_TRY(ad_field_slice_frame(d->nx, d->ny, d->nz, d->x0, d->y0, d->z0, dx, dy, dz, axis, frac, &fr));
    float *seg = NULL;
    size_t nseg = 0;
    ad_status st = r->mesh.n ? ad_mesh_slice_segments(&r->mesh, axis, at, &seg, &nseg) : ok();
    struct {
        const char *file, *title, *units;
        int field, component, components, diverging;
    } pics[] = {
        {"density", "number density", "1/m^3", F_DENSITY, 0, 1, 0},
        {"speed", "flow speed", "m/s", F_SPEED, 0, 1, 0},
        {"velocity_x", "velocity along the stream", "m/s", F_VEL, 0, 3, 0},
        {"velocity_y", "velocity up (y)", "m/s", F_VEL, 1, 3, 1},
        {"velocity_z", "velocity along the span (z)", "m/s", F_VEL, 2, 3, 1},
        {"temperature", "temperature kT", "J", F_TEMPERATURE, 0, 1, 0},
        {"pressure", "pressure (kinetic + contact)", "N/m^2", F_PRESSURE, 0, 1, 0},
    };
    size_t plane = (size_t)d->nx * d->ny + (size_t)d->nx * d->nz + (size_t)d->ny * d->nz;
    float *pic = st.code ? NULL : malloc(plane * sizeof *pic);
    if (!st.code && !pic) st = fail(AD_ERR_NO_MEMORY, "out of memory for a slice picture");
    char path[AD_PATH_MAX + 64], title[160];
    for (size_t k = 0; k < sizeof pics / sizeof pics[0] && !st.code; k++) {
        int w, h;
        st = ad_field_slice(f->v[pics[k].field], pics[k].components, pics[k].component, d->nx, d->ny, d->nz, axis,
                            frac, pic, &w, &h);
        if (st.code) break;
        snprintf(title, sizeof title, "%s, %s = %.4g m", pics[k].title, axis == AD_SLICE_Z ? "z" : "x", fr.coordinate);
        st = path_in(r, path, sizeof path, "%s%s.png", pics[k].file, axis == AD_SLICE_Z ? "" : "_x");
        ad_heatmap hm = {pic, w, h, fr.x0, fr.y0, fr.x1, fr.y1, title, pics[k].units, NAN, NAN, pics[k].diverging,
                         NULL, NULL, 0, 0, PICTURE_PX};
        ad_heatmap_overlay ov = {seg, nseg, fr.x_name, fr.y_name};
        if (!st.code) st = ad_write_heatmap_png_overlay(path, &hm, &ov);
    }
    free(pic);
    free(seg);
    return st;
}

/* The fields as a 3D .vti under fields/ (time averages so far) and, at the end, the slices' heat maps. */
static ad_status write_fields(run *r, unsigned long long frame, int pictures)
{
    const ad_field_def *d = &r->fd;
    size_t cells = (size_t)d->nx * d->ny * d->nz;
    fields3 f;
    ad_status st = read_fields(r, &f, cells);
    double dx = (d->x1 - d->x0) / d->nx, dy = (d->y1 - d->y0) / d->ny, dz = (d->z1 - d->z0) / d->nz;
    char path[AD_PATH_MAX + 64];
    if (!st.code && r->sc.vtk) {
        ad_vti3_field v[] = {{"density", 1, f.v[F_DENSITY]},   {"velocity", 3, f.v[F_VEL]},
                             {"temperature", 1, f.v[F_TEMPERATURE]}, {"pressure", 1, f.v[F_PRESSURE]},
                             {"acceleration", 3, f.v[F_ACC]},  {"contact_force", 1, f.v[F_CONTACT]},
                             {"speed", 1, f.v[F_SPEED]}};
        st = path_in(r, path, sizeof path, "fields/fields_%06llu.vti", frame);
        if (!st.code)
            st = ad_write_vti3(path, d->nx, d->ny, d->nz, d->x0, d->y0, d->z0, dx, dy, dz, v, (int)(sizeof v / sizeof v[0]));
    }
    if (!st.code && pictures && r->sc.png && f.samples > 0) st = slice_pictures(r, &f, AD_SLICE_Z);
    if (!st.code && pictures && r->sc.png && f.samples > 0) st = slice_pictures(r, &f, AD_SLICE_X);
    if (!st.code && pictures && r->sc.png && f.samples == 0)
        say(r, "  no heat maps: the fields were not sampled after the settling (every output.field_interval = %llu "
               "steps from run.settle_steps = %llu on): a longer run, or a shorter settling\n",
            r->sc.field_interval, r->sc.settle_steps);
    free_fields(&f);
    return st;
}

ad_status out3_frame_files(run *r, unsigned long long k, int pictures)
{
    ad_status st = write_spheres(r, k);
    if (!st.code) st = write_fields(r, k, pictures);
    if (!st.code) st = out_write_pvds(r);
    return st;
}

/* ----------------------------------------------------------- the rest -- */

void out3_summary_coefficients(run *r, FILE *f)
{
    double n = (double)r->m.n;
    fprintf(f, "cd %.6g\ncd_se %.6g\ncl %.6g\ncl_se %.6g\ncy %.6g\ncy_se %.6g\ncm %.6g\ncm_se %.6g\n",
            mean_of(r->m.sum_cd, n), se_of(r->m.sum_cd, r->m.sum_cd2, n), mean_of(r->m.sum_cl, n),
            se_of(r->m.sum_cl, r->m.sum_cl2, n), mean_of(r->m3.sum_cy, n), se_of(r->m3.sum_cy, r->m3.sum_cy2, n),
            mean_of(r->m3.sum_cm, n), se_of(r->m3.sum_cm, r->m3.sum_cm2, n));
    fprintf(f, "averaged_intervals %llu\nref_area %.6g m^2\nref_length %.6g m\npivot %.6g %.6g %.6g m\n", r->m.n,
            r->ref.area, r->ref.length, r->ref.pivot[0], r->ref.pivot[1], r->ref.pivot[2]);
}

void out3_say_coefficients(run *r)
{
    double n = (double)r->m.n;
    say(r, "  CL = %.4g +- %.2g, CD = %.4g +- %.2g, side force CY = %.4g +- %.2g, pitching moment Cm = %.4g +- %.2g "
           "(standard errors over %llu intervals; reference area %.4g m^2, length %.4g m, moments about (%g, %g, %g) "
           "m, nose up positive)\n",
        mean_of(r->m.sum_cl, n), se_of(r->m.sum_cl, r->m.sum_cl2, n), mean_of(r->m.sum_cd, n),
        se_of(r->m.sum_cd, r->m.sum_cd2, n), mean_of(r->m3.sum_cy, n), se_of(r->m3.sum_cy, r->m3.sum_cy2, n),
        mean_of(r->m3.sum_cm, n), se_of(r->m3.sum_cm, r->m3.sum_cm2, n), r->m.n, r->ref.area, r->ref.length,
        r->ref.pivot[0], r->ref.pivot[1], r->ref.pivot[2]);
}

ad_status out3_body(run *r)
{
    if (!r->mesh.n || !r->sc.vtk) return ok();
    char path[AD_PATH_MAX + 32];
    ad_status st = path_in(r, path, sizeof path, "body.vtp");
    if (!st.code) st = ad_write_vtp_mesh(path, &r->mesh, NULL, NULL);
    return st;
}

void out3_print_start(run *r)
{
    ad_stats s;
    ad_world_get_stats(r->w, &s);
    const ad_scene *sc = &r->sc;
    const ad_flow_numbers *f = &r->flow;
    say(r, "aerodem: %s\n", sc->source);
    char ranks[48] = "";
    if (s.ranks > 1) snprintf(ranks, sizeof ranks, "%d ranks x ", s.ranks);
    say(r, "  3D tunnel %g x %g x %g m, %zu spheres of radius %g m, volume fraction %g, backend %s (%s%d threads)\n",
        sc->width, sc->height, sc->depth, s.count, sc->radius, sc->volume_fraction, ad_backend_name(s.backend), ranks,
        s.threads);
    if (sc->kind == AD_TUNNEL_FLOW && sc->collisions)
        say(r, "  free stream U = %g m/s: speed ratio S = %.3g, Mach M = %.3g (dilute, gamma = 5/3) or %.3g (with the "
               "spheres' excluded volume, Z = %.3g), Knudsen Kn = %.3g (mean free path %.3g m over %g m)\n",
            sc->velocity, f->speed_ratio, f->mach, f->mach_dense, f->compressibility, f->knudsen, f->mean_free_path,
            r->ref.length > 0 ? r->ref.length : sc->chord);
    else if (sc->kind == AD_TUNNEL_FLOW)
        say(r, "  free stream U = %g m/s: speed ratio S = %.3g; free-molecular (the spheres do not collide)\n",
            sc->velocity, f->speed_ratio);
    if (sc->kind == AD_TUNNEL_FLOW) {
        const char *walls = sc->walls == AD_BOUNDARY_OPEN ? "far field" : sc->walls == AD_BOUNDARY_SOLID ? "solid"
                                                                                                         : "periodic";
        say(r, "  open inlet and outlet, top and bottom %s, span sides %s; %s\n", walls,
            sc->span_walls == AD_BOUNDARY_PERIODIC ? "periodic" : "solid",
            r->layout.reservoir > 0 ? "free-stream reservoir outside the open sides" : "no reservoir");
    }
    if (r->mesh.n)
        say(r, "  body: %zu triangles; reference area %.4g m^2, length %.4g m, pivot (%g, %g, %g) m\n", r->mesh.n,
            r->ref.area, r->ref.length, r->ref.pivot[0], r->ref.pivot[1], r->ref.pivot[2]);
    say(r, "  contact time %.4g s, step %.4g s, grid %u x %u x %u cells; output in %s/\n", s.contact_time, s.dt,
        s.grid_nx, s.grid_ny, s.grid_nz, r->dir);
}
