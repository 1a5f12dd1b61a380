/* The free stream's bookkeeping on the device, once for both dimensions (open.cuh's k_enter for
 * discs, open3.cuh's k3_enter for spheres): the pass's count of the particles it removed
 * (ad_count_fate), where a step's new particles come from (the waiting ones, each open side's owed
 * entries, the reservoir's additions), the block's running counts and the control record's update at
 * the end. No kernels: cuda_step.cu and cuda3.cu both include it. */
#ifndef AD_CUDA_ENTER_CUH
#define AD_CUDA_ENTER_CUH

#include "../core/world_internal.h"
#include "../physics/open.h"
#include "ctrl.cuh"

/* Step 5's removals (open.h), counted on the device: rare, so atomics. */
__device__ __forceinline__ void ad_count_fate(ad_ctrl *ctrl, int fate)
{
    if (fate == AD_KEPT) return;
    atomicAdd(&ctrl->removed, 1u);
    atomicAdd(fate == AD_LEFT ? &ctrl->left : &ctrl->res_removed, 1ull);
}

/* Where the step's new discs come from: waiting entries, this step's entries side by side, then the
 * reservoir's additions box by box (add_start: the exclusive scan of the boxes' additions). */
struct ad_enter_plan {
    unsigned nwait, ne, total;
    unsigned first[4], owe[4];
};

/* The open side whose owed entries hold candidate i of the step (i past the waiting ones, below pl.ne). */
__device__ __forceinline__ int ad_enter_side(const ad_enter_plan &pl, unsigned i)
{
    int f = 3;
    while (f > 0 && !(i >= pl.first[f] && i < pl.first[f] + pl.owe[f])) f--;
    return f;
}

/* Thread 0's plan of the step's new discs: the waiting ones first, then the entries each open side
 * owes for this step (the fractions carried in ctrl->owed), then the reservoir's additions. Where
 * they could not fit (ad_entries_overflow) nothing is drawn: the run stops with the capacity error
 * (the counts in 32 bits would wrap). */
__device__ __forceinline__ ad_enter_plan ad_enter_plan_step(const ad_params &p, ad_ctrl *ctrl,
                                                            const unsigned *__restrict__ add,
                                                            const unsigned *__restrict__ add_start, unsigned cap,
                                                            float dt)
{
    ad_enter_plan pl;
    pl.nwait = ctrl->nwaiting;
    pl.ne = pl.nwait;
    unsigned long long total = pl.nwait;
    for (int f = 0; f < 4; f++) {
        pl.first[f] = pl.ne;
        pl.owe[f] = 0;
        if (!ad_side_open(&p, f)) continue;
        double o = ctrl->owed[f] + p.side_rate[f] * (double)dt, k = floor(o);
        ctrl->owed[f] = o - k;
        pl.owe[f] = k > 1e9 ? 1000000000u : (unsigned)k;
        pl.ne += pl.owe[f];
        total += pl.owe[f];
    }
    unsigned nadd = p.res_boxes ? add_start[p.res_boxes - 1] + add[p.res_boxes - 1] : 0;
    pl.total = pl.ne + nadd;
    if (ad_entries_overflow(total + nadd, ctrl->n, cap, AD_WAITING_MAX)) {
        ctrl->capacity_exceeded = (unsigned)min(total + nadd + ctrl->n, 0xffffffffull);
        pl.total = pl.ne = pl.nwait = 0;
    }
    return pl;
}

/* The block's running counts of the step's new discs (shared memory). */
struct ad_enter_tally {
    unsigned placed, waited, entered, added, n0, id0, full;
};

/* Thread 0, at the end: the world's count and ids, the waiting list's length, the counts. */
__device__ __forceinline__ void ad_enter_finish(ad_ctrl *ctrl, const ad_enter_tally &n, unsigned keep, unsigned cap)
{
    unsigned got = n.full ? (n.n0 < cap ? cap - n.n0 : 0) : n.placed;
    ctrl->n = n.n0 + got;
    ctrl->next_id = n.id0 + got;
    ctrl->nwaiting = keep;
    ctrl->entries_lost += n.waited - keep;
    ctrl->entered += n.entered;
    ctrl->res_added += n.added;
    if (n.full) ctrl->capacity_exceeded = n.n0 + n.placed;
}

#endif
