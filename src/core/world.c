/* World lifecycle and the backend-free parts of a world: particles in, the fill, stats, read-back
 * (the definition and its checks: world_def.c). */
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

#if defined(AD_HAVE_MPI)
/* backend = mpi: the ranks' own backend (rank_backend): the plain pipeline on CPU cores, or a GPU each. */
static const ad_backend_ops *mpi_ranks_backend(const ad_world_def *def, ad_status *st)
{
    ad_backend r = def->rank_backend;
#if defined(AD_HAVE_CUDA)
    if (r == AD_BACKEND_AUTO) r = ad_cuda_device_count() > 0 ? AD_BACKEND_CUDA : AD_BACKEND_CPU;
    if (r == AD_BACKEND_CUDA) return &ad_mpi_gpu_backend;
#else
    if (r == AD_BACKEND_AUTO) r = AD_BACKEND_CPU;
    if (r == AD_BACKEND_CUDA) {
        *st = ad_fail(AD_ERR_BACKEND, "rank_backend", "rank_backend = cuda: this build of aerodem has no CUDA backend "
                      "(nvcc was not found at build time)");
        return NULL;
    }
#endif
    if (r != AD_BACKEND_CPU) {
        *st = ad_fail(AD_ERR_INVALID, "rank_backend", "rank_backend = %s: the ranks of backend = mpi run cpu or cuda",
                      ad_backend_name(r));
        return NULL;
    }
    return &ad_mpi_backend;
}
#endif

static const ad_backend_ops *pick_backend(const ad_world_def *def, ad_status *st)
{
    ad_backend b = def->backend;
    int three = def->dimensions == 3;
    *st = ad_ok();
    if (b == AD_BACKEND_REFERENCE) return three ? &ad_reference3_backend : &ad_reference_backend;
    if (b == AD_BACKEND_MPI) {
#if defined(AD_HAVE_MPI)
        return mpi_ranks_backend(def, st); /* they refuse by name what they do not run yet */
#else
        *st = ad_fail(AD_ERR_BACKEND, "backend", "backend = mpi: this build of aerodem has no MPI (libopenmpi-dev was not "
                      "found at build time)");
        return NULL;
#endif
    }
#if defined(AD_HAVE_CUDA)
    if (b == AD_BACKEND_CUDA || b == AD_BACKEND_AUTO) {
        if (ad_cuda_device_count() > 0) return three ? &ad_cuda3_backend : &ad_cuda_backend;
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
    return three ? &ad_cpu3_backend : &ad_cpu_backend;
}

static int b_mpi(const ad_backend_ops *ops)
{
#if defined(AD_HAVE_MPI) && defined(AD_HAVE_CUDA)
    if (ops == &ad_mpi_gpu_backend) return 1;
#endif
#if defined(AD_HAVE_MPI)
    return ops == &ad_mpi_backend;
#else
    (void)ops;
    return 0;
#endif
}

int ad_backend_describe(ad_backend b, char *buf, size_t n)
{
    if (buf && n) buf[0] = 0;
    if (b == AD_BACKEND_CPU) {
        if (buf && n) snprintf(buf, n, "the CPU (OpenMP)\n");
        return 1;
    }
    if (b == AD_BACKEND_REFERENCE) {
        if (buf && n) snprintf(buf, n, "the plain reference (one CPU thread)\n");
        return 1;
    }
    if (b != AD_BACKEND_CUDA) return -1;
#if defined(AD_HAVE_CUDA)
    if (!buf || n == 0) return ad_cuda_device_count();
    return ad_cuda_describe(buf, n);
#else
    return -1;
#endif
}

size_t ad_world_bytes_needed(const ad_world_def *def)
{
    ad_params p;
    if (ad_params_from_def(def, &p).code != AD_OK) return 0;
    ad_status st;
    const ad_backend_ops *ops = pick_backend(def, &st);
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
    const ad_backend_ops *ops = pick_backend(def, &st);
    if (!ops) return st;

    ad_world *w = calloc(1, sizeof *w);
    if (!w) return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory allocating the world");
    w->def = *def;
    w->params = p;
    w->ops = ops;
    double tc = ad_contact_time_undamped(def);
    w->dt_rule = (ad_dt_rule){def->adaptive_dt, def->dt, tc / def->contact_steps, def->max_move * def->radius};
    w->stats.contact_time = ad_contact_duration(
        0.5 * def->mass, def->stiffness, ad_damping_for_restitution(def->restitution, 0.5 * def->mass, def->stiffness));
    w->stats.grid_nx = (uint32_t)p.nx;
    w->stats.grid_ny = (uint32_t)p.ny;
    w->stats.grid_nz = (uint32_t)p.nz;
    w->stats.cell_size_x = p.cell_x;
    w->stats.cell_size_y = p.cell_y;
    w->stats.cell_size_z = p.dims == 3 ? p.cell_z : 0.0;
    w->stats.dimensions = p.dims;
    if (def->cell_capacity) {
        w->stats.cell_capacity = def->cell_capacity;
    } else if (p.dims == 3) {
        /* face-centred cubic packing of centres over the cell grown by a radius each side: one centre
         * per 4 sqrt(2) r^3 */
        double r = def->radius;
        double n = floor((p.cell_x + 2 * r) * (p.cell_y + 2 * r) * (p.cell_z + 2 * r) / (5.656854249492381 * r * r * r));
        w->stats.cell_capacity = (uint32_t)fmin(n + 1.0, 4294967295.0);
    } else {
        /* discs whose centres fit in a cell with no two closer than a diameter:
         * hexagonal packing of centres over the cell grown by a radius each side */
        double n = floor(ad_cell_packing(p.cell_x, p.cell_y, def->radius)) + 1.0;
        w->stats.cell_capacity = (uint32_t)fmin(n, 4294967295.0);
    }
    w->stats.ranks = 1;
    w->stats.rank_imbalance = 1.0;
    w->stats.backend = b_mpi(ops) ? AD_BACKEND_MPI : ops == &ad_cpu_backend || ops == &ad_cpu3_backend ? AD_BACKEND_CPU
                       : ops == &ad_reference_backend || ops == &ad_reference3_backend ? AD_BACKEND_REFERENCE
                                                      : AD_BACKEND_CUDA;
    w->stats.dt = ad_dt_next(&w->dt_rule, 0.0);

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
    ad_leaf_tree_free(&w->seg.tree_nodes);
    ad_triangles_free(&w->tri);
    free(w->fields.sums);
    ad_panels_free(&w->panels);
    free(w);
}

ad_status ad_world_add_particles(ad_world *w, const ad_particle *p, size_t n)
{
    if (!w) return ad_fail(AD_ERR_INVALID, "w", "world is NULL");
    if (w->params.dims == 3)
        return ad_fail(AD_ERR_INVALID, "dimensions", "ad_world_add_particles adds discs to 2D worlds: this world has "
                       "dimensions = 3 (use ad_world_add_particles3)");
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
    if (w->params.dims == 3) return ad_world_fill3(w, f, added);
    const ad_world_def *d = &w->def;
    double r = d->radius;
    double x0 = f->x0, x1 = f->x1, y0 = f->y0, y1 = f->y1;
    if (!isfinite(x0) || !isfinite(x1) || !isfinite(y0) || !isfinite(y1) || !(x1 > x0) || !(y1 > y0))
        return ad_fail(AD_ERR_INVALID, "fill.region", "fill region [%g, %g] x [%g, %g] is empty or not finite", x0, x1,
                       y0, y1);
    AD_TRY(ad_check_range("fill.area_fraction", f->area_fraction, 0.0, 1, 0.78,
                    "it must lie in (0, 0.78] (a jittered square lattice cannot pack denser)"));
    AD_TRY(ad_check_range("fill.temperature", f->temperature, 0.0, 0, DBL_MAX, "it must be >= 0 (m^2/s^2)"));
    double vf = hypot(f->vx, f->vy) + 10.0 * sqrt(f->temperature); /* the step squares speeds in float */
    if (!(vf * vf <= FLT_MAX))
        return ad_fail(AD_ERR_INVALID, "fill.velocity", "fill velocity (%g, %g) and temperature %g make speeds up to "
                       "%g m/s, whose square is beyond a float", f->vx, f->vy, f->temperature, vf);
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

ad_status ad_open_state_alloc(ad_open_state *o, uint32_t res_boxes, int dims)
{
    memset(o, 0, sizeof *o);
    if (dims == 3) o->waiting3 = malloc(AD_WAITING_MAX * sizeof *o->waiting3);
    else o->waiting = malloc(AD_WAITING_MAX * sizeof *o->waiting);
    o->res_boxes = res_boxes;
    o->res_state = calloc(2 * (size_t)res_boxes + 1, sizeof *o->res_state);
    if ((!o->waiting && !o->waiting3) || !o->res_state) {
        ad_open_state_free(o);
        return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory for the open sides' state");
    }
    return ad_ok();
}

void ad_open_state_free(ad_open_state *o)
{
    free(o->waiting);
    free(o->waiting3);
    free(o->res_state);
    o->waiting = NULL;
    o->waiting3 = NULL;
    o->res_state = NULL;
}

void ad_stats_fold(ad_world *w, const ad_step_sums *b, size_t nblocks, double dt, float vmax2_new)
{
    ad_step_sums t;
    memset(&t, 0, sizeof t);
    for (size_t i = 0; i < nblocks; i++) ad_step_sums_add(&t, &b[i], w->params.dims == 3 ? AD_SUMS3 : AD_SUMS);
    t.vmax2 = fmaxf(t.vmax2, vmax2_new);
    if (w->params.surfaces) ad_panels_fold(w, dt);
    ad_stats *s = &w->stats;
    ad_stats_add_step(s, &t, dt, &w->dt_rule, w->params.dims);
    s->max_overlap = t.max_overlap / w->def.radius;
    s->left += t.left;
    s->reservoir_removed += t.res_removed;
}

ad_status ad_world_step(ad_world *w, uint64_t n)
{
    if (!w) return ad_fail(AD_ERR_INVALID, "w", "world is NULL");
    if (n == 0) return ad_ok();
    if (w->count == 0 && !ad_world_open(w)) /* its clock would stand still: a caller would wait forever */
        return ad_fail(AD_ERR_INVALID, "count",
                       "the world holds no disc and has no open side for any to enter: nothing to step");
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

int ad_world_slabs(const ad_world *w, double *x, int max, unsigned long long *moves)
{
    if (moves) *moves = 0;
    if (!w || !x || max < 2) return 0;
#if defined(AD_HAVE_MPI)
#if defined(AD_HAVE_CUDA)
    if (w->ops == &ad_mpi_gpu_backend) return mpi_gpu_slab_edges(w, x, max, moves);
#endif
    if (b_mpi(w->ops)) return mpi_slab_edges(w, x, max, moves);
#endif
    x[0] = w->params.origin_x;
    x[1] = w->params.origin_x + (double)w->params.cell_x * w->params.nx;
    return 1;
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

void ad_particle_out_put(const ad_particle_out *out, size_t o, int dims, const float *x, const float *v, uint32_t id,
                         float pressure, float virial, const float *acc)
{
    if (out->state && dims == 2) out->state[o] = (ad_particle){x[0], x[1], v[0], v[1]};
    if (out->state3 && dims == 3) out->state3[o] = (ad_particle3){x[0], x[1], x[2], v[0], v[1], v[2]};
    if (out->id) out->id[o] = id;
    if (out->pressure) out->pressure[o] = pressure;
    if (out->virial) out->virial[o] = virial;
    if (out->accel)
        for (int k = 0; k < dims; k++) out->accel[(size_t)dims * o + (size_t)k] = acc[k];
}

ad_status ad_world_read(const ad_world *w, int flags, size_t max, const ad_particle_out *out, size_t *count)
{
    if (!w || !out) return ad_fail(AD_ERR_INVALID, "w", "world or output is NULL");
    if ((flags & AD_READ_BY_ID) && max < w->count)
        return ad_fail(AD_ERR_INVALID, "max", "max = %zu: reading by id needs room for all %zu particles", max,
                       w->count);
    if (w->params.dims == 3 && out->state)
        return ad_fail(AD_ERR_INVALID, "state", "a 3D world's spheres are read into state3 (ad_particle3), not state");
    if (w->params.dims == 2 && out->state3)
        return ad_fail(AD_ERR_INVALID, "state3", "a 2D world's discs are read into state (ad_particle), not state3");
    return w->ops->read(w, flags, max, out, count);
}

ad_status ad_world_read_particles(const ad_world *w, int flags, size_t max, ad_particle *state, uint32_t *id,
                                  float *pressure, float *virial, size_t *count)
{
    ad_particle_out out = {state, id, pressure, virial, NULL, NULL};
    return ad_world_read(w, flags, max, &out, count);
}
