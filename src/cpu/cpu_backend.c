/* The CPU reference backend (OpenMP): grid counting sort, fused gather-and-integrate, deterministic reductions. */
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
#include "pass_cpu.h"

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


static size_t cells_of(const ad_params *p) { return (size_t)p->nx * (size_t)p->ny; }

/* The worlds whose pass may screen (gather_cpu.h): the grid's, with the one-evaluation
 * integrators whose pass reads the states the last pass's sums were taken over. */
static int screens(const ad_world_def *d)
{
    return d->broad_phase != AD_BROAD_PHASE_BVH &&
           (d->integrator == AD_INTEGRATOR_EULER || d->integrator == AD_INTEGRATOR_SYMPLECTIC_EULER);
}

/* The worlds whose pass keeps the quiet test's expiries (gather_cpu.h): those that screen,
 * on the grid's interior fast path, without open sides (entering discs appear, they do not move there). */
static int keeps_expiries(const ad_world_def *d, const ad_params *p)
{
    return screens(d) && !p->open_x && !p->open_y && ad_cpu_fast_grid(p);
}

static size_t per_particle_bytes(const ad_world_def *d, const ad_params *p)
{
    size_t b = 2 * sizeof(ad_state) + 2 * sizeof(uint32_t) + sizeof(uint32_t) + 2 * sizeof(float);
    b += (d->integrator == AD_INTEGRATOR_VERLET ? 2 : 1) * sizeof(ad_accel);
    if (d->integrator == AD_INTEGRATOR_RK4) b += 3 * sizeof(ad_state);
    if (screens(d)) b += 2 * sizeof(float) + sizeof(uint32_t); /* xy, defer */
    if (keeps_expiries(d, p)) b += 2 * sizeof(float);          /* qexp, qexp_tmp */
    if (p->res_boxes) b += 1;                                   /* the reservoir's removal marks */
    return b;
}

/* Entries of the reorder's foreign lists: a disc in 16 may leave its thread's cells in one
 * step before the reorder falls back to reading every disc on every thread. */
static size_t foreign_entries(size_t capacity) { return capacity / 16 + 4096; }

static size_t cpu_bytes_needed(const ad_world_def *d, const ad_params *p)
{
    size_t blocks = (d->capacity + AD_BLOCK - 1) / AD_BLOCK;
    /* the BVH replaces the grid's per-cell arrays by its per-disc tree */
    size_t broad = d->broad_phase == AD_BROAD_PHASE_BVH ? ad_cpu_bvh_bytes(d->capacity)
                                                        : cells_of(p) + 1 + (cells_of(p) + 3) * sizeof(uint32_t);
    return d->capacity * per_particle_bytes(d, p) + broad + blocks * (sizeof(ad_block_sums) + sizeof(uint32_t)) +
           sizeof(cpu_world) + 2 * AD_CPU_PAD * sizeof(ad_state) + 2 * AD_CPU_XY_PAD * sizeof(float) + foreign_entries(d->capacity) * sizeof(uint32_t);
}

static void cpu_destroy(ad_world *w)
{
    cpu_world *c = w->impl;
    if (!c) return;
    for (int k = 0; k < 2; k++) {
        free(c->state[k]);
        free(c->acc[k]);
    }
    for (int k = 0; k < 3; k++) free(c->rk[k]);
    free(c->id);
    free(c->id_tmp);
    free(c->foreign);
    free(c->accel);
    free(c->cell_of);
    free(c->xy.x);
    free(c->xy.y);
    free(c->blk_outside);
    free(c->ranges);
    free(c->defer);
    free(c->qexp);
    free(c->qexp_tmp);
    free(c->blk_defer);
    free(c->blk_lo);
    free(c->count);
    free(c->start);
    free(c->pressure);
    free(c->virial);
    free(c->blocks);
    ad_cpu_bvh_free(&c->bvh);
    ad_cpu_open_destroy(c);
    free(c);
    w->impl = NULL;
}

/* Allocates and touches from the threads that will use the memory (first touch). */
static void *alloc_touch(size_t bytes, int threads, int *fail)
{
    if (*fail) return NULL;
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        *fail = 1;
        return NULL;
    }
    unsigned char *b = p;
    size_t chunk = 1 << 20, nchunk = (bytes + chunk - 1) / chunk;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t i = 0; i < nchunk; i++) {
        size_t a = i * chunk, e = a + chunk < bytes ? a + chunk : bytes;
        memset(b + a, 0, e - a);
    }
    return p;
}

/* The quiet test's clock (gather_cpu.h, ad_cpu_quiet8_avx2). Its rounding allowances come from
 * the largest coordinate of the grid: a float position there is good to half an ulp. */
static double coord_ulp(const ad_params *P)
{
    double R = fmax(fmax(fabs((double)P->origin_x), fabs((double)P->origin_x + (double)P->nx * P->cell_x)),
                    fmax(fabs((double)P->origin_y), fabs((double)P->origin_y + (double)P->ny * P->cell_y)));
    return ldexp(1.0, ilogb(R > 1e-30 ? R : 1e-30) - 23);
}

/* The clock as the next pass takes it: rounded up for the expiry test, down for new expiries. */
static void quiet_clock_floats(cpu_world *c)
{
    float f = (float)c->quiet_clock;
    c->qc.up = (double)f >= c->quiet_clock ? f : nextafterf(f, INFINITY);
    c->qc.down = (double)f <= c->quiet_clock ? f : nextafterf(f, -INFINITY);
}

/* The clock at zero, and the world's constants of it. */
static void quiet_clock_init(ad_world *w, cpu_world *c)
{
    const ad_params *P = &w->params;
    c->quiet_clock = 0.0;
    c->quiet_v2 = 0.0f;
    c->quiet_ulp = coord_ulp(P);
    c->qc.dlim = sqrtf(P->diameter_sq) * (1.0f + 1e-5f);
    c->qc.slack = (float)(8.0 * c->quiet_ulp + 1e-6 * (double)P->diameter);
    quiet_clock_floats(c);
}

/* After a step: the clock grows by twice the largest distance a disc moved (its speed before
 * or after the step, times dt), plus the positions' rounding; and past every expiry (margins
 * stay below 1.5 cells) where the pass did not keep the expiries or a disc moved more than
 * a quarter cell (gather_cpu.h: a disc that wraps lands that close to an edge). Far along,
 * where a float of the clock would round margins away, it starts again from zero with every
 * expiry cleared. */
static void quiet_clock_step(const ad_world *w, cpu_world *c, size_t n, int kept, double dt, float v2)
{
    if (!c->qexp) return;
    const ad_params *P = &w->params;
    double move = sqrt((double)fmaxf(v2, c->quiet_v2)) * dt;
    double wmin = fmin((double)P->cell_x, (double)P->cell_y), wmax = fmax((double)P->cell_x, (double)P->cell_y);
    c->quiet_v2 = v2;
    if (!kept || !(move <= 0.25 * wmin)) c->quiet_clock += 2.0 * wmax;
    c->quiet_clock += 2.0 * move * (1.0 + 1e-6) + 2.0 * c->quiet_ulp;
    if (!(c->quiet_clock < 4096.0 * wmax)) {
        for (size_t i = 0; i < n; i++) c->qexp[i] = -INFINITY;
        c->quiet_clock = 0.0;
    }
    quiet_clock_floats(c);
}

static ad_status cpu_create(ad_world *w)
{
    const ad_world_def *d = &w->def;
    size_t need = cpu_bytes_needed(d, &w->params), avail = ad_host_bytes_available();
    char nb[64], ab[64];
    ad_format_bytes((double)need, nb, sizeof nb);
    ad_format_bytes((double)avail, ab, sizeof ab);
    if (need > avail)
        return ad_fail(AD_ERR_NO_MEMORY, "capacity",
                       "capacity: the world needs %s (%zu particles x %zu bytes + %zu cells x 8 bytes) but only %s "
                       "of host memory is available",
                       nb, d->capacity, per_particle_bytes(d, &w->params), cells_of(&w->params), ab);
    if (d->broad_phase == AD_BROAD_PHASE_BVH && d->bvh_traversal == AD_BVH_REFLEXIVE)
        return ad_fail(AD_ERR_INVALID, "bvh_traversal",
                       "bvh_traversal = reflexive adds each pair's force to both discs with float atomics; the CPU "
                       "backend (each disc writes only itself, deterministically) gathers: use gather, or "
                       "backend = cuda");
    cpu_world *c = calloc(1, sizeof *c);
    if (!c) return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory");
    w->impl = c;
#ifdef _OPENMP
    c->threads = d->threads > 0 ? d->threads : omp_get_max_threads();
#else
    c->threads = 1;
#endif
    w->stats.threads = c->threads;
    w->stats.cell_counter_bits = 8; /* grid_cpu.h */
#ifdef AD_CPU_X86
    __builtin_cpu_init();
    c->avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && !getenv("AD_CPU_NO_AVX2");
#endif
    c->cap = d->capacity;
    c->use_bvh = d->broad_phase == AD_BROAD_PHASE_BVH;
    /* the grid's cells and, after them, the cell of discs removed in a pass (open.h) */
    c->ncell = c->use_bvh ? 0 : cells_of(&w->params) + 1;
    c->nblocks = (c->cap + AD_BLOCK - 1) / AD_BLOCK;
    int fail = 0, t = c->threads;
    for (int k = 0; k < 2; k++) {
        /* AD_CPU_PAD more: the fast gather copies 4 states of a row whatever its length */
        c->state[k] = alloc_touch((c->cap + AD_CPU_PAD) * sizeof(ad_state), t, &fail);
        if (d->integrator == AD_INTEGRATOR_VERLET) c->acc[k] = alloc_touch(c->cap * sizeof(ad_accel), t, &fail);
    }
    if (d->integrator == AD_INTEGRATOR_RK4)
        for (int k = 0; k < 3; k++) c->rk[k] = alloc_touch(c->cap * sizeof(ad_state), t, &fail);
    if (d->integrator != AD_INTEGRATOR_VERLET) c->accel = alloc_touch(c->cap * sizeof(ad_accel), t, &fail);
    c->id = alloc_touch(c->cap * sizeof(uint32_t), t, &fail);
    c->id_tmp = alloc_touch(c->cap * sizeof(uint32_t), t, &fail);
    c->foreign_cap = foreign_entries(c->cap);
    c->foreign = alloc_touch(c->foreign_cap * sizeof(uint32_t), t, &fail);
    c->cell_of = alloc_touch(c->cap * sizeof(uint32_t), t, &fail);
    if (screens(d)) { /* the screen reads 8 lanes of a row whatever its length */
        c->xy.x = alloc_touch((c->cap + AD_CPU_XY_PAD) * sizeof(float), t, &fail);
        c->xy.y = alloc_touch((c->cap + AD_CPU_XY_PAD) * sizeof(float), t, &fail);
    }
    c->pressure = alloc_touch(c->cap * sizeof(float), t, &fail);
    c->virial = alloc_touch(c->cap * sizeof(float), t, &fail);
    c->count = alloc_touch(c->ncell, t, &fail);
    /* ncell + 2: the scan writes the starts one place on, the reorder counts them up into
     * place (ad_cpu_reorder) */
    c->start = alloc_touch((c->ncell + 2) * sizeof(uint32_t), t, &fail);
    c->blocks = alloc_touch(c->nblocks * sizeof(ad_block_sums), t, &fail);
    c->blk_outside = alloc_touch(c->nblocks * sizeof(uint32_t), t, &fail);
    c->ranges = aligned_alloc(64, (size_t)t * sizeof *c->ranges);
    if (!c->ranges) fail = 1;
    if (screens(d)) { /* the pass's bin (ad_cpu_bins) */
        c->defer = alloc_touch(c->cap * sizeof(uint32_t), t, &fail);
        c->blk_defer = alloc_touch(c->nblocks * sizeof(uint32_t), t, &fail);
        c->blk_lo = alloc_touch(c->nblocks * sizeof(uint32_t), t, &fail);
    }
    if (keeps_expiries(d, &w->params) && c->avx2) { /* zero: below every clock, no expiry */
        c->qexp = alloc_touch((c->cap + 8) * sizeof(float), t, &fail);
        c->qexp_tmp = alloc_touch((c->cap + 8) * sizeof(float), t, &fail);
        quiet_clock_init(w, c);
    }
    if (c->use_bvh && !fail) fail = ad_cpu_bvh_alloc(&c->bvh, c->cap);
    if (fail) {
        cpu_destroy(w);
        return ad_fail(AD_ERR_NO_MEMORY, "capacity", "capacity: allocating %s for the world failed", nb);
    }
    ad_status st = ad_cpu_open_create(w, c);
    if (st.code) cpu_destroy(w);
    return st;
}

static ad_status cpu_add_particles(ad_world *w, const ad_particle *p, size_t n)
{
    cpu_world *c = w->impl;
    if (c->n + n > c->cap) /* removed discs still hold their slots until the next sort */
        return ad_fail(AD_ERR_CAPACITY, "capacity", "capacity: adding %zu particles to %zu slots in use exceeds %zu",
                       n, c->n, c->cap);
    size_t at = c->n;
    ad_state *s = c->state[c->cur] + at;
    for (size_t i = 0; i < n; i++) {
        s[i] = (ad_state){p[i].x, p[i].y, p[i].vx, p[i].vy};
        s[i] = ad_wrap_state(&w->params, s[i]);
        c->id[at + i] = ad_cpu_new_id(c);
        c->pressure[at + i] = 0.0f;
        c->virial[at + i] = 0.0f;
    }
    c->n += n;
    if (c->acc[c->cur]) memset(c->acc[c->cur] + at, 0, n * sizeof(ad_accel));
    if (c->accel) memset(c->accel + at, 0, n * sizeof(ad_accel));
    c->primed = 0;
    c->dt_stale = 1;
    c->binned = 0;
    c->screen = 0;
    return ad_ok();
}

static ad_status cpu_set_segments(ad_world *w)
{
    ((cpu_world *)w->impl)->primed = 0;
    return ad_ok();
}

/* Steps 1-3: bin, scan, scatter; the state (and Verlet accelerations) end in cell order.
 * After a step of Euler or symplectic Euler the bin is already done: the gather pass
 * binned each disc where it wrote its new position (c->binned). */
static void build_grid(ad_world *w, cpu_world *c, size_t n)
{
    double t0 = now();
    ad_grid_diag diag;
    if (c->binned) {
        diag.outside = 0;
        for (size_t b = 0; b < c->nblocks; b++) diag.outside += c->blk_outside[b];
    } else {
        memset(c->count, 0, c->ncell);
        ad_cpu_bin(&w->params, c->state[c->cur], n, c->cell_of, c->count, c->threads, &diag);
        c->moved = 0; /* binned here, not by the pass */
    }
    c->binned = 0;
    double t1 = now();
    /* the scan writes the starts one place on; the reorder counts them up as its cursor,
     * and c->start is then the start array (ad_cpu_reorder). On several threads the two are
     * one region (ad_cpu_sort), timed as the scatter. */
    c->start[0] = 0;
    const ad_cpu_xy *xy = c->avx2 && c->xy.x ? &c->xy : NULL;
    double t2 = t1;
    if (c->threads > 1) {
        const ad_cpu_moved moved = {c->blk_lo, c->defer, c->blk_defer};
        ad_cpu_sort(c->count, c->start + 1, c->cell_of, n, c->ncell, c->threads, w->stats.cell_capacity,
                    c->state[c->cur], c->state[!c->cur], c->id, c->id_tmp, c->acc[c->cur], c->acc[!c->cur], c->qexp,
                    c->qexp_tmp, xy, c->moved ? &moved : NULL, c->foreign, c->foreign_cap, &diag);
    } else {
        ad_cpu_scan(c->count, c->start + 1, c->ncell, c->cell_of, n, w->stats.cell_capacity, &diag);
        t2 = now();
        ad_cpu_reorder(c->cell_of, n, c->start + 1, c->ncell, 1, c->state[c->cur], c->state[!c->cur], c->id,
                       c->id_tmp, c->acc[c->cur], c->acc[!c->cur], c->qexp, c->qexp_tmp, xy, c->foreign,
                       c->foreign_cap);
    }
    c->rows_fit = diag.max_run3 <= 8;
    uint32_t *idst = c->id_tmp;
    c->cur = !c->cur;
    c->id_tmp = c->id;
    c->id = idst;
    float *qdst = c->qexp_tmp;
    c->qexp_tmp = c->qexp;
    c->qexp = qdst;
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
    const ad_accel *asrc = c->acc[c->cur];
    ad_accel *adst = c->acc[!c->cur];
#pragma omp parallel for num_threads(c->threads) schedule(static)
    for (size_t s = 0; s < n; s++) {
        uint32_t i = perm[s];
        dst[s] = src[i];
        idst[s] = isrc[i];
        if (adst) adst[s] = asrc[i];
    }
    c->cur = !c->cur;
    c->id_tmp = c->id;
    c->id = idst;
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
    else build_grid(w, c, n);
}

/* The pass of one block in the portable build; the AVX2 build is ad_cpu_pass_block_avx2
 * (src/cpu/pass_avx2.c). */
AD_CPU_DEFINE_PASS(ad_cpu_pass_block_portable)

/* The AVX2 build of a block where the CPU has it (checked at run time: builds do not assume -march). */
AD_CPU_INLINE void interact_block_isa(const ad_world *w, cpu_world *c, size_t b, size_t n, float dt,
                                      ad_integrator integ, pass_kind kind, uint64_t step, int obs)
{
#ifdef AD_CPU_X86
    if (c->avx2) {
        ad_cpu_pass_block_avx2(w, c, b, n, dt, integ, kind, step, obs);
        return;
    }
#endif
    ad_cpu_pass_block_portable(w, c, b, n, dt, integ, kind, step, obs);
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
#else
#define AD_THREAD_NUM() 0
#endif
/* Runs `body` for every block b of the pass on the world's threads (claim_block). */
#define FOR_BLOCKS(c, b, body)                                                                                    \
    _Pragma("omp parallel num_threads(c->threads)")                                                              \
    {                                                                                                             \
        int k_ = AD_THREAD_NUM();                                                                                 \
        size_t b;                                                                                                 \
        while (claim_block(c, k_, &b)) body;                                                                      \
    }

/* Step 4; obs: the per-disc observables are written (a step somebody reads, cpu_step). */
static void interact(ad_world *w, cpu_world *c, size_t n, float dt, pass_kind kind, int obs)
{
    uint64_t step = w->stats.step;
    size_t nb = (n + AD_BLOCK - 1) / AD_BLOCK;
    ad_integrator integ = w->def.integrator;
    /* the grid's pass bins its output (the BVH keys its discs in its own build) */
    int bins = kind == PASS_STEP && integ != AD_INTEGRATOR_VERLET && !c->use_bvh; /* the scan cleared count */
    /* one call site per integrator so each loop is compiled for its own */
    claim_init(c, nb);
    switch (kind == PASS_PRIME ? -1 : (int)integ) {
    case AD_INTEGRATOR_EULER:
        FOR_BLOCKS(c, b, interact_block_isa(w, c, b, n, dt, AD_INTEGRATOR_EULER, PASS_STEP, step, obs));
        break;
    case AD_INTEGRATOR_VERLET:
        FOR_BLOCKS(c, b, interact_block_isa(w, c, b, n, dt, AD_INTEGRATOR_VERLET, PASS_STEP, step, obs));
        break;
    case -1:
        FOR_BLOCKS(c, b, interact_block_isa(w, c, b, n, dt, integ, PASS_PRIME, step, 1));
        break;
    default:
        FOR_BLOCKS(c, b, interact_block_isa(w, c, b, n, dt, AD_INTEGRATOR_SYMPLECTIC_EULER, PASS_STEP, step, obs));
        break;
    }
    if (bins && c->threads > 1 && c->defer) /* the counts of discs that left their block's cells */
        for (size_t b = 0; b < nb; b++)
            for (uint32_t k = 0; k < c->blk_defer[b]; k++) c->count[c->cell_of[c->defer[b * AD_BLOCK + k]]]++;
    c->moved = bins && c->threads > 1 && c->defer;
    c->cur = !c->cur;
    c->binned = bins;
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
    ad_block_sums *sums = &c->blocks[b];
    if (k == 0) memset(sums, 0, sizeof *sums);
    float skin = (float)(w->def.max_move * w->def.radius);
    size_t s0 = b * AD_BLOCK, s1 = s0 + AD_BLOCK < n ? s0 + AD_BLOCK : n;
    ad_cpu_motion8 m8; /* the motion sums as the pass takes them (tail_cpu.h) */
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
        ad_state nx = ad_rk4_stage(b0, me, ax, ay, dt, k, &acc[s]);
        int fate = 0;
        if (k == 3) {
            nx = ad_apply_boundaries(&P, nx, c->id, s, w->stats.step, dt, doomed(c, s), &fate);
            count_removed(sums, fate);
        }
        out[s] = nx;
        if (k == 3 && !fate) {
            ad_cpu_motion_lane(&m8, sums, &P, nx, (unsigned)(s - s0));
            float dx = ad_min_image(nx.x - b0.x, P.periodic_x, P.len_x, P.half_x);
            float dy = ad_min_image(nx.y - b0.y, P.periodic_y, P.len_y, P.half_y);
            sums->skin_violations += dx * dx + dy * dy > skin * skin;
        }
    }
    if (k == 3) ad_cpu_fold_motion(&m8, sums);
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

/* Verlet's drift runs before binning, in place: each disc moves itself only. Removals past
 * open sides wait for the end of the step (the kick in interact_block). */
static void verlet_drift(ad_world *w, cpu_world *c, size_t n, float dt)
{
    const ad_params P = w->params;
    ad_state *s = c->state[c->cur];
    const ad_accel *acc = c->acc[c->cur];
#pragma omp parallel for num_threads(c->threads) schedule(static)
    for (size_t i = 0; i < n; i++)
        s[i] = ad_wrap_state(&P, ad_verlet_drift(s[i], acc[i].ax, acc[i].ay, dt));
}

static const ad_accel *observed_accel(const cpu_world *c)
{
    return c->accel ? c->accel : c->acc[c->cur];
}

/* Adds the current discs to the field sums, serially in slot order: cheap next to
 * a step (it runs every `interval` steps) and the same sums for any thread count. A removed
 * disc (NaN position, until the next sort) falls in no cell. */
static void sample_fields(ad_world *w, const cpu_world *c)
{
    ad_fields *f = &w->fields;
    const ad_state *s = c->state[c->cur];
    const ad_accel *acc = observed_accel(c);
    double *probe = f->sums + (size_t)f->def.nx * f->def.ny * AD_FS_COUNT;
    for (size_t k = 0; k < c->n; k++) {
        if (ad_in_probe(&f->grid, s[k])) {
            double v[AD_PS_COUNT];
            ad_probe_values(&f->grid, s[k], v);
            for (int q = 0; q < AD_PS_COUNT; q++) probe[q] += v[q];
        }
        int cell = ad_field_cell(&f->grid, s[k].x, s[k].y);
        if (cell < 0) continue;
        double v[AD_FS_COUNT];
        ad_field_values(s[k], c->virial[k], c->pressure[k], acc[k].ax, acc[k].ay, v);
        double *dst = f->sums + (size_t)cell * AD_FS_COUNT;
        for (int q = 0; q < AD_FS_COUNT; q++) dst[q] += v[q];
    }
    f->samples++;
    if (f->grid.probe) f->probe_samples++;
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
    if (integ == AD_INTEGRATOR_VERLET && !c->primed) {
        /* Verlet needs the forces of the current state before its first drift */
        build_broad_phase(w, c, c->n);
        interact(w, c, c->n, dt, PASS_PRIME, 1);
        c->primed = 1;
    }
    if (integ == AD_INTEGRATOR_VERLET) verlet_drift(w, c, c->n, dt);
    build_broad_phase(w, c, c->n);
    if (w->params.res_boxes) ad_cpu_reservoir_plan(w, c, dt);
    size_t n = c->n, nb = (n + AD_BLOCK - 1) / AD_BLOCK;
    double t0 = now();
    int kept = c->screen; /* the pass keeps the quiet test's expiries where it screens */
    if (integ == AD_INTEGRATOR_RK4) interact_rk4(w, c, n, dt);
    else interact(w, c, n, dt, PASS_STEP, obs);
    float v2_new = 0.0f;
    ad_status st = open ? ad_cpu_open_enter(w, c, dt, &v2_new) : ad_ok();
    ad_stats_fold(w, c->blocks, nb, dt, v2_new);
    if (open) {
        w->count = c->n - removed_in_pass(c, nb);
        w->stats.count = w->count;
    }
    w->stats.phase_seconds[AD_PHASE_INTERACT] += now() - t0;
    if (w->fields.enabled && w->stats.step % w->fields.def.interval == 0) sample_fields(w, c);
    uint64_t bad = 0;
    float v2 = 0.0f;
    for (size_t b = 0; b < nb; b++) {
        bad += c->blocks[b].nonfinite;
        v2 = fmaxf(v2, c->blocks[b].vmax2);
    }
    /* the next pass may screen (gather_cpu.h) where the states this pass wrote (which it
     * reads, reordered) are finite and no speed reaches 1e15, and cells are below 1e17 m */
    c->screen = c->xy.x && c->avx2 && !bad && v2 < 1e30f && v2_new < 1e30f && w->params.cell_x < 1e17f &&
                w->params.cell_y < 1e17f;
    quiet_clock_step(w, c, n, kept, dt, v2);
    if (bad)
        return ad_fail(AD_ERR_UNSTABLE, "dt",
                       "step %llu: %llu discs reached a non-finite position or velocity (the step of %g s is too "
                       "large for the stiffness, or discs were placed overlapping)",
                       (unsigned long long)w->stats.step, (unsigned long long)bad, (double)dt);
    return st;
}

static ad_status cpu_step(ad_world *w, uint64_t nsteps)
{
    cpu_world *c = w->impl;
    if (c->dt_stale) {
        /* after particles are added the next step's size comes from their speeds */
        float v2 = 0.0f;
        const ad_state *s = c->state[c->cur];
        size_t n = c->n;
#pragma omp parallel for num_threads(c->threads) reduction(max : v2)
        for (size_t i = 0; i < n; i++) v2 = fmaxf(v2, s[i].vx * s[i].vx + s[i].vy * s[i].vy);
        w->stats.dt = ad_next_dt(w, sqrt((double)v2));
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
        ad_status st = cpu_one_step(w, c, dt, obs);
        if (st.code) return st;
        if (stop) break;
    }
    return ad_ok();
}

static ad_status cpu_read(const ad_world *w, int flags, size_t max, const ad_particle_out *out, size_t *count)
{
    const cpu_world *c = w->impl;
    size_t n = w->count < max ? w->count : max;
    const ad_state *s = c->state[c->cur];
    const uint32_t *ids = c->id;
    const ad_accel *acc = observed_accel(c);
    uint32_t *order;
    ad_status st = ad_slot_order(s, ids, c->n, w->count, (flags & AD_READ_BY_ID) != 0, &order);
    if (st.code) return st;
    for (size_t o = 0; o < n; o++) {
        size_t k = order ? order[o] : o;
        if (out->state) out->state[o] = (ad_particle){s[k].x, s[k].y, s[k].vx, s[k].vy};
        if (out->id) out->id[o] = ids[k];
        if (out->pressure) out->pressure[o] = c->pressure[k];
        if (out->virial) out->virial[o] = c->virial[k];
        if (out->accel) {
            out->accel[2 * o] = acc[k].ax;
            out->accel[2 * o + 1] = acc[k].ay;
        }
    }
    free(order);
    if (count) *count = n;
    return ad_ok();
}

/* The CPU's arrays are the snapshot, with no copy where no removed disc holds a slot; else the
 * discs are copied out in slot order. The open sides' state is the world's own (not owned). */
static ad_status cpu_export(const ad_world *w, ad_snapshot *s)
{
    const cpu_world *c = w->impl;
    memset(s, 0, sizeof *s);
    s->n = w->count;
    s->primed = c->primed;
    s->open = c->open;
    const ad_accel *acc = observed_accel(c);
    if (c->n == w->count) {
        s->state = c->state[c->cur];
        s->id = c->id;
        s->pressure = c->pressure;
        s->virial = c->virial;
        s->accel = (ad_accel *)acc;
        return ad_ok();
    }
    size_t n = w->count;
    s->owned = 1;
    s->state = malloc(n * sizeof *s->state + 1);
    s->id = malloc(n * 4 + 1);
    s->pressure = malloc(n * 4 + 1);
    s->virial = malloc(n * 4 + 1);
    s->accel = malloc(n * sizeof *s->accel + 1);
    if (!s->state || !s->id || !s->pressure || !s->virial || !s->accel) {
        ad_snapshot_free(s);
        return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory for a snapshot of %zu particles", n);
    }
    const ad_state *st = c->state[c->cur];
    size_t m = 0;
    for (size_t k = 0; k < c->n && m < n; k++) {
        if (ad_is_dead(st[k])) continue;
        s->state[m] = st[k];
        s->id[m] = c->id[k];
        s->pressure[m] = c->pressure[k];
        s->virial[m] = c->virial[k];
        s->accel[m] = acc[k];
        m++;
    }
    return ad_ok();
}

static ad_status cpu_import(ad_world *w, const ad_snapshot *s)
{
    cpu_world *c = w->impl;
    if (s->n > c->cap) return ad_fail(AD_ERR_CAPACITY, "capacity", "capacity: the snapshot holds %zu discs", s->n);
    /* the arrays below are the world's, sized at creation: a snapshot that does not fit them is refused */
    if (s->open.nwaiting > AD_WAITING_MAX || (s->open.res_state && s->open.res_boxes != c->open.res_boxes))
        return ad_fail(AD_ERR_FORMAT, "checkpoint",
                       "the snapshot has %u entries waiting (at most %d) and %u reservoir boxes (the world has %u)",
                       s->open.nwaiting, AD_WAITING_MAX, s->open.res_boxes, c->open.res_boxes);
    memcpy(c->state[c->cur], s->state, s->n * sizeof(ad_state));
    memcpy(c->id, s->id, s->n * sizeof(uint32_t));
    memcpy(c->pressure, s->pressure, s->n * sizeof(float));
    memcpy(c->virial, s->virial, s->n * sizeof(float));
    memcpy(c->accel ? c->accel : c->acc[c->cur], s->accel, s->n * sizeof(ad_accel));
    c->n = s->n;
    memcpy(c->open.owed, s->open.owed, sizeof c->open.owed);
    c->open.next_id = s->open.next_id;
    if (s->open.res_state)
        memcpy(c->open.res_state, s->open.res_state, 2 * (size_t)s->open.res_boxes * sizeof(double));
    c->open.nwaiting = s->open.nwaiting;
    if (s->open.nwaiting) memcpy(c->open.waiting, s->open.waiting, s->open.nwaiting * sizeof(ad_entry));
    c->primed = s->primed;
    c->dt_stale = 0;
    c->binned = 0;
    c->screen = 0;
    return ad_ok();
}

ad_status ad_cpu_bvh_dump(const ad_world *w, ad_bvh_dump *out)
{
    const cpu_world *c = w->impl;
    if (!c->use_bvh || !c->tree.point) return ad_fail(AD_ERR_INVALID, "broad_phase", "no BVH has been built");
    size_t n = c->tree.n;
    out->n = n;
    memcpy(out->code, c->bvh.code, n * sizeof(uint32_t));
    memcpy(out->id, c->id, n * sizeof(uint32_t));
    memcpy(out->point, c->tree.point, n * sizeof(ad_state));
    if (n > 1) {
        memcpy(out->child, c->bvh.child, 2 * (n - 1) * sizeof(uint32_t));
        memcpy(out->rightmost, c->bvh.rightmost, (n - 1) * sizeof(uint32_t));
        memcpy(out->parent, c->bvh.parent, (2 * n - 1) * sizeof(uint32_t));
        memcpy(out->box, c->bvh.box, (n - 1) * sizeof(ad_bvh_box));
    }
    return ad_ok();
}

const ad_backend_ops ad_cpu_backend = {
    .name = "cpu",
    .create = cpu_create,
    .destroy = cpu_destroy,
    .add_particles = cpu_add_particles,
    .set_segments = cpu_set_segments,
    .step = cpu_step,
    .read = cpu_read,
    .export_state = cpu_export,
    .import_state = cpu_import,
    .fields_to_host = NULL,
    .fields_to_device = NULL,
    .pull_stats = NULL,
    .bytes_needed = cpu_bytes_needed,
};
