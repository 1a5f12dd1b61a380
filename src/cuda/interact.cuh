/* Steps 4-5 (DESIGN.md), the pass: one thread a disc gathers its contacts through the broad phase
 * (the grid's gather here, the BVH's in bvh.cuh), integrates, applies the boundaries and adds to
 * its block's sums; RK4's stages and Verlet's drift. */
#ifndef AD_CUDA_INTERACT_CUH
#define AD_CUDA_INTERACT_CUH

#include "../core/world_internal.h"
#include "../physics/gather.h"
#include "../physics/integrate.h"
#include "bin.cuh"
#include "block_sums.cuh"
#include "ctrl.cuh"
#include "enter.cuh"
#include "gather_list.cuh"
#include "panels.cuh"

/* ---------------------------------------------- step 4: interact + integrate -- */

enum { AD_PASS_STEP = 0, AD_PASS_PRIME = 1 };

/* The grid's broad phase as the interact kernels call it: contacts of slot s found
 * around `at`, the state the grid was built from (RK4 stages search around the
 * step's start). The BVH's gathers (bvh.cuh) have the same shape. */
struct ad_grid_gather {
    ad_seg_grid g;
    const unsigned *start;
    __device__ __forceinline__ void operator()(const ad_params &p, const ad_state *__restrict__ in, unsigned s,
                                               ad_state at, ad_state me, ad_accum *a) const
    {
        int cx = ad_cell_coord(at.x, p.origin_x, p.inv_cell_x, p.nx);
        int cy = ad_cell_coord(at.y, p.origin_y, p.inv_cell_y, p.ny);
        ad_accum_zero(a);
        if (p.disc_contacts && !ad_gather_discs_list(p, start, in, me, cx, cy, a))
            ad_gather_discs(&p, start, in, s, me, cx, cy, a);
        ad_contact_segments(&p, &g, me.x, me.y, me.vx, me.vy, a);
        ad_contact_walls(&p, me.x, me.y, me.vx, me.vy, a);
    }
    /* the body's panels a disc at `at` touches (panel.h), through the coarse segment grid as the gather */
    __device__ __forceinline__ void hits(const ad_params &p, ad_state at, ad_panel_hits *h) const
    {
        ad_seg_hits(&p, &g, at.x, at.y, at.vx, at.vy, h);
    }
    __device__ __forceinline__ const ad_seg *segs() const { return g.segs; }
};

/* Blocks per multiprocessor the interact kernel is compiled for, by broad phase. The grid's:
 * 8 caps it at 32 registers (full occupancy, 48-64 bytes of spills to L1), 5 % faster than 6
 * (40 registers, no spills), which was 4 % faster than 5 (48), at 1.6e7 discs on an H200
 * (docs/PERFORMANCE.md); 7 gives the same 32-register code. The BVH's walks keep 5, the bound
 * they were measured with (at 32 registers the local-stack walk spills 92 bytes; not measured). */
template <class G> struct ad_interact_min_blocks {
    static constexpr int value = 5;
};
template <> struct ad_interact_min_blocks<ad_grid_gather> {
    static constexpr int value = 8;
};

/* What a pass kernel shares with the rest of the step, besides the states it reads and writes:
 * one argument (the states, the hot pointers, stay arguments of their own, __restrict__). */
struct ad_pass_io {
    const unsigned *ids;   /* the slots' ids (the reservoir's thermostat reads them) */
    float *pressure;       /* per-disc observables, written on steps somebody reads */
    float *virial;
    ad_ctrl *ctrl;         /* dt and step in; the removals' counts out */
    ad_step_sums *blocks;  /* a record per block (block_sums.cuh) */
    unsigned char *doomed; /* the reservoir's plan for this step, or NULL (ad_take_doomed) */
    unsigned *touch;       /* sampled surfaces (SURF): the slots' contact states (panels.cuh), else NULL */
    int64_t *panel_fix;    /* and the step's per-panel sums */
};

/* A pass's surfaces (SURF, where they are sampled): slot s evaluated at `at` with acceleration (ax, ay)
 * against the body's panels (found through the gather's broad phase) and the walls; a re-emission's
 * velocity into *out, its forces into the slot's sums. */
template <class G, class T>
__device__ __forceinline__ void ad_pass_surface(const ad_params &p, const G &gather, const ad_pass_io &io, unsigned s,
                                                uint64_t step, ad_state at, float ax, float ay, float dt, ad_state *out,
                                                T &sums)
{
    ad_panel_hits h;
    gather.hits(p, at, &h);
    ad_surf_sums o =
        ad_cuda_surface2(p, gather.segs(), h, &io.touch[s], io.ids[s], step, at, ax, ay, dt, out, io.panel_fix);
    ad_add_surface_sums(sums, o, 2);
}

/* Step 5's removals, counted on the device: ad_count_fate (enter.cuh). */

/* The reservoir's marks: ad_take_doomed (enter.cuh). */

/* One thread per slot: gather contacts, integrate, apply boundaries, write the
 * other buffer and the observables, and the block's partial sums. */
template <int INTEG, int PASS, bool OBS, class G, int BIN = AD_BIN_NONE, bool SURF = false>
__global__ void __launch_bounds__(AD_CUDA_BLOCK, ad_interact_min_blocks<G>::value)
    k_interact(ad_params p, G gather, ad_n nn, const ad_state *__restrict__ in, ad_state *__restrict__ out,
               const ad_accel *__restrict__ acc_in, ad_accel *__restrict__ acc_out, ad_pass_io io, ad_bin_next bin)
{
    const unsigned *__restrict__ ids = io.ids;
    float *__restrict__ pressure = io.pressure;
    float *__restrict__ virial = io.virial;
    ad_ctrl *__restrict__ ctrl = io.ctrl;
    ad_step_sums *__restrict__ blocks = io.blocks;
    unsigned char *__restrict__ doomed = io.doomed;
    unsigned s = blockIdx.x * blockDim.x + threadIdx.x;
    ad_thread_sums sums = {};
    ad_bin_diag diag = {0, 0, 0};
    if (s < ad_n_get(nn) && ad_not_own(&p, in[s].x)) {
        /* GPU ranks: a ghost, or a disc that went to a neighbour (grid.h): no sums, removed at the sort */
        out[s] = ad_dead_state();
        atomicAdd(&ctrl->removed, 1u);
        if (BIN != AD_BIN_NONE) ad_bin_dead(p, bin, s, &diag);
    } else if (s < ad_n_get(nn)) {
        float dt = (float)ctrl->stats.dt;
        ad_state me = in[s];
        ad_accum a;
        gather(p, in, s, me, me, &a);
        float ax = a.fx * p.inv_mass + p.gx, ay = a.fy * p.inv_mass + p.gy;
        if (OBS) { /* the per-disc observables, on steps that someone reads */
            pressure[s] = a.pressure;
            virial[s] = a.virial;
        }
        ad_sums_contacts<OBS>(sums, a);
        ad_state nw;
        int fate = AD_KEPT;
        if (PASS == AD_PASS_PRIME) {
            nw = me;
        } else {
            /* sampled surfaces: a re-emission changes the velocity before the disc moves (surface.h) */
            if (SURF) ad_pass_surface(p, gather, io, s, ctrl->stats.step, me, ax, ay, dt, &me, sums);
            if (INTEG == AD_INTEGRATOR_VERLET) /* the drift left the removals to here */
                nw = ad_verlet_kick(me, acc_in[s].ax, acc_in[s].ay, ax, ay, dt);
            else
                nw = INTEG == AD_INTEGRATOR_EULER ? ad_step_euler(me, ax, ay, dt) : ad_step_symplectic(me, ax, ay, dt);
            nw = ad_apply_boundaries(&p, nw, ids, s, ctrl->stats.step, dt, ad_take_doomed(doomed, s), &fate);
            ad_count_fate(ctrl, fate);
            if (BIN != AD_BIN_NONE) ad_bin_one(p, bin, s, nw.x, nw.y, &diag);
        }
        if (OBS || INTEG == AD_INTEGRATOR_VERLET) acc_out[s] = ad_accel{ax, ay};
        out[s] = nw;
        if (fate == AD_KEPT) ad_sums_motion<OBS>(sums, p, nw);
    }
    ad_block_reduce<OBS>(sums, &blocks[blockIdx.x]);
    if (BIN == AD_BIN_DIAG) ad_block_diag(diag.occ, diag.over, diag.out, &blocks[blockIdx.x]);
}

/* RK4 stage k on the grid of the step's start. */
template <int K, class G, bool SURF = false>
__global__ void __launch_bounds__(AD_CUDA_BLOCK)
    k_rk4_stage(ad_params p, G gather, ad_n nn, const ad_state *__restrict__ base, const ad_state *__restrict__ in,
                ad_state *__restrict__ out, ad_state *__restrict__ acc, ad_accel *__restrict__ accel, float skin,
                ad_pass_io io)
{
    ad_ctrl *ctrl = io.ctrl;
    ad_step_sums *blocks = io.blocks;
    unsigned s = blockIdx.x * blockDim.x + threadIdx.x;
    ad_thread_sums sums = {};
    if (s < ad_n_get(nn)) {
        float dt = (float)ctrl->stats.dt;
        ad_state b0 = base[s], me = in[s];
        ad_accum a;
        gather(p, in, s, b0, me, &a);
        float ax = a.fx * p.inv_mass + p.gx, ay = a.fy * p.inv_mass + p.gy;
        if (K == 0) {
            io.pressure[s] = a.pressure;
            io.virial[s] = a.virial;
            accel[s] = ad_accel{ax, ay};
            ad_sums_contacts(sums, a);
        }
        const ad_rk4_disc d = {b0, me, ax, ay, dt, K, io.ids, s, ctrl->stats.step, K == 3 && ad_take_doomed(io.doomed, s)};
        int fate, past_skin;
        ad_state nx = ad_rk4_disc_stage(&p, &d, skin, &acc[s], &fate, &past_skin);
        /* sampled surfaces: at the step's start with stage 0's acceleration (its contacts are the body's
         * sums'); a re-emission replaces the velocity the step ends with */
        if (SURF && K == 3)
            ad_pass_surface(p, gather, io, s, ctrl->stats.step, b0, accel[s].ax, accel[s].ay, dt, &nx, sums);
        if (K == 3) {
            ad_count_fate(ctrl, fate);
            if (fate == AD_KEPT) {
                ad_sums_motion(sums, p, nx);
                sums.skin_violations += past_skin;
            }
        }
        out[s] = nx;
    }
    if (K == 0 || K == 3) {
        /* stage 0 holds the contact sums, stage 3 the motion sums: keep both */
        __shared__ ad_step_sums prev;
        if (K == 3 && threadIdx.x == 0) prev = blocks[blockIdx.x];
        __syncthreads();
        ad_block_reduce(sums, &blocks[blockIdx.x]);
        __syncthreads();
        if (K == 3 && threadIdx.x == 0) {
            ad_step_sums t = blocks[blockIdx.x];
            for (int k = 0; k < AD_SUMS; k++) /* the motion sums are stage 3's; its surfaces' forces add */
                if (k != AD_SUM_KE && k != AD_SUM_PX && k != AD_SUM_PY) t.v[k] = SURF ? prev.v[k] + t.v[k] : prev.v[k];
            t.max_overlap = prev.max_overlap;
            blocks[blockIdx.x] = t;
        }
    }
}

/* Verlet's drift, before binning; each disc moves itself only. */
__global__ void k_verlet_drift(ad_params p, ad_n n, ad_state *__restrict__ s, const ad_accel *__restrict__ acc,
                               const unsigned *__restrict__ ids, const ad_ctrl *__restrict__ ctrl)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= ad_n_get(n)) return;
    float dt = (float)ctrl->stats.dt;
    s[i] = ad_wrap_state(&p, ad_verlet_drift(s[i], acc[i].ax, acc[i].ay, dt)); /* removals: end of step */
}

#endif
