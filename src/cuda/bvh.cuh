/* CUDA kernels of the BVH broad phase: Morton keys, Karras node build, bottom-up boxes, gather and reflexive walks. */
#ifndef AD_CUDA_BVH_CUH
#define AD_CUDA_BVH_CUH

#include "../physics/bvh.h"
#include "block_sums.cuh"

/* ------------------------------------------------------------- the build -- */

/* Step 1: Morton code of each disc in its current order, its index as the sort's
 * value; with diagnostics, the centres outside the domain per block. */
template <bool DIAG>
__global__ void __launch_bounds__(AD_CUDA_BLOCK)
    k_morton(ad_params p, const ad_state *__restrict__ s, unsigned n, unsigned *__restrict__ code,
             unsigned *__restrict__ index, ad_step_sums *__restrict__ diag)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned out = 0;
    if (i < n) {
        float4 q = reinterpret_cast<const float4 *>(s)[i];
        code[i] = ad_morton_code(&p, q.x, q.y);
        index[i] = i;
        out = ad_outside_domain(&p, q.x, q.y);
    }
    if (DIAG) ad_block_diag(0, 0, out, &diag[blockIdx.x]);
}

/* Step 4: internal node k from the sorted codes, one thread each, no communication. */
__global__ void k_bvh_nodes(const unsigned *__restrict__ code, unsigned n, unsigned *__restrict__ child,
                            unsigned *__restrict__ rightmost, unsigned *__restrict__ parent)
{
    unsigned k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k + 1 < n) ad_bvh_build_node(code, n, k, child, rightmost, parent);
}

/* Step 5: boxes bottom-up, one thread per leaf, fenced counters (ad_bvh_climb, src/physics/bvh.h). */
__global__ void k_bvh_boxes(ad_bvh t, unsigned n, ad_bvh_box *box, const unsigned *__restrict__ parent,
                            unsigned *visits)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n || n < 2) return;
    ad_bvh_climb(&t, box, parent, visits, n, i, 1);
}

/* ----------------------------------------------------------- the gathers -- */

/* The body's panels a disc at `at` touches (panel.h), through the segment tree as the gathers find its
 * contacts (the pass's surfaces, interact.cuh). */
__device__ __forceinline__ void ad_bvh_hits(const ad_params &p, const ad_seg_tree &g, ad_state at, ad_panel_hits *h)
{
    unsigned stack[AD_BVH_STACK];
    ad_bvh_seg_hits(&p, &g, at.x, at.y, at.vx, at.vy, stack, 1, h);
}

/* Gather through the tree: each disc walks for its own contacts and writes only
 * itself. The walk's stack lives in the thread's local memory (SHARED = false) or
 * in its column of a block-wide shared array (SHARED = true; the launch passes
 * AD_BVH_STACK * AD_CUDA_BLOCK * 4 bytes of dynamic shared memory), as the
 * reference moved it; the benchmark compares both. */
template <bool SHARED>
struct ad_bvh_gather {
    ad_bvh t;
    ad_seg_tree g;
    __device__ __forceinline__ void operator()(const ad_params &p, const ad_state *__restrict__ in, unsigned s,
                                               ad_state at, ad_state me, ad_accum *a) const
    {
        if (SHARED) {
            extern __shared__ unsigned ad_bvh_stack_sh[];
            ad_bvh_gather_all(&p, &t, &g, in, s, at, me, ad_bvh_stack_sh + threadIdx.x, blockDim.x, a);
        } else {
            unsigned stack[AD_BVH_STACK];
            ad_bvh_gather_all(&p, &t, &g, in, s, at, me, stack, 1, a);
        }
    }
    __device__ __forceinline__ void hits(const ad_params &p, ad_state at, ad_panel_hits *h) const
    {
        ad_bvh_hits(p, g, at, h);
    }
    __device__ __forceinline__ const ad_seg *segs() const { return g.segs; }
};

#define AD_BVH_SHARED_STACK_BYTES ((size_t)AD_BVH_STACK * AD_CUDA_BLOCK * sizeof(unsigned))

/* Per-disc sums of the reflexive pass (one buffer of 6 n floats). */
struct ad_bvh_forces {
    float *fx, *fy, *pressure, *virial, *energy, *max_overlap;
};

/* Reflexive: disc i walks only the leaves after it (rightmost-leaf pruning), so
 * each pair is met once; the pair's force goes to both discs with float atomics
 * (j's side mirrored: ad_contact_disc is antisymmetric). `t` is built over the
 * state the walk searches around; `in` is the state the forces are evaluated at. */
template <bool SHARED>
__global__ void __launch_bounds__(AD_CUDA_BLOCK)
    k_bvh_pairs(ad_params p, ad_bvh t, unsigned n, const ad_state *__restrict__ in, ad_bvh_forces f)
{
    extern __shared__ unsigned ad_bvh_pairs_sh[];
    unsigned local[SHARED ? 1 : AD_BVH_STACK];
    unsigned *stack = SHARED ? ad_bvh_pairs_sh + threadIdx.x : local;
    unsigned stride = SHARED ? blockDim.x : 1u;
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    ad_state at = t.point[i], me = in[i];
    ad_accum sum;
    ad_accum_zero(&sum);
    ad_bvh_box q[4];
    int nq = ad_bvh_disc_queries(&p, at.x, at.y, q);
    for (int k = 0; k < nq; k++) {
        ad_bvh_walk w;
        ad_bvh_walk_begin(&t, &w, q[k], i + 1, stack, stride);
        for (unsigned j = ad_bvh_walk_next(&t, &w); j != AD_BVH_NONE; j = ad_bvh_walk_next(&t, &w)) {
            ad_accum mine, theirs;
            if (!ad_bvh_pair(&p, me, in[j], &mine)) continue;
            ad_accum_mirror(&mine, &theirs);
            atomicAdd(&f.fx[j], theirs.fx);
            atomicAdd(&f.fy[j], theirs.fy);
            atomicAdd(&f.pressure[j], theirs.pressure);
            atomicAdd(&f.virial[j], theirs.virial);
            atomicAdd(&f.energy[j], theirs.energy);
            /* non-negative floats order like their bits */
            atomicMax(reinterpret_cast<unsigned *>(&f.max_overlap[j]), __float_as_uint(theirs.max_overlap));
            sum.fx += mine.fx;
            sum.fy += mine.fy;
            sum.pressure += mine.pressure;
            sum.virial += mine.virial;
            sum.energy += mine.energy;
            sum.max_overlap = fmaxf(sum.max_overlap, mine.max_overlap);
        }
    }
    if (sum.energy != 0.0f || sum.pressure != 0.0f) {
        atomicAdd(&f.fx[i], sum.fx);
        atomicAdd(&f.fy[i], sum.fy);
        atomicAdd(&f.pressure[i], sum.pressure);
        atomicAdd(&f.virial[i], sum.virial);
        atomicAdd(&f.energy[i], sum.energy);
        atomicMax(reinterpret_cast<unsigned *>(&f.max_overlap[i]), __float_as_uint(sum.max_overlap));
    }
}

/* The interact kernels' side of the reflexive variant: the disc contacts summed by
 * k_bvh_pairs, then segments (through the segment tree) and walls. */
struct ad_bvh_reflexive_gather {
    ad_seg_tree g;
    ad_bvh_forces f;
    __device__ __forceinline__ void operator()(const ad_params &p, const ad_state *__restrict__, unsigned s, ad_state,
                                               ad_state me, ad_accum *a) const
    {
        ad_accum_zero(a);
        a->fx = f.fx[s];
        a->fy = f.fy[s];
        a->pressure = f.pressure[s];
        a->virial = f.virial[s];
        a->energy = f.energy[s];
        a->max_overlap = f.max_overlap[s];
        unsigned stack[AD_BVH_STACK];
        ad_bvh_contact_segments(&p, &g, me.x, me.y, me.vx, me.vy, stack, 1, a);
        ad_contact_walls(&p, me.x, me.y, me.vx, me.vy, a);
    }
    __device__ __forceinline__ void hits(const ad_params &p, ad_state at, ad_panel_hits *h) const
    {
        ad_bvh_hits(p, g, at, h);
    }
    __device__ __forceinline__ const ad_seg *segs() const { return g.segs; }
};

#endif
