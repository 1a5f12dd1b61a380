/* Step 6 (DESIGN.md): the blocks' partial sums folded in a fixed order in one kernel, which also
 * advances time and chooses the next step on the device. */
#ifndef AD_CUDA_FOLD_CUH
#define AD_CUDA_FOLD_CUH

#include "ctrl.cuh"

/* ------------------------------------------------ step 6: fold the partials -- */

/* Partial sums of a fixed range of partials per block, in a fixed tree order (ad_step_sums_add,
 * src/physics/step_sums.h): the partition depends only on the count, so the sums are deterministic. */

/* A record written by another block of the running kernel: read through L2 (__ldcg), never
 * from a cache that is not kept coherent within a kernel. */
template <int N = AD_SUMS>
__device__ __forceinline__ ad_step_sums ad_sums_load_cg(const ad_step_sums *p)
{
    ad_step_sums r;
    for (int k = 0; k < N; k++) r.v[k] = __ldcg(&p->v[k]);
    r.vmax2 = __ldcg(&p->vmax2);
    r.max_overlap = __ldcg(&p->max_overlap);
    r.nonfinite = __ldcg(&p->nonfinite);
    r.skin_violations = __ldcg(&p->skin_violations);
    r.left = r.res_removed = 0; /* the CPU's counts: the GPU counts removals in ad_ctrl (not loaded) */
    r.occupancy = __ldcg(&p->occupancy);
    r.overflow = __ldcg(&p->overflow);
    r.outside = __ldcg(&p->outside);
    r.pad = 0;
    return r;
}

/* Lane + o's record added to this lane's (a warp shuffle per field; none for the CPU's counts of
 * removed discs, zero here). */
template <int N = AD_SUMS>
__device__ __forceinline__ void ad_sums_add_down(ad_step_sums &t, unsigned o)
{
    const unsigned m = 0xffffffffu;
    for (int k = 0; k < N; k++) t.v[k] += __shfl_down_sync(m, t.v[k], o);
    t.vmax2 = fmaxf(t.vmax2, __shfl_down_sync(m, t.vmax2, o));
    t.max_overlap = fmaxf(t.max_overlap, __shfl_down_sync(m, t.max_overlap, o));
    t.nonfinite += __shfl_down_sync(m, t.nonfinite, o);
    t.skin_violations += __shfl_down_sync(m, t.skin_violations, o);
    t.occupancy = max(t.occupancy, __shfl_down_sync(m, t.occupancy, o));
    t.overflow += __shfl_down_sync(m, t.overflow, o);
    t.outside += __shfl_down_sync(m, t.outside, o);
}

/* The records in[a..b) folded in a fixed order (each thread's strided share, then a warp
 * tree of shuffles, then the warps in order by thread 0: registers, not a tree of
 * 128-byte records in shared memory, whose same-bank accesses serialised 32 ways).
 * CG: written by other blocks of this kernel. N: the sums of a 2D (AD_SUMS) or 3D (AD_SUMS3) step. The
 * result is valid in thread 0. */
template <bool CG = false, int N = AD_SUMS>
__device__ __forceinline__ ad_step_sums ad_sums_range(const ad_step_sums *in, unsigned a, unsigned b,
                                                     ad_step_sums *part /* shared, AD_CUDA_BLOCK / 32 records */)
{
    ad_step_sums t = {};
    for (unsigned i = a + threadIdx.x; i < b; i += blockDim.x) {
        ad_step_sums r = CG ? ad_sums_load_cg<N>(in + i) : in[i];
        r.left = r.res_removed = 0; /* as in ad_sums_load_cg: the fold keeps them out of its registers */
        ad_step_sums_add(&t, &r, N);
    }
    for (unsigned o = 16; o > 0; o >>= 1) ad_sums_add_down<N>(t, o);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = t;
    __syncthreads();
    if (threadIdx.x == 0)
        for (unsigned w = 1; w < blockDim.x / 32; w++) ad_step_sums_add(&t, &part[w], N);
    __syncthreads(); /* part is free again */
    return t;
}

/* AD_REDUCE_BLOCKS and AD_FOLD_SHARE, the fold's sizes: ctrl.cuh (the host allocates by them) */

/* The step's folded sums s applied to the control record: time advanced, the next step chosen (on the
 * device), the step's maxima and counts kept. D: 2 or 3 dimensions. */
__device__ __forceinline__ void ad_fold_apply(ad_ctrl *ctrl, const ad_step_sums &s, const ad_dt_rule &rule,
                                              float inv_radius, int D)
{
    ad_stats_add_step(&ctrl->stats, &s, ctrl->stats.dt, &rule, D);
    ctrl->stats.max_overlap = s.max_overlap * inv_radius; /* the CPU divides by the radius (step_sums.h) */
    ctrl->nonfinite += s.nonfinite;
    ctrl->max_occupancy = s.occupancy;
    ctrl->overflow = s.overflow;
    ctrl->outside = s.outside;
}

/* Step 6 in one kernel: its blocks (a number fixed by the disc count) each fold a contiguous
 * share of the partials into `shares`; the last block to finish (a counter in ctrl, after a
 * fence) folds the shares in their fixed order, advances time and chooses the next step, on
 * the device: nothing goes back to the host, and the sums do not depend on which block came
 * last. vmax2_new (may be NULL): the largest speed squared of the discs that entered after the pass.
 * keep (GPU ranks, else NULL): the folded sums are written there and not applied; the ranks' sums,
 * combined on the host, are applied by k_fold_apply. */
template <int N = AD_SUMS> /* the sums of a 2D step, or AD_SUMS3: a 3D one (src/cuda/step3.cu) */
__global__ void __launch_bounds__(AD_CUDA_BLOCK) k_fold_step(const ad_step_sums *__restrict__ blocks,
                                                             unsigned nblocks, ad_step_sums *shares, ad_ctrl *ctrl,
                                                             ad_dt_rule rule, float inv_radius,
                                                             const unsigned *vmax2_new, ad_step_sums *keep)
{
    __shared__ ad_step_sums part[AD_CUDA_BLOCK / 32];
    __shared__ bool last;
    unsigned chunk = (nblocks + gridDim.x - 1) / gridDim.x;
    unsigned a = blockIdx.x * chunk, b = min(a + chunk, nblocks);
    ad_step_sums share = ad_sums_range<false, N>(blocks, min(a, nblocks), b, part);
    if (threadIdx.x == 0) {
        shares[blockIdx.x] = share;
        __threadfence();
        last = atomicAdd(&ctrl->fold_done, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    ad_step_sums s = ad_sums_range<true, N>(shares, 0, gridDim.x, part);
    if (threadIdx.x == 0) {
        ctrl->fold_done = 0;
        if (vmax2_new) s.vmax2 = fmaxf(s.vmax2, __uint_as_float(*vmax2_new));
        if (keep) *keep = s;
        else ad_fold_apply(ctrl, s, rule, inv_radius, N == AD_SUMS3 ? 3 : 2);
    }
}

/* GPU ranks: the step's sums of all ranks (combined on the host in rank order) applied, one thread. */
template <int N = AD_SUMS>
__global__ void k_fold_apply(const ad_step_sums *__restrict__ all, ad_ctrl *ctrl, ad_dt_rule rule, float inv_radius)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) ad_fold_apply(ctrl, *all, rule, inv_radius, N == AD_SUMS3 ? 3 : 2);
}

#endif
