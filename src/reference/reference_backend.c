/* The plain reference backend (backend = reference): the grid pipeline of DESIGN.md, one thread, slow on purpose.
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
 * One step, as DESIGN.md states it:
 *   1. bin: cell_of[i] = the disc's cell (the dead cell after the grid's for a removed disc),
 *      count[cell]++ (32-bit counters, cleared with a memset);
 *   2. scan: start = the exclusive prefix sum of count, start[ncell] = the total;
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
#include <time.h>

#include "../core/world_internal.h"
#include "../physics/fields.h"
#include "../physics/gather.h"
#include "../physics/integrate.h"
#include "../physics/open.h"
#include "../physics/room.h"

typedef struct ref_world {
    size_t cap, ncell;       /* ncell: the grid's cells and the dead cell after them (open.h) */
    size_t n;                /* slots in use: the discs, and those removed in the last pass until the next sort */
    ad_state *state, *spare; /* the discs in cell order; the scatter's and the pass's output */
    uint32_t *id, *id_spare;
    ad_accel *acc, *acc_spare; /* the acceleration of the last force evaluation (Verlet's kick reads it) */
    float *pressure, *virial;  /* per slot, from the last force evaluation */
    ad_state *rk_in, *rk_out, *rk_sum; /* RK4: a stage's input and output, the weighted sum */
    uint32_t *cell_of, *count, *start; /* start: ncell + 1 entries */
    ad_step_sums *blocks;
    unsigned char *doomed; /* per slot: the reservoir's plan removes the disc in this step's pass */
    uint32_t *res_add;     /* per reservoir box: the discs to add after the pass */
    ad_open_state open;
    ad_entry *entries; /* a step's entering discs: the waiting ones, then the new ones */
    ad_state *spots;   /* where the step's new discs would go: the entries', then the reservoir's */
    int *spot_box;     /* per spot: its reservoir box, -1 for an entering disc */
    unsigned char *room;
    size_t spots_cap;
    int primed;   /* Verlet: acc holds the forces of the current state */
    int dt_stale; /* discs were added: the next step's size comes from their speeds */
} ref_world;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static size_t blocks_of(size_t n) { return (n + AD_BLOCK - 1) / AD_BLOCK; }

/* ------------------------------------------------------------- the world -- */

static size_t ref_per_disc(const ad_world_def *d)
{
    size_t b = 2 * sizeof(ad_state) + 2 * sizeof(uint32_t) + 2 * sizeof(ad_accel) + 2 * sizeof(float) + 4 + 1;
    return d->integrator == AD_INTEGRATOR_RK4 ? b + 3 * sizeof(ad_state) : b;
}

static size_t ref_bytes_needed(const ad_world_def *d, const ad_params *p)
{
    size_t cells = (size_t)p->nx * (size_t)p->ny + 1;
    return d->capacity * ref_per_disc(d) + (2 * cells + 1) * sizeof(uint32_t) +
           blocks_of(d->capacity) * sizeof(ad_step_sums) + sizeof(ref_world);
}

static void ref_destroy(ad_world *w)
{
    ref_world *r = w->impl;
    if (!r) return;
    void *arrays[] = {r->state,  r->spare,   r->id,     r->id_spare, r->acc,     r->acc_spare, r->pressure,
                      r->virial, r->rk_in,   r->rk_out, r->rk_sum,   r->cell_of, r->count,     r->start,
                      r->blocks, r->doomed,  r->res_add, r->entries, r->spots,   r->spot_box,  r->room};
    for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; k++) free(arrays[k]);
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
                       "x %zu bytes) but less is available", need, d->capacity, ref_per_disc(d));
    ref_world *r = calloc(1, sizeof *r);
    if (!r) return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory");
    w->impl = r;
    w->stats.threads = 1;
    w->stats.cell_counter_bits = 32;
    size_t cap = d->capacity ? d->capacity : 1;
    r->cap = d->capacity;
    r->ncell = (size_t)w->params.nx * (size_t)w->params.ny + 1;
    r->state = calloc(cap, sizeof *r->state);
    r->spare = calloc(cap, sizeof *r->spare);
    r->id = calloc(cap, sizeof *r->id);
    r->id_spare = calloc(cap, sizeof *r->id_spare);
    r->acc = calloc(cap, sizeof *r->acc);
    r->acc_spare = calloc(cap, sizeof *r->acc_spare);
    r->pressure = calloc(cap, sizeof *r->pressure);
    r->virial = calloc(cap, sizeof *r->virial);
    r->cell_of = calloc(cap, sizeof *r->cell_of);
    r->doomed = calloc(cap, 1);
    r->count = calloc(r->ncell, sizeof *r->count);
    r->start = calloc(r->ncell + 1, sizeof *r->start);
    r->blocks = calloc(blocks_of(cap), sizeof *r->blocks);
    r->res_add = calloc((size_t)w->params.res_boxes + 1, sizeof *r->res_add);
    int fail = !r->state || !r->spare || !r->id || !r->id_spare || !r->acc || !r->acc_spare || !r->pressure ||
               !r->virial || !r->cell_of || !r->doomed || !r->count || !r->start || !r->blocks || !r->res_add;
    if (d->integrator == AD_INTEGRATOR_RK4) {
        r->rk_in = calloc(cap, sizeof *r->rk_in);
        r->rk_out = calloc(cap, sizeof *r->rk_out);
        r->rk_sum = calloc(cap, sizeof *r->rk_sum);
        fail = fail || !r->rk_in || !r->rk_out || !r->rk_sum;
    }
    ad_status st = fail ? ad_fail(AD_ERR_NO_MEMORY, "capacity", "capacity: allocating %zu bytes for the world failed", need)
                        : ad_open_state_alloc(&r->open, (uint32_t)w->params.res_boxes);
    if (st.code) ref_destroy(w);
    return st;
}

static ad_status ref_add_particles(ad_world *w, const ad_particle *p, size_t n)
{
    ref_world *r = w->impl;
    if (r->n + n > r->cap) /* removed discs still hold their slots until the next sort */
        return ad_fail(AD_ERR_CAPACITY, "capacity", "capacity: adding %zu particles to %zu slots in use exceeds %zu",
                       n, r->n, r->cap);
    for (size_t i = 0; i < n; i++) {
        size_t s = r->n++;
        r->state[s] = ad_wrap_state(&w->params, (ad_state){p[i].x, p[i].y, p[i].vx, p[i].vy});
        r->id[s] = r->open.next_id++;
        r->acc[s] = (ad_accel){0.0f, 0.0f};
        r->pressure[s] = r->virial[s] = 0.0f;
    }
    r->primed = 0;
    r->dt_stale = 1;
    return ad_ok();
}

static ad_status ref_set_segments(ad_world *w)
{
    ((ref_world *)w->impl)->primed = 0;
    return ad_ok();
}

/* ------------------------------------------------------ steps 1-3: the grid -- */

/* Step 1: every disc's cell, counted; the centres outside the domain, for the statistics. */
static void bin(ad_world *w, ref_world *r)
{
    memset(r->count, 0, r->ncell * sizeof *r->count);
    uint64_t outside = 0;
    for (size_t i = 0; i < r->n; i++) {
        ad_state q = r->state[i];
        r->cell_of[i] = ad_bin_cell(&w->params, q);
        r->count[r->cell_of[i]]++;
        outside += !ad_is_dead(q) && ad_outside_domain(&w->params, q.x, q.y);
    }
    w->stats.outside_grid = outside;
}

/* Step 2: start = exclusive prefix sum of count; count becomes the scatter's cursor. */
static void scan(ad_world *w, ref_world *r)
{
    uint32_t run = 0, most = 0, cap = w->stats.cell_capacity;
    uint64_t over = 0;
    for (size_t c = 0; c < r->ncell; c++) {
        uint32_t v = r->count[c];
        r->start[c] = r->count[c] = run;
        run += v;
        most = v > most ? v : most;
        over += v > cap ? v - cap : 0;
    }
    r->start[r->ncell] = run;
    w->stats.max_cell_occupancy = most;
    w->stats.cell_overflow = over;
}

/* Step 3: a stable counting sort into cell order; the removed discs (dead cell, last) drop off the end. */
static void scatter(ad_world *w, ref_world *r)
{
    for (size_t i = 0; i < r->n; i++) {
        uint32_t k = r->count[r->cell_of[i]]++;
        r->spare[k] = r->state[i];
        r->id_spare[k] = r->id[i];
        r->acc_spare[k] = r->acc[i];
    }
    ad_state *s = r->state;
    r->state = r->spare, r->spare = s;
    uint32_t *id = r->id;
    r->id = r->id_spare, r->id_spare = id;
    ad_accel *a = r->acc;
    r->acc = r->acc_spare, r->acc_spare = a;
    size_t alive = r->start[r->ncell - 1];
    if (alive != r->n) r->n = w->count = w->stats.count = alive;
}

static void sort(ad_world *w, ref_world *r)
{
    double t0 = now();
    bin(w, r);
    double t1 = now();
    scan(w, r);
    double t2 = now();
    scatter(w, r);
    w->stats.phase_seconds[AD_PHASE_BIN] += t1 - t0;
    w->stats.phase_seconds[AD_PHASE_SCAN] += t2 - t1;
    w->stats.phase_seconds[AD_PHASE_SCATTER] += now() - t2;
}

/* ---------------------------------------------- step 4: gather and integrate -- */

/* A block's kinetic energy and momentum in eight partial sums, slot s0 + l into lane l mod 8, folded
 * in a fixed tree: the order the optimised CPU backend adds them in (its AVX2 tail takes eight discs
 * at once), so that the statistics agree bit for bit. */
/* Disc s's contacts: discs of the 3x3 cells around the cell of `at` (the state the grid was built
 * from), the body's segments and the walls, with its state `me` and the others' from `in`. */
static ad_accum gather(const ad_world *w, const ref_world *r, const ad_state *in, size_t s, ad_state at, ad_state me)
{
    const ad_params *P = &w->params;
    int cx = ad_cell_coord(at.x, P->origin_x, P->inv_cell_x, P->nx);
    int cy = ad_cell_coord(at.y, P->origin_y, P->inv_cell_y, P->ny);
    ad_accum a;
    ad_gather_all(P, &w->seg.grid, r->start, in, (uint32_t)s, me, cx, cy, &a);
    return a;
}

/* The per-disc observables and the block's contact sums of one force evaluation. */
static void observe(ref_world *r, size_t s, const ad_accum *a, ad_step_sums *b)
{
    r->pressure[s] = a->pressure;
    r->virial[s] = a->virial;
    b->v[AD_SUM_PE] += a->energy;
    b->v[AD_SUM_VIRIAL] += a->virial;
    b->v[AD_SUM_BODY_FX] += a->body_fx;
    b->v[AD_SUM_BODY_FY] += a->body_fy;
    for (int k = 0; k < 4; k++) b->v[AD_SUM_WALL0 + k] += a->wall[k];
    b->max_overlap = b->max_overlap > a->max_overlap ? b->max_overlap : a->max_overlap;
}

/* Disc s's new state nw (after step 5: ad_apply_boundaries) into the spare buffer; its fate counted
 * (open.h), its motion summed where kept. */
static void finish(const ad_world *w, ref_world *r, size_t s, size_t s0, ad_state nw, int fate, ad_step_sums *b,
                   ad_motion8 *m)
{
    b->left += fate == AD_LEFT;
    b->res_removed += fate == AD_RESERVOIR_REMOVED;
    r->spare[s] = nw;
    if (!fate) ad_motion8_add(m, b, &w->params, nw, (unsigned)(s - s0));
}

/* Verlet before its first drift: the forces of the current state. */
static void verlet_prime(ad_world *w, ref_world *r)
{
    const ad_params *P = &w->params;
    for (size_t s = 0; s < r->n; s++) {
        ad_accum a = gather(w, r, r->state, s, r->state[s], r->state[s]);
        r->acc[s] = (ad_accel){a.fx * P->inv_mass + P->gx, a.fy * P->inv_mass + P->gy};
        r->pressure[s] = a.pressure;
        r->virial[s] = a.virial;
    }
    r->primed = 1;
}

/* Verlet's drift, before the bin, with the last acceleration; wraps only (removals wait for the kick). */
static void verlet_drift(const ad_world *w, ref_world *r, float dt)
{
    for (size_t s = 0; s < r->n; s++)
        r->state[s] = ad_wrap_state(&w->params, ad_verlet_drift(r->state[s], r->acc[s].ax, r->acc[s].ay, dt));
}

/* Step 4 with one force evaluation: symplectic Euler, Euler, or Verlet's kick. */
static void pass(ad_world *w, ref_world *r, float dt)
{
    const ad_params *P = &w->params;
    ad_integrator integ = w->def.integrator;
    for (size_t b = 0; b < blocks_of(r->n); b++) {
        ad_step_sums *sums = memset(&r->blocks[b], 0, sizeof r->blocks[b]);
        ad_motion8 m;
        memset(&m, 0, sizeof m);
        size_t s0 = b * AD_BLOCK, s1 = s0 + AD_BLOCK < r->n ? s0 + AD_BLOCK : r->n;
        for (size_t s = s0; s < s1; s++) {
            ad_state me = r->state[s], nw;
            ad_accum a = gather(w, r, r->state, s, me, me);
            observe(r, s, &a, sums);
            float ax = a.fx * P->inv_mass + P->gx, ay = a.fy * P->inv_mass + P->gy;
            if (integ == AD_INTEGRATOR_VERLET) nw = ad_verlet_kick(me, r->acc[s].ax, r->acc[s].ay, ax, ay, dt);
            else if (integ == AD_INTEGRATOR_EULER) nw = ad_step_euler(me, ax, ay, dt);
            else nw = ad_step_symplectic(me, ax, ay, dt);
            r->acc[s] = (ad_accel){ax, ay};
            int fate;
            nw = ad_apply_boundaries(P, nw, r->id, s, w->stats.step, dt, r->doomed[s], &fate);
            finish(w, r, s, s0, nw, fate, sums, &m);
        }
        ad_motion8_fold(&m, sums);
    }
}

/* RK4 stage k of block b: gathers on the grid of the step's start (cells from the base state), the
 * other discs at the stage. Stage 0's forces are the observed ones; stage 3 writes the step. */
static void rk4_block(ad_world *w, ref_world *r, size_t b, float dt, int k)
{
    const ad_params *P = &w->params;
    const ad_state *in = k == 0 ? r->state : r->rk_in;
    ad_step_sums *sums = &r->blocks[b];
    if (k == 0) memset(sums, 0, sizeof *sums);
    ad_motion8 m;
    memset(&m, 0, sizeof m);
    float skin = (float)w->dt_rule.move;
    size_t s0 = b * AD_BLOCK, s1 = s0 + AD_BLOCK < r->n ? s0 + AD_BLOCK : r->n;
    for (size_t s = s0; s < s1; s++) {
        ad_state base = r->state[s];
        ad_accum a = gather(w, r, in, s, base, in[s]);
        float ax = a.fx * P->inv_mass + P->gx, ay = a.fy * P->inv_mass + P->gy;
        if (k == 0) {
            observe(r, s, &a, sums);
            r->acc[s] = (ad_accel){ax, ay};
        }
        const ad_rk4_disc d = {base, in[s], ax, ay, dt, k, r->id, s, w->stats.step, k == 3 && r->doomed[s]};
        int fate, past_skin;
        ad_state nx = ad_rk4_disc_stage(P, &d, skin, &r->rk_sum[s], &fate, &past_skin);
        if (k < 3) {
            r->rk_out[s] = nx;
        } else {
            finish(w, r, s, s0, nx, fate, sums, &m);
            sums->skin_violations += past_skin;
        }
    }
    if (k == 3) ad_motion8_fold(&m, sums);
}

static void rk4(ad_world *w, ref_world *r, float dt)
{
    for (int k = 0; k < 4; k++) {
        for (size_t b = 0; b < blocks_of(r->n); b++) rk4_block(w, r, b, dt, k);
        ad_state *t = r->rk_in; /* the stage just written is the next one's input */
        r->rk_in = r->rk_out, r->rk_out = t;
    }
}

/* ------------------------------------- step 5: the reservoir and entering discs -- */

/* Before the pass: each reservoir box's count from the grid, its controller, the discs it removes
 * (marked doomed) and the additions it asks for after the pass. */
static void reservoir_plan(const ad_world *w, ref_world *r, float dt)
{
    const ad_params *P = &w->params;
    double nu = (double)P->res_rate / AD_RES_CONTROL_SLOWER;
    for (int b = 0; b < P->res_boxes; b++) {
        uint32_t n = ad_reservoir_box_count(P, r->start, b), add, slot[AD_RES_PICK_MAX];
        uint32_t rm = ad_reservoir_decide(&r->open.res_state[2 * b], ad_reservoir_want(P, b), n, nu, dt, &add);
        uint32_t m = ad_reservoir_pick(P, r->start, r->id, b, w->stats.step, rm, slot);
        for (uint32_t k = 0; k < m; k++) r->doomed[slot[k]] = 1;
        r->open.res_state[2 * b] -= (double)(rm - m); /* those not marked stay owed */
        r->res_add[b] = add;
    }
}

static int grow_spots(ref_world *r, size_t need)
{
    if (need <= r->spots_cap) return 1;
    ad_entry *e = realloc(r->entries, need * sizeof *e);
    if (e) r->entries = e;
    ad_state *s = realloc(r->spots, need * sizeof *s);
    if (s) r->spots = s;
    int *b = realloc(r->spot_box, need * sizeof *b);
    if (b) r->spot_box = b;
    unsigned char *room = realloc(r->room, need);
    if (room) r->room = room;
    if (!e || !s || !b || !room) return 0;
    r->spots_cap = need;
    return 1;
}

/* The step's new spots in their fixed order: the waiting entries, each open side's new ones, the
 * reservoir boxes' additions; *ns of them, the first *ne entering discs. */
static ad_status list_spots(ad_world *w, ref_world *r, float dt, size_t *ne, size_t *ns)
{
    const ad_params *P = &w->params;
    uint64_t step = w->stats.step;
    uint32_t owe[4] = {0, 0, 0, 0};
    size_t e = r->open.nwaiting, add = 0;
    for (int f = 0; f < 4; f++) {
        if (!ad_side_open(P, f)) continue;
        r->open.owed[f] += P->side_rate[f] * (double)dt;
        double k = floor(r->open.owed[f]);
        r->open.owed[f] -= k;
        owe[f] = k > 1e9 ? 1000000000u : (uint32_t)k;
        e += owe[f];
    }
    for (int b = 0; b < P->res_boxes; b++) add += r->res_add[b];
    *ne = e;
    *ns = e + add;
    if (*ns == 0) return ad_ok();
    if (ad_entries_overflow(*ns, r->n, r->cap, AD_WAITING_MAX))
        return ad_fail(AD_ERR_CAPACITY, "capacity", "capacity: at step %llu the free stream brings %zu discs in one "
                       "step to a world of %zu discs with a capacity of %zu (a stream far denser or faster than the "
                       "world was sized for)", (unsigned long long)step, *ns, r->n, r->cap);
    if (!grow_spots(r, *ns)) return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory for %zu entering discs", *ns);
    memcpy(r->entries, r->open.waiting, r->open.nwaiting * sizeof *r->entries);
    size_t k = r->open.nwaiting;
    for (int f = 0; f < 4; f++)
        for (uint32_t j = 0; j < owe[f]; j++) r->entries[k++] = ad_entry_draw(P, f, step, j);
    for (size_t i = 0; i < e; i++) {
        r->spots[i] = ad_entry_spot(P, r->entries[i], dt, step, (uint32_t)i);
        r->spot_box[i] = -1;
    }
    for (int b = 0; b < P->res_boxes; b++)
        for (uint32_t j = 0; j < r->res_add[b]; j++, k++) {
            r->spots[k] = ad_reservoir_spot(P, b, j, step);
            r->spot_box[k] = b;
        }
    return ad_ok();
}

/* Room for each spot: none of the gas after the pass (through the step's grid) and none of the earlier
 * spots within a diameter, every earlier spot compared (ad_room_for_plain). Without disc contacts
 * every spot has room. */
static void judge_room(const ad_world *w, ref_world *r, size_t ns)
{
    for (size_t i = 0; i < ns; i++)
        r->room[i] = !w->params.disc_contacts ||
                     (i < AD_ROOM_MAX && ad_room_for_plain(&w->params, r->start, NULL, r->state, r->spots, (uint32_t)i));
}

/* Appends disc q at slot n with a new id. */
static void append(ref_world *r, ad_state q)
{
    size_t s = r->n++;
    r->state[s] = q;
    r->id[s] = r->open.next_id++;
    r->acc[s] = (ad_accel){0.0f, 0.0f};
    r->pressure[s] = r->virial[s] = 0.0f;
}

/* After the pass: the free stream's entering discs and the reservoir's additions, placed in list
 * order where they have room; entering discs without room wait. *vmax2: their largest speed squared. */
static ad_status enter(ad_world *w, ref_world *r, float dt, float *vmax2)
{
    size_t ne, ns;
    *vmax2 = 0.0f;
    AD_TRY(list_spots(w, r, dt, &ne, &ns));
    if (ns == 0) return ad_ok();
    judge_room(w, r, ns);
    size_t placed = 0;
    for (size_t i = 0; i < ns; i++) placed += r->room[i];
    if (r->n + placed > r->cap)
        return ad_fail(AD_ERR_CAPACITY, "capacity", "capacity: at step %llu the free stream brings the world to %zu "
                       "discs, past its capacity of %zu", (unsigned long long)w->stats.step, r->n + placed, r->cap);
    uint32_t waiting = 0;
    for (size_t i = 0; i < ns; i++) {
        if (r->room[i]) {
            ad_state q = r->spots[i];
            append(r, q);
            float v2 = q.vx * q.vx + q.vy * q.vy;
            *vmax2 = *vmax2 > v2 ? *vmax2 : v2;
            if (i < ne) {
                w->stats.entered++;
            } else {
                w->stats.reservoir_added++;
                r->open.res_state[2 * r->spot_box[i]] -= 1.0; /* settled */
            }
        } else if (i < ne) {
            if (waiting < AD_WAITING_MAX) r->open.waiting[waiting++] = r->entries[i];
            else w->stats.entries_lost++;
        }
    }
    r->open.nwaiting = waiting;
    w->stats.entries_waiting = waiting;
    return ad_ok();
}

/* ------------------------------------------------------- step 6 and the step -- */

/* The current discs added to the field sums, in slot order (a removed disc falls in no cell). */
static void sample_fields(ad_world *w, const ref_world *r)
{
    ad_fields *f = &w->fields;
    double *probe = f->sums + (size_t)f->def.nx * f->def.ny * AD_FS_COUNT;
    for (size_t s = 0; s < r->n; s++) {
        if (ad_in_probe(&f->grid, r->state[s])) {
            double u[AD_PS_COUNT];
            ad_probe_values(&f->grid, r->state[s], u);
            for (int q = 0; q < AD_PS_COUNT; q++) probe[q] += u[q];
        }
        int cell = ad_field_cell(&f->grid, r->state[s].x, r->state[s].y);
        if (cell < 0) continue;
        double v[AD_FS_COUNT];
        ad_field_values(r->state[s], r->virial[s], r->pressure[s], r->acc[s].ax, r->acc[s].ay, v);
        for (int q = 0; q < AD_FS_COUNT; q++) f->sums[(size_t)cell * AD_FS_COUNT + q] += v[q];
    }
    f->samples++;
    if (f->grid.probe) f->probe_samples++;
}

static ad_status one_step(ad_world *w, ref_world *r, float dt)
{
    ad_integrator integ = w->def.integrator;
    if (integ == AD_INTEGRATOR_VERLET && !r->primed) {
        sort(w, r);
        verlet_prime(w, r);
    }
    if (integ == AD_INTEGRATOR_VERLET) verlet_drift(w, r, dt);
    sort(w, r);
    if (w->params.res_boxes) reservoir_plan(w, r, dt);
    double t0 = now();
    size_t nb = blocks_of(r->n);
    if (integ == AD_INTEGRATOR_RK4) rk4(w, r, dt);
    else pass(w, r, dt);
    ad_state *t = r->state; /* the pass's output becomes the current state */
    r->state = r->spare, r->spare = t;
    memset(r->doomed, 0, r->n);
    size_t removed = 0;
    for (size_t b = 0; b < nb; b++) removed += r->blocks[b].left + r->blocks[b].res_removed;
    float v2_new = 0.0f;
    ad_status st = ad_world_open(w) ? enter(w, r, dt, &v2_new) : ad_ok();
    ad_stats_fold(w, r->blocks, nb, dt, v2_new);
    if (ad_world_open(w)) w->count = w->stats.count = r->n - removed;
    w->stats.phase_seconds[AD_PHASE_INTERACT] += now() - t0;
    if (w->fields.enabled && w->stats.step % w->fields.def.interval == 0) sample_fields(w, r);
    uint64_t bad = 0;
    for (size_t b = 0; b < nb; b++) bad += r->blocks[b].nonfinite;
    if (bad)
        return ad_fail(AD_ERR_UNSTABLE, "dt", "step %llu: %llu discs reached a non-finite position or velocity (the "
                       "step of %g s is too large for the stiffness, or discs were placed overlapping)",
                       (unsigned long long)w->stats.step, (unsigned long long)bad, (double)dt);
    return st;
}

static ad_status ref_step(ad_world *w, uint64_t nsteps)
{
    ref_world *r = w->impl;
    if (r->dt_stale) { /* after discs were added the next step's size comes from their speeds */
        float v2 = 0.0f;
        for (size_t s = 0; s < r->n; s++) v2 = fmaxf(v2, r->state[s].vx * r->state[s].vx + r->state[s].vy * r->state[s].vy);
        w->stats.dt = ad_dt_next(&w->dt_rule, sqrt((double)v2));
        r->dt_stale = 0;
    }
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
    AD_TRY(ad_slot_order(r->state, r->id, r->n, w->count, (flags & AD_READ_BY_ID) != 0, &order));
    for (size_t o = 0; o < n; o++) {
        size_t k = order ? order[o] : o;
        const ad_state q = r->state[k];
        ad_particle_out_put(out, o, 2, (const float[2]){q.x, q.y}, (const float[2]){q.vx, q.vy}, r->id[k],
                            r->pressure[k], r->virial[k], (const float[2]){r->acc[k].ax, r->acc[k].ay});
    }
    free(order);
    if (count) *count = n;
    return ad_ok();
}

/* The live discs copied out in slot order; the open sides' state is the world's own (not owned). */
static ad_status ref_export(const ad_world *w, ad_snapshot *s)
{
    const ref_world *r = w->impl;
    memset(s, 0, sizeof *s);
    size_t n = w->count;
    s->n = n;
    s->primed = r->primed;
    s->open = r->open;
    s->owned = 1;
    s->state = malloc(n * sizeof *s->state + 1);
    s->id = malloc(n * sizeof *s->id + 1);
    s->pressure = malloc(n * sizeof *s->pressure + 1);
    s->virial = malloc(n * sizeof *s->virial + 1);
    s->accel = malloc(n * sizeof *s->accel + 1);
    if (!s->state || !s->id || !s->pressure || !s->virial || !s->accel) {
        ad_snapshot_free(s);
        return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory for a snapshot of %zu particles", n);
    }
    size_t m = 0;
    for (size_t k = 0; k < r->n && m < n; k++) {
        if (ad_is_dead(r->state[k])) continue;
        s->state[m] = r->state[k];
        s->id[m] = r->id[k];
        s->pressure[m] = r->pressure[k];
        s->virial[m] = r->virial[k];
        s->accel[m++] = r->acc[k];
    }
    return ad_ok();
}

static ad_status ref_import(ad_world *w, const ad_snapshot *s)
{
    ref_world *r = w->impl;
    if (s->n > r->cap) return ad_fail(AD_ERR_CAPACITY, "capacity", "capacity: the snapshot holds %zu discs", s->n);
    if (s->open.nwaiting > AD_WAITING_MAX || (s->open.res_state && s->open.res_boxes != r->open.res_boxes))
        return ad_fail(AD_ERR_FORMAT, "checkpoint",
                       "the snapshot has %u entries waiting (at most %d) and %u reservoir boxes (the world has %u)",
                       s->open.nwaiting, AD_WAITING_MAX, s->open.res_boxes, r->open.res_boxes);
    memcpy(r->state, s->state, s->n * sizeof *r->state);
    memcpy(r->id, s->id, s->n * sizeof *r->id);
    memcpy(r->pressure, s->pressure, s->n * sizeof *r->pressure);
    memcpy(r->virial, s->virial, s->n * sizeof *r->virial);
    memcpy(r->acc, s->accel, s->n * sizeof *r->acc);
    r->n = s->n;
    memcpy(r->open.owed, s->open.owed, sizeof r->open.owed);
    r->open.next_id = s->open.next_id;
    if (s->open.res_state) memcpy(r->open.res_state, s->open.res_state, 2 * (size_t)s->open.res_boxes * sizeof(double));
    r->open.nwaiting = s->open.nwaiting;
    if (s->open.nwaiting) memcpy(r->open.waiting, s->open.waiting, s->open.nwaiting * sizeof(ad_entry));
    r->primed = s->primed;
    r->dt_stale = 0;
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
