/* The CPU reference backend (OpenMP): its table, the memory a world needs, creation, destruction, adding discs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/world_internal.h"
#include "../physics/integrate.h"
#include "bvh_cpu.h"
#include "cpu_world.h"
#include "gather_cpu.h"
#include "grid_cpu.h"

#ifdef _OPENMP
#include <omp.h>
#endif

static size_t cells_of(const ad_params *p) { return (size_t)p->nx * (size_t)p->ny; }

/* The worlds whose pass may run the prefilters (candidate_screen_cpu.h, contact_free_cpu.h) and
 * bins as it writes (fused_bin_cpu.h): the grid's, with the one-evaluation integrators whose
 * pass reads the states the last pass's sums were taken over. */
static int may_prefilter(const ad_world_def *d)
{
    return d->broad_phase != AD_BROAD_PHASE_BVH &&
           (d->integrator == AD_INTEGRATOR_EULER || d->integrator == AD_INTEGRATOR_SYMPLECTIC_EULER);
}

/* The worlds whose pass keeps the contact-free expiries (contact_free_cpu.h): those that
 * prefilter, on the grid's interior fast path, without open sides (entering discs appear, they
 * do not move there). */
static int keeps_free_until(const ad_world_def *d, const ad_params *p)
{
    return may_prefilter(d) && !p->open_x && !p->open_y && ad_cpu_fast_grid(p);
}

static size_t per_particle_bytes(const ad_world_def *d, const ad_params *p)
{
    size_t b = 2 * sizeof(ad_state) + 2 * sizeof(uint32_t) + sizeof(uint32_t) + 2 * sizeof(float);
    b += (d->integrator == AD_INTEGRATOR_VERLET ? 2 : 1) * sizeof(ad_accel);
    if (d->integrator == AD_INTEGRATOR_RK4) b += 3 * sizeof(ad_state);
    if (may_prefilter(d)) b += 2 * sizeof(float) + sizeof(uint32_t); /* xy, leavers */
    if (keeps_free_until(d, p)) b += 2 * sizeof(float);              /* free_until, free_until_tmp */
    if (p->res_boxes) b += 1;                                         /* the reservoir's removal marks */
    return b;
}

/* Entries of the reorder's lists of strays: a disc in 16 may leave its thread's cells in one
 * step before the reorder falls back to reading every disc on every thread. */
static size_t stray_entries(size_t capacity) { return capacity / 16 + 4096; }

static size_t cpu_bytes_needed(const ad_world_def *d, const ad_params *p)
{
    size_t blocks = (d->capacity + AD_BLOCK - 1) / AD_BLOCK;
    /* the BVH replaces the grid's per-cell arrays by its per-disc tree */
    size_t broad = d->broad_phase == AD_BROAD_PHASE_BVH ? ad_cpu_bvh_bytes(d->capacity)
                                                        : cells_of(p) + 1 + (cells_of(p) + 3) * sizeof(uint32_t);
    return d->capacity * per_particle_bytes(d, p) + broad + blocks * (sizeof(ad_step_sums) + sizeof(uint32_t)) +
           sizeof(cpu_world) + 2 * AD_CPU_PAD * sizeof(ad_state) + 2 * AD_CPU_XY_PAD * sizeof(float) +
           stray_entries(d->capacity) * sizeof(uint32_t);
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
    free(c->touch);
    free(c->touch_tmp);
    free(c->strays);
    free(c->accel);
    free(c->cell_of);
    free(c->xy.x);
    free(c->xy.y);
    free(c->blk_outside);
    free(c->ranges);
    free(c->leavers);
    free(c->free_until);
    free(c->free_until_tmp);
    free(c->blk_leavers);
    free(c->blk_first_cell);
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

/* The world's arrays, each touched first by the threads that use it; 1 where one failed. */
static int alloc_arrays(ad_world *w, cpu_world *c)
{
    const ad_world_def *d = &w->def;
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
    c->touch = alloc_touch(c->cap * sizeof(uint32_t), t, &fail);
    c->touch_tmp = alloc_touch(c->cap * sizeof(uint32_t), t, &fail);
    c->strays_cap = stray_entries(c->cap);
    c->strays = alloc_touch(c->strays_cap * sizeof(uint32_t), t, &fail);
    c->cell_of = alloc_touch(c->cap * sizeof(uint32_t), t, &fail);
    if (may_prefilter(d)) { /* the prefilters read 8 lanes of a row whatever its length */
        c->xy.x = alloc_touch((c->cap + AD_CPU_XY_PAD) * sizeof(float), t, &fail);
        c->xy.y = alloc_touch((c->cap + AD_CPU_XY_PAD) * sizeof(float), t, &fail);
    }
    c->pressure = alloc_touch(c->cap * sizeof(float), t, &fail);
    c->virial = alloc_touch(c->cap * sizeof(float), t, &fail);
    c->count = alloc_touch(c->ncell, t, &fail);
    /* ncell + 2: the scan writes the starts one place on, the reorder counts them up into
     * place (ad_cpu_reorder) */
    c->start = alloc_touch((c->ncell + 2) * sizeof(uint32_t), t, &fail);
    c->blocks = alloc_touch(c->nblocks * sizeof(ad_step_sums), t, &fail);
    c->blk_outside = alloc_touch(c->nblocks * sizeof(uint32_t), t, &fail);
    c->ranges = aligned_alloc(64, (size_t)t * sizeof *c->ranges);
    if (!c->ranges) fail = 1;
    if (may_prefilter(d)) { /* the pass's bin (fused_bin_cpu.h) */
        c->leavers = alloc_touch(c->cap * sizeof(uint32_t), t, &fail);
        c->blk_leavers = alloc_touch(c->nblocks * sizeof(uint32_t), t, &fail);
        c->blk_first_cell = alloc_touch(c->nblocks * sizeof(uint32_t), t, &fail);
    }
    if (keeps_free_until(d, &w->params) && c->avx2) { /* zero: below every clock, no expiry */
        c->free_until = alloc_touch((c->cap + 8) * sizeof(float), t, &fail);
        c->free_until_tmp = alloc_touch((c->cap + 8) * sizeof(float), t, &fail);
        ad_cpu_free_clock_init(w, c);
    }
    if (c->use_bvh && !fail) fail = ad_cpu_bvh_alloc(&c->bvh, c->cap);
    return fail;
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
    if (alloc_arrays(w, c)) {
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
        c->touch[at + i] = 0;
        c->pressure[at + i] = 0.0f;
        c->virial[at + i] = 0.0f;
    }
    c->n += n;
    if (c->acc[c->cur]) memset(c->acc[c->cur] + at, 0, n * sizeof(ad_accel));
    if (c->accel) memset(c->accel + at, 0, n * sizeof(ad_accel));
    c->verlet_primed = 0;
    c->dt_stale = 1;
    c->bin_current = 0;
    c->prefilter_valid = 0;
    return ad_ok();
}

static ad_status cpu_set_segments(ad_world *w)
{
    ((cpu_world *)w->impl)->verlet_primed = 0;
    return ad_ok();
}

const ad_backend_ops ad_cpu_backend = {
    .name = "cpu",
    .create = cpu_create,
    .destroy = cpu_destroy,
    .add_particles = cpu_add_particles,
    .set_segments = cpu_set_segments,
    .step = ad_cpu_step,
    .read = ad_cpu_read,
    .export_state = ad_cpu_export,
    .import_state = ad_cpu_import,
    .fields_to_host = NULL,
    .fields_to_device = NULL,
    .pull_stats = NULL,
    .bytes_needed = cpu_bytes_needed,
};
