/* A step's sums per block in a fixed order (warp shuffles, then the warps in order), for the fold
 * (fold.cuh): the contact and motion sums of the pass (interact.cuh) and the grid diagnostics of the
 * bin kernels (bin.cuh, bvh.cuh). */
#ifndef AD_CUDA_BLOCK_SUMS_CUH
#define AD_CUDA_BLOCK_SUMS_CUH

#include "../core/world_internal.h"
#include "../physics/contact.h"
#include "ctrl.cuh"

/* ----------------------------------------------- block sums (fixed order) -- */

/* One disc's share of the step sums (ad_step_sums' fields, src/physics/step_sums.h), in float (a
 * single disc's values): few registers. N: the sums of a 2D step (AD_SUMS) or a 3D one (AD_SUMS3). */
template <int N>
struct ad_thread_sums_n {
    float v[N];
    float vmax2, max_overlap;
    unsigned nonfinite, skin_violations;
};
typedef ad_thread_sums_n<AD_SUMS> ad_thread_sums;

template <bool OBS = true, int N = AD_SUMS>
__device__ __forceinline__ void ad_block_reduce(const ad_thread_sums_n<N> &mine, ad_step_sums *out)
{
    __shared__ double sh[AD_CUDA_BLOCK / 32][N];
    __shared__ float shf[AD_CUDA_BLOCK / 32][2];
    __shared__ unsigned shu[AD_CUDA_BLOCK / 32][2];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    /* within a warp in float (32 terms), across warps in double; a sum that is zero in
     * every lane (walls, the body, most contacts) skips its shuffles */
#pragma unroll
    for (int k = 0; k < N; k++) {
        float x = mine.v[k];
        const bool snapshot = k >= AD_SUM_PE && k <= AD_SUM_PY; /* zero on steps nobody reads (ad_sums_contacts) */
        if (!OBS && snapshot) x = 0.0f;
        else if (k == AD_SUM_KE || snapshot || __any_sync(0xffffffffu, x != 0.0f))
            for (int o = 16; o > 0; o >>= 1) x += __shfl_down_sync(0xffffffffu, x, o);
        if (lane == 0) sh[warp][k] = x;
    }
    float a = mine.vmax2, b = mine.max_overlap;
    unsigned c = mine.nonfinite, d = mine.skin_violations;
    for (int o = 16; o > 0; o >>= 1) {
        a = fmaxf(a, __shfl_down_sync(0xffffffffu, a, o));
        if (OBS) b = fmaxf(b, __shfl_down_sync(0xffffffffu, b, o));
    }
    c = __reduce_add_sync(0xffffffffu, c);
    d = __reduce_add_sync(0xffffffffu, d);
    if (lane == 0) {
        shf[warp][0] = a;
        shf[warp][1] = b;
        shu[warp][0] = c;
        shu[warp][1] = d;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        ad_step_sums t = {};
        for (int w = 0; w < AD_CUDA_BLOCK / 32; w++) {
            for (int k = 0; k < N; k++) t.v[k] += sh[w][k];
            t.vmax2 = fmaxf(t.vmax2, shf[w][0]);
            t.max_overlap = fmaxf(t.max_overlap, shf[w][1]);
            t.nonfinite += shu[w][0];
            t.skin_violations += shu[w][1];
        }
        /* field by field: the bin kernel's diagnostics in the same record stay */
        for (int k = 0; k < N; k++) out->v[k] = t.v[k];
        out->vmax2 = t.vmax2;
        out->max_overlap = t.max_overlap;
        out->nonfinite = t.nonfinite;
        out->skin_violations = t.skin_violations;
    }
}

/* The DIAG bin kernel's per-block diagnostics: a record per block, folded with the
 * step's other sums, so no thread ever waits on a shared global counter. */
__device__ __forceinline__ void ad_block_diag(unsigned occ, unsigned over, unsigned out_, ad_step_sums *dst)
{
    __shared__ unsigned sh[AD_CUDA_BLOCK / 32][3];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    occ = __reduce_max_sync(0xffffffffu, occ);
    over = __reduce_add_sync(0xffffffffu, over);
    out_ = __reduce_add_sync(0xffffffffu, out_);
    if (lane == 0) {
        sh[warp][0] = occ;
        sh[warp][1] = over;
        sh[warp][2] = out_;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned a = 0, b = 0, c = 0;
        for (int w = 0; w < AD_CUDA_BLOCK / 32; w++) {
            a = max(a, sh[w][0]);
            b += sh[w][1];
            c += sh[w][2];
        }
        dst->occupancy = a;
        dst->overflow = b;
        dst->outside = c;
    }
}

/* OBS = false: a step nobody reads. Its sums keep what the time step and the running
 * integrals need (kinetic energy, virial, forces on the body and walls, largest speed,
 * non-finite count) and leave the snapshot-only ones at zero (elastic energy, momentum,
 * largest overlap): the compiler then drops their arithmetic from the contact loop too. */
template <bool OBS = true>
__device__ __forceinline__ void ad_sums_contacts(ad_thread_sums &b, const ad_accum &a)
{
    if (OBS) b.v[AD_SUM_PE] += a.energy;
    b.v[AD_SUM_VIRIAL] += a.virial;
    b.v[AD_SUM_BODY_FX] += a.body_fx;
    b.v[AD_SUM_BODY_FY] += a.body_fy;
    for (int k = 0; k < 4; k++) b.v[AD_SUM_WALL0 + k] += a.wall[k];
    if (OBS) b.max_overlap = fmaxf(b.max_overlap, a.max_overlap);
}

template <bool OBS = true>
__device__ __forceinline__ void ad_sums_motion(ad_thread_sums &b, const ad_params &p, ad_state s)
{
    float v2 = s.vx * s.vx + s.vy * s.vy;
    b.v[AD_SUM_KE] += 0.5f * p.mass * v2;
    if (OBS) {
        b.v[AD_SUM_PX] += p.mass * s.vx;
        b.v[AD_SUM_PY] += p.mass * s.vy;
    }
    b.vmax2 = fmaxf(b.vmax2, v2);
    b.nonfinite += !(isfinite(s.x) && isfinite(s.y) && isfinite(s.vx) && isfinite(s.vy));
}

#endif
