/* One step of a 3D world on the CPU: the pipeline of DESIGN.md over spheres, with the physics of the
 * shared headers written once for both dimensions (the cell index, the stencil, the contact law, the
 * integrators, the step's sums).
 *
 *   1. bin: every sphere's cell (ad_cell_index3), in parallel;
 *   2. scan: the exclusive prefix sum of the cells' counts (32-bit counters);
 *   3. scatter: a stable counting sort (a sphere's slot is its cell's start plus its rank among the
 *      cell's spheres in slot order), state, ids and accelerations moved together;
 *   4. interact + integrate: each sphere gathers its own contacts (ad_gather_all3: the 27 cells of
 *      the stencil at reach 1, the triangles, the walls) and writes its new state into the other
 *      buffer; symplectic Euler, Euler, velocity Verlet (drift before the bin, kick after the
 *      gather) or RK4 (four gathers on the grid of the step's start);
 *   5. boundaries: the periodic wraps (3D has no open sides yet);
 *   6. observe: the sums of fixed blocks of AD_BLOCK slots, folded in block order (the next dt).
 *
 * Deterministic for any thread count: each sphere writes only itself, the sort is serial and stable,
 * and the blocks are fixed. What the 2D CPU backend adds for speed (the fused bin, 8-bit counters, the
 * prefilters, AVX2) is not here yet: this is the plain pipeline, run over threads. */
#include <math.h>
#include <string.h>
#include <time.h>

#include "../physics/integrate.h"
#include "cpu3_world.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ---------------------------------------------------------- steps 1-3 -- */

static void bin(ad_world *w, cpu3_world *c)
{
    const ad_params *P = &w->params;
    uint64_t outside = 0;
#pragma omp parallel for num_threads(c->threads) schedule(static) reduction(+ : outside)
    for (size_t i = 0; i < c->n; i++) {
        ad_state3 q = c->state[i];
        c->cell_of[i] = ad_cell_index3(P, q.x, q.y, q.z);
        outside += (uint64_t)ad_outside_domain3(P, q.x, q.y, q.z);
    }
    w->stats.outside_grid = outside;
}

static void scan(ad_world *w, cpu3_world *c)
{
    memset(c->count, 0, c->ncell * sizeof *c->count);
    for (size_t i = 0; i < c->n; i++) c->count[c->cell_of[i]]++;
    uint32_t run = 0, most = 0, cap = w->stats.cell_capacity;
    uint64_t over = 0;
    for (size_t k = 0; k < c->ncell; k++) {
        uint32_t v = c->count[k];
        c->start[k] = c->count[k] = run; /* count becomes the scatter's cursor */
        run += v;
        most = v > most ? v : most;
        over += v > cap ? v - cap : 0;
    }
    c->start[c->ncell] = run;
    w->stats.max_cell_occupancy = most;
    w->stats.cell_overflow = over;
}

static void scatter(cpu3_world *c)
{
    for (size_t i = 0; i < c->n; i++) {
        uint32_t s = c->count[c->cell_of[i]]++;
        c->spare[s] = c->state[i];
        c->id_spare[s] = c->id[i];
        c->acc_spare[s] = c->acc[i];
    }
    ad_state3 *t = c->state;
    c->state = c->spare, c->spare = t;
    uint32_t *u = c->id;
    c->id = c->id_spare, c->id_spare = u;
    ad_accel3 *a = c->acc;
    c->acc = c->acc_spare, c->acc_spare = a;
}

static void sort(ad_world *w, cpu3_world *c)
{
    double t0 = now();
    bin(w, c);
    double t1 = now();
    scan(w, c);
    double t2 = now();
    scatter(c);
    double t3 = now();
    w->stats.phase_seconds[AD_PHASE_BIN] += t1 - t0;
    w->stats.phase_seconds[AD_PHASE_SCAN] += t2 - t1;
    w->stats.phase_seconds[AD_PHASE_SCATTER] += t3 - t2;
}

/* ------------------------------------------------------------ step 4 -- */

/* Slot s's contacts, the sphere at `me` (its state in `in`), in the cell of `cell_at` (the grid's). */
static ad_accum3 gather(const ad_world *w, const cpu3_world *c, const ad_state3 *in, size_t s, ad_state3 cell_at,
                        ad_state3 me)
{
    const ad_params *P = &w->params;
    int cx = ad_cell_coord(cell_at.x, P->origin_x, P->inv_cell_x, P->nx);
    int cy = ad_cell_coord(cell_at.y, P->origin_y, P->inv_cell_y, P->ny);
    int cz = ad_cell_coord(cell_at.z, P->origin_z, P->inv_cell_z, P->nz);
    ad_accum3 a;
    ad_gather_all3(P, &w->tri.grid, c->start, in, (uint32_t)s, me, cx, cy, cz, &a);
    return a;
}

static ad_accel3 accel_of(const ad_params *P, const ad_accum3 *a)
{
    ad_accel3 r = {a->fx * P->inv_mass + P->gx, a->fy * P->inv_mass + P->gy, a->fz * P->inv_mass + P->gz};
    return r;
}

/* A force evaluation's observables: the slot's pressure and virial, the block's contact sums. */
static void observe(cpu3_world *c, size_t s, const ad_accum3 *a, ad_step_sums *b)
{
    c->pressure[s] = a->pressure;
    c->virial[s] = a->virial;
    b->v[AD_SUM_PE] += a->energy;
    b->v[AD_SUM_VIRIAL] += a->virial;
    b->v[AD_SUM_BODY_FX] += a->body_fx;
    b->v[AD_SUM_BODY_FY] += a->body_fy;
    b->v[AD_SUM_BODY_FZ] += a->body_fz;
    b->v[AD_SUM_BODY_TX] += a->body_tx;
    b->v[AD_SUM_BODY_TY] += a->body_ty;
    b->v[AD_SUM_BODY_TZ] += a->body_tz;
    for (int k = 0; k < 6; k++) b->v[AD_SUM_WALL0 + k] += a->wall[k];
    b->max_overlap = fmaxf(b->max_overlap, a->max_overlap);
}

/* The pass of the one-evaluation integrators over block b: gather, integrate, wrap, sum. */
static void pass_block(ad_world *w, cpu3_world *c, size_t b, float dt)
{
    const ad_params *P = &w->params;
    ad_integrator integ = w->def.integrator;
    ad_step_sums *sums = &c->blocks[b];
    memset(sums, 0, sizeof *sums);
    ad_motion8 m;
    memset(&m, 0, sizeof m);
    size_t s0 = b * AD_BLOCK, s1 = s0 + AD_BLOCK < c->n ? s0 + AD_BLOCK : c->n;
    for (size_t s = s0; s < s1; s++) {
        ad_state3 me = c->state[s];
        ad_accum3 a = gather(w, c, c->state, s, me, me);
        observe(c, s, &a, sums);
        ad_accel3 g = accel_of(P, &a), old = c->acc[s];
        ad_state3 nw = integ == AD_INTEGRATOR_EULER        ? ad_step_euler3(me, g.ax, g.ay, g.az, dt)
                       : integ == AD_INTEGRATOR_VERLET     ? ad_verlet_kick3(me, old.ax, old.ay, old.az, g.ax, g.ay, g.az, dt)
                                                           : ad_step_symplectic3(me, g.ax, g.ay, g.az, dt);
        nw = ad_wrap_state3(P, nw);
        c->spare[s] = nw;
        c->acc[s] = g;
        ad_motion8_add3(&m, sums, P, nw, (unsigned)(s - s0));
    }
    ad_motion8_fold3(&m, sums);
}

/* Velocity Verlet's drift (before the bin) with the acceleration of the last evaluation. */
static void verlet_drift(ad_world *w, cpu3_world *c, float dt)
{
    const ad_params *P = &w->params;
#pragma omp parallel for num_threads(c->threads) schedule(static)
    for (size_t s = 0; s < c->n; s++) {
        ad_accel3 a = c->acc[s];
        c->state[s] = ad_wrap_state3(P, ad_verlet_drift3(c->state[s], a.ax, a.ay, a.az, dt));
    }
}

/* Verlet's first evaluation: the accelerations of the current state (nothing moves). */
static void verlet_prime(ad_world *w, cpu3_world *c)
{
#pragma omp parallel for num_threads(c->threads) schedule(static)
    for (size_t s = 0; s < c->n; s++) {
        ad_accum3 a = gather(w, c, c->state, s, c->state[s], c->state[s]);
        c->acc[s] = accel_of(&w->params, &a);
    }
    c->primed = 1;
}

/* RK4 stage k of block b: gathers on the grid of the step's start (cells from the base state), the
 * other spheres at the stage. Stage 0's forces are the observed ones; stage 3 writes the step. */
static void rk4_block(ad_world *w, cpu3_world *c, size_t b, float dt, int k)
{
    const ad_params *P = &w->params;
    const ad_state3 *in = k == 0 ? c->state : c->rk_in;
    ad_step_sums *sums = &c->blocks[b];
    if (k == 0) memset(sums, 0, sizeof *sums);
    ad_motion8 m;
    memset(&m, 0, sizeof m);
    float skin = (float)w->dt_rule.move;
    size_t s0 = b * AD_BLOCK, s1 = s0 + AD_BLOCK < c->n ? s0 + AD_BLOCK : c->n;
    for (size_t s = s0; s < s1; s++) {
        ad_state3 base = c->state[s];
        ad_accum3 a = gather(w, c, in, s, base, in[s]);
        ad_accel3 g = accel_of(P, &a);
        if (k == 0) {
            observe(c, s, &a, sums);
            c->acc[s] = g;
        }
        ad_state3 nx = ad_rk4_stage3(base, in[s], g.ax, g.ay, g.az, dt, k, &c->rk_sum[s]);
        if (k < 3) {
            c->rk_out[s] = nx;
            continue;
        }
        nx = ad_wrap_state3(P, nx);
        sums->skin_violations += ad_moved_sq3(P, nx, base) > skin * skin;
        c->spare[s] = nx;
        ad_motion8_add3(&m, sums, P, nx, (unsigned)(s - s0));
    }
    if (k == 3) ad_motion8_fold3(&m, sums);
}

static void interact(ad_world *w, cpu3_world *c, float dt)
{
    long nb = (long)cpu3_blocks(c->n);
    if (w->def.integrator != AD_INTEGRATOR_RK4) {
#pragma omp parallel for num_threads(c->threads) schedule(dynamic, 1)
        for (long b = 0; b < nb; b++) pass_block(w, c, (size_t)b, dt);
        return;
    }
    for (int k = 0; k < 4; k++) {
#pragma omp parallel for num_threads(c->threads) schedule(dynamic, 1)
        for (long b = 0; b < nb; b++) rk4_block(w, c, (size_t)b, dt, k);
        ad_state3 *t = c->rk_in; /* the stage just written is the next one's input */
        c->rk_in = c->rk_out, c->rk_out = t;
    }
}

/* ------------------------------------------------------------ a step -- */

static ad_status one_step(ad_world *w, cpu3_world *c, float dt)
{
    ad_integrator integ = w->def.integrator;
    if (integ == AD_INTEGRATOR_VERLET && !c->primed) {
        sort(w, c);
        verlet_prime(w, c);
    }
    if (integ == AD_INTEGRATOR_VERLET) verlet_drift(w, c, dt);
    sort(w, c);
    double t0 = now();
    interact(w, c, dt);
    ad_state3 *t = c->state; /* the pass's output becomes the current state */
    c->state = c->spare, c->spare = t;
    size_t nb = cpu3_blocks(c->n);
    ad_stats_fold(w, c->blocks, nb, dt, 0.0f);
    w->stats.phase_seconds[AD_PHASE_INTERACT] += now() - t0;
    uint64_t bad = 0;
    for (size_t b = 0; b < nb; b++) bad += c->blocks[b].nonfinite;
    if (bad)
        return ad_fail(AD_ERR_UNSTABLE, "dt", "step %llu: %llu spheres reached a non-finite position or velocity (the "
                       "step of %g s is too large for the stiffness, or spheres were placed overlapping)",
                       (unsigned long long)w->stats.step, (unsigned long long)bad, (double)dt);
    return ad_ok();
}

ad_status ad_cpu3_step(ad_world *w, uint64_t nsteps)
{
    cpu3_world *c = w->impl;
    if (c->dt_stale) { /* after spheres were added the next step's size comes from their speeds */
        float v2 = 0.0f;
        for (size_t s = 0; s < c->n; s++) {
            ad_state3 q = c->state[s];
            v2 = fmaxf(v2, q.vx * q.vx + q.vy * q.vy + q.vz * q.vz);
        }
        w->stats.dt = ad_dt_next(&w->dt_rule, sqrt((double)v2));
        c->dt_stale = 0;
    }
    for (uint64_t k = 0; k < nsteps; k++) {
        if (w->interrupt && *w->interrupt) break;
        AD_TRY(one_step(w, c, (float)w->stats.dt));
    }
    return ad_ok();
}
