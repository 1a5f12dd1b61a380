/* The world definition: its defaults, the checks a definition must pass (ranges, float scales, the
 * grid, the reservoir's layout) and the parameters derived from it once (ad_params). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../physics/contact.h"
#include "../physics/open3.h"
#include "../physics/stencil.h"
#include "world_internal.h"
#define AD_DEF_COOKIE 0xAE0D3E01u
#define AD_MIN_CONTACT_STEPS 8.0
#define AD_MAX_REACH 8

ad_world_def ad_default_world_def(void)
{
    ad_world_def d;
    memset(&d, 0, sizeof d);
    d.internal_cookie = AD_DEF_COOKIE;
    d.dimensions = 2;
    d.z_min = 0.0;
    d.z_max = 100.0;
    d.boundary_z = AD_BOUNDARY_SOLID;
    d.capacity = 65536;
    d.radius = 0.5;
    d.mass = 1.0;
    d.stiffness = 1e4;
    d.restitution = 1.0;
    d.wall_restitution = 1.0;
    d.disc_contacts = 1;
    d.x_min = 0.0;
    d.x_max = 100.0;
    d.y_min = 0.0;
    d.y_max = 100.0;
    d.boundary_x = AD_BOUNDARY_SOLID;
    d.boundary_y = AD_BOUNDARY_SOLID;
    d.cell_size = 0.0;
    d.integrator = AD_INTEGRATOR_SYMPLECTIC_EULER;
    d.adaptive_dt = 1;
    d.dt = 1e-2;
    d.max_move = 0.1;
    d.contact_steps = 20.0;
    d.stream_temperature = 1.0;
    d.seed = 1;
    d.threads = 0;
    d.deterministic = 1;
    d.diagnostics = 1;
    d.cell_capacity = 0;
    d.backend = AD_BACKEND_AUTO;
    d.rank_backend = AD_BACKEND_CPU;
    d.broad_phase = AD_BROAD_PHASE_GRID;
    d.bvh_traversal = AD_BVH_GATHER;
    ad_surface_defaults(&d);
    return d;
}

/* Undamped disc-disc contact time pi*sqrt(m_eff/k), m_eff = m/2. */
double ad_contact_time_undamped(const ad_world_def *d)
{
    return AD_PI * sqrt(0.5 * d->mass / d->stiffness);
}

/* The distance within which two discs can touch during a step's force evaluations. */
static double search_cutoff(const ad_world_def *d)
{
    double c = 2.0 * d->radius;
    if (d->integrator == AD_INTEGRATOR_RK4) c += 2.0 * d->max_move * d->radius; /* stage skin */
    return c;
}

/* Grid layout along one axis. Periodic axes need a whole number of cells. */
static ad_status axis_grid(const char *field, double lo, double hi, int periodic, double cell_req, double cutoff,
                           double *cell, int *n, int *reach)
{
    double len = hi - lo;
    double cells = periodic ? floor(len / cell_req) : ceil(len / cell_req);
    if (cells < 1.0) cells = 1.0;
    if (cells > 2147483647.0)
        return ad_fail(AD_ERR_INVALID, "cell_size",
                       "cell_size: %.6g m makes %.3g cells along %s; at most 2^31-1 are supported", cell_req, cells,
                       field);
    *n = (int)cells;
    *cell = periodic ? len / cells : cell_req;
    double reach_cells = ceil(cutoff / *cell * (1.0 - 1e-12)); /* compared in double: (int) of a huge value is UB */
    *reach = reach_cells > AD_MAX_REACH ? AD_MAX_REACH + 1 : reach_cells < 1.0 ? 1 : (int)reach_cells;
    if (*reach > AD_MAX_REACH)
        return ad_fail(AD_ERR_INVALID, "cell_size",
                       "cell_size: %.6g m is below 1/%d of the contact search distance %.6g m", *cell, AD_MAX_REACH,
                       cutoff);
    if (periodic && *n < 2 * *reach + 1)
        return ad_fail(AD_ERR_INVALID, field,
                       "%s: a periodic axis of length %.6g m must hold at least %d cells of %.6g m (three contact "
                       "distances); make the domain longer",
                       field, len, 2 * *reach + 1, *cell);
    return ad_ok();
}

ad_status ad_check_range(const char *field, double v, double lo, int lo_open, double hi, const char *what)
{
    int ok = isfinite(v) && (lo_open ? v > lo : v >= lo) && v <= hi;
    if (!ok) return ad_fail(AD_ERR_INVALID, field, "%s = %g is invalid: %s", field, v, what);
    return ad_ok();
}

/* The reservoir's cells and boxes (open.h): along each open side a band of `reservoir` metres (on the
 * sides where the stream enters, `reservoir_inflow` where given) rounded up to whole cells; each band
 * cut into boxes of about a third of its width, so that the innermost boxes, which the tunnel's gas
 * meets, are held at the stream's density on their own. In 3D the bands span the depth, a box through
 * the whole depth (measured in a tunnel periodic along z at volume fractions 0.1 and 0.2 against layers
 * of boxes as deep as wide, built with AD_RES_DEPTH_LAYERS: the same within 1 %, the outlet's kT/m at
 * 0.1 closer, -0.7 % against -3.5 %; docs/VALIDATION.md). */
static int reservoir_box_z(const ad_params *p, int B, double cxy)
{
    if (p->dims != 3) return 1;
#ifdef AD_RES_DEPTH_LAYERS
    double cells = ceil((double)B * cxy / (double)p->cell_z * (1.0 - 1e-9));
    return cells < 1.0 ? 1 : cells > (double)p->nz ? p->nz : (int)cells;
#else
    (void)B, (void)cxy;
    return p->nz;
#endif
}

static ad_status reservoir_layout(const ad_world_def *d, ad_params *p, double cx, double cy)
{
    if (!(d->reservoir > 0.0)) return ad_ok();
    int k[4] = {0, 0, 0, 0};
    for (int f = 0; f < 4; f++) {
        if (!p->open[f]) continue;
        double un = f == 0 ? d->stream_vx : f == 1 ? -d->stream_vx : f == 2 ? d->stream_vy : -d->stream_vy;
        double width = un > 0.0 && d->reservoir_inflow > 0.0 ? d->reservoir_inflow : d->reservoir;
        double cells = ceil(width / (f < 2 ? cx : cy) * (1.0 - 1e-9));
        if (!(cells < (double)(f < 2 ? p->nx : p->ny))) /* in double: (int) of a huge value is UB */
            return ad_fail(AD_ERR_INVALID, "reservoir",
                           "reservoir = %g m: the band is wider than the domain (%d x %d cells); make it narrower or "
                           "the domain larger",
                           width, p->nx, p->ny);
        k[f] = (int)cells;
        /* the band's outer edge: open where the stream leaves through it or enters it, a solid wall
         * where the stream runs along it (a dense gas would stream out of an open side there, with
         * nothing outside to hold it; a wall is the free stream's own symmetry there) */
        p->open[f] = un != 0.0;
        p->wall[f] = !p->open[f];
    }
    if (k[0] + k[1] + 1 > p->nx || k[2] + k[3] + 1 > p->ny)
        return ad_fail(AD_ERR_INVALID, "reservoir",
                       "reservoir = %g m: the bands along the open sides take the whole domain (%d x %d cells); make "
                       "them narrower or the domain larger",
                       d->reservoir, p->nx, p->ny);
    p->res_l = k[0];
    p->res_r = k[1];
    p->res_b = k[2];
    p->res_t = k[3];
    int inner = p->nx - k[0] - k[1];
    long long total = 0;
    for (int q = 0; q < 4; q++) {
        int B = (k[q] + 2) / 3, depth = k[q];
        if (B < 1) B = 1;
        int cols = q < 2 ? (depth + B - 1) / B : (inner + B - 1) / B;
        int rows = q < 2 ? (p->ny + B - 1) / B : (depth + B - 1) / B;
        int Bz = reservoir_box_z(p, B, fmin(cx, cy)), layers = (p->nz + Bz - 1) / Bz;
        if (!depth) cols = rows = 0;
        p->res_box[q] = B;
        p->res_box_z[q] = Bz;
        p->res_first[q] = (int)total;
        p->res_cols[q] = cols;
        p->res_rows[q] = rows;
        total += (long long)cols * rows * layers;
    }
    if (total > 0x7fffffffLL)
        return ad_fail(AD_ERR_INVALID, "reservoir", "reservoir = %g m makes %.3g boxes; at most 2^31 - 1", d->reservoir,
                       (double)total);
    p->res_boxes = (int)total;
    double v = fabs(d->stream_vx) > fabs(d->stream_vy) ? fabs(d->stream_vx) : fabs(d->stream_vy);
    double rate = d->reservoir_rate > 0.0 ? d->reservoir_rate
                                          : 4.0 * (v + sqrt(2.0 * d->stream_temperature)) / d->reservoir;
    if (!(rate <= FLT_MAX))
        return ad_fail(AD_ERR_INVALID, "reservoir_rate", "reservoir_rate: %g 1/s is beyond a float", rate);
    p->res_rate = (float)rate;
    if (!(p->res_rate > 0.0f))
        return ad_fail(AD_ERR_INVALID, "reservoir_rate",
                       "reservoir_rate: the automatic rate is zero (a stream at rest at zero temperature); give one");
    return ad_ok();
}

/* The largest coordinate of the domain's corners (z in 3D). */
static double ad_def_extent(const ad_world_def *d)
{
    double e = fmax(fmax(fabs(d->x_min), fabs(d->x_max)), fmax(fabs(d->y_min), fabs(d->y_max)));
    return d->dimensions == 3 ? fmax(e, fmax(fabs(d->z_min), fabs(d->z_max))) : e;
}

/* The state is float: what the step computes in float must be a float (the mass and its inverse, the
 * contact force over a diameter of overlap and its acceleration, the squared diameter, the squared
 * speed the step is chosen from and the kinetic energy at the stream), and the step must move a disc:
 * its largest move (max_move radii) must span a float spacing at the farthest coordinate (a disc of
 * radius 0.5 in a domain of 1e9 m cannot move) and the fall under gravity in one step must not exceed
 * it (the step is chosen from speeds, and a disc at rest has none). */
static ad_status check_float_scales(const ad_world_def *d)
{
    double m = d->mass, dia = 2.0 * d->radius, f = d->stiffness * dia, move = d->max_move * d->radius;
    double v = hypot(d->stream_vx, d->stream_vy) + 10.0 * sqrt(d->stream_temperature);
    double extent = ad_def_extent(d);
    int e;
    frexp(extent, &e);
    double tc = AD_PI * sqrt(0.5 * m / d->stiffness), g = hypot(hypot(d->gravity_x, d->gravity_y), d->dimensions == 3 ? d->gravity_z : 0.0);
    double dt = d->adaptive_dt ? fmin(d->dt, tc / d->contact_steps) : d->dt;
    const struct {
        const char *field, *why;
        int ok;
        double value;
    } c[] = {
        {"mass", "the mass and its inverse must be floats", m >= 1.0 / FLT_MAX && m <= 1.0 / FLT_MIN, m},
        {"radius", "the squared diameter must be a float", dia * dia >= FLT_MIN && dia * dia <= FLT_MAX, d->radius},
        {"stiffness", "the contact force over a diameter of overlap and its acceleration must be floats",
         f <= FLT_MAX && f / m <= FLT_MAX, d->stiffness},
        {"stream_vx", "the stream's largest speed |U| + 10 sqrt(kT/m), its square and its kinetic energy must be floats",
         v * v <= FLT_MAX && m * v * v <= FLT_MAX, v},
        {"x_max", "the float spacing of positions at the farthest coordinate must be at most a step's largest move "
                  "(max_move x radius)", ldexp(1.0, e - 24) <= move, extent},
        {"gravity_y", "a disc must fall at most max_move x radius in a step", g * dt * dt <= move, g},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        if (!c[i].ok) return ad_fail(AD_ERR_INVALID, c[i].field, "%s: %g is invalid: %s", c[i].field, c[i].value, c[i].why);
    return ad_ok();
}

/* A 3D world's depth and what 3D does not have yet, refused by name. */
static ad_status check_depth(const ad_world_def *d)
{
    AD_TRY(ad_check_range("z_min", d->z_min, -FLT_MAX, 0, FLT_MAX, "it must be a finite coordinate in m"));
    AD_TRY(ad_check_range("z_max", d->z_max, -FLT_MAX, 0, FLT_MAX, "it must be a finite coordinate in m"));
    if (!(d->z_max - d->z_min >= 2.0 * d->radius))
        return ad_fail(AD_ERR_INVALID, "z_max",
                       "z_max = %g must exceed z_min = %g by at least one diameter (%g m): a 3D domain needs a depth",
                       d->z_max, d->z_min, 2.0 * d->radius);
    AD_TRY(ad_check_range("gravity_z", d->gravity_z, -FLT_MAX, 0, FLT_MAX, "it must be finite (m/s^2)"));
    if (d->boundary_z != AD_BOUNDARY_SOLID && d->boundary_z != AD_BOUNDARY_PERIODIC)
        return ad_fail(AD_ERR_INVALID, "boundary_z", "boundary_z = %d is invalid in 3D: solid (0) or periodic (1)",
                       (int)d->boundary_z);
    if (d->broad_phase != AD_BROAD_PHASE_GRID)
        return ad_fail(AD_ERR_INVALID, "broad_phase",
                       "broad_phase = bvh is 2D for now: a 3D world finds its contacts on the grid");
    return ad_ok();
}

/* Everything about a def except memory; fills the derived float parameters. */
/* Every field of a definition in its range, one by one, naming the field. */
static ad_status check_fields(const ad_world_def *d)
{
    if (d->internal_cookie != AD_DEF_COOKIE)
        return ad_fail(AD_ERR_INVALID, "internal_cookie",
                       "internal_cookie: the definition was not made by ad_default_world_def()");
    if (d->dimensions != 2 && d->dimensions != 3)
        return ad_fail(AD_ERR_INVALID, "dimensions", "dimensions = %d is invalid: 2 (discs) or 3 (spheres)",
                       d->dimensions);
    if (d->capacity == 0 || d->capacity > (size_t)UINT32_MAX - 1)
        return ad_fail(AD_ERR_INVALID, "capacity", "capacity = %zu is invalid: it must be between 1 and %u",
                       d->capacity, UINT32_MAX - 1);
    AD_TRY(ad_check_range("radius", d->radius, 0.0, 1, DBL_MAX, "it must be a positive length in m"));
    AD_TRY(ad_check_range("mass", d->mass, 0.0, 1, DBL_MAX, "it must be a positive mass in kg"));
    AD_TRY(ad_check_range("stiffness", d->stiffness, 0.0, 1, DBL_MAX, "it must be a positive spring constant in N/m"));
    AD_TRY(ad_check_range("restitution", d->restitution, 0.0, 1, 1.0, "it must lie in (0, 1]"));
    AD_TRY(ad_check_range("wall_restitution", d->wall_restitution, 0.0, 1, 1.0, "it must lie in (0, 1]"));
    AD_TRY(ad_check_range("x_min", d->x_min, -FLT_MAX, 0, FLT_MAX, "it must be a finite coordinate in m"));
    AD_TRY(ad_check_range("y_min", d->y_min, -FLT_MAX, 0, FLT_MAX, "it must be a finite coordinate in m"));
    AD_TRY(ad_check_range("x_max", d->x_max, -FLT_MAX, 0, FLT_MAX, "it must be a finite coordinate in m"));
    AD_TRY(ad_check_range("y_max", d->y_max, -FLT_MAX, 0, FLT_MAX, "it must be a finite coordinate in m"));
    if (!(d->x_max - d->x_min >= 2.0 * d->radius))
        return ad_fail(AD_ERR_INVALID, "x_max", "x_max = %g must exceed x_min = %g by at least one diameter (%g m)",
                       d->x_max, d->x_min, 2.0 * d->radius);
    if (!(d->y_max - d->y_min >= 2.0 * d->radius))
        return ad_fail(AD_ERR_INVALID, "y_max", "y_max = %g must exceed y_min = %g by at least one diameter (%g m)",
                       d->y_max, d->y_min, 2.0 * d->radius);
    if (d->dimensions == 3) AD_TRY(check_depth(d));
    if ((unsigned)d->boundary_x > (unsigned)AD_BOUNDARY_OPEN)
        return ad_fail(AD_ERR_INVALID, "boundary_x", "boundary_x = %d is invalid: solid (0), periodic (1) or open (2)",
                       (int)d->boundary_x);
    if ((unsigned)d->boundary_y > (unsigned)AD_BOUNDARY_OPEN)
        return ad_fail(AD_ERR_INVALID, "boundary_y", "boundary_y = %d is invalid: solid (0), periodic (1) or open (2)",
                       (int)d->boundary_y);
    AD_TRY(ad_check_range("stream_vx", d->stream_vx, -FLT_MAX, 0, FLT_MAX, "it must be finite (m/s)"));
    AD_TRY(ad_check_range("stream_vy", d->stream_vy, -FLT_MAX, 0, FLT_MAX, "it must be finite (m/s)"));
    AD_TRY(ad_check_range("stream_temperature", d->stream_temperature, 0.0, 0, FLT_MAX, "it must be >= 0 (m^2/s^2)"));
    AD_TRY(ad_check_range("stream_density", d->stream_density, 0.0, 0, FLT_MAX, "it must be >= 0 (discs per m^2)"));
    AD_TRY(ad_check_range("reservoir", d->reservoir, 0.0, 0, FLT_MAX, "it must be 0 (none) or a width in m"));
    AD_TRY(ad_check_range("reservoir_inflow", d->reservoir_inflow, 0.0, 0, FLT_MAX,
                    "it must be 0 (as reservoir) or a width in m"));
    AD_TRY(ad_check_range("reservoir_rate", d->reservoir_rate, 0.0, 0, FLT_MAX, "it must be 0 (auto) or a rate in 1/s"));
    if (d->reservoir > 0.0 && d->boundary_x != AD_BOUNDARY_OPEN && d->boundary_y != AD_BOUNDARY_OPEN)
        return ad_fail(AD_ERR_INVALID, "reservoir",
                       "reservoir = %g m: the free-stream reservoir lines open sides, and no axis is open", d->reservoir);
    AD_TRY(ad_check_range("gravity_x", d->gravity_x, -FLT_MAX, 0, FLT_MAX, "it must be finite (m/s^2)"));
    AD_TRY(ad_check_range("gravity_y", d->gravity_y, -FLT_MAX, 0, FLT_MAX, "it must be finite (m/s^2)"));
    AD_TRY(ad_check_range("cell_size", d->cell_size, 0.0, 0, DBL_MAX, "it must be 0 (one diameter) or a length in m"));
    if ((unsigned)d->integrator > (unsigned)AD_INTEGRATOR_RK4)
        return ad_fail(AD_ERR_INVALID, "integrator",
                       "integrator = %d is invalid: symplectic Euler (0), Euler (1), Verlet (2) or RK4 (3)",
                       (int)d->integrator);
    AD_TRY(ad_check_range("dt", d->dt, 0.0, 1, DBL_MAX, "it must be a positive time in s"));
    AD_TRY(ad_check_range("max_move", d->max_move, 0.0, 1, 1.0, "it must lie in (0, 1] (a fraction of the radius)"));
    AD_TRY(ad_check_range("contact_steps", d->contact_steps, AD_MIN_CONTACT_STEPS, 0, 1e9,
                    "at least 8 steps must resolve a contact"));
    if (d->threads < 0) return ad_fail(AD_ERR_INVALID, "threads", "threads = %d is invalid: 0 (all) or more", d->threads);
    if ((unsigned)d->broad_phase > (unsigned)AD_BROAD_PHASE_BVH)
        return ad_fail(AD_ERR_INVALID, "broad_phase", "broad_phase = %d is invalid: grid (0) or bvh (1)",
                       (int)d->broad_phase);
    if ((unsigned)d->bvh_traversal > (unsigned)AD_BVH_REFLEXIVE)
        return ad_fail(AD_ERR_INVALID, "bvh_traversal", "bvh_traversal = %d is invalid: gather (0) or reflexive (1)",
                       (int)d->bvh_traversal);
    if (d->broad_phase == AD_BROAD_PHASE_BVH && d->capacity > AD_BVH_MAX_LEAVES)
        return ad_fail(AD_ERR_INVALID, "capacity",
                       "capacity = %zu is too large for broad_phase = bvh: tree nodes mark leaves with the top bit "
                       "of a 32-bit index, so at most %u discs",
                       d->capacity, AD_BVH_MAX_LEAVES);
    if ((unsigned)d->backend > (unsigned)AD_BACKEND_MPI)
        return ad_fail(AD_ERR_INVALID, "backend", "backend = %d is invalid: auto (0), cpu (1), cuda (2), reference (3) or mpi (4)",
                       (int)d->backend);
    if (d->rank_backend != AD_BACKEND_AUTO && d->rank_backend != AD_BACKEND_CPU && d->rank_backend != AD_BACKEND_CUDA)
        return ad_fail(AD_ERR_INVALID, "rank_backend", "rank_backend = %d is invalid: auto (0), cpu (1) or cuda (2)",
                       (int)d->rank_backend);
    AD_TRY(ad_surfaces_check(d));

    return ad_ok();
}

/* The contact, the walls, the domain and the stream in the step's float parameters. */
static void derive_physics(const ad_world_def *d, ad_params *p)
{
    double m_pp = 0.5 * d->mass, m_w = d->mass;
    p->disc_contacts = d->disc_contacts != 0;
    p->radius = (float)d->radius;
    p->diameter = (float)(2.0 * d->radius);
    p->diameter_sq = p->diameter * p->diameter;
    p->mass = (float)d->mass;
    p->inv_mass = (float)(1.0 / d->mass);
    p->k = (float)d->stiffness;
    p->gamma_pp = (float)ad_damping_for_restitution(d->restitution, m_pp, d->stiffness);
    p->gamma_wall = (float)ad_damping_for_restitution(d->wall_restitution, m_w, d->stiffness);
    ad_surface_params(d, p);
    p->gx = (float)d->gravity_x;
    p->gy = (float)d->gravity_y;
    p->x_min = (float)d->x_min;
    p->x_max = (float)d->x_max;
    p->y_min = (float)d->y_min;
    p->y_max = (float)d->y_max;
    p->periodic_x = d->boundary_x == AD_BOUNDARY_PERIODIC;
    p->periodic_y = d->boundary_y == AD_BOUNDARY_PERIODIC;
    p->open_x = d->boundary_x == AD_BOUNDARY_OPEN;
    p->open_y = d->boundary_y == AD_BOUNDARY_OPEN;
    for (int f = 0; f < 4; f++) {
        ad_boundary b = f < 2 ? d->boundary_x : d->boundary_y;
        p->wall[f] = b == AD_BOUNDARY_SOLID;
        p->open[f] = b == AD_BOUNDARY_OPEN;
    }
    p->stream_vx = (float)d->stream_vx;
    p->stream_vy = (float)d->stream_vy;
    p->stream_sigma = (float)sqrt(d->stream_temperature);
    p->stream_density = (float)d->stream_density;
    p->seed = d->seed;
    p->len_x = p->x_max - p->x_min;
    p->len_y = p->y_max - p->y_min;
    p->half_x = 0.5f * p->len_x;
    p->half_y = 0.5f * p->len_y;
    p->dims = d->dimensions;
    if (d->dimensions == 3) {
        p->gz = (float)d->gravity_z;
        p->z_min = (float)d->z_min;
        p->z_max = (float)d->z_max;
        p->len_z = p->z_max - p->z_min;
        p->half_z = 0.5f * p->len_z;
        p->periodic_z = d->boundary_z == AD_BOUNDARY_PERIODIC;
        p->wall[4] = p->wall[5] = d->boundary_z == AD_BOUNDARY_SOLID;
    }

}

/* 3D: the grid's z axis, and the limits of the 3D grid: at most 25 neighbour rows (a reach of 2 cells
 * along y and z: cells of at least half the search distance) and 2^32 - 2 cells. */
static ad_status derive_depth_grid(const ad_world_def *d, ad_params *p, double req, double cutoff)
{
    double cz;
    AD_TRY(axis_grid("z_max", d->z_min, d->z_max, p->periodic_z, req, cutoff, &cz, &p->nz, &p->reach_z));
    if (p->reach_y > 2 || p->reach_z > 2)
        return ad_fail(AD_ERR_INVALID, "cell_size",
                       "cell_size: %g m is below half the contact search distance %g m; a 3D grid searches at most "
                       "two cells each side",
                       d->cell_size, cutoff);
    double cells = (double)p->nx * (double)p->ny * (double)p->nz;
    if (cells > (double)UINT32_MAX - 2.0)
        return ad_fail(AD_ERR_INVALID, "cell_size",
                       "cell_size: the grid would have %.3g cells; at most 2^32-2 are supported (use larger cells)",
                       cells);
    p->origin_z = p->z_min;
    p->cell_z = (float)cz;
    p->inv_cell_z = (float)(1.0 / cz);
    return ad_ok();
}

/* The grid (cells, reach), the search distance and the reservoir's layout. */
static ad_status derive_grid(const ad_world_def *d, ad_params *p)
{
    double cutoff = search_cutoff(d);
    double req = d->cell_size > 0.0 ? d->cell_size : cutoff;
    double cx, cy;
    AD_TRY(axis_grid("x_max", d->x_min, d->x_max, p->periodic_x, req, cutoff, &cx, &p->nx, &p->reach_x));
    AD_TRY(axis_grid("y_max", d->y_min, d->y_max, p->periodic_y, req, cutoff, &cy, &p->ny, &p->reach_y));
    /* a BVH world allocates no grid: only the grid's own worlds are limited in cells */
    if (d->broad_phase != AD_BROAD_PHASE_BVH && (double)p->nx * (double)p->ny > (double)UINT32_MAX - 2.0)
        return ad_fail(AD_ERR_INVALID, "cell_size",
                       "cell_size: the grid would have %.3g cells; at most 2^32-2 are supported (use larger cells)",
                       (double)p->nx * (double)p->ny);
    p->broad_phase = (int)d->broad_phase;
    /* the query box must hold every centre closer than the cutoff after float
     * rounding of centre +- search: a relative margin, and one for large coordinates */
    double extent = ad_def_extent(d);
    p->search = (float)(cutoff * (1.0 + 1e-4) + 1e-6 * extent);
    /* a periodic query box and its image must not overlap, or a pair would be found twice */
    if (p->broad_phase == AD_BROAD_PHASE_BVH && ((p->periodic_x && !(p->len_x > 2.0f * p->search)) ||
                                                 (p->periodic_y && !(p->len_y > 2.0f * p->search))))
        return ad_fail(AD_ERR_INVALID, "broad_phase",
                       "broad_phase = bvh: a periodic axis must be longer than twice the search distance %g m",
                       2.0 * (double)p->search);
    p->origin_x = p->x_min;
    p->origin_y = p->y_min;
    p->cell_x = (float)cx;
    p->cell_y = (float)cy;
    p->inv_cell_x = (float)(1.0 / cx);
    p->inv_cell_y = (float)(1.0 / cy);
    p->nz = 1;
    if (d->dimensions == 3) AD_TRY(derive_depth_grid(d, p, req, cutoff));
    ad_stencil_make(p->reach_y, p->reach_z, &p->stencil); /* 2D: reach_y <= AD_MAX_REACH, 17 rows at most */
    AD_TRY(reservoir_layout(d, p, cx, cy));
    for (int f = 0; f < 4; f++) p->side_rate[f] = d->dimensions == 3 ? ad_side_rate3(p, f) : ad_side_rate(p, f);
    return ad_ok();
}

ad_status ad_params_from_def(const ad_world_def *d, ad_params *p)
{
    if (!d) return ad_fail(AD_ERR_INVALID, "def", "def is NULL");
    AD_TRY(check_fields(d));
    AD_TRY(check_float_scales(d));
    double tc = ad_contact_time_undamped(d);
    if (!d->adaptive_dt && d->dt > tc / AD_MIN_CONTACT_STEPS)
        return ad_fail(AD_ERR_INVALID, "dt",
                       "dt = %g s cannot resolve a contact: the contact time pi*sqrt(m_eff/k_n) is %g s, so a fixed "
                       "step must be at most %g s (8 steps per contact)",
                       d->dt, tc, tc / AD_MIN_CONTACT_STEPS);

    memset(p, 0, sizeof *p);
    derive_physics(d, p);
    AD_TRY(derive_grid(d, p));
    return ad_ok();
}

ad_status ad_world_def_validate(const ad_world_def *def)
{
    ad_params p;
    return ad_params_from_def(def, &p);
}

