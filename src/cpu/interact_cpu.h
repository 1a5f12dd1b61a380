/* The interact pass (step 4): each disc gathers its contacts and integrates itself, once per instruction set.
 *
 * "The pass" in the CPU backend's comments is this: for every slot, its contacts (gather,
 * accelerations, per-disc observables, contact sums: interact_contacts) and then its motion
 * (integrate, boundaries, the next step's bin, the write, motion sums: interact_motion), block
 * by block of AD_BLOCK slots (ad_cpu_interact_block_*, threaded in step_cpu.c's interact()).
 * The CUDA backend calls its kernel the same (src/cuda/interact.cuh).
 *
 * step_cpu.c compiles the pass for the baseline x86-64 (or any other) CPU; on x86-64 with
 * GCC or Clang, interact_avx2.c compiles the same code for AVX2 and FMA. The world picks one
 * at run time (cpu_world.avx2). Both give the same bits (tests/test_isa.c).
 *
 * The AVX2 build's fast path, for symplectic and explicit Euler on the grid, takes eight slots
 * at a time: the contact-free test first (contact_free_cpu.h: the discs whose gather is
 * certainly the zero sums skip it), the gather of the others (gather_cpu.h, with the candidate
 * screen of candidate_screen_cpu.h first), then the eight-disc integrate (integrate8_cpu.h),
 * which bins for the next step as it writes (fused_bin_cpu.h). Each of those files states what
 * it may skip and why the results are the plain path's bit for bit; the prefilters run only
 * where cpu_world.prefilter_valid says their conditions hold. */
#ifndef AD_CPU_INTERACT_CPU_H
#define AD_CPU_INTERACT_CPU_H

#include <string.h>

#include "../physics/bvh.h"
#include "../physics/gather.h"
#include "../physics/integrate.h"
#include "contact_free_cpu.h"
#include "cpu_world.h"
#include "fused_bin_cpu.h"
#include "gather_cpu.h"
#include "integrate8_cpu.h"
#include "surface_cpu.h"

/* The contacts of slot s, found by the world's broad phase around `at`, the state
 * the grid or tree was built from (RK4's stages search around the step's start). */
AD_HD static inline void gather_one(const cpu_world *c, const ad_params *P, const ad_seg_grid *G,
                                    const ad_seg_tree *T, const ad_state *in, size_t s, ad_state at, ad_state me,
                                    ad_accum *a)
{
    if (c->use_bvh) {
        uint32_t stack[AD_BVH_STACK];
        ad_bvh_gather_all(P, &c->tree, T, in, (uint32_t)s, at, me, stack, 1, a);
        return;
    }
    int cx = ad_cell_coord(at.x, P->origin_x, P->inv_cell_x, P->nx);
    int cy = ad_cell_coord(at.y, P->origin_y, P->inv_cell_y, P->ny);
    ad_gather_all(P, G, c->start, in, (uint32_t)s, me, cx, cy, a);
}

static inline void add_contact_sums(ad_step_sums *b, const ad_accum *a)
{
    if (a->energy == 0.0f) return; /* no contact: most discs of a gas, most of the time */
    b->v[AD_SUM_PE] += a->energy;
    b->v[AD_SUM_VIRIAL] += a->virial;
    if (a->body_fx != 0.0f || a->body_fy != 0.0f) {
        b->v[AD_SUM_BODY_FX] += a->body_fx;
        b->v[AD_SUM_BODY_FY] += a->body_fy;
    }
    if (a->wall[0] != 0.0f || a->wall[1] != 0.0f || a->wall[2] != 0.0f || a->wall[3] != 0.0f)
        for (int k = 0; k < 4; k++) b->v[AD_SUM_WALL0 + k] += a->wall[k];
    b->max_overlap = b->max_overlap > a->max_overlap ? b->max_overlap : a->max_overlap;
}

/* The pass's work on one disc, in two halves: its contacts (gather, accelerations, the
 * per-disc observables and the contact sums), then its motion (integrate, boundaries,
 * the next step's bin, the write and the motion sums). */
typedef struct interact_ctx {
    ad_params P;
    ad_seg_grid G;
    const ad_state *in;
    ad_state *out;
    const ad_accel *acc_in;
    ad_accel *acc_out; /* travels with the output buffer */
    const ad_cpu_xy *xy; /* the prefilters' positions, where valid (cpu_world.prefilter_valid) */
    float *free_until;   /* the contact-free expiries, where kept (cpu_world.free_until) */
    int fast;
    ad_cpu_fused_bin bins; /* the block's counting into the next step's cells (fused_bin_cpu.h) */
    ad_motion8 m8; /* the block's kinetic energy and momentum by slot mod 8 */
} interact_ctx;

AD_CPU_INLINE void interact_contacts(const ad_world *w, cpu_world *c, const interact_ctx *x, size_t s, int obs,
                                     ad_step_sums *sums, float *ax, float *ay)
{
    ad_state me = x->in[s];
    ad_accum a;
    if (c->use_bvh) gather_one(c, &x->P, &x->G, &w->seg.tree, x->in, s, me, me, &a);
    else ad_cpu_gather_all(&x->P, &x->G, c->start, x->in, x->xy, (uint32_t)s, me, x->fast, &a);
    *ax = a.fx * x->P.inv_mass + x->P.gx;
    *ay = a.fy * x->P.inv_mass + x->P.gy;
    if (obs) { /* the per-disc observables, on the steps somebody reads (cpu_step) */
        c->pressure[s] = a.pressure;
        c->virial[s] = a.virial;
    }
    add_contact_sums(sums, &a);
}

/* 1 where the reservoir's plan removes slot s in this step (ad_cpu_reservoir_plan). */
AD_CPU_INLINE int doomed(const cpu_world *c, size_t s) { return c->res_doomed && c->res_doomed[s]; }

/* A disc's fate in step 5 (ad_apply_boundaries): kept, or removed past an open side or by the
 * reservoir, counted in the block's sums. */
AD_CPU_INLINE void count_removed(ad_step_sums *sums, int fate)
{
    sums->left += fate == AD_LEFT;
    sums->res_removed += fate == AD_RESERVOIR_REMOVED;
}

/* me: the disc's state as evaluated (x->in[s], or its velocity re-emitted by a surface). */
AD_CPU_INLINE void interact_motion(cpu_world *c, interact_ctx *x, size_t s, size_t s0, ad_state me, float ax, float ay,
                                   float dt, ad_integrator integ, interact_kind kind, uint64_t step,
                                   ad_step_sums *sums, uint32_t *outside)
{
    const ad_params *P = &x->P;
    ad_state nw;
    int fate = 0;
    if (kind == INTERACT_PRIME) {
        x->acc_out[s] = (ad_accel){ax, ay};
        nw = me;
    } else if (integ == AD_INTEGRATOR_VERLET) {
        nw = ad_verlet_kick(me, x->acc_in[s].ax, x->acc_in[s].ay, ax, ay, dt);
        x->acc_out[s] = (ad_accel){ax, ay};
        nw = ad_apply_boundaries(P, nw, c->id, s, step, dt, doomed(c, s), &fate); /* the drift left removals here */
        count_removed(sums, fate);
    } else {
        /* the Verlet drift moved discs before binning; these move them here */
        nw = integ == AD_INTEGRATOR_EULER ? ad_step_euler(me, ax, ay, dt) : ad_step_symplectic(me, ax, ay, dt);
        nw = ad_apply_boundaries(P, nw, c->id, s, step, dt, doomed(c, s), &fate);
        count_removed(sums, fate);
        if (!c->use_bvh) {
            /* step 1 of the next step, fused: bin the disc where its new position is written */
            uint32_t cell = ad_bin_cell(P, nw);
            c->cell_of[s] = cell;
            ad_cpu_fused_bin_count(&x->bins, cell, (uint32_t)s);
            *outside += (uint32_t)(!fate && ad_outside_domain(P, nw.x, nw.y));
        }
    }
    x->out[s] = nw;
    if (!fate) ad_motion8_add(&x->m8, sums, P, nw, (unsigned)(s - s0));
}

/* Step 4 for the one-evaluation integrators: gather, integrate, write the other buffer.
 * Compiled once per instruction set (AD_CPU_DEFINE_INTERACT). The AVX2 build of symplectic and
 * explicit Euler on the grid takes eight slots at a time (the contact-free test, the gathers
 * of the others, the eight-disc integrate), with the same results. The per-disc observables
 * (pressure, virial, acceleration) are written where obs is set: the steps whose results
 * somebody reads. */
AD_CPU_INLINE void interact_block(const ad_world *w, cpu_world *c, size_t b, size_t n, float dt, ad_integrator integ,
                                  interact_kind kind, uint64_t step, int obs)
{
    interact_ctx x;
    x.P = w->params;
    x.G = w->seg.grid;
    x.in = c->state[c->cur];
    x.out = c->state[!c->cur];
    x.acc_in = c->acc[c->cur];
    x.acc_out = c->acc[!c->cur];
    x.fast = ad_cpu_fast_grid(&x.P);
    x.xy = kind == INTERACT_STEP && c->prefilter_valid ? &c->xy : NULL;
    x.free_until = x.xy ? c->free_until : NULL;
    ad_step_sums sums;
    memset(&sums, 0, sizeof sums);
    memset(&x.m8, 0, sizeof x.m8);
    uint32_t outside = 0;
    size_t s0 = b * AD_BLOCK, s1 = s0 + AD_BLOCK < n ? s0 + AD_BLOCK : n, s = s0;
    x.bins = (ad_cpu_fused_bin){c->count, 0, UINT32_MAX, c->leavers ? c->leavers + s0 : NULL, 0, 0};
    if (c->threads > 1 && kind == INTERACT_STEP && c->leavers) {
        /* the block's own cells (fused_bin_cpu.h): from its first disc's to the next block's first
         * disc's (the slots are in the order of these cells: the reorder sorted them by them) */
        uint32_t lo = ad_cell_index(&x.P, x.in[s0].x, x.in[s0].y);
        uint32_t hi = s1 < n ? ad_cell_index(&x.P, x.in[s1].x, x.in[s1].y) : (uint32_t)c->ncell;
        x.bins.lo = lo;
        x.bins.width = hi - lo;
        c->blk_first_cell[b] = lo; /* for the reorder's threads (ad_cpu_leavers) */
    }
#ifdef AD_CPU_AVX2
    /* sampled surfaces take the plain loop below: every disc's contact state is kept, and a
     * re-emission changes its velocity before it moves */
    if (kind == INTERACT_STEP && !c->use_bvh && !x.P.surfaces &&
        (integ == AD_INTEGRATOR_EULER || integ == AD_INTEGRATOR_SYMPLECTIC_EULER)) {
        /* a contact-free disc (ad_cpu_contact_free8_avx2) has zero sums: these accelerations */
        const float ax0 = 0.0f * x.P.inv_mass + x.P.gx, ay0 = 0.0f * x.P.inv_mass + x.P.gy;
        const int prefilter = x.xy && x.fast;
        for (; s + 8 <= s1; s += 8) {
            _Alignas(32) float AX[8], AY[8];
            unsigned contact_free =
                !prefilter ? 0
                : c->rows_fit8
                    ? ad_cpu_contact_free8_avx2(&x.P, &x.G, c->start, x.xy, s, 1, x.free_until, &c->free_clock_f)
                    : ad_cpu_contact_free8_avx2(&x.P, &x.G, c->start, x.xy, s, 0, x.free_until, &c->free_clock_f);
            /* every lane as a contact-free one, then the others gathered over it, in slot order */
            _mm256_store_ps(AX, _mm256_set1_ps(ax0));
            _mm256_store_ps(AY, _mm256_set1_ps(ay0));
            if (obs) {
                _mm256_storeu_ps(c->pressure + s, _mm256_setzero_ps());
                _mm256_storeu_ps(c->virial + s, _mm256_setzero_ps());
            }
            for (unsigned m = ~contact_free & 0xffu; m; m &= m - 1) {
                size_t l = (size_t)__builtin_ctz(m);
                interact_contacts(w, c, &x, s + l, obs, &sums, &AX[l], &AY[l]);
            }
            if (obs)
                for (int l = 0; l < 8; l++) c->accel[s + (size_t)l] = (ad_accel){AX[l], AY[l]};
            x.bins.slot = (uint32_t)s;
            if (!ad_cpu_integrate8_avx2(&x.P, x.in + s, x.out + s, AX, AY, dt,
                                        integ == AD_INTEGRATOR_SYMPLECTIC_EULER, c->cell_of + s, &x.bins, &x.m8,
                                        &sums, &outside))
                for (int l = 0; l < 8; l++)
                    interact_motion(c, &x, s + (size_t)l, s0, x.in[s + (size_t)l], AX[l], AY[l], dt, integ, kind,
                                    step, &sums, &outside);
        }
    }
#endif
    /* the slots past the last eight are not tested: no expiry (contact_free_cpu.h) */
    if (x.free_until)
        for (size_t k = s; k < s1; k++) x.free_until[k] = -INFINITY;
    for (; s < s1; s++) {
        float ax, ay;
        interact_contacts(w, c, &x, s, obs, &sums, &ax, &ay);
        if (obs && kind == INTERACT_STEP && integ != AD_INTEGRATOR_VERLET) c->accel[s] = (ad_accel){ax, ay};
        ad_state me = x.in[s];
        if (x.P.surfaces && kind == INTERACT_STEP) ad_cpu_surface_disc(w, c, &x.P, s, me, ax, ay, dt, step, &me, &sums);
        interact_motion(c, &x, s, s0, me, ax, ay, dt, integ, kind, step, &sums, &outside);
    }
    ad_motion8_fold(&x.m8, &sums);
    c->blocks[b] = sums;
    c->blk_outside[b] = outside;
    if (c->blk_leavers) c->blk_leavers[b] = x.bins.nleavers;
}

/* The pass of block b, for each integrator and pass kind its own inlined loop. Symplectic
 * Euler, the default and the benchmarks' integrator, also has one loop observing and one not
 * (callgrind, one thread, 102400 discs: 336.5 instructions a particle-step, against 342.3
 * with obs tested per disc and 347.2 with both loops for every integrator, where the larger
 * function came out worse as a whole). */
#define AD_CPU_DEFINE_INTERACT(name)                                                                          \
    void name(const ad_world *w, cpu_world *c, size_t b, size_t n, float dt, ad_integrator integ,             \
              interact_kind kind, uint64_t step, int obs)                                                     \
    {                                                                                                         \
        if (kind == INTERACT_PRIME) interact_block(w, c, b, n, dt, integ, INTERACT_PRIME, step, 1);           \
        else if (integ == AD_INTEGRATOR_EULER)                                                                \
            interact_block(w, c, b, n, dt, AD_INTEGRATOR_EULER, INTERACT_STEP, step, obs);                    \
        else if (integ == AD_INTEGRATOR_VERLET)                                                               \
            interact_block(w, c, b, n, dt, AD_INTEGRATOR_VERLET, INTERACT_STEP, step, obs);                   \
        else if (obs)                                                                                         \
            interact_block(w, c, b, n, dt, AD_INTEGRATOR_SYMPLECTIC_EULER, INTERACT_STEP, step, 1);           \
        else                                                                                                  \
            interact_block(w, c, b, n, dt, AD_INTEGRATOR_SYMPLECTIC_EULER, INTERACT_STEP, step, 0);           \
    }

#endif
