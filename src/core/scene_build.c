/* From a scene to a world: the free-stream numbers, the tunnel's layout (reservoir, probe), the body, the world. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "airfoil.h"
#include "scene.h"
#include "world_internal.h"

ad_flow_numbers ad_scene_flow_numbers(const ad_scene *s)
{
    ad_flow_numbers f;
    double r = s->radius, d = 2 * r;
    f.number_density = s->area_fraction / (AD_PI * r * r);
    f.mass_density = f.number_density * s->mass;
    f.thermal_speed = sqrt(2.0 * s->temperature);
    f.sound_speed = sqrt(2.0 * s->temperature);
    f.speed_ratio = f.thermal_speed > 0 ? s->velocity / f.thermal_speed : INFINITY;
    f.mach = f.sound_speed > 0 ? s->velocity / f.sound_speed : INFINITY;
    /* discs take up room: at area fraction phi the pressure is n kT Z(phi) (Henderson's hard-disc
     * equation of state, docs/VALIDATION.md) and the isentropic sound speed of a gas whose internal
     * energy is kT/m per mass is c^2 = kT/m (d(phi Z)/dphi + Z^2); Z = 1 gives the dilute 2 kT/m */
    double phi = s->area_fraction, z = (1.0 + phi * phi / 8.0) / ((1.0 - phi) * (1.0 - phi));
    double dz = (phi / 4.0) / ((1.0 - phi) * (1.0 - phi)) + 2.0 * (1.0 + phi * phi / 8.0) / pow(1.0 - phi, 3);
    f.compressibility = z;
    f.sound_speed_dense = sqrt(s->temperature * (z + phi * dz + z * z));
    f.mach_dense = f.sound_speed_dense > 0 ? s->velocity / f.sound_speed_dense : INFINITY;
    f.mean_free_path = 1.0 / (sqrt(2.0) * f.number_density * d);
    f.collision_rate = f.number_density * d * sqrt(AD_PI * s->temperature) * (1.0 - 7.0 * phi / 16.0) /
                       ((1.0 - phi) * (1.0 - phi));
    f.knudsen = f.mean_free_path / s->chord;
    f.dynamic_pressure = 0.5 * f.mass_density * s->velocity * s->velocity;
    return f;
}

/* The outline in chord units for the scene's shape. */
static ad_status scene_shape(const ad_scene *s, ad_outline *o)
{
    memset(o, 0, sizeof *o);
    switch (s->shape) {
    case AD_SHAPE_NACA: return ad_airfoil_naca(s->naca, s->panels, s->closed_te, o);
    case AD_SHAPE_FILE: {
        char path[2 * AD_PATH_MAX];
        const char *slash = strrchr(s->source, '/');
        if (s->file[0] == '/' || !slash) snprintf(path, sizeof path, "%s", s->file);
        else snprintf(path, sizeof path, "%.*s/%s", (int)(slash - s->source), s->source, s->file);
        return ad_airfoil_load(path, o);
    }
    case AD_SHAPE_PLATE: return ad_shape_plate(s->thickness, o);
    case AD_SHAPE_WEDGE: return ad_shape_wedge(s->half_angle, o);
    case AD_SHAPE_CIRCLE: return ad_shape_circle(s->panels, o);
    default: return ad_ok();
    }
}

static ad_status scene_segments(const ad_scene *s, ad_segment **segs, size_t *n, int *closed)
{
    *segs = NULL;
    *n = 0;
    *closed = 0;
    if (s->shape == AD_SHAPE_NONE) return ad_ok();
    ad_outline o;
    ad_status st = scene_shape(s, &o);
    if (st.code) return st;
    char what[AD_PATH_MAX + 32];
    if (s->shape == AD_SHAPE_FILE) snprintf(what, sizeof what, "%s", s->file);
    else if (s->shape == AD_SHAPE_NACA) snprintf(what, sizeof what, "NACA %s", s->naca);
    else snprintf(what, sizeof what, "the body");
    st = ad_outline_check(&o, what);
    if (!st.code) st = ad_outline_place(&o, s->chord, s->aoa, s->x, s->y, segs, n);
    *closed = o.closed;
    ad_outline_free(&o);
    if (st.code) return st;
    /* the body must sit inside the tunnel, clear of the walls by a diameter */
    double m = 2 * s->radius;
    for (size_t i = 0; i < *n; i++) {
        const ad_segment *g = &(*segs)[i];
        if (g->x0 < m || g->x0 > s->width - m || g->y0 < m || g->y0 > s->height - m) {
            free(*segs);
            *segs = NULL;
            return ad_fail(AD_ERR_INVALID, "body.chord",
                           "%s: the body (chord %g m at %g, %g) reaches outside the %g x %g m tunnel; make it smaller "
                           "or move it",
                           s->source, s->chord, s->x, s->y, s->width, s->height);
        }
    }
    return ad_ok();
}

ad_status ad_scene_outline(const ad_scene *s, float **x, float **y, size_t *n, int *closed)
{
    ad_segment *segs;
    size_t ns;
    *x = *y = NULL;
    *n = 0;
    ad_status st = scene_segments(s, &segs, &ns, closed);
    if (st.code || ns == 0) return st;
    size_t np = *closed ? ns : ns + 1;
    *x = malloc(np * sizeof **x);
    *y = malloc(np * sizeof **y);
    if (!*x || !*y) {
        free(segs);
        free(*x);
        free(*y);
        return ad_fail(AD_ERR_NO_MEMORY, "", "out of memory");
    }
    for (size_t i = 0; i < ns; i++) {
        (*x)[i] = segs[i].x0;
        (*y)[i] = segs[i].y0;
    }
    if (!*closed) {
        (*x)[ns] = segs[ns - 1].x1;
        (*y)[ns] = segs[ns - 1].y1;
    }
    *n = np;
    free(segs);
    return ad_ok();
}

/* The world's definition for the tunnel alone (no reservoir yet), the body aside. */
static ad_world_def base_def(const ad_scene *s)
{
    ad_world_def d = ad_default_world_def();
    d.radius = s->radius;
    d.mass = s->mass;
    d.stiffness = s->stiffness;
    d.restitution = s->restitution;
    d.wall_restitution = s->wall_restitution;
    d.disc_contacts = s->collisions;
    d.x_min = 0;
    d.x_max = s->width;
    d.y_min = 0;
    d.y_max = s->height;
    int box = s->kind == AD_TUNNEL_BOX;
    d.boundary_x = box ? AD_BOUNDARY_SOLID : AD_BOUNDARY_OPEN;
    d.boundary_y = box ? AD_BOUNDARY_SOLID : (ad_boundary)s->walls;
    d.gravity_y = -s->gravity;
    if (!box) {
        d.stream_vx = s->velocity;
        d.stream_density = s->area_fraction / (AD_PI * s->radius * s->radius);
    }
    d.stream_temperature = s->temperature;
    d.seed = s->seed;
    d.cell_size = s->cell_size;
    d.integrator = (ad_integrator)s->integrator;
    d.max_move = s->max_move;
    d.contact_steps = s->contact_steps;
    d.dt = s->dt_max;
    d.threads = s->threads;
    d.deterministic = s->deterministic;
    d.broad_phase = (ad_broad_phase)s->broad_phase;
    d.bvh_traversal = (ad_bvh_traversal)s->bvh_traversal;
    d.backend = (ad_backend)s->backend;
    return d;
}

double ad_scene_reservoir(const ad_scene *s, double *inflow)
{
    double w = 0.0, in = 0.0;
    if (s->kind == AD_TUNNEL_FLOW && (!isnan(s->reservoir) || (s->collisions && s->area_fraction >= 0.02))) {
        ad_flow_numbers f = ad_scene_flow_numbers(s);
        w = !isnan(s->reservoir) ? s->reservoir : fmax(8.0 * 2.0 * s->radius, 2.0 * f.mean_free_path);
        /* upstream the band adds much of the gas that enters the tunnel (a dense gas takes little in
         * through an open side): a new disc has no contacts, so the gas there lacks some of its
         * collisional pressure, the fraction (Z - 1)/Z of it, until it relaxes in a few collision
         * times: 8 (Z - 1)/Z of them as the stream flows (4 at area fraction 0.3) */
        double z = f.compressibility;
        in = w > 0.0 && s->collisions ? fmax(w, 8.0 * (z - 1.0) / z * fabs(s->velocity) / f.collision_rate) : w;
    }
    if (inflow) *inflow = in;
    return w;
}

/* The leftmost point of the body, or NaN without one. */
static double body_front(const ad_scene *s)
{
    ad_segment *segs;
    size_t n;
    int closed;
    if (scene_segments(s, &segs, &n, &closed).code || n == 0) return NAN;
    double x = INFINITY;
    for (size_t i = 0; i < n; i++) x = fmin(x, fmin(segs[i].x0, segs[i].x1));
    free(segs);
    return x;
}

ad_status ad_scene_layout_of(const ad_scene *s, ad_scene_layout *l)
{
    memset(l, 0, sizeof *l);
    l->x_min = 0;
    l->x_max = s->width;
    l->y_min = 0;
    l->y_max = s->height;
    l->reservoir = ad_scene_reservoir(s, &l->reservoir_inflow);
    if (l->reservoir > 0.0) {
        /* whole cells of the world's grid, so the band ends where the tunnel begins (the stream
         * enters at x = 0) */
        ad_world_def d = base_def(s);
        ad_params p;
        ad_status st = ad_params_from_def(&d, &p);
        if (st.code) return st;
        l->band[0] = ceil(l->reservoir_inflow / p.cell_x * (1.0 - 1e-9)) * p.cell_x;
        l->band[1] = ceil(l->reservoir / p.cell_x * (1.0 - 1e-9)) * p.cell_x;
        if (s->walls == AD_BOUNDARY_OPEN) l->band[2] = l->band[3] = ceil(l->reservoir / p.cell_y * (1.0 - 1e-9)) * p.cell_y;
    }
    l->x_min -= l->band[0];
    l->x_max += l->band[1];
    l->y_min -= l->band[2];
    l->y_max += l->band[3];
    /* the probe: from just inside the inlet to two chords ahead of the body (a dense gas's bow shock
     * reaches about a chord ahead: measured at area fraction 0.3, Mach 1.5, kT +3.6 % a chord ahead,
     * +1.0 % at 1.75 chords), at most a quarter of the tunnel, across the middle 80 % of the height;
     * where the body is closer to the inlet, the first half of the way to it */
    if (s->kind == AD_TUNNEL_FLOW) {
        double d = 2.0 * s->radius, front = body_front(s);
        double x0 = d, x1 = 0.25 * s->width;
        if (!isnan(front)) {
            x1 = fmin(x1, front - 2.0 * s->chord);
            if (x1 < x0 + 4.0 * d) x1 = 0.5 * front;
        }
        if (x1 > x0) {
            l->probe_x0 = x0;
            l->probe_x1 = x1;
            l->probe_y0 = 0.1 * s->height;
            l->probe_y1 = 0.9 * s->height;
        }
    }
    return ad_ok();
}

ad_status ad_scene_build(const ad_scene *s, ad_world **out)
{
    *out = NULL;
    ad_segment *segs = NULL;
    size_t nseg = 0;
    int closed = 0;
    ad_scene_layout l;
    ad_status st = ad_scene_layout_of(s, &l);
    if (!st.code) st = scene_segments(s, &segs, &nseg, &closed);
    if (st.code) return st;
    ad_world_def d = base_def(s);
    d.x_min = l.x_min;
    d.x_max = l.x_max;
    d.y_min = l.y_min;
    d.y_max = l.y_max;
    d.reservoir = l.reservoir;
    d.reservoir_inflow = l.reservoir_inflow;
    /* room for the free stream over the whole domain, and for gas piling up ahead of the body */
    double area = (l.x_max - l.x_min) * (l.y_max - l.y_min);
    double n_est = s->area_fraction * area / (AD_PI * s->radius * s->radius);
    d.capacity = (size_t)(n_est * (s->kind == AD_TUNNEL_BOX ? 1.02 : 1.3)) + 4096;
    ad_world *w = NULL;
    st = ad_world_create(&d, &w);
    if (!st.code && nseg) st = ad_world_add_segments(w, segs, nseg);
    free(segs);
    if (!st.code) {
        ad_fill_def f = {l.x_min, l.y_min, l.x_max, l.y_max, s->area_fraction, s->velocity, 0, s->temperature, s->seed};
        size_t added;
        st = ad_world_fill(w, &f, &added);
    }
    if (st.code) {
        ad_world_destroy(w);
        return st;
    }
    *out = w;
    return ad_ok();
}
