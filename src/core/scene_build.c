/* From a scene to a world: the cross-key checks, the free-stream numbers, the tunnel's layout (reservoir, probe), the
 * body, the world. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "airfoil.h"
#include "mesh_check.h"
#include "scene.h"
#include "world_internal.h"

/* The hard-disc (2D, Henderson) or hard-sphere (3D, Carnahan-Starling) gas at fraction phi: the
 * compressibility Z = P / (n kT), its derivative d(phi Z)/d(phi) and the contact value chi of the pair
 * correlation (the collision rate's factor over the dilute gas's). */
static void hard_gas(int dims, double phi, double *z, double *dphiz, double *chi)
{
    double q = 1.0 - phi;
    if (dims == 3) {
        *z = (1.0 + phi + phi * phi - phi * phi * phi) / (q * q * q);
        *dphiz = (1.0 + 4.0 * phi + 4.0 * phi * phi - 4.0 * phi * phi * phi + phi * phi * phi * phi) / (q * q * q * q);
        *chi = (1.0 - 0.5 * phi) / (q * q * q);
    } else {
        *z = (1.0 + phi * phi / 8.0) / (q * q);
        *dphiz = *z + phi * ((phi / 4.0) / (q * q) + 2.0 * (1.0 + phi * phi / 8.0) / (q * q * q));
        *chi = (1.0 - 7.0 * phi / 16.0) / (q * q);
    }
}

ad_flow_numbers ad_scene_flow_numbers(const ad_scene *s)
{
    ad_flow_numbers f;
    double d = 2 * s->radius, phi = ad_scene_fraction(s), kt = s->temperature;
    int three = s->dimensions == 3;
    f.number_density = phi / ad_scene_particle_size(s);
    f.mass_density = f.number_density * s->mass;
    f.thermal_speed = sqrt(2.0 * kt);
    /* a dilute monatomic gas: gamma = (D + 2) / D, 2 in 2D and 5/3 in 3D */
    double gamma = three ? 5.0 / 3.0 : 2.0;
    f.sound_speed = sqrt(gamma * kt);
    f.speed_ratio = f.thermal_speed > 0 ? s->velocity / f.thermal_speed : INFINITY;
    f.mach = f.sound_speed > 0 ? s->velocity / f.sound_speed : INFINITY;
    /* particles take up room: the pressure is n kT Z(phi) (docs/VALIDATION.md) and the isentropic sound
     * speed of a gas whose internal energy is (D/2) kT/m per mass is c^2 = kT/m (d(phi Z)/dphi + (2/D) Z^2);
     * Z = 1 gives the dilute gamma kT/m */
    double z, dphiz, chi;
    hard_gas(s->dimensions, phi, &z, &dphiz, &chi);
    f.compressibility = z;
    f.sound_speed_dense = sqrt(kt * (dphiz + (three ? 2.0 / 3.0 : 1.0) * z * z));
    f.mach_dense = f.sound_speed_dense > 0 ? s->velocity / f.sound_speed_dense : INFINITY;
    /* dilute hard discs 1/(sqrt 2 n d), hard spheres 1/(sqrt 2 n pi d^2); the collision rate of the
     * dense gas: n d sqrt(pi kT/m) chi (discs), 4 n d^2 sqrt(pi kT/m) chi (spheres) */
    f.mean_free_path = 1.0 / (sqrt(2.0) * f.number_density * (three ? AD_PI * d * d : d));
    f.collision_rate = f.number_density * (three ? 4.0 * d * d : d) * sqrt(AD_PI * kt) * chi;
    f.knudsen = f.mean_free_path / s->chord;
    f.dynamic_pressure = 0.5 * f.mass_density * s->velocity * s->velocity;
    return f;
}

void ad_scene_path(const ad_scene *s, const char *file, char *buf, size_t n)
{
    const char *slash = strrchr(s->source, '/');
    if (file[0] == '/' || !slash) snprintf(buf, n, "%s", file);
    else snprintf(buf, n, "%.*s/%s", (int)(slash - s->source), s->source, file);
}

ad_status ad_scene_section(const ad_scene *s, ad_outline *o)
{
    memset(o, 0, sizeof *o);
    int shape = s->shape;
    if (shape == AD_SHAPE_WING) shape = s->section == AD_SECTION_FILE ? AD_SHAPE_FILE : AD_SHAPE_NACA;
    switch (shape) {
    case AD_SHAPE_NACA: return ad_airfoil_naca(s->naca, s->panels, s->closed_te, o);
    case AD_SHAPE_FILE: {
        char path[2 * AD_PATH_MAX];
        ad_scene_path(s, s->file, path, sizeof path);
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
    if (s->shape == AD_SHAPE_NONE || s->dimensions == 3) return ad_ok(); /* a 3D body is a mesh (scene3.c) */
    ad_outline o;
    ad_status st = ad_scene_section(s, &o);
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
#define TO_DEF(sf, df) d.df = s->sf;
    AD_SCENE_DEF_FIELDS(TO_DEF)
#undef TO_DEF
    d.x_min = 0;
    d.x_max = s->width;
    d.y_min = 0;
    d.y_max = s->height;
    int box = s->kind == AD_TUNNEL_BOX;
    d.boundary_x = box ? AD_BOUNDARY_SOLID : AD_BOUNDARY_OPEN;
    d.boundary_y = box ? AD_BOUNDARY_SOLID : (ad_boundary)s->walls;
    d.gravity_y = -s->gravity;
    ad_scene_surfaces_to_def(s, &d);
    if (s->dimensions == 3) {
        d.dimensions = 3;
        d.z_min = 0;
        d.z_max = s->depth;
        d.boundary_z = box ? AD_BOUNDARY_SOLID : (ad_boundary)s->span_walls;
    }
    if (!box) {
        d.stream_vx = s->velocity;
        d.stream_density = ad_scene_fraction(s) / ad_scene_particle_size(s);
    }
    return d;
}

double ad_scene_reservoir(const ad_scene *s, double *inflow)
{
    double w = 0.0, in = 0.0;
    if (s->kind == AD_TUNNEL_FLOW && (!isnan(s->reservoir) || (s->collisions && ad_scene_fraction(s) >= 0.02))) {
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

/* A 3D scene's body: `body` where the caller built it (ad_scene_body_mesh), else built into *own (freed
 * by the caller; empty in 2D). */
static ad_status scene_mesh(const ad_scene *s, const ad_mesh *body, ad_mesh *own, const ad_mesh **m)
{
    memset(own, 0, sizeof *own);
    *m = body ? body : own;
    if (body || s->dimensions != 3) return ad_ok();
    return ad_scene_body_mesh(s, own, NULL);
}

/* The leftmost point of the body (3D: the mesh `body`), or NaN without one. */
static double body_front(const ad_scene *s, const ad_mesh *body)
{
    if (s->dimensions == 3) {
        if (!body || body->n == 0) return NAN;
        double lo[3], hi[3];
        ad_mesh_bounds(body, lo, hi);
        return lo[0];
    }
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
    ad_mesh own;
    const ad_mesh *m;
    /* a body that does not build has no front here: ad_scene_build reports it */
    int built = !scene_mesh(s, NULL, &own, &m).code;
    ad_status st = ad_scene_layout_with(s, built ? m : NULL, l);
    ad_mesh_free(&own);
    return st;
}

ad_status ad_scene_layout_with(const ad_scene *s, const ad_mesh *body, ad_scene_layout *l)
{
    memset(l, 0, sizeof *l);
    l->x_min = 0;
    l->x_max = s->width;
    l->y_min = 0;
    l->y_max = s->height;
    l->z_max = s->dimensions == 3 ? s->depth : 0.0;
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
        double d = 2.0 * s->radius, front = body_front(s, body);
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
            l->probe_z0 = 0.1 * l->z_max;
            l->probe_z1 = 0.9 * l->z_max;
        }
    }
    return ad_ok();
}

/* The particles a domain of x by y (by the depth in 3D) holds at the stream's fraction. */
static double particles_in(const ad_scene *s, double x, double y)
{
    return ad_scene_fraction(s) * (x * y * (s->dimensions == 3 ? s->depth : 1.0)) / ad_scene_particle_size(s);
}

/* The body into the world: 2D segments or the 3D mesh `body`. */
static ad_status add_body(const ad_scene *s, const ad_mesh *body, ad_world *w)
{
    if (s->dimensions == 3) return body->n ? ad_world_add_triangles(w, body->t, body->n) : ad_ok();
    ad_segment *segs = NULL;
    size_t nseg = 0;
    int closed = 0;
    ad_status st = scene_segments(s, &segs, &nseg, &closed);
    if (!st.code && nseg) st = ad_world_add_segments(w, segs, nseg);
    free(segs);
    return st;
}

ad_status ad_scene_build(const ad_scene *s, ad_world **out) { return ad_scene_build_with(s, NULL, out); }

ad_status ad_scene_build_with(const ad_scene *s, const ad_mesh *body, ad_world **out)
{
    *out = NULL;
    ad_mesh own;
    const ad_mesh *m;
    AD_TRY(scene_mesh(s, body, &own, &m));
    ad_scene_layout l;
    ad_status st = ad_scene_layout_with(s, m, &l);
    if (st.code) {
        ad_mesh_free(&own);
        return st;
    }
    ad_world_def d = base_def(s);
    d.x_min = l.x_min;
    d.x_max = l.x_max;
    d.y_min = l.y_min;
    d.y_max = l.y_max;
    d.reservoir = l.reservoir;
    d.reservoir_inflow = l.reservoir_inflow;
    /* room for the free stream over the whole domain, and for gas piling up ahead of the body */
    double n_est = particles_in(s, l.x_max - l.x_min, l.y_max - l.y_min);
    d.capacity = (size_t)(n_est * (s->kind == AD_TUNNEL_BOX ? 1.02 : 1.3)) + 4096;
    ad_world *w = NULL;
    st = ad_world_create(&d, &w);
    if (!st.code) st = add_body(s, m, w);
    ad_mesh_free(&own);
    if (!st.code) {
        ad_fill_def f = {l.x_min, l.y_min, l.x_max, l.y_max, ad_scene_fraction(s), s->velocity, 0, s->temperature,
                         s->seed, l.z_min, l.z_max, 0};
        size_t added;
        st = ad_world_fill(w, &f, &added);
        /* a closed world with no disc has nothing to step: its clock would stand still */
        if (!st.code && added == 0 && !ad_world_open(w))
            st = ad_fail(AD_ERR_INVALID, s->dimensions == 3 ? "gas.volume_fraction" : "gas.area_fraction",
                         "%s: [gas] %s = %g leaves no %s in the box outside the body; raise it", s->source,
                         s->dimensions == 3 ? "volume_fraction" : "area_fraction", ad_scene_fraction(s),
                         s->dimensions == 3 ? "sphere" : "disc");
    }
    if (st.code) {
        ad_world_destroy(w);
        return st;
    }
    *out = w;
    return ad_ok();
}

/* -------------------------------------------------- values that make a run meaningless -- */

/* The spacing of floats (the discs' positions and speeds are floats) at |x|. */
static double float_spacing(double x)
{
    if (!isfinite(x)) return INFINITY;
    int e;
    frexp(fabs(x), &e);
    return ldexp(1.0, e - 24);
}

/* The world's domain: the tunnel and the reservoir's bands outside its open sides, rounded up to
 * whole grid cells when `cells` (as ad_scene_layout_of does). */
static void domain_of(const ad_scene *s, int reservoir, int cells, double *x, double *y)
{
    double in = 0.0, w = s->kind == AD_TUNNEL_FLOW && reservoir ? ad_scene_reservoir(s, &in) : 0.0;
    double cell = s->cell_size > 0 ? s->cell_size
                                   : 2.0 * s->radius * (1.0 + (s->integrator == AD_INTEGRATOR_RK4 ? s->max_move : 0.0));
    if (cells && w > 0) in = ceil(in / cell) * cell, w = ceil(w / cell) * cell;
    *x = s->width + in + w;
    *y = s->height + (s->walls == AD_BOUNDARY_OPEN ? 2.0 * w : 0.0);
}

/* The key to name when a check of the domain fails: the tunnel itself, its reservoir, or the cells the
 * reservoir's bands are rounded up to. `fits` tells whether a domain x by y passes. */
static const char *domain_key(const ad_scene *s, int (*fits)(const ad_scene *, double, double))
{
    double x, y;
    if (!fits(s, s->width, s->height)) return s->width >= s->height ? "tunnel.width" : "tunnel.height";
    domain_of(s, 1, 0, &x, &y);
    return fits(s, x, y) ? "tunnel.cell_size" : "tunnel.reservoir";
}

/* The domain's farthest coordinate: x or y, or in 3D the depth. */
static double farthest(const ad_scene *s, double x, double y)
{
    return fmax(fmax(x, y), s->dimensions == 3 ? s->depth : 0.0);
}

static int resolves(const ad_scene *s, double x, double y)
{
    return float_spacing(farthest(s, x, y)) <= s->max_move * s->radius;
}

/* The coarsest step allowed (8 per contact, max_move x radius at the largest speed) moves a disc at
 * the typical speed by at least a float spacing. */
static int moves(const ad_scene *s, double x, double y)
{
    double sigma = sqrt(s->temperature), v_typ = fmax(fabs(s->velocity), sqrt(2.0) * sigma);
    double v_max = fabs(s->velocity) + 10.0 * sigma, tc = AD_PI * sqrt(0.5 * s->mass / s->stiffness);
    return v_typ * fmin(tc / 8.0, v_max > 0 ? s->max_move * s->radius / v_max : INFINITY) >= float_spacing(farthest(s, x, y));
}

static int indexable(const ad_scene *s, double x, double y)
{
    return particles_in(s, x, y) * 1.3 + 4096 <= (double)UINT32_MAX - 1;
}

/* The scene's free stream and steps, as the checks below estimate them. */
typedef struct scene_scales {
    double v_typ;   /* the stream or the thermal speed sqrt(2 kT/m), whichever is larger [m/s] */
    double v_max;   /* |U| + 10 sqrt(kT/m): beyond the fastest of 2^32 Gaussian draws (6.6 per component) */
    double tc;      /* undamped contact time pi sqrt(m/(2k)) [s] */
    double dt;      /* the first adaptive step: dt_max, tc/contact_steps, max_move r / v_max */
    const char *dt_key;
    double extent;  /* the farthest coordinate of the domain, the reservoir included [m] */
    const char *extent_key;
} scene_scales;

static scene_scales scales_of(const ad_scene *s)
{
    scene_scales c;
    double sigma = sqrt(s->temperature), r = s->radius, x, y;
    c.v_typ = fmax(fabs(s->velocity), sqrt(2.0) * sigma);
    c.v_max = fabs(s->velocity) + 10.0 * sigma;
    c.tc = AD_PI * sqrt(0.5 * s->mass / s->stiffness);
    c.dt = s->dt_max;
    c.dt_key = "run.dt_max";
    if (c.tc / s->contact_steps < c.dt) c.dt = c.tc / s->contact_steps, c.dt_key = "run.contact_steps";
    if (c.v_max > 0 && s->max_move * r / c.v_max < c.dt) c.dt = s->max_move * r / c.v_max, c.dt_key = "run.max_move";
    domain_of(s, 1, 1, &x, &y);
    c.extent = farthest(s, x, y);
    c.extent_key = domain_key(s, resolves);
    /* a tunnel a default step (max_move 0.1) resolves: the small max_move is to blame */
    ad_scene t = *s;
    t.max_move = 0.1;
    if (s->max_move < 0.1 && resolves(&t, x, y)) c.extent_key = "run.max_move";
    return c;
}

/* Quantities the step keeps in float: the mass and its inverse, the contact force and acceleration at
 * a full diameter of overlap, the disc's area, the squared speed the step is chosen from, the kinetic
 * energy. */
static ad_status float_scales(const ad_scene *s, const scene_scales *c, const char *src, const char *stream_key)
{
    double m = s->mass, k = s->stiffness, d = 2.0 * s->radius, f = k * d;
    if (!(m >= 1.0 / FLT_MAX && m <= 1.0 / FLT_MIN))
        return ad_fail(AD_ERR_INVALID, "gas.mass", "%s: [gas] mass = %g kg: the mass and its inverse must be floats: "
                       "between %.3g and %.3g kg", src, m, 1.0 / FLT_MAX, 1.0 / FLT_MIN);
    if (!(d * d >= FLT_MIN && d * d <= FLT_MAX && ad_scene_fraction(s) / ad_scene_particle_size(s) <= FLT_MAX))
        return ad_fail(AD_ERR_INVALID, "gas.radius", "%s: [gas] radius = %g m: the squared diameter and the number "
                       "density must be floats: a radius between %.3g and %.3g m", src, s->radius, 0.5 * sqrt(FLT_MIN),
                       0.5 * sqrt(FLT_MAX));
    if (!(f <= FLT_MAX && f / m <= FLT_MAX))
        return ad_fail(AD_ERR_INVALID, "gas.stiffness", "%s: [gas] stiffness = %g N/m: the contact force over a "
                       "diameter of overlap (%g N) and its acceleration (%g m/s^2) must be floats; at most %.3g N/m",
                       src, k, f, f / m, fmin(FLT_MAX / d, FLT_MAX * m / d));
    if (!(c->v_max * c->v_max <= FLT_MAX))
        return ad_fail(AD_ERR_INVALID, stream_key, "%s: %s: the free stream (%g m/s and thermal speed %g m/s) makes "
                       "speeds up to %g m/s whose square is beyond a float; the step could not be chosen", src,
                       stream_key, fabs(s->velocity), sqrt(2.0 * s->temperature), c->v_max);
    if (!(m * c->v_max * c->v_max <= FLT_MAX))
        return ad_fail(AD_ERR_INVALID, "gas.mass", "%s: [gas] mass = %g kg: the kinetic energy of a disc at %g m/s "
                       "is beyond a float; at most %.3g kg at this stream", src, m, c->v_max,
                       FLT_MAX / (c->v_max * c->v_max));
    return ad_ok();
}

/* The step must move the discs: a position changes only by at least a float spacing, and the gas must
 * not be crushed by its own weight or fall through a step. */
static ad_status step_scales(const ad_scene *s, const scene_scales *c, const char *src)
{
    double r = s->radius, ulp = float_spacing(c->extent), g = fabs(s->gravity);
    if (!isfinite(c->extent))
        return ad_fail(AD_ERR_INVALID, "tunnel.reservoir", "%s: [tunnel] reservoir = auto: a dense stream at "
                       "temperature 0 has no collision time to size the band by; give its width in m", src);
    if (ulp > s->max_move * r)
        return ad_fail(AD_ERR_INVALID, c->extent_key, "%s: %s: a domain reaching %g m cannot be resolved in float "
                       "for discs of radius %g m: positions there are %g m apart, more than a step's largest move "
                       "(max_move x radius = %g m); make the tunnel smaller than %g m or the discs larger", src,
                       c->extent_key, c->extent, r, ulp, s->max_move * r, ldexp(1.0, (int)floor(log2(s->max_move * r)) + 24));
    /* the step is to blame where a coarser one (8 steps per contact) would move the gas, else the tunnel */
    double x, y;
    domain_of(s, 1, 1, &x, &y);
    const char *key = moves(s, x, y) ? c->dt_key : domain_key(s, moves);
    if (!moves(s, 4.0 * r, 4.0 * r)) /* not even in the smallest tunnel: the gas is too slow */
        key = fabs(s->velocity) >= sqrt(2.0 * s->temperature) ? "gas.velocity" : "gas.temperature";
    if (c->v_typ > 0 && c->v_typ * c->dt < ulp)
        return ad_fail(AD_ERR_INVALID, key, "%s: %s: a disc at the gas's typical speed %g m/s moves %g m in a step of "
                       "%g s, less than the float spacing of positions (%g m at %g m): the gas would not move; the "
                       "step must be at least %g s, or the tunnel smaller", src, key, c->v_typ, c->v_typ * c->dt,
                       c->dt, ulp, c->extent, ulp / c->v_typ);
    if (c->v_typ == 0 && g == 0 && s->kind == AD_TUNNEL_BOX)
        return ad_fail(AD_ERR_INVALID, "gas.temperature", "%s: [gas] temperature = 0 in a box without gravity: "
                       "the gas is at rest and nothing would happen", src);
    if (g * c->dt * c->dt > s->max_move * r)
        return ad_fail(AD_ERR_INVALID, "tunnel.gravity", "%s: [tunnel] gravity = %g m/s^2: a disc falls %g m in a "
                       "step of %g s, more than max_move x radius = %g m; at most %.3g m/s^2", src, s->gravity,
                       g * c->dt * c->dt, c->dt, s->max_move * r, s->max_move * r / (c->dt * c->dt));
    if (g > 0 && c->v_typ == 0 && 0.5 * g * c->dt * c->dt < ulp)
        return ad_fail(AD_ERR_INVALID, c->dt_key, "%s: %s: a step of %g s lets a disc at rest fall %g m, less than "
                       "the float spacing of positions (%g m): the gas would not move", src, c->dt_key, c->dt,
                       0.5 * g * c->dt * c->dt, ulp);
    /* on a solid floor the bottom disc of a column carries the column: the overlap weight/k must stay
     * a small part of the radius, where a linear spring still stands for a hard disc */
    int floor_wall = s->kind == AD_TUNNEL_BOX || s->walls == AD_BOUNDARY_SOLID;
    double column = ad_scene_fraction(s) * s->height * (s->dimensions == 3 ? 4.0 * r * r : 2.0 * r) / ad_scene_particle_size(s);
    double overlap = column * s->mass * g / s->stiffness;
    if (floor_wall && overlap > 0.1 * r)
        return ad_fail(AD_ERR_INVALID, "tunnel.gravity", "%s: [tunnel] gravity = %g m/s^2: the gas's weight (a column "
                       "of %.3g discs) presses the lowest discs %g m into each other, over a tenth of the radius; at "
                       "most %.3g m/s^2 (or stiffer discs)", src, s->gravity, column, overlap,
                       0.1 * r * s->stiffness / (column * s->mass));
    return ad_ok();
}

static ad_status check_scales(const ad_scene *s, const char *stream_key)
{
    const char *src = s->source[0] ? s->source : "scene";
    scene_scales c = scales_of(s);
    AD_TRY(float_scales(s, &c, src, stream_key));
    AD_TRY(step_scales(s, &c, src));
    /* the fill must give a disc, and the discs of the whole domain must fit 32-bit indices */
    int three = s->dimensions == 3;
    const char *fkey = three ? "gas.volume_fraction" : "gas.area_fraction", *fname = fkey + 4;
    double phi = ad_scene_fraction(s), n = particles_in(s, s->width, s->height), room = n / phi;
    char size[96];
    if (three) snprintf(size, sizeof size, "%g x %g x %g m", s->width, s->height, s->depth);
    else snprintf(size, sizeof size, "%g x %g m", s->width, s->height);
    if (floor(n + 0.5) < 1.0)
        return ad_fail(AD_ERR_INVALID, fkey, "%s: [gas] %s = %g fills the %s tunnel with no %s (%.3g of radius %g m); "
                       "the smallest that gives one is %.6g", src, fname, phi, size, three ? "sphere" : "disc", n,
                       s->radius, 0.5 / room * (1 + 1e-6));
    double x, y;
    domain_of(s, 1, 1, &x, &y);
    if (!indexable(s, x, y))
        return ad_fail(AD_ERR_INVALID, domain_key(s, indexable),
                       "%s: %s: the %g x %g m domain holds %.3g %s at %s %g; with room for the stream at "
                       "most %.3g (32-bit indices)", src, domain_key(s, indexable), x, y, particles_in(s, x, y),
                       three ? "spheres" : "discs", three ? "volume fraction" : "area fraction", phi,
                       ((double)UINT32_MAX - 4097) / 1.3);
    return ad_ok();
}

ad_status ad_scene_finish(ad_scene *s)
{
    const char *src = s->source[0] ? s->source : "scene";
    if (s->width < 4 * s->radius || s->height < 4 * s->radius)
        return ad_fail(AD_ERR_INVALID, "tunnel.width", "%s: the tunnel (%g x %g m) must be at least 4 radii each way",
                       src, s->width, s->height);
    int given = (s->speed_ratio > 0) + (s->mach > 0), mach_given = s->mach > 0;
    if (given + (*ad_scene_seen(s, "gas", "velocity") != 0) > 1)
        return ad_fail(AD_ERR_INVALID, "gas.mach", "%s: give the free stream by one of velocity, speed_ratio or mach",
                       src);
    if (given && !(s->temperature > 0))
        return ad_fail(AD_ERR_INVALID, mach_given ? "gas.mach" : "gas.speed_ratio",
                       "%s: [gas] %s gives the stream in thermal speeds, and the temperature is 0; give the velocity",
                       src, mach_given ? "mach" : "speed_ratio");
    if (s->speed_ratio > 0) s->velocity = s->speed_ratio * sqrt(2.0 * s->temperature);
    if (s->mach > 0) s->velocity = s->mach * sqrt((s->dimensions == 3 ? 5.0 / 3.0 : 2.0) * s->temperature);
    /* from here on the velocity is the free stream: a resolved copy of the scene
     * (scene.ini, a checkpoint) gives it alone and reads back the same */
    if (given) {
        s->speed_ratio = s->mach = 0.0;
        *ad_scene_seen(s, "gas", "velocity") = 1;
        *ad_scene_seen(s, "gas", "speed_ratio") = *ad_scene_seen(s, "gas", "mach") = 0;
    }
    if (s->kind == AD_TUNNEL_BOX) {
        if (given || (*ad_scene_seen(s, "gas", "velocity") && s->velocity != 0.0))
            return ad_fail(AD_ERR_INVALID, "gas.velocity", "%s: a box has no stream: [gas] velocity must be 0", src);
        s->velocity = 0.0;
        s->walls = AD_BOUNDARY_SOLID;
    }
    if (s->kind == AD_TUNNEL_FLOW && !(s->velocity > 0.0))
        return ad_fail(AD_ERR_INVALID, "gas.velocity", "%s: a flow tunnel needs a positive [gas] velocity (m/s)", src);
    const char *stream_key = !given ? "gas.velocity" : mach_given ? "gas.mach" : "gas.speed_ratio";
    if (10.0 * sqrt(s->temperature) > fabs(s->velocity)) stream_key = "gas.temperature";
    AD_TRY(check_scales(s, stream_key));
    if (s->shape == AD_SHAPE_FILE && !s->file[0])
        return ad_fail(AD_ERR_INVALID, "body.file", "%s: [body] shape = file needs a [body] file = PATH", src);
    if (s->settle_steps >= s->steps)
        return ad_fail(AD_ERR_INVALID, "run.settle_steps",
                       "%s: [run] settle_steps = %llu must be less than steps = %llu, or nothing is averaged", src,
                       s->settle_steps, s->steps);
    if (s->field_cell < 2 * s->radius)
        return ad_fail(AD_ERR_INVALID, "output.field_cell",
                       "%s: [output] field_cell = %g m is below a disc diameter (%g m)", src, s->field_cell,
                       2 * s->radius);
    if (s->field_cell > fmin(s->width, s->height))
        return ad_fail(AD_ERR_INVALID, "output.field_cell",
                       "%s: [output] field_cell = %g m does not fit in the %g x %g m tunnel (a field cell reaching out "
                       "of it would average over room without gas)", src, s->field_cell, s->width, s->height);
    if (s->width / s->field_cell > 20000 || s->height / s->field_cell > 20000)
        return ad_fail(AD_ERR_INVALID, "output.field_cell", "%s: [output] field_cell = %g m makes over 20000 cells a side",
                       src, s->field_cell);
    if (isnan(s->x)) s->x = s->width / 3.0;
    if (isnan(s->y)) s->y = s->height / 2.0;
    AD_TRY(ad_scene_finish3(s));
    return ad_scene_finish_surfaces(s);
}
