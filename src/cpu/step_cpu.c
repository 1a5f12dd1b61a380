/* The CPU backend's step: the broad phase (grid or BVH), the threaded interact pass, RK4, Verlet. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/world_internal.h"
#include "../physics/fields.h"
#include "../physics/gather.h"
#include "../physics/integrate.h"
#include "bvh_cpu.h"
#include "cpu_world.h"
#include "gather_cpu.h"
#include "grid_cpu.h"
#include "interact_cpu.h"

#ifdef _OPENMP
#include <omp.h>
static double now(void) { return omp_get_wtime(); }
#else
#include <time.h>
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
#endif

/* Steps 1-3: bin, scan, scatter; the state (and Verlet accelerations) end in cell order.
 * After a step of Euler or symplectic Euler the bin is already done: the interact pass
 * binned each disc where it wrote its new position (c->bin_current, fused_bin_cpu.h); with
 * Verlet the drift did (verlet_drift). */
static void build_grid(ad_world *w, cpu_world *c, size_t n, ad_integrator integ)
{
    double t0 = now();
    ad_grid_diag diag;
    if (c->bin_current && integ == AD_INTEGRATOR_VERLET) {
        diag.outside = c->drift_outside;
    } else if (c->bin_current) {
        diag.outside = 0;
        for (size_t b = 0; b < c->nblocks; b++) diag.outside += c->blk_outside[b];
    } else {
        memset(c->count, 0, c->ncell);
        ad_cpu_bin(&w->params, c->state[c->cur], n, c->cell_of, c->count, c->threads, &diag);
        c->leavers_valid = 0; /* binned here, not by the pass */
    }
    c->bin_current = 0;
    double t1 = now();
    /* the scan writes the starts one place on; the reorder counts them up as its cursor,
     * and c->start is then the start array (ad_cpu_reorder). On several threads the two are
     * one region (ad_cpu_sort), timed as the scatter. */
    c->start[0] = 0;
    const ad_cpu_xy *xy = c->avx2 && c->xy.x ? &c->xy : NULL;
    double t2 = t1;
    const ad_cpu_reorder_job job = {c->cell_of,     c->start + 1,      c->state[c->cur], c->state[!c->cur],
                                    c->id,          c->id_tmp,         c->acc[c->cur],   c->acc[!c->cur],
                                    c->free_until,  c->free_until_tmp, xy,
                                    w->params.surfaces ? c->touch : NULL, w->params.surfaces ? c->touch_tmp : NULL};
    if (c->threads > 1) {
        const ad_cpu_leavers leavers = {c->blk_first_cell, c->leavers, c->blk_leavers};
        ad_cpu_sort(c->count, &job, n, c->ncell, c->threads, w->stats.cell_capacity,
                    c->leavers_valid ? &leavers : NULL, c->strays, c->strays_cap, &diag);
    } else {
        ad_cpu_scan(c->count, c->start + 1, c->ncell, c->cell_of, n, w->stats.cell_capacity, &diag);
        t2 = now();
        ad_cpu_reorder(&job, n, c->ncell, 1, c->strays, c->strays_cap);
    }
    c->rows_fit8 = diag.max_run3 <= 8;
    uint32_t *idst = c->id_tmp;
    c->cur = !c->cur;
    c->id_tmp = c->id;
    c->id = idst;
    if (w->params.surfaces) {
        uint32_t *tdst = c->touch_tmp;
        c->touch_tmp = c->touch;
        c->touch = tdst;
    }
    float *udst = c->free_until_tmp;
    c->free_until_tmp = c->free_until;
    c->free_until = udst;
    /* the removed discs are in the dead cell, after every other: the world ends there */
    size_t alive = c->start[c->ncell - 1];
    if (alive != n) ad_cpu_open_compact(w, c, alive);
    double t3 = now();
    w->stats.max_cell_occupancy = diag.max_occupancy;
    w->stats.cell_overflow = diag.overflow;
    w->stats.outside_grid = diag.outside;
    w->stats.phase_seconds[AD_PHASE_BIN] += t1 - t0;
    w->stats.phase_seconds[AD_PHASE_SCAN] += t2 - t1;
    w->stats.phase_seconds[AD_PHASE_SCATTER] += t3 - t2;
}

/* Steps 1-4 with the BVH: Morton keys, stable radix sort, reorder along the curve,
 * tree build and boxes. Phase timers: keys count as bin, the sort as scan, the
 * reorder and the tree as scatter. */
static void build_bvh(ad_world *w, cpu_world *c, size_t n)
{
    double t0 = now();
    size_t dead = 0;
    uint64_t outside = ad_cpu_morton_keys(&w->params, c->state[c->cur], n, &c->bvh, c->threads, &dead);
    double t1 = now();
    ad_cpu_radix_sort(&c->bvh, n, c->threads);
    double t2 = now();
    const ad_state *src = c->state[c->cur];
    ad_state *dst = c->state[!c->cur];
    const uint32_t *isrc = c->id, *perm = c->bvh.perm;
    uint32_t *idst = c->id_tmp;
    const uint32_t *tsrc = w->params.surfaces ? c->touch : NULL;
    uint32_t *tdst = c->touch_tmp;
    const ad_accel *asrc = c->acc[c->cur];
    ad_accel *adst = c->acc[!c->cur];
#pragma omp parallel for num_threads(c->threads) schedule(static)
    for (size_t s = 0; s < n; s++) {
        uint32_t i = perm[s];
        dst[s] = src[i];
        idst[s] = isrc[i];
        if (adst) adst[s] = asrc[i];
        if (tsrc) tdst[s] = tsrc[i];
    }
    c->cur = !c->cur;
    c->id_tmp = c->id;
    c->id = idst;
    if (tsrc) {
        c->touch_tmp = c->touch;
        c->touch = tdst;
    }
    /* removed discs have the largest key and sort last (ad_bvh_key): the tree leaves them out */
    if (dead) {
        ad_cpu_open_compact(w, c, n - dead);
        n -= dead;
    }
    c->tree = ad_cpu_bvh_build(&c->bvh, c->state[c->cur], NULL, n, c->threads);
    double t3 = now();
    w->stats.max_cell_occupancy = 0; /* no cells */
    w->stats.cell_overflow = 0;
    w->stats.outside_grid = outside;
    w->stats.phase_seconds[AD_PHASE_BIN] += t1 - t0;
    w->stats.phase_seconds[AD_PHASE_SCAN] += t2 - t1;
    w->stats.phase_seconds[AD_PHASE_SCATTER] += t3 - t2;
}

static void build_broad_phase(ad_world *w, cpu_world *c, size_t n)
{
    if (c->use_bvh) build_bvh(w, c, n);
    else build_grid(w, c, n, w->def.integrator);
}

/* The pass of one block in the portable build; the AVX2 build is ad_cpu_interact_block_avx2
 * (src/cpu/interact_avx2.c). */
AD_CPU_DEFINE_INTERACT(ad_cpu_interact_block_portable)

/* The AVX2 build of a block where the CPU has it (checked at run time: builds do not assume -march). */
AD_CPU_INLINE void interact_block_isa(const ad_world *w, cpu_world *c, size_t b, size_t n, float dt,
                                      ad_integrator integ, interact_kind kind, uint64_t step, int obs)
{
#ifdef AD_CPU_X86
    if (c->avx2) {
        ad_cpu_interact_block_avx2(w, c, b, n, dt, integ, kind, step, obs);
        return;
    }
#endif
    ad_cpu_interact_block_portable(w, c, b, n, dt, integ, kind, step, obs);
}

/* The pass's blocks among the threads: thread k owns the blocks of its share of the slots,
 * [k nb / t, (k+1) nb / t), the slots of its window in the reorder (ad_cpu_reorder), so that
 * each thread mostly reads what it wrote itself; it takes its own blocks from the front and,
 * when they are done, the others' from the back (the cores do not always run at one speed).
 * Each range is one word, front << 32 | end, claimed by compare-and-swap. */
static void claim_init(cpu_world *c, size_t nb)
{
    for (int k = 0; k < c->threads; k++) {
        uint64_t f = (uint64_t)k * nb / (uint64_t)c->threads, e = (uint64_t)(k + 1) * nb / (uint64_t)c->threads;
        __atomic_store_n(&c->ranges[k].word, f << 32 | e, __ATOMIC_RELAXED);
    }
}

static int claim_from(cpu_world *c, int j, int front, size_t *b)
{
    uint64_t v = __atomic_load_n(&c->ranges[j].word, __ATOMIC_RELAXED);
    for (;;) {
        uint64_t f = v >> 32, e = v & 0xffffffffu;
        if (f >= e) return 0;
        uint64_t nv = front ? (f + 1) << 32 | e : f << 32 | (e - 1);
        if (__atomic_compare_exchange_n(&c->ranges[j].word, &v, nv, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
            *b = (size_t)(front ? f : e - 1);
            return 1;
        }
    }
}

/* The next block for thread k: its own first, then another's. */
static int claim_block(cpu_world *c, int k, size_t *b)
{
    if (k < c->threads && claim_from(c, k, 1, b)) return 1;
    for (int d = 1; d <= c->threads; d++)
        if (claim_from(c, (k + d) % c->threads, 0, b)) return 1;
    return 0;
}

#ifdef _OPENMP
#define AD_THREAD_NUM() omp_get_thread_num()
#define AD_THREAD_COUNT() omp_get_num_threads()
#else
#define AD_THREAD_NUM() 0
#define AD_THREAD_COUNT() 1
#endif
/* Runs `body` for every block b of the pass on the world's threads (claim_block). */
#define FOR_BLOCKS(c, b, body)                                                                                    \
    _Pragma("omp parallel num_threads(c->threads)")                                                              \
    {                                                                                                             \
        int k_ = AD_THREAD_NUM();                                                                                 \
        size_t b;                                                                                                 \
        while (claim_block(c, k_, &b)) body;                                                                      \
    }

/* Step 4; obs: the per-disc observables are written (a step somebody reads, ad_cpu_step). */
static void interact(ad_world *w, cpu_world *c, size_t n, float dt, interact_kind kind, int obs)
{
    uint64_t step = w->stats.step;
    size_t nb = (n + AD_BLOCK - 1) / AD_BLOCK;
    ad_integrator integ = w->def.integrator;
    /* the grid's pass bins its output (the BVH keys its discs in its own build) */
    int bins = kind == INTERACT_STEP && integ != AD_INTEGRATOR_VERLET && !c->use_bvh; /* the scan cleared count */
    /* one call site per integrator so each loop is compiled for its own */
    claim_init(c, nb);
    switch (kind == INTERACT_PRIME ? -1 : (int)integ) {
    case AD_INTEGRATOR_EULER:
        FOR_BLOCKS(c, b, interact_block_isa(w, c, b, n, dt, AD_INTEGRATOR_EULER, INTERACT_STEP, step, obs));
        break;
    case AD_INTEGRATOR_VERLET:
        FOR_BLOCKS(c, b, interact_block_isa(w, c, b, n, dt, AD_INTEGRATOR_VERLET, INTERACT_STEP, step, obs));
        break;
    case -1:
        FOR_BLOCKS(c, b, interact_block_isa(w, c, b, n, dt, integ, INTERACT_PRIME, step, 1));
        break;
    default:
        FOR_BLOCKS(c, b,
                   interact_block_isa(w, c, b, n, dt, AD_INTEGRATOR_SYMPLECTIC_EULER, INTERACT_STEP, step, obs));
        break;
    }
    if (bins && c->threads > 1 && c->leavers) /* the leavers' counts (fused_bin_cpu.h) */
        for (size_t b = 0; b < nb; b++)
            for (uint32_t k = 0; k < c->blk_leavers[b]; k++) c->count[c->cell_of[c->leavers[b * AD_BLOCK + k]]]++;
    c->leavers_valid = bins && c->threads > 1 && c->leavers;
    c->cur = !c->cur;
    c->bin_current = bins;
}

/* RK4: four evaluations on the grid of the step's start (cells from the base state). */
static void rk4_stage_block(const ad_world *w, cpu_world *c, size_t b, size_t n, float dt, int k)
{
    const ad_params P = w->params;
    const ad_seg_grid G = w->seg.grid;
    const ad_state *base = c->state[c->cur];
    const ad_state *in = k == 0 ? base : c->rk[0];
    ad_state *out = k == 3 ? c->state[!c->cur] : c->rk[1];
    ad_state *acc = c->rk[2];
    ad_step_sums *sums = &c->blocks[b];
    if (k == 0) memset(sums, 0, sizeof *sums);
    float skin = (float)w->dt_rule.move;
    size_t s0 = b * AD_BLOCK, s1 = s0 + AD_BLOCK < n ? s0 + AD_BLOCK : n;
    ad_motion8 m8; /* the motion sums as the pass takes them (integrate8_cpu.h) */
    memset(&m8, 0, sizeof m8);
    for (size_t s = s0; s < s1; s++) {
        ad_state b0 = base[s], me = in[s];
        ad_accum a;
        gather_one(c, &P, &G, &w->seg.tree, in, s, b0, me, &a);
        float ax = a.fx * P.inv_mass + P.gx, ay = a.fy * P.inv_mass + P.gy;
        if (k == 0) {
            c->pressure[s] = a.pressure;
            c->virial[s] = a.virial;
            c->accel[s] = (ad_accel){ax, ay};
            add_contact_sums(sums, &a);
        }
        const ad_rk4_disc d = {b0, me, ax, ay, dt, k, c->id, s, w->stats.step, k == 3 && doomed(c, s)};
        int fate, past_skin;
        ad_state nx = ad_rk4_disc_stage(&P, &d, skin, &acc[s], &fate, &past_skin);
        /* the surfaces at the step's start (stage 0's contacts, as the body's sums); a re-emission
         * replaces the velocity the step ends with (surface.h) */
        if (k == 3 && P.surfaces)
            ad_cpu_surface_disc(w, c, &P, s, b0, c->accel[s].ax, c->accel[s].ay, dt, w->stats.step, &nx, sums);
        if (k == 3) count_removed(sums, fate);
        out[s] = nx;
        if (k == 3 && !fate) {
            ad_motion8_add(&m8, sums, &P, nx, (unsigned)(s - s0));
            sums->skin_violations += past_skin;
        }
    }
    if (k == 3) ad_motion8_fold(&m8, sums);
}

static void interact_rk4(ad_world *w, cpu_world *c, size_t n, float dt)
{
    size_t nb = (n + AD_BLOCK - 1) / AD_BLOCK;
    for (int k = 0; k < 4; k++) {
#pragma omp parallel for num_threads(c->threads) schedule(dynamic, 2)
        for (size_t b = 0; b < nb; b++) rk4_stage_block(w, c, b, n, dt, k);
        if (k < 3) { /* the stage just written becomes the next stage's input */
            ad_state *t = c->rk[0];
            c->rk[0] = c->rk[1];
            c->rk[1] = t;
        }
    }
    c->cur = !c->cur;
}

/* The portable build of the drift (the AVX2 one is in interact_avx2.c). */
void ad_cpu_drift_range_portable(const ad_params *P, ad_state *s, const ad_accel *acc, size_t a, size_t b, float dt,
                                 uint32_t *cell_of, ad_cpu_fused_bin *bins, ad_cpu_drift_seen *d)
{
    ad_cpu_drift_range(P, s, acc, a, b, dt, cell_of, bins, d);
}

/* Discs [a, b) drifted and binned by the CPU's build (verlet_drift_cpu.h). */
static void drift_range_isa(const cpu_world *c, const ad_params *P, size_t a, size_t b, float dt,
                            ad_cpu_fused_bin *bins, ad_cpu_drift_seen *d)
{
    ad_state *s = c->state[c->cur];
    const ad_accel *acc = c->acc[c->cur];
#ifdef AD_CPU_X86
    if (c->avx2) {
        ad_cpu_drift_range_avx2(P, s, acc, a, b, dt, c->cell_of, bins, d);
        return;
    }
#endif
    ad_cpu_drift_range_portable(P, s, acc, a, b, dt, c->cell_of, bins, d);
}

/* The drift's blocks' own cells (fused_bin_cpu.h) into blk_first_cell: block b's run from the cell of its
 * first live disc, never below the block before's. The slots are in the order of these cells (the last
 * reorder sorted them by them, and the kick moved no disc) but for discs removed or added since; any
 * non-decreasing choice keeps the blocks' cells apart, and a disc outside its block's is a leaver. */
static void drift_own_cells(const ad_params *P, cpu_world *c, size_t n, size_t nb)
{
    const ad_state *s = c->state[c->cur];
    uint32_t lo = 0;
    for (size_t b = 0; b < nb; b++) {
        size_t s1 = (b + 1) * AD_BLOCK < n ? (b + 1) * AD_BLOCK : n;
        for (size_t k = b * AD_BLOCK; k < s1; k++)
            if (!ad_is_dead(s[k])) {
                uint32_t cell = ad_bin_cell(P, s[k]);
                lo = b && cell > lo ? cell : lo;
                break;
            }
        c->blk_first_cell[b] = lo;
    }
}

/* The drift on several threads, block by block, each block counting into its own cells and listing its
 * leavers, counted after (as interact() counts the pass's): no atomics, and the reorder takes the lists
 * (ad_cpu_leavers). */
static ad_cpu_drift_seen drift_blocks(const ad_params *P, cpu_world *c, size_t n, float dt)
{
    size_t nb = (n + AD_BLOCK - 1) / AD_BLOCK;
    drift_own_cells(P, c, n, nb);
    float v2 = 0.0f;
    uint64_t bad = 0, outside = 0;
    claim_init(c, nb);
#pragma omp parallel num_threads(c->threads) reduction(max : v2) reduction(+ : bad, outside)
    {
        ad_cpu_drift_seen mine = {0.0f, 0, 0};
        size_t b;
        while (claim_block(c, AD_THREAD_NUM(), &b)) {
            size_t s0 = b * AD_BLOCK, s1 = s0 + AD_BLOCK < n ? s0 + AD_BLOCK : n;
            uint32_t lo = c->blk_first_cell[b], hi = b + 1 < nb ? c->blk_first_cell[b + 1] : (uint32_t)c->ncell;
            ad_cpu_fused_bin bins = {c->count, lo, hi - lo, c->leavers + s0, 0, 0};
            drift_range_isa(c, P, s0, s1, dt, &bins, &mine);
            c->blk_leavers[b] = bins.nleavers;
        }
        v2 = mine.v2, bad = mine.bad, outside = mine.outside;
    }
    for (size_t b = 0; b < nb; b++)
        for (uint32_t k = 0; k < c->blk_leavers[b]; k++) c->count[c->cell_of[c->leavers[b * AD_BLOCK + k]]]++;
    return (ad_cpu_drift_seen){v2, (uint32_t)bad, outside};
}

/* Verlet's drift runs before the grid, in place: each disc moves itself only. On the grid it
 * is step 1 as well (verlet_drift_cpu.h: each disc binned where its drifted state is written),
 * and the grid skips its bin (c->bin_current). The BVH keys its discs in its own build: there
 * the counters are scratch. */
static ad_cpu_drift_seen verlet_drift(ad_world *w, cpu_world *c, size_t n, float dt)
{
    const ad_params P = w->params;
    ad_cpu_drift_seen d = {0.0f, 0, 0};
    if (c->use_bvh) { /* the tree keys its discs in its own build */
        ad_state *s = c->state[c->cur];
        const ad_accel *acc = c->acc[c->cur];
#pragma omp parallel for num_threads(c->threads) schedule(static)
        for (size_t i = 0; i < n; i++) s[i] = ad_wrap_state(&P, ad_verlet_drift(s[i], acc[i].ax, acc[i].ay, dt));
        return d;
    }
    memset(c->count, 0, c->ncell);
    /* on the grid a Verlet world has the leavers' lists (may_prefilter, cpu_backend.c) */
    if (c->threads <= 1) {
        ad_cpu_fused_bin all = {c->count, 0, UINT32_MAX, NULL, 0, 0}; /* every cell its own: nothing listed */
        drift_range_isa(c, &P, 0, n, dt, &all, &d);
    } else {
        d = drift_blocks(&P, c, n, dt);
    }
    c->drift_outside = d.outside;
    c->bin_current = 1;
    c->leavers_valid = c->threads > 1; /* one thread: the reorder reads every disc's cell */
    return d;
}

/* Verlet's priming. A velocity Verlet step drifts with the accelerations of the last force
 * evaluation (acc[cur]: those the last step's pass computed at its drifted positions) and kicks
 * with the new ones. Where no evaluation holds for the current discs (a new world, discs
 * added, segments changed: cpu_world.verlet_primed cleared), a priming pass (INTERACT_PRIME)
 * evaluates the forces of the current state without moving a disc. The flag and the
 * accelerations travel in checkpoints (ad_snapshot.primed), so a resumed run primes exactly
 * where the uninterrupted one does and continues bit for bit. */
static void verlet_prime(ad_world *w, cpu_world *c, float dt)
{
    build_broad_phase(w, c, c->n);
    interact(w, c, c->n, dt, INTERACT_PRIME, 1);
    c->verlet_primed = 1;
}

/* 1 where the next pass may run the prefilters: the states it reads are finite (bad: how many
 * are not), no speed squared reaches v2 = 1e30, and cells are below 1e17 m. */
static int prefilters_may_run(const ad_world *w, const cpu_world *c, uint64_t bad, float v2)
{
    return c->xy.x && c->avx2 && !bad && v2 < 1e30f && w->params.cell_x < 1e17f && w->params.cell_y < 1e17f;
}

/* What a Verlet step does before the grid: the priming pass where no evaluation holds, the drift
 * (binned where it writes), and the contact-free clock for the drift's moves: the pass after it
 * tests the expiries at the drifted positions. The clock jumps past every expiry where the last
 * pass did not keep them (it did not run the prefilters, or discs were added or imported since:
 * prefilter_valid cleared, or it was the priming pass). */
static void verlet_before_grid(ad_world *w, cpu_world *c, float dt)
{
    int kept = c->pass_kept && c->prefilter_valid;
    if (!c->verlet_primed) {
        verlet_prime(w, c, dt);
        kept = 0;
    }
    double t0 = now();
    ad_cpu_drift_seen d = verlet_drift(w, c, c->n, dt);
    w->stats.phase_seconds[AD_PHASE_BIN] += now() - t0; /* the drift is the step's bin */
    c->prefilter_valid = prefilters_may_run(w, c, d.bad, d.v2);
    ad_cpu_free_clock_step(w, c, c->n, kept, dt, d.v2);
}

/* The removals of the last pass, from its block sums. */
static size_t removed_in_pass(const cpu_world *c, size_t nb)
{
    size_t r = 0;
    for (size_t b = 0; b < nb; b++) r += c->blocks[b].left + c->blocks[b].res_removed;
    return r;
}

/* One step: steps 1-3 (build_broad_phase), the reservoir's plan, step 4 (the pass), step 5's
 * entries (open sides, reservoir), step 6's fold. */
static ad_status cpu_one_step(ad_world *w, cpu_world *c, float dt, int obs)
{
    ad_integrator integ = w->def.integrator;
    int open = ad_world_open(w);
    if (integ == AD_INTEGRATOR_VERLET) verlet_before_grid(w, c, dt);
    build_broad_phase(w, c, c->n);
    if (w->params.res_boxes) ad_cpu_reservoir_plan(w, c, dt);
    size_t n = c->n, nb = (n + AD_BLOCK - 1) / AD_BLOCK;
    double t0 = now();
    int kept = c->prefilter_valid; /* the pass keeps the contact-free expiries where it runs the prefilters */
    if (integ == AD_INTEGRATOR_RK4) interact_rk4(w, c, n, dt);
    else interact(w, c, n, dt, INTERACT_STEP, obs);
    float v2_new = 0.0f;
    ad_status st = open ? ad_cpu_open_enter(w, c, dt, &v2_new) : ad_ok();
    ad_stats_fold(w, c->blocks, nb, dt, v2_new);
    if (open) {
        w->count = c->n - removed_in_pass(c, nb);
        w->stats.count = w->count;
    }
    w->stats.phase_seconds[AD_PHASE_INTERACT] += now() - t0;
    if (w->fields.enabled && w->stats.step % w->fields.def.interval == 0) ad_cpu_sample_fields(w, c);
    uint64_t bad = 0;
    float v2 = 0.0f;
    for (size_t b = 0; b < nb; b++) {
        bad += c->blocks[b].nonfinite;
        v2 = fmaxf(v2, c->blocks[b].vmax2);
    }
    /* the next pass may run the prefilters (candidate_screen_cpu.h, contact_free_cpu.h) where
     * the states this pass wrote (which it reads, reordered) are finite and no speed reaches
     * 1e15, and cells are below 1e17 m (with Verlet the drift checks again what it wrote) */
    c->prefilter_valid = prefilters_may_run(w, c, bad, fmaxf(v2, v2_new));
    c->pass_kept = kept;
    if (integ != AD_INTEGRATOR_VERLET) ad_cpu_free_clock_step(w, c, n, kept, dt, v2); /* Verlet's: after its drift */
    if (bad)
        return ad_fail(AD_ERR_UNSTABLE, "dt",
                       "step %llu: %llu discs reached a non-finite position or velocity (the step of %g s is too "
                       "large for the stiffness, or discs were placed overlapping)",
                       (unsigned long long)w->stats.step, (unsigned long long)bad, (double)dt);
    return st;
}

ad_status ad_cpu_step(ad_world *w, uint64_t nsteps)
{
    cpu_world *c = w->impl;
    if (c->dt_stale) {
        /* after particles are added the next step's size comes from their speeds */
        float v2 = 0.0f;
        const ad_state *s = c->state[c->cur];
        size_t n = c->n;
#pragma omp parallel for num_threads(c->threads) reduction(max : v2)
        for (size_t i = 0; i < n; i++) v2 = fmaxf(v2, s[i].vx * s[i].vx + s[i].vy * s[i].vy);
        w->stats.dt = ad_dt_next(&w->dt_rule, sqrt((double)v2));
        c->dt_stale = 0;
    }
    for (uint64_t k = 0; k < nsteps; k++) {
        float dt = (float)w->stats.dt;
        /* The per-disc observables (pressure, virial, acceleration) are written on the steps
         * whose results somebody reads: the last of the call, one before a field sample, and
         * the one that ends the call on an interrupt (an interrupt that comes during a step
         * that does not observe takes one more step, which does) */
        int stop = w->interrupt && *w->interrupt;
        int obs = stop || k + 1 == nsteps ||
                  (w->fields.enabled && (w->stats.step + 1) % w->fields.def.interval == 0);
        double t0 = now();
        size_t n = c->n;
        ad_status st = cpu_one_step(w, c, dt, obs);
        w->stats.threads = c->threads; /* the threads this step ran on */
        ad_cpu_team_after_step(c, now() - t0, n);
        if (st.code) return st;
        if (stop) break;
    }
    return ad_ok();
}
