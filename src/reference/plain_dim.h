/* The plain pipeline of DESIGN.md in one dimension (included by plain.h with AD_DIM 2, then 3; see
 * physics/dim.h): the world's arrays and steps 1 to 4 of a step, written once for discs and spheres.
 * The reference backend runs it on one thread in both dimensions (reference_backend.c, reference3.c);
 * the CPU backend's 3D worlds run it over threads (reference3.c) with their own gather in step 4
 * (ad_plain_gatherer, src/cpu/sphere_pass_cpu.h).
 *
 *   1. bin: every particle's cell (the dead cell after the grid's for a removed one), in parallel;
 *   2. scan: count the cells (32-bit counters) and take the exclusive prefix sum;
 *   3. scatter: a stable counting sort (a particle's slot is its cell's start plus its rank among
 *      the cell's particles in slot order), state, ids and accelerations moved together;
 *   4. interact + integrate: each particle gathers its own contacts (the stencil's cells, the body,
 *      the walls) and writes its new state, after step 5's boundaries, into the other buffer;
 *      symplectic Euler, Euler, velocity Verlet (drift before the bin, kick after the gather) or RK4
 *      (four gathers on the grid of the step's start). The sums are those of fixed blocks of
 *      AD_BLOCK slots, kinetic energy and momentum in eight partial sums by slot (ad_motion8).
 * Deterministic for any thread count: each particle writes only itself, the sort is serial and
 * stable, and the blocks are fixed. No include guard: it is meant to be included once a dimension. */
#include "../physics/dim.h"

#if AD_DIM == 2
#define AD_ACCEL ad_accel
#define AD_BODY_GRID(w) (&(w)->seg.grid)
#define AD_SNAP_STATE state
#define AD_SNAP_ACCEL accel
#else
#define AD_ACCEL ad_accel3
#define AD_BODY_GRID(w) (&(w)->tri.tree)
#define AD_SNAP_STATE state3
#define AD_SNAP_ACCEL accel3
#endif

typedef struct AD_D(ad_plain) {
    size_t cap, ncell;       /* ncell: the grid's cells and the dead cell after them (open.h) */
    size_t n;                /* slots in use: the particles, and those removed in the last pass until the next sort */
    int threads;
    AD_STATE *state, *spare; /* the particles in cell order; the scatter's and the pass's output */
    uint32_t *id, *id_spare;
    uint32_t *touch, *touch_spare; /* the contact states (panel.h), moved with the ids where surfaces are sampled */
    AD_ACCEL *acc, *acc_spare; /* the acceleration of the last force evaluation (Verlet's kick reads it) */
    float *pressure, *virial;  /* per slot, from the last force evaluation */
    AD_STATE *rk_in, *rk_out, *rk_sum; /* RK4: a stage's input and output, the weighted sum */
    uint32_t *cell_of, *count, *start; /* start: ncell + 1 entries */
    ad_step_sums *blocks;
    unsigned char *doomed; /* per slot: the reservoir's plan removes the particle in this step's pass */
    int primed;   /* Verlet: acc holds the forces of the current state */
    int dt_stale; /* particles were added: the next step's size comes from their speeds */
} AD_D(ad_plain);

/* Bytes a particle takes in the plain arrays: two states, ids and accelerations (double-buffered),
 * pressure, virial, its cell and its doomed flag; RK4 three states more. */
static inline size_t AD_D(ad_plain_per_particle)(ad_integrator integ)
{
    size_t b = 2 * sizeof(AD_STATE) + 4 * sizeof(uint32_t) + 2 * sizeof(AD_ACCEL) + 2 * sizeof(float) +
               sizeof(uint32_t) + 1;
    return integ == AD_INTEGRATOR_RK4 ? b + 3 * sizeof(AD_STATE) : b;
}

static inline size_t AD_D(ad_plain_bytes)(size_t capacity, size_t ncell, ad_integrator integ)
{
    return capacity * AD_D(ad_plain_per_particle)(integ) + (2 * ncell + 1) * sizeof(uint32_t) +
           ad_plain_blocks(capacity) * sizeof(ad_step_sums);
}

static inline void AD_D(ad_plain_free)(AD_D(ad_plain) *r)
{
    AD_FREE_EACH(r->state, r->spare, r->id, r->id_spare, r->touch, r->touch_spare, r->acc, r->acc_spare, r->pressure, r->virial, r->rk_in,
                 r->rk_out, r->rk_sum, r->cell_of, r->count, r->start, r->blocks, r->doomed);
}

/* The arrays of cap particles and ncell cells (the dead cell included); 0 when one failed (the rest freed). */
static inline int AD_D(ad_plain_alloc)(AD_D(ad_plain) *r, size_t cap, size_t ncell, ad_integrator integ)
{
    size_t c = cap ? cap : 1, rk = integ == AD_INTEGRATOR_RK4 ? c : 0;
    r->cap = cap;
    r->ncell = ncell;
    const struct {
        void **array;
        size_t count, size;
    } arrays[] = {
        {(void **)&r->state, c, sizeof(AD_STATE)},   {(void **)&r->spare, c, sizeof(AD_STATE)},
        {(void **)&r->id, c, 4},                     {(void **)&r->id_spare, c, 4},
        {(void **)&r->touch, c, 4},                  {(void **)&r->touch_spare, c, 4},
        {(void **)&r->acc, c, sizeof(AD_ACCEL)},     {(void **)&r->acc_spare, c, sizeof(AD_ACCEL)},
        {(void **)&r->pressure, c, 4},               {(void **)&r->virial, c, 4},
        {(void **)&r->cell_of, c, 4},                {(void **)&r->doomed, c, 1},
        {(void **)&r->count, ncell, 4},              {(void **)&r->start, ncell + 1, 4},
        {(void **)&r->blocks, ad_plain_blocks(c), sizeof(ad_step_sums)},
        {(void **)&r->rk_in, rk, sizeof(AD_STATE)},  {(void **)&r->rk_out, rk, sizeof(AD_STATE)},
        {(void **)&r->rk_sum, rk, sizeof(AD_STATE)},
    };
    int fail = 0;
    for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; k++)
        if (arrays[k].count) fail |= (*arrays[k].array = calloc(arrays[k].count, arrays[k].size)) == NULL;
    if (fail) AD_D(ad_plain_free)(r);
    return !fail;
}

/* ------------------------------------------------------ steps 1-3: the grid -- */

/* Step 1: every particle's cell; the centres outside the domain, for the statistics. */
static inline void AD_D(ad_plain_bin)(ad_world *w, AD_D(ad_plain) *r)
{
    const ad_params *P = &w->params;
    uint64_t outside = 0;
#pragma omp parallel for num_threads(r->threads) schedule(static) reduction(+ : outside)
    for (size_t i = 0; i < r->n; i++) {
        AD_STATE q = r->state[i];
        r->cell_of[i] = AD_D(ad_bin_cell)(P, q);
#define AD_M(c) q.c
        outside += !AD_D(ad_is_dead)(q) && AD_D(ad_outside_domain)(P, AD_LIST(AD_M));
#undef AD_M
    }
    w->stats.outside_grid = outside;
}

/* Step 3: a stable counting sort into cell order; the removed particles (dead cell, last) drop off the end. */
static inline void AD_D(ad_plain_scatter)(ad_world *w, AD_D(ad_plain) *r)
{
    for (size_t i = 0; i < r->n; i++) {
        uint32_t k = r->count[r->cell_of[i]]++;
        r->spare[k] = r->state[i];
        r->id_spare[k] = r->id[i];
        r->acc_spare[k] = r->acc[i];
        if (w->params.surfaces) r->touch_spare[k] = r->touch[i];
    }
    uint32_t *t = r->touch;
    if (w->params.surfaces) r->touch = r->touch_spare, r->touch_spare = t;
    AD_STATE *s = r->state;
    r->state = r->spare, r->spare = s;
    uint32_t *id = r->id;
    r->id = r->id_spare, r->id_spare = id;
    AD_ACCEL *a = r->acc;
    r->acc = r->acc_spare, r->acc_spare = a;
    size_t alive = r->start[r->ncell - 1];
    if (alive != r->n) r->n = w->count = w->stats.count = alive;
}

/* Steps 1-3, timed. */
static inline void AD_D(ad_plain_sort)(ad_world *w, AD_D(ad_plain) *r)
{
    double t0 = ad_plain_now();
    AD_D(ad_plain_bin)(w, r);
    double t1 = ad_plain_now();
    ad_plain_scan(w, r->cell_of, r->n, r->count, r->start, r->ncell);
    double t2 = ad_plain_now();
    AD_D(ad_plain_scatter)(w, r);
    w->stats.phase_seconds[AD_PHASE_BIN] += t1 - t0;
    w->stats.phase_seconds[AD_PHASE_SCAN] += t2 - t1;
    w->stats.phase_seconds[AD_PHASE_SCATTER] += ad_plain_now() - t2;
}

/* ---------------------------------------------- step 4: gather and integrate -- */

/* Slot s's contacts, the particle at `me` (the others' states in `in`), in the cell of `at` (the state
 * the grid was built from): the stencil's cells, the body, the walls. */
static inline AD_ACCUM AD_D(ad_plain_gather)(const ad_world *w, const AD_D(ad_plain) *r, const AD_STATE *in, size_t s,
                                             AD_STATE at, AD_STATE me)
{
    const ad_params *P = &w->params;
#define AD_M(k) int c##k = ad_cell_coord(at.k, P->origin_##k, P->inv_cell_##k, P->n##k);
    AD_EACH(AD_M)
#undef AD_M
    AD_ACCUM a;
    AD_D(ad_gather_all)(P, AD_BODY_GRID(w), r->start, in, (uint32_t)s, me, AD_PASS(c), &a);
    return a;
}

/* A faster gather with the plain one's sums (the CPU backend's 3D one, src/cpu/sphere_gather_cpu.h): the
 * contacts of slot s as ad_plain_gather finds them, into *a; ctx is its own. A pass run with NULL uses
 * ad_plain_gather. */
typedef struct AD_D(ad_plain_gatherer) {
    void (*gather)(const void *ctx, const ad_world *w, const AD_D(ad_plain) *r, const AD_STATE *in, size_t s,
                   AD_STATE at, AD_STATE me, AD_ACCUM *a);
    const void *ctx;
} AD_D(ad_plain_gatherer);

static inline void AD_D(ad_plain_gather_by)(const AD_D(ad_plain_gatherer) *g, const ad_world *w,
                                            const AD_D(ad_plain) *r, const AD_STATE *in, size_t s, AD_STATE at,
                                            AD_STATE me, AD_ACCUM *a)
{
    if (!g) *a = AD_D(ad_plain_gather)(w, r, in, s, at, me);
    else g->gather(g->ctx, w, r, in, s, at, me, a);
}

/* The acceleration of a force evaluation: contacts over the mass, and gravity. */
static inline AD_ACCEL AD_D(ad_plain_accel)(const ad_params *P, const AD_ACCUM *a)
{
#define AD_M(c) a->f##c *P->inv_mass + P->g##c,
    AD_ACCEL g = {AD_EACH(AD_M)};
#undef AD_M
    return g;
}

/* A force evaluation's observables: the slot's pressure and virial, the block's contact sums. */
static inline void AD_D(ad_plain_observe)(AD_D(ad_plain) *r, size_t s, const AD_ACCUM *a, ad_step_sums *b)
{
    r->pressure[s] = a->pressure;
    r->virial[s] = a->virial;
    /* no contact (most particles of a gas): every sum below is +0, and adding +0 changes none (the
     * block's sums start at +0 and never become -0); max_overlap may be -0, so it is taken as ever */
    if (a->pressure == 0.0f && a->energy == 0.0f) {
        b->max_overlap = b->max_overlap > a->max_overlap ? b->max_overlap : a->max_overlap;
        return;
    }
    b->v[AD_SUM_PE] += a->energy;
    b->v[AD_SUM_VIRIAL] += a->virial;
    b->v[AD_SUM_BODY_FX] += a->body_fx;
    b->v[AD_SUM_BODY_FY] += a->body_fy;
#if AD_DIM == 3
    b->v[AD_SUM_BODY_FZ] += a->body_fz;
    b->v[AD_SUM_BODY_TX] += a->body_tx;
    b->v[AD_SUM_BODY_TY] += a->body_ty;
    b->v[AD_SUM_BODY_TZ] += a->body_tz;
#endif
    for (int k = 0; k < AD_WALLS; k++) b->v[AD_SUM_WALL0 + k] += a->wall[k];
    b->max_overlap = b->max_overlap > a->max_overlap ? b->max_overlap : a->max_overlap;
}

/* Slot s's new state nw (after step 5) into the spare buffer; its fate counted (open.h), its motion
 * summed where kept, in lane `lane` of the motion sums (ad_motion8_add). */
static inline void AD_D(ad_plain_finish)(const ad_world *w, AD_D(ad_plain) *r, size_t s, unsigned lane, AD_STATE nw,
                                         int fate, ad_step_sums *b, ad_motion8 *m)
{
    b->left += fate == AD_LEFT;
    b->res_removed += fate == AD_RESERVOIR_REMOVED;
    r->spare[s] = nw;
    if (!fate) AD_D(ad_motion8_add)(m, b, &w->params, nw, lane);
}

/* Slot s against the surfaces (surface.h), evaluated at `at` with acceleration g: its panels' sums, its
 * contact state, a re-emission's new velocity into *out and its forces into the block's sums. */
static inline void AD_D(ad_plain_surface)(const ad_world *w, AD_D(ad_plain) *r, size_t s, AD_STATE at, AD_ACCEL g,
                                          float dt, AD_STATE *out, ad_step_sums *b)
{
    const ad_params *P = &w->params;
    ad_panel_hits h;
#if AD_DIM == 2
    ad_seg_hits(P, &w->seg.grid, at.x, at.y, at.vx, at.vy, &h);
    ad_surface_disc2(P, w->seg.segs, &h, &r->touch[s], r->id[s], w->stats.step, at, g.ax, g.ay, dt, out,
                     w->panels.fix, b);
#else
    ad_tri_hits(P, &w->tri.tree, ad_v3(at.x, at.y, at.z), ad_v3(at.vx, at.vy, at.vz), &h);
    ad_surface_disc3(P, w->tri.tris, &h, &r->touch[s], r->id[s], w->stats.step, at, g.ax, g.ay, g.az, dt, out,
                     w->panels.fix, b);
#endif
}

/* Verlet before its first drift: the forces of the current state (nothing moves). */
static inline void AD_D(ad_plain_verlet_prime)(ad_world *w, AD_D(ad_plain) *r)
{
#pragma omp parallel for num_threads(r->threads) schedule(static)
    for (size_t s = 0; s < r->n; s++) {
        AD_ACCUM a = AD_D(ad_plain_gather)(w, r, r->state, s, r->state[s], r->state[s]);
        r->acc[s] = AD_D(ad_plain_accel)(&w->params, &a);
        r->pressure[s] = a.pressure;
        r->virial[s] = a.virial;
    }
    r->primed = 1;
}

/* Verlet's drift, before the bin, with the last acceleration; wraps only (removals wait for the kick). */
static inline void AD_D(ad_plain_verlet_drift)(ad_world *w, AD_D(ad_plain) *r, float dt)
{
#pragma omp parallel for num_threads(r->threads) schedule(static)
    for (size_t s = 0; s < r->n; s++) {
        AD_ACCEL a = r->acc[s];
        r->state[s] = AD_D(ad_wrap_state)(&w->params, AD_D(ad_verlet_drift)(r->state[s], AD_PASS(a.a), dt));
    }
}

/* Step 4 for slot s with one force evaluation (symplectic Euler, Euler, or Verlet's kick): its gather,
 * its observables, the surfaces, the integrator, step 5's boundaries, its new state into the spare
 * buffer; its sums into *sums, its motion into lane `lane` of *m; the contacts from gather `by` (NULL: the
 * plain one). The plain pipeline's blocks and the MPI backend's column groups (src/mpi) both run it, so
 * the physics of a slot is written once. */
static inline void AD_D(ad_plain_pass_slot)(ad_world *w, AD_D(ad_plain) *r, size_t s, unsigned lane, float dt,
                                            ad_step_sums *sums, ad_motion8 *m, const AD_D(ad_plain_gatherer) *by)
{
    const ad_params *P = &w->params;
    ad_integrator integ = w->def.integrator;
    AD_STATE me = r->state[s], nw;
    AD_ACCUM a;
    AD_D(ad_plain_gather_by)(by, w, r, r->state, s, me, me, &a);
    AD_D(ad_plain_observe)(r, s, &a, sums);
    AD_ACCEL g = AD_D(ad_plain_accel)(P, &a), old = r->acc[s];
    if (P->surfaces) AD_D(ad_plain_surface)(w, r, s, me, g, dt, &me, sums); /* a re-emission changes me.v */
    if (integ == AD_INTEGRATOR_VERLET) nw = AD_D(ad_verlet_kick)(me, AD_PASS(old.a), AD_PASS(g.a), dt);
    else if (integ == AD_INTEGRATOR_EULER) nw = AD_D(ad_step_euler)(me, AD_PASS(g.a), dt);
    else nw = AD_D(ad_step_symplectic)(me, AD_PASS(g.a), dt);
    r->acc[s] = g;
    int fate;
    nw = AD_D(ad_apply_boundaries)(P, nw, r->id, s, w->stats.step, dt, r->doomed[s], &fate);
    AD_D(ad_plain_finish)(w, r, s, lane, nw, fate, sums, m);
}

/* Step 4 over block b, slot by slot (ad_plain_pass_slot). */
static inline void AD_D(ad_plain_pass_block)(ad_world *w, AD_D(ad_plain) *r, size_t b, float dt,
                                             const AD_D(ad_plain_gatherer) *g)
{
    ad_step_sums *sums = memset(&r->blocks[b], 0, sizeof r->blocks[b]);
    ad_motion8 m;
    memset(&m, 0, sizeof m);
    size_t s0 = b * AD_BLOCK, s1 = s0 + AD_BLOCK < r->n ? s0 + AD_BLOCK : r->n;
    for (size_t s = s0; s < s1; s++) AD_D(ad_plain_pass_slot)(w, r, s, (unsigned)(s - s0), dt, sums, &m, g);
    AD_D(ad_motion8_fold)(&m, sums);
}

/* RK4 stage k for slot s: its gather on the grid of the step's start (cells from the base state), the
 * other particles at the stage (`in`: the state at k = 0, else rk_in). Stage 0's forces are the observed
 * ones; stages 0-2 write rk_out, stage 3 the step (boundaries, surfaces, its fate and motion in lane
 * `lane` of *m); the contacts from gather `by` (NULL: the plain one). The plain blocks and the MPI backend's
 * column groups both run it. */
static inline void AD_D(ad_plain_rk4_slot)(ad_world *w, AD_D(ad_plain) *r, size_t s, unsigned lane, float dt, int k,
                                           ad_step_sums *sums, ad_motion8 *m, const AD_D(ad_plain_gatherer) *by)
{
    const ad_params *P = &w->params;
    const AD_STATE *in = k == 0 ? r->state : r->rk_in;
    AD_STATE base = r->state[s];
    AD_ACCUM a;
    AD_D(ad_plain_gather_by)(by, w, r, in, s, base, in[s], &a);
    AD_ACCEL g = AD_D(ad_plain_accel)(P, &a);
    if (k == 0) {
        AD_D(ad_plain_observe)(r, s, &a, sums);
        r->acc[s] = g;
    }
    AD_STATE nx = AD_D(ad_rk4_stage)(base, in[s], AD_PASS(g.a), dt, k, &r->rk_sum[s]);
    if (k < 3) {
        r->rk_out[s] = nx;
        return;
    }
    int fate;
    nx = AD_D(ad_apply_boundaries)(P, nx, r->id, s, w->stats.step, dt, r->doomed[s], &fate);
    /* the surfaces at the step's start (stage 0's contacts, the body's sums'); a re-emission replaces
     * the velocity the step ends with */
    if (P->surfaces) AD_D(ad_plain_surface)(w, r, s, base, r->acc[s], dt, &nx, sums);
    float skin = (float)w->dt_rule.move;
    if (fate == AD_KEPT) sums->skin_violations += AD_D(ad_moved_sq)(P, nx, base) > skin * skin;
    AD_D(ad_plain_finish)(w, r, s, lane, nx, fate, sums, m);
}

/* RK4 stage k of block b, slot by slot (ad_plain_rk4_slot); stage 0 clears the block's sums. */
static inline void AD_D(ad_plain_rk4_block)(ad_world *w, AD_D(ad_plain) *r, size_t b, float dt, int k,
                                            const AD_D(ad_plain_gatherer) *g)
{
    ad_step_sums *sums = &r->blocks[b];
    if (k == 0) memset(sums, 0, sizeof *sums);
    ad_motion8 m;
    memset(&m, 0, sizeof m);
    size_t s0 = b * AD_BLOCK, s1 = s0 + AD_BLOCK < r->n ? s0 + AD_BLOCK : r->n;
    for (size_t s = s0; s < s1; s++) AD_D(ad_plain_rk4_slot)(w, r, s, (unsigned)(s - s0), dt, k, sums, &m, g);
    if (k == 3) AD_D(ad_motion8_fold)(&m, sums);
}

/* Step 4 over every block (in parallel; each block's sums its own) with gather g (NULL: the plain
 * one), then the pass's output becomes the current state. */
static inline void AD_D(ad_plain_interact_by)(ad_world *w, AD_D(ad_plain) *r, float dt,
                                              const AD_D(ad_plain_gatherer) *g)
{
    long nb = (long)ad_plain_blocks(r->n);
    if (w->def.integrator != AD_INTEGRATOR_RK4) {
#pragma omp parallel for num_threads(r->threads) schedule(dynamic, 1)
        for (long b = 0; b < nb; b++) AD_D(ad_plain_pass_block)(w, r, (size_t)b, dt, g);
    } else {
        for (int k = 0; k < 4; k++) {
#pragma omp parallel for num_threads(r->threads) schedule(dynamic, 1)
            for (long b = 0; b < nb; b++) AD_D(ad_plain_rk4_block)(w, r, (size_t)b, dt, k, g);
            AD_STATE *t = r->rk_in; /* the stage just written is the next one's input */
            r->rk_in = r->rk_out, r->rk_out = t;
        }
    }
    AD_STATE *t = r->state;
    r->state = r->spare, r->spare = t;
}

/* Step 4 with the plain gather. */
static inline void AD_D(ad_plain_interact)(ad_world *w, AD_D(ad_plain) *r, float dt)
{
    AD_D(ad_plain_interact_by)(w, r, dt, NULL);
}

/* The largest speed squared of the particles in slots 0..n-1 (the step's size after an addition). */
static inline float AD_D(ad_plain_vmax_sq)(const AD_D(ad_plain) *r)
{
    float v2 = 0.0f;
    for (size_t s = 0; s < r->n; s++) {
        AD_STATE q = r->state[s];
#define AD_M(c) q.v##c *q.v##c
        v2 = fmaxf(v2, AD_SUM(AD_M));
#undef AD_M
    }
    return v2;
}

/* A checkpoint's snapshot of the live particles, copied (owned) in slot order: a removed one holds its
 * slot until the next sort. The caller adds the free stream's state. */
static inline ad_status AD_D(ad_plain_export)(const ad_world *w, const AD_D(ad_plain) *r, ad_snapshot *s)
{
    memset(s, 0, sizeof *s);
    size_t n = w->count, m = 0;
    s->primed = r->primed;
    s->owned = 1;
    s->AD_SNAP_STATE = malloc(n * sizeof(AD_STATE) + 1);
    s->id = malloc(n * sizeof *s->id + 1);
    s->touch = malloc(n * sizeof *s->touch + 1);
    s->pressure = malloc(n * sizeof *s->pressure + 1);
    s->virial = malloc(n * sizeof *s->virial + 1);
    s->AD_SNAP_ACCEL = malloc(n * sizeof(AD_ACCEL) + 1);
    if (!s->AD_SNAP_STATE || !s->id || !s->touch || !s->pressure || !s->virial || !s->AD_SNAP_ACCEL) {
        ad_snapshot_free(s);
        return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory for a snapshot of %zu particles", n);
    }
    for (size_t k = 0; k < r->n && m < n; k++) {
        if (AD_D(ad_is_dead)(r->state[k])) continue;
        s->AD_SNAP_STATE[m] = r->state[k];
        s->id[m] = r->id[k];
        s->touch[m] = r->touch[k];
        s->pressure[m] = r->pressure[k];
        s->virial[m] = r->virial[k];
        s->AD_SNAP_ACCEL[m++] = r->acc[k];
    }
    s->n = m;
    return ad_ok();
}

/* The particles of a snapshot (checked against the capacity by the caller) into the arrays. */
static inline void AD_D(ad_plain_import)(AD_D(ad_plain) *r, const ad_snapshot *s)
{
    memcpy(r->state, s->AD_SNAP_STATE, s->n * sizeof *r->state);
    memcpy(r->id, s->id, s->n * sizeof *r->id);
    if (s->touch) memcpy(r->touch, s->touch, s->n * sizeof *r->touch);
    else memset(r->touch, 0, s->n * sizeof *r->touch);
    memcpy(r->pressure, s->pressure, s->n * sizeof *r->pressure);
    memcpy(r->virial, s->virial, s->n * sizeof *r->virial);
    memcpy(r->acc, s->AD_SNAP_ACCEL, s->n * sizeof *r->acc);
    r->n = s->n;
    r->primed = s->primed;
    r->dt_stale = 0;
}

/* After spheres (discs) were added, the next step's size from their largest speed. */
static inline void AD_D(ad_plain_refresh_dt)(ad_world *w, AD_D(ad_plain) *r)
{
    if (!r->dt_stale) return;
    w->stats.dt = ad_dt_next(&w->dt_rule, sqrt((double)AD_D(ad_plain_vmax_sq)(r)));
    r->dt_stale = 0;
}

/* The step's end: a run whose particles reached a non-finite state is refused (AD_ERR_UNSTABLE). */
static inline ad_status AD_D(ad_plain_finite)(const ad_world *w, const AD_D(ad_plain) *r, size_t nb, float dt)
{
    uint64_t bad = 0;
    for (size_t b = 0; b < nb; b++) bad += r->blocks[b].nonfinite;
    if (!bad) return ad_ok();
    return ad_fail(AD_ERR_UNSTABLE, "dt", "step %llu: %llu %s reached a non-finite position or velocity (the step of "
                   "%g s is too large for the stiffness, or %s were placed overlapping)",
                   (unsigned long long)w->stats.step, (unsigned long long)bad, AD_DIM == 3 ? "spheres" : "discs",
                   (double)dt, AD_DIM == 3 ? "spheres" : "discs");
}

/* Slot s in a field sample: added to the probe's sums `probe` where it counts there, and its field cell
 * returned (-1: none; a removed particle falls in no cell and outside the probe) with the values it adds
 * to that cell's sums in v, from the observables of the last force evaluation. */
static inline int AD_D(ad_plain_sample_slot)(const ad_field_grid *fg, const AD_D(ad_plain) *r, size_t s,
                                             double *probe, double v[AD_FS_COUNT_DIM(AD_DIM)])
{
    AD_STATE q = r->state[s];
    if (AD_D(ad_in_probe)(fg, q)) {
        double u[AD_PS_COUNT];
        AD_D(ad_probe_values)(fg, q, u);
        for (int k = 0; k < AD_PS_COUNT; k++) probe[k] += u[k];
    }
#define AD_M(c) q.c
    int cell = AD_D(ad_field_cell)(fg, AD_LIST(AD_M));
#undef AD_M
    if (cell >= 0) AD_D(ad_field_values)(q, r->virial[s], r->pressure[s], AD_PASS(r->acc[s].a), v);
    return cell;
}

/* Step 6's field sample: the current particles added to the field sums and the probe's in slot order
 * (physics/fields.h). */
static inline void AD_D(ad_plain_sample_fields)(ad_world *w, const AD_D(ad_plain) *r)
{
    ad_fields *f = &w->fields;
    double *probe = ad_field_probe_sums(f);
    for (size_t s = 0; s < r->n; s++) {
        double v[AD_FS_COUNT_DIM(AD_DIM)];
        int cell = AD_D(ad_plain_sample_slot)(&f->grid, r, s, probe, v);
        if (cell < 0) continue;
        double *dst = f->sums + (size_t)cell * AD_FS_COUNT_DIM(AD_DIM);
        for (int k = 0; k < AD_FS_COUNT_DIM(AD_DIM); k++) dst[k] += v[k];
    }
    f->samples++;
    if (f->grid.probe) f->probe_samples++;
}

/* Verlet's prime and drift, then steps 1-3: what comes before the pass. */
static inline void AD_D(ad_plain_before_pass)(ad_world *w, AD_D(ad_plain) *r, float dt)
{
    if (w->def.integrator == AD_INTEGRATOR_VERLET) {
        if (!r->primed) {
            AD_D(ad_plain_sort)(w, r);
            AD_D(ad_plain_verlet_prime)(w, r);
        }
        AD_D(ad_plain_verlet_drift)(w, r, dt);
    }
    AD_D(ad_plain_sort)(w, r);
}

#undef AD_ACCEL
#undef AD_BODY_GRID
#undef AD_SNAP_STATE
#undef AD_SNAP_ACCEL
#include "../physics/dim_end.h"
