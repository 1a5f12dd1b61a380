/* World lifecycle, definition checks and the backend-free parts of a world: particles in, segments, stats. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../physics/bvh.h"
#include "../physics/contact.h"
#include "../physics/rng.h"
#include "world_internal.h"

#define AD_DEF_COOKIE 0xAE0D3E01u
#define AD_MIN_CONTACT_STEPS 8.0
#define AD_MAX_REACH 8

ad_world_def ad_default_world_def(void)
{
    ad_world_def d;
    memset(&d, 0, sizeof d);
    d.internal_cookie = AD_DEF_COOKIE;
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
    d.broad_phase = AD_BROAD_PHASE_GRID;
    d.bvh_traversal = AD_BVH_GATHER;
    return d;
}

/* Undamped disc-disc contact time pi*sqrt(m_eff/k), m_eff = m/2. */
static double contact_time_undamped(const ad_world_def *d)
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
    *reach = (int)ceil(cutoff / *cell * (1.0 - 1e-12));
    if (*reach < 1) *reach = 1;
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

static ad_status check_range(const char *field, double v, double lo, int lo_open, double hi, const char *what)
{
    int ok = isfinite(v) && (lo_open ? v > lo : v >= lo) && v <= hi;
    if (!ok) return ad_fail(AD_ERR_INVALID, field, "%s = %g is invalid: %s", field, v, what);
    return ad_ok();
}

/* The reservoir's cells and boxes (open.h): along each open side a band of `reservoir` metres (on the
 * sides where the stream enters, `reservoir_inflow` where given) rounded up to whole cells; each band
 * cut into boxes of about a third of its width, so that the innermost boxes, which the tunnel's gas
 * meets, are held at the stream's density on their own. */
static ad_status reservoir_layout(const ad_world_def *d, ad_params *p, double cx, double cy)
{
    if (!(d->reservoir > 0.0)) return ad_ok();
    int k[4] = {0, 0, 0, 0};
    for (int f = 0; f < 4; f++) {
        if (!p->open[f]) continue;
        double un = f == 0 ? d->stream_vx : f == 1 ? -d->stream_vx : f == 2 ? d->stream_vy : -d->stream_vy;
        double width = un > 0.0 && d->reservoir_inflow > 0.0 ? d->reservoir_inflow : d->reservoir;
        k[f] = (int)ceil(width / (f < 2 ? cx : cy) * (1.0 - 1e-9));
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
        if (!depth) cols = rows = 0;
        p->res_box[q] = B;
        p->res_first[q] = (int)total;
        p->res_cols[q] = cols;
        total += (long long)cols * rows;
    }
    if (total > 0x7fffffffLL)
        return ad_fail(AD_ERR_INVALID, "reservoir", "reservoir = %g m makes %.3g boxes; at most 2^31 - 1", d->reservoir,
                       (double)total);
    p->res_boxes = (int)total;
    double v = fabs(d->stream_vx) > fabs(d->stream_vy) ? fabs(d->stream_vx) : fabs(d->stream_vy);
    double rate = d->reservoir_rate > 0.0 ? d->reservoir_rate
                                          : 4.0 * (v + sqrt(2.0 * d->stream_temperature)) / d->reservoir;
    p->res_rate = (float)rate;
    if (!(p->res_rate > 0.0f))
        return ad_fail(AD_ERR_INVALID, "reservoir_rate",
                       "reservoir_rate: the automatic rate is zero (a stream at rest at zero temperature); give one");
    return ad_ok();
}

/* Everything about a def except memory; fills the derived float parameters. */
ad_status ad_params_from_def(const ad_world_def *d, ad_params *p)
{
    if (!d) return ad_fail(AD_ERR_INVALID, "def", "def is NULL");
    if (d->internal_cookie != AD_DEF_COOKIE)
        return ad_fail(AD_ERR_INVALID, "internal_cookie",
                       "internal_cookie: the definition was not made by ad_default_world_def()");
    if (d->capacity == 0 || d->capacity > (size_t)UINT32_MAX - 1)
        return ad_fail(AD_ERR_INVALID, "capacity", "capacity = %zu is invalid: it must be between 1 and %u",
                       d->capacity, UINT32_MAX - 1);
    AD_TRY(check_range("radius", d->radius, 0.0, 1, DBL_MAX, "it must be a positive length in m"));
    AD_TRY(check_range("mass", d->mass, 0.0, 1, DBL_MAX, "it must be a positive mass in kg"));
    AD_TRY(check_range("stiffness", d->stiffness, 0.0, 1, DBL_MAX, "it must be a positive spring constant in N/m"));
    AD_TRY(check_range("restitution", d->restitution, 0.0, 1, 1.0, "it must lie in (0, 1]"));
    AD_TRY(check_range("wall_restitution", d->wall_restitution, 0.0, 1, 1.0, "it must lie in (0, 1]"));
    AD_TRY(check_range("x_min", d->x_min, -FLT_MAX, 0, FLT_MAX, "it must be a finite coordinate in m"));
    AD_TRY(check_range("y_min", d->y_min, -FLT_MAX, 0, FLT_MAX, "it must be a finite coordinate in m"));
    AD_TRY(check_range("x_max", d->x_max, -FLT_MAX, 0, FLT_MAX, "it must be a finite coordinate in m"));
    AD_TRY(check_range("y_max", d->y_max, -FLT_MAX, 0, FLT_MAX, "it must be a finite coordinate in m"));
    if (!(d->x_max - d->x_min >= 2.0 * d->radius))
        return ad_fail(AD_ERR_INVALID, "x_max", "x_max = %g must exceed x_min = %g by at least one diameter (%g m)",
                       d->x_max, d->x_min, 2.0 * d->radius);
    if (!(d->y_max - d->y_min >= 2.0 * d->radius))
        return ad_fail(AD_ERR_INVALID, "y_max", "y_max = %g must exceed y_min = %g by at least one diameter (%g m)",
                       d->y_max, d->y_min, 2.0 * d->radius);
    if ((unsigned)d->boundary_x > (unsigned)AD_BOUNDARY_OPEN)
        return ad_fail(AD_ERR_INVALID, "boundary_x", "boundary_x = %d is invalid: solid (0), periodic (1) or open (2)",
                       (int)d->boundary_x);
    if ((unsigned)d->boundary_y > (unsigned)AD_BOUNDARY_OPEN)
        return ad_fail(AD_ERR_INVALID, "boundary_y", "boundary_y = %d is invalid: solid (0), periodic (1) or open (2)",
                       (int)d->boundary_y);
    AD_TRY(check_range("stream_vx", d->stream_vx, -FLT_MAX, 0, FLT_MAX, "it must be finite (m/s)"));
    AD_TRY(check_range("stream_vy", d->stream_vy, -FLT_MAX, 0, FLT_MAX, "it must be finite (m/s)"));
    AD_TRY(check_range("stream_temperature", d->stream_temperature, 0.0, 0, FLT_MAX, "it must be >= 0 (m^2/s^2)"));
    AD_TRY(check_range("stream_density", d->stream_density, 0.0, 0, FLT_MAX, "it must be >= 0 (discs per m^2)"));
    AD_TRY(check_range("reservoir", d->reservoir, 0.0, 0, FLT_MAX, "it must be 0 (none) or a width in m"));
    AD_TRY(check_range("reservoir_inflow", d->reservoir_inflow, 0.0, 0, FLT_MAX,
                    "it must be 0 (as reservoir) or a width in m"));
    AD_TRY(check_range("reservoir_rate", d->reservoir_rate, 0.0, 0, FLT_MAX, "it must be 0 (auto) or a rate in 1/s"));
    if (d->reservoir > 0.0 && d->boundary_x != AD_BOUNDARY_OPEN && d->boundary_y != AD_BOUNDARY_OPEN)
        return ad_fail(AD_ERR_INVALID, "reservoir",
                       "reservoir = %g m: the free-stream reservoir lines open sides, and no axis is open", d->reservoir);
    AD_TRY(check_range("gravity_x", d->gravity_x, -FLT_MAX, 0, FLT_MAX, "it must be finite (m/s^2)"));
    AD_TRY(check_range("gravity_y", d->gravity_y, -FLT_MAX, 0, FLT_MAX, "it must be finite (m/s^2)"));
    AD_TRY(check_range("cell_size", d->cell_size, 0.0, 0, DBL_MAX, "it must be 0 (one diameter) or a length in m"));
    if ((unsigned)d->integrator > (unsigned)AD_INTEGRATOR_RK4)
        return ad_fail(AD_ERR_INVALID, "integrator",
                       "integrator = %d is invalid: symplectic Euler (0), Euler (1), Verlet (2) or RK4 (3)",
                       (int)d->integrator);
    AD_TRY(check_range("dt", d->dt, 0.0, 1, DBL_MAX, "it must be a positive time in s"));
    AD_TRY(check_range("max_move", d->max_move, 0.0, 1, 1.0, "it must lie in (0, 1] (a fraction of the radius)"));
    AD_TRY(check_range("contact_steps", d->contact_steps, AD_MIN_CONTACT_STEPS, 0, 1e9,
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
    if ((unsigned)d->backend > (unsigned)AD_BACKEND_CUDA)
        return ad_fail(AD_ERR_INVALID, "backend", "backend = %d is invalid: auto (0), cpu (1) or cuda (2)",
                       (int)d->backend);

    double tc = contact_time_undamped(d);
    if (!d->adaptive_dt && d->dt > tc / AD_MIN_CONTACT_STEPS)
        return ad_fail(AD_ERR_INVALID, "dt",
                       "dt = %g s cannot resolve a contact: the contact time pi*sqrt(m_eff/k_n) is %g s, so a fixed "
                       "step must be at most %g s (8 steps per contact)",
                       d->dt, tc, tc / AD_MIN_CONTACT_STEPS);

    memset(p, 0, sizeof *p);
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
    double extent = fmax(fmax(fabs(d->x_min), fabs(d->x_max)), fmax(fabs(d->y_min), fabs(d->y_max)));
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
    AD_TRY(reservoir_layout(d, p, cx, cy));
    for (int f = 0; f < 4; f++) p->side_rate[f] = ad_side_rate(p, f);
    return ad_ok();
}

static const ad_backend_ops *pick_backend(ad_backend b, ad_status *st)
{
    *st = ad_ok();
#if defined(AD_HAVE_CUDA)
    if (b == AD_BACKEND_CUDA || b == AD_BACKEND_AUTO) {
        if (ad_cuda_device_count() > 0) return &ad_cuda_backend;
        if (b == AD_BACKEND_CUDA) {
            *st = ad_fail(AD_ERR_BACKEND, "backend", "backend = cuda: no CUDA GPU was found on this machine");
            return NULL;
        }
    }
#else
    if (b == AD_BACKEND_CUDA) {
        *st = ad_fail(AD_ERR_BACKEND, "backend",
                      "backend = cuda: this build of aerodem has no CUDA backend (nvcc was not found at build time)");
        return NULL;
    }
#endif
    return &ad_cpu_backend;
}

ad_status ad_world_def_validate(const ad_world_def *def)
{
    ad_params p;
    return ad_params_from_def(def, &p);
}

size_t ad_world_bytes_needed(const ad_world_def *def)
{
    ad_params p;
    if (ad_params_from_def(def, &p).code != AD_OK) return 0;
    ad_status st;
    const ad_backend_ops *ops = pick_backend(def->backend, &st);
    return ops ? ops->bytes_needed(def, &p) : 0;
}

size_t ad_host_bytes_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (f) {
        char line[256];
        unsigned long long kb = 0;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) break;
        fclose(f);
        if (kb) return (size_t)kb * 1024u;
    }
    long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) return (size_t)pages * (size_t)page;
    return (size_t)-1;
}

ad_status ad_world_create(const ad_world_def *def, ad_world **out)
{
    if (!out) return ad_fail(AD_ERR_INVALID, "out", "out is NULL");
    *out = NULL;
    ad_params p;
    AD_TRY(ad_params_from_def(def, &p));
    ad_status st;
    const ad_backend_ops *ops = pick_backend(def->backend, &st);
    if (!ops) return st;

    ad_world *w = calloc(1, sizeof *w);
    if (!w) return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory allocating the world");
    w->def = *def;
    w->params = p;
    w->ops = ops;
    double tc = contact_time_undamped(def);
    w->dt_max = def->dt;
    w->dt_contact = tc / def->contact_steps;
    w->stats.contact_time = ad_contact_duration(
        0.5 * def->mass, def->stiffness, ad_damping_for_restitution(def->restitution, 0.5 * def->mass, def->stiffness));
    w->stats.grid_nx = (uint32_t)p.nx;
    w->stats.grid_ny = (uint32_t)p.ny;
    w->stats.cell_size_x = p.cell_x;
    w->stats.cell_size_y = p.cell_y;
    if (def->cell_capacity) {
        w->stats.cell_capacity = def->cell_capacity;
    } else {
        /* discs whose centres fit in a cell with no two closer than a diameter:
         * hexagonal packing of centres over the cell grown by a radius each side */
        double n = floor(ad_cell_packing(p.cell_x, p.cell_y, def->radius)) + 1.0;
        w->stats.cell_capacity = (uint32_t)fmin(n, 4294967295.0);
    }
    w->stats.backend = ops == &ad_cpu_backend ? AD_BACKEND_CPU : AD_BACKEND_CUDA;
    w->stats.dt = ad_next_dt(w, 0.0);

    st = ops->create(w);
    if (st.code != AD_OK) {
        free(w);
        return st;
    }
    *out = w;
    return ad_ok();
}

void ad_world_destroy(ad_world *w)
{
    if (!w) return;
    w->ops->destroy(w);
    free(w->seg.segs);
    free(w->seg.raw);
    free(w->seg.start);
    free(w->seg.index);
    ad_cpu_bvh_free(&w->seg.tree_nodes);
    free(w->seg.tree_leaf_box);
    free(w->seg.tree_item);
    free(w->fields.sums);
    free(w);
}

ad_status ad_world_add_particles(ad_world *w, const ad_particle *p, size_t n)
{
    if (!w) return ad_fail(AD_ERR_INVALID, "w", "world is NULL");
    if (n == 0) return ad_ok();
    if (!p) return ad_fail(AD_ERR_INVALID, "p", "particle array is NULL");
    if (n > w->def.capacity - w->count)
        return ad_fail(AD_ERR_CAPACITY, "capacity",
                       "capacity: adding %zu particles to %zu would exceed the capacity of %zu set at creation", n,
                       w->count, w->def.capacity);
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(p[i].x) || !isfinite(p[i].y) || !isfinite(p[i].vx) || !isfinite(p[i].vy))
            return ad_fail(AD_ERR_INVALID, "particles", "particle %zu (of %zu given) has a non-finite position or velocity",
                           i, n);
    }
    ad_status st = w->ops->add_particles(w, p, n);
    if (st.code == AD_OK) {
        w->count += n;
        w->stats.count = w->count;
    }
    return st;
}

/* -------------------------------------------------------------------- fill -- */

static double seg_dist2(const ad_seg *s, double x, double y)
{
    float qx, qy, t;
    ad_closest_on_segment((float)x, (float)y, s->x0, s->y0, s->ex, s->ey, s->inv_len2, &qx, &qy, &t);
    return (x - qx) * (x - qx) + (y - qy) * (y - qy);
}

static int near_segment(const ad_world *w, double x, double y, double r)
{
    const ad_seg_grid *g = &w->seg.grid;
    if (w->seg.count == 0) return 0;
    int cx = ad_cell_coord((float)x, g->origin_x, g->inv_cell_x, g->nx);
    int cy = ad_cell_coord((float)y, g->origin_y, g->inv_cell_y, g->ny);
    uint32_t c = (uint32_t)cy * (uint32_t)g->nx + (uint32_t)cx;
    for (uint32_t k = g->start[c]; k < g->start[c + 1]; k++)
        if (seg_dist2(&g->segs[g->index[k]], x, y) < r * r) return 1;
    return 0;
}

/* Inside a closed outline: a ray towards +x crosses its edges an odd number of times. */
static int inside_closed(const ad_world *w, double x, double y)
{
    int inside = 0;
    for (size_t i = 0; i < w->seg.count; i++) {
        const ad_seg *s = &w->seg.segs[i];
        if (!(s->flags & AD_SEG_CLOSED)) continue;
        double x0 = s->x0, y0 = s->y0, x1 = s->x0 + s->ex, y1 = s->y0 + s->ey;
        if ((y0 > y) != (y1 > y) && x < x0 + (y - y0) * (x1 - x0) / (y1 - y0)) inside = !inside;
    }
    return inside;
}

ad_status ad_world_fill(ad_world *w, const ad_fill_def *f, size_t *added)
{
    if (added) *added = 0;
    if (!w) return ad_fail(AD_ERR_INVALID, "w", "world is NULL");
    if (!f) return ad_fail(AD_ERR_INVALID, "fill", "fill definition is NULL");
    const ad_world_def *d = &w->def;
    double r = d->radius;
    double x0 = f->x0, x1 = f->x1, y0 = f->y0, y1 = f->y1;
    if (!isfinite(x0) || !isfinite(x1) || !isfinite(y0) || !isfinite(y1) || !(x1 > x0) || !(y1 > y0))
        return ad_fail(AD_ERR_INVALID, "fill.region", "fill region [%g, %g] x [%g, %g] is empty or not finite", x0, x1,
                       y0, y1);
    AD_TRY(check_range("fill.area_fraction", f->area_fraction, 0.0, 1, 0.78,
                    "it must lie in (0, 0.78] (a jittered square lattice cannot pack denser)"));
    AD_TRY(check_range("fill.temperature", f->temperature, 0.0, 0, DBL_MAX, "it must be >= 0 (m^2/s^2)"));
    if (!isfinite(f->vx) || !isfinite(f->vy))
        return ad_fail(AD_ERR_INVALID, "fill.velocity", "fill velocity (%g, %g) is not finite", f->vx, f->vy);
    /* keep discs inside solid walls and inside the domain */
    x0 = fmax(x0, d->x_min);
    x1 = fmin(x1, d->x_max);
    y0 = fmax(y0, d->y_min);
    y1 = fmin(y1, d->y_max);
    double W = x1 - x0, H = y1 - y0;
    if (!(W >= 2 * r && H >= 2 * r))
        return ad_fail(AD_ERR_INVALID, "fill.region", "fill region is narrower than a diameter inside the domain");
    double n_want = floor(f->area_fraction * W * H / (AD_PI * r * r) + 0.5);
    if (n_want < 1) return ad_ok();
    double cols = ceil(sqrt(n_want * W / H));
    double rows = ceil(n_want / cols);
    double cw = W / cols, ch = H / rows;
    if (cw < 2 * r || ch < 2 * r) {
        rows = floor(H / (2 * r));
        cols = ceil(n_want / rows);
        cw = W / cols;
        ch = H / rows;
        if (cw < 2 * r || ch < 2 * r)
            return ad_fail(AD_ERR_INVALID, "fill.area_fraction",
                           "fill.area_fraction = %g does not fit on a lattice in a %g x %g m region", f->area_fraction,
                           W, H);
    }
    size_t n = (size_t)n_want;
    if (n > d->capacity - w->count)
        return ad_fail(AD_ERR_CAPACITY, "capacity",
                       "capacity: the fill needs %zu discs but only %zu of the capacity %zu are free", n,
                       d->capacity - w->count, d->capacity);
    ad_particle *p = malloc(n * sizeof *p);
    if (!p) return ad_fail(AD_ERR_NO_MEMORY, "", "out of memory for %zu fill particles", n);
    double jx = 0.5 * (cw - 2 * r) * 0.999, jy = 0.5 * (ch - 2 * r) * 0.999;
    /* bounding box of closed outlines: only discs in it need the inside test */
    double bx0 = INFINITY, by0 = INFINITY, bx1 = -INFINITY, by1 = -INFINITY;
    for (size_t i = 0; i < w->seg.count; i++) {
        const ad_segment *g = &w->seg.raw[i];
        if (!(w->seg.segs[i].flags & AD_SEG_CLOSED)) continue;
        bx0 = fmin(bx0, fmin(g->x0, g->x1));
        bx1 = fmax(bx1, fmax(g->x0, g->x1));
        by0 = fmin(by0, fmin(g->y0, g->y1));
        by1 = fmax(by1, fmax(g->y0, g->y1));
    }
    double sites = cols * rows, sd = sqrt(f->temperature);
    /* candidates in parallel (counter-based random numbers: the same for any thread
     * count), then compacted in index order */
    unsigned char *keep = malloc(n);
    if (!keep) {
        free(p);
        return ad_fail(AD_ERR_NO_MEMORY, "", "out of memory for %zu fill particles", n);
    }
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) {
        double site = floor((double)i * sites / (double)n); /* n sites spread evenly over the lattice */
        double row = floor(site / cols), col = site - row * cols;
        uint64_t c = (uint64_t)i * 4;
        double x = x0 + (col + 0.5) * cw + jx * (2.0 * ad_rng_uniform(f->seed, c) - 1.0);
        double y = y0 + (row + 0.5) * ch + jy * (2.0 * ad_rng_uniform(f->seed, c + 1) - 1.0);
        keep[i] = !near_segment(w, x, y, r * 1.01) &&
                  !(x >= bx0 && x <= bx1 && y >= by0 && y <= by1 && inside_closed(w, x, y));
        double gx, gy;
        ad_rng_normal2(f->seed ^ 0x5DEECE66Dull, (uint64_t)i, &gx, &gy);
        p[i] = (ad_particle){(float)x, (float)y, (float)(f->vx + sd * gx), (float)(f->vy + sd * gy)};
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (keep[i]) p[k++] = p[i];
    free(keep);
    ad_status st = ad_world_add_particles(w, p, k);
    free(p);
    if (st.code == AD_OK && added) *added = k;
    return st;
}

/* ------------------------------------------------------------------ stepping -- */

double ad_next_dt(const ad_world *w, double vmax)
{
    if (!w->def.adaptive_dt) return w->dt_max;
    double dt = fmin(w->dt_max, w->dt_contact);
    if (vmax > 0.0) dt = fmin(dt, w->def.max_move * w->def.radius / vmax);
    return dt;
}

ad_status ad_open_state_alloc(ad_open_state *o, uint32_t res_boxes)
{
    memset(o, 0, sizeof *o);
    o->waiting = malloc(AD_WAITING_MAX * sizeof *o->waiting);
    o->res_boxes = res_boxes;
    o->res_state = calloc(2 * (size_t)res_boxes + 1, sizeof *o->res_state);
    if (!o->waiting || !o->res_state) {
        ad_open_state_free(o);
        return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory for the open sides' state");
    }
    return ad_ok();
}

void ad_open_state_free(ad_open_state *o)
{
    free(o->waiting);
    free(o->res_state);
    o->waiting = NULL;
    o->res_state = NULL;
}

void ad_stats_fold(ad_world *w, const ad_block_sums *b, size_t nblocks, double dt, float vmax2_new)
{
    ad_block_sums t;
    memset(&t, 0, sizeof t);
    for (size_t i = 0; i < nblocks; i++) {
        t.ke += b[i].ke;
        t.pe += b[i].pe;
        t.px += b[i].px;
        t.py += b[i].py;
        t.virial += b[i].virial;
        t.body_fx += b[i].body_fx;
        t.body_fy += b[i].body_fy;
        for (int k = 0; k < 4; k++) t.wall[k] += b[i].wall[k];
        t.vmax2 = fmaxf(t.vmax2, b[i].vmax2);
        t.max_overlap = fmaxf(t.max_overlap, b[i].max_overlap);
        t.nonfinite += b[i].nonfinite;
        t.skin_violations += b[i].skin_violations;
        t.left += b[i].left;
        t.res_removed += b[i].res_removed;
    }
    t.vmax2 = fmaxf(t.vmax2, vmax2_new);
    ad_stats *s = &w->stats;
    s->kinetic_energy = t.ke;
    s->potential_energy = t.pe;
    s->momentum_x = t.px;
    s->momentum_y = t.py;
    s->contact_virial = t.virial;
    s->max_overlap = t.max_overlap / w->def.radius;
    s->body_force_x = t.body_fx;
    s->body_force_y = t.body_fy;
    s->body_impulse_x += t.body_fx * dt;
    s->body_impulse_y += t.body_fy * dt;
    for (int k = 0; k < 4; k++) s->wall_impulse[k] += t.wall[k] * dt;
    s->kinetic_energy_integral += t.ke * dt;
    s->contact_virial_integral += t.virial * dt;
    s->skin_violations += t.skin_violations;
    s->left += t.left;
    s->reservoir_removed += t.res_removed;
    s->time += dt;
    s->step++;
    s->dt = ad_next_dt(w, sqrt((double)t.vmax2));
}

ad_status ad_world_step(ad_world *w, uint64_t n)
{
    if (!w) return ad_fail(AD_ERR_INVALID, "w", "world is NULL");
    if (n == 0 || (w->count == 0 && !ad_world_open(w))) return ad_ok(); /* nothing moves (nothing enters) */
    return w->ops->step(w, n);
}

void ad_world_set_interrupt(ad_world *w, const volatile int *flag)
{
    if (w) w->interrupt = flag;
}

ad_status ad_world_get_stats(const ad_world *w, ad_stats *out)
{
    if (!w || !out) return ad_fail(AD_ERR_INVALID, "stats", "world or output is NULL");
    if (w->ops->pull_stats) {
        ad_status st = w->ops->pull_stats((ad_world *)w);
        if (st.code) return st;
    }
    *out = w->stats;
    return ad_ok();
}

typedef struct id_slot {
    uint32_t id, slot;
} id_slot;

static int id_slot_cmp(const void *a, const void *b)
{
    uint32_t x = ((const id_slot *)a)->id, y = ((const id_slot *)b)->id;
    return x < y ? -1 : x > y;
}

ad_status ad_slot_order(const ad_state *s, const uint32_t *id, size_t slots, size_t count, int by_id, uint32_t **order)
{
    *order = NULL;
    int plain = slots == count;
    if (plain && by_id)
        for (size_t k = 0; k < slots && plain; k++) plain = id[k] == k;
    if (plain) return ad_ok();
    id_slot *v = malloc((slots + 1) * sizeof *v);
    uint32_t *o = malloc((slots + 1) * sizeof *o);
    if (!v || !o) {
        free(v);
        free(o);
        return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory reading %zu particles", slots);
    }
    size_t m = 0;
    for (size_t k = 0; k < slots; k++)
        if (!ad_is_dead(s[k])) v[m++] = (id_slot){id[k], (uint32_t)k};
    if (by_id) qsort(v, m, sizeof *v, id_slot_cmp);
    for (size_t k = 0; k < m; k++) o[k] = v[k].slot;
    free(v);
    *order = o;
    return ad_ok();
}

ad_status ad_world_read(const ad_world *w, int flags, size_t max, const ad_particle_out *out, size_t *count)
{
    if (!w || !out) return ad_fail(AD_ERR_INVALID, "w", "world or output is NULL");
    if ((flags & AD_READ_BY_ID) && max < w->count)
        return ad_fail(AD_ERR_INVALID, "max", "max = %zu: reading by id needs room for all %zu particles", max,
                       w->count);
    return w->ops->read(w, flags, max, out, count);
}

ad_status ad_world_read_particles(const ad_world *w, int flags, size_t max, ad_particle *state, uint32_t *id,
                                  float *pressure, float *virial, size_t *count)
{
    ad_particle_out out = {state, id, pressure, virial, NULL};
    return ad_world_read(w, flags, max, &out, count);
}
