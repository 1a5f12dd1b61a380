/* The plain reference backend (backend = reference) for 2D worlds: the grid pipeline of DESIGN.md, one thread,
 * slow on purpose (3D worlds: reference3.c).
 *
 * What it is for. This is the plainest correct implementation of a step, the yardstick the fast
 * backends are measured against (tests/test_reference.c compares the optimised CPU backend and the
 * CUDA backend with it disc by disc), as llm.c's train_gpt2.c is for its CUDA code. It calls only
 * the shared physics headers (src/physics/: the cell index, the contact law, the gather, the
 * integrators, the segments, the open sides and the reservoir, room for new discs, field sampling)
 * and the core's fold of the statistics. It has no threads, no SIMD, no prefilter (no quiet test,
 * no screen), no fused bin, no 8-bit counters: every step bins every disc, scans, scatters, and
 * gathers every disc over its 3x3 cells, the body's segments and the walls.
 *
 * One step, as DESIGN.md states it (steps 1 to 4 are plain_dim.h's, written once for both dimensions):
 *   1. bin: cell_of[i] = the disc's cell (the dead cell after the grid's for a removed disc);
 *   2. scan: count[cell]++ (32-bit counters), start = the exclusive prefix sum of count;
 *   3. scatter: disc i goes to slot start[cell] + (its rank among its cell's discs in index
 *      order): a stable counting sort, the state, ids and accelerations moved together;
 *   4. interact + integrate: each disc sums its own contacts (ad_gather_all) and writes its new
 *      state into the other buffer; symplectic Euler, Euler, velocity Verlet (drift before the
 *      bin, kick after the gather) or RK4 (four gathers on the grid of the step's start);
 *   5. boundaries: ad_apply_boundaries (periodic wraps, removal past open sides, the reservoir);
 *      then the free stream's entering discs and the reservoir's additions, judged for room;
 *   6. observe: block sums folded by ad_stats_fold (the next dt), fields every `interval` steps.
 *
 * The sums are those of the optimised CPU backend, in the same order: discs in cell order, blocks
 * of AD_BLOCK slots, a block's kinetic energy and momentum in eight partial sums by slot (its
 * AVX2 tail adds eight discs at once). So the two agree bit for bit, the strongest test there is.
 * Refused: broad_phase = bvh (the reference is the grid pipeline; test_bvh checks the tree). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/world_internal.h"
#include "../physics/fields.h"
#include "../physics/open.h"
#include "../physics/room.h"
#include "plain.h"

typedef struct ref_world {
    ad_plain g;       /* the discs and the pipeline's arrays (plain_dim.h) */
    ad_open_state open;
    ad_plain_spots sp; /* step 5's new discs and the reservoir's additions (plain_open_dim.h) */
} ref_world;

/* ------------------------------------------------------------- the world -- */

static size_t ref_cells(const ad_params *p) { return (size_t)p->nx * (size_t)p->ny + 1; }

static size_t ref_bytes_needed(const ad_world_def *d, const ad_params *p)
{
    return ad_plain_bytes(d->capacity, ref_cells(p), d->integrator) + sizeof(ref_world);
}

static void ref_destroy(ad_world *w)
{
    ref_world *r = w->impl;
    if (!r) return;
    ad_plain_free(&r->g);
    ad_plain_spots_free(&r->sp);
    ad_open_state_free(&r->open);
    free(r);
    w->impl = NULL;
}

static ad_status ref_create(ad_world *w)
{
    const ad_world_def *d = &w->def;
    if (d->broad_phase == AD_BROAD_PHASE_BVH)
        return ad_fail(AD_ERR_INVALID, "broad_phase",
                       "backend = reference does not run broad_phase = bvh: the reference is the grid pipeline of "
                       "DESIGN.md (use broad_phase = grid, or backend = cpu for the BVH)");
    size_t need = ref_bytes_needed(d, &w->params);
    if (need > ad_host_bytes_available())
        return ad_fail(AD_ERR_NO_MEMORY, "capacity", "capacity: the world needs %zu bytes of host memory (%zu particles "
                       "x %zu bytes) but less is available", need, d->capacity, ad_plain_per_particle(d->integrator));
    ref_world *r = calloc(1, sizeof *r);
    if (!r) return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory");
    w->impl = r;
    w->stats.threads = 1;
    w->stats.cell_counter_bits = 32;
    r->g.threads = 1;
    int ok = ad_plain_alloc(&r->g, d->capacity, ref_cells(&w->params), d->integrator);
    ok = ad_plain_spots_alloc(&r->sp, w->params.res_boxes) && ok;
    ad_status st = !ok
                       ? ad_fail(AD_ERR_NO_MEMORY, "capacity", "capacity: allocating %zu bytes for the world failed", need)
                       : ad_open_state_alloc(&r->open, (uint32_t)w->params.res_boxes, 2);
    if (st.code) ref_destroy(w);
    return st;
}

static ad_status ref_add_particles(ad_world *w, const ad_particle *p, size_t n)
{
    ref_world *r = w->impl;
    if (r->g.n + n > r->g.cap) /* removed discs still hold their slots until the next sort */
        return ad_fail(AD_ERR_CAPACITY, "capacity", "capacity: adding %zu particles to %zu slots in use exceeds %zu",
                       n, r->g.n, r->g.cap);
    for (size_t i = 0; i < n; i++) {
        size_t s = r->g.n++;
        r->g.state[s] = ad_wrap_state(&w->params, (ad_state){p[i].x, p[i].y, p[i].vx, p[i].vy});
        r->g.id[s] = r->open.next_id++;
        r->g.touch[s] = 0;
        r->g.acc[s] = (ad_accel){0.0f, 0.0f};
        r->g.pressure[s] = r->g.virial[s] = 0.0f;
    }
    r->g.primed = 0;
    r->g.dt_stale = 1;
    return ad_ok();
}

static ad_status ref_set_segments(ad_world *w)
{
    ((ref_world *)w->impl)->g.primed = 0;
    return ad_ok();
}

/* ------------------------------------------------------- step 6 and the step -- */

static ad_status one_step(ad_world *w, ref_world *r, float dt)
{
    ad_plain_before_pass(w, &r->g, dt);
    if (w->params.res_boxes) ad_plain_reservoir_plan(w, &r->g, &r->open, &r->sp, dt);
    double t0 = ad_plain_now();
    size_t nb = ad_plain_blocks(r->g.n);
    ad_plain_interact(w, &r->g, dt);
    memset(r->g.doomed, 0, r->g.n);
    size_t removed = 0;
    for (size_t b = 0; b < nb; b++) removed += r->g.blocks[b].left + r->g.blocks[b].res_removed;
    float v2_new = 0.0f;
    ad_status st = ad_world_open(w) ? ad_plain_enter(w, &r->g, &r->open, &r->sp, dt, &v2_new) : ad_ok();
    ad_stats_fold(w, r->g.blocks, nb, dt, v2_new);
    if (ad_world_open(w)) w->count = w->stats.count = r->g.n - removed;
    w->stats.phase_seconds[AD_PHASE_INTERACT] += ad_plain_now() - t0;
    if (w->fields.enabled && w->stats.step % w->fields.def.interval == 0) ad_plain_sample_fields(w, &r->g);
    AD_TRY(ad_plain_finite(w, &r->g, nb, dt));
    return st;
}

static ad_status ref_step(ad_world *w, uint64_t nsteps)
{
    ref_world *r = w->impl;
    ad_plain_refresh_dt(w, &r->g);
    for (uint64_t k = 0; k < nsteps; k++) {
        int stop = w->interrupt && *w->interrupt;
        AD_TRY(one_step(w, r, (float)w->stats.dt));
        if (stop) break;
    }
    return ad_ok();
}

/* ------------------------------------------------- read-back and checkpoints -- */

static ad_status ref_read(const ad_world *w, int flags, size_t max, const ad_particle_out *out, size_t *count)
{
    const ref_world *r = w->impl;
    size_t n = w->count < max ? w->count : max;
    uint32_t *order;
    AD_TRY(ad_slot_order(r->g.state, r->g.id, r->g.n, w->count, (flags & AD_READ_BY_ID) != 0, &order));
    for (size_t o = 0; o < n; o++) {
        size_t k = order ? order[o] : o;
        const ad_state q = r->g.state[k];
        ad_particle_out_put(out, o, 2, (const float[2]){q.x, q.y}, (const float[2]){q.vx, q.vy}, r->g.id[k],
                            r->g.pressure[k], r->g.virial[k], (const float[2]){r->g.acc[k].ax, r->g.acc[k].ay});
    }
    free(order);
    if (count) *count = n;
    return ad_ok();
}

/* The live discs copied out (plain_dim.h); the open sides' state is the world's own (not owned). */
static ad_status ref_export(const ad_world *w, ad_snapshot *s)
{
    const ref_world *r = w->impl;
    AD_TRY(ad_plain_export(w, &r->g, s));
    s->open = r->open;
    return ad_ok();
}

static ad_status ref_import(ad_world *w, const ad_snapshot *s)
{
    ref_world *r = w->impl;
    if (s->n > r->g.cap) return ad_fail(AD_ERR_CAPACITY, "capacity", "capacity: the snapshot holds %zu discs", s->n);
    AD_TRY(ad_plain_import_open(&r->open, s));
    ad_plain_import(&r->g, s);
    return ad_ok();
}

const ad_backend_ops ad_reference_backend = {
    .name = "reference",
    .create = ref_create,
    .destroy = ref_destroy,
    .add_particles = ref_add_particles,
    .set_segments = ref_set_segments,
    .step = ref_step,
    .read = ref_read,
    .export_state = ref_export,
    .import_state = ref_import,
    .fields_to_host = NULL,
    .fields_to_device = NULL,
    .pull_stats = NULL,
    .bytes_needed = ref_bytes_needed,
};
