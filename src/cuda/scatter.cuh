/* Step 3, the scatter (DESIGN.md): the discs (with their ids, the accelerations Verlet carries and the
 * contact states of sampled surfaces, panels.cuh; t_out NULL where there are none) into cell order, by
 * start + rank on the fast path, by a stable order on the deterministic one (k_gather, which the BVH's
 * build uses too); after it, with open sides, the world's new end. */
#ifndef AD_CUDA_SCATTER_CUH
#define AD_CUDA_SCATTER_CUH

#include "../core/world_internal.h"
#include "ctrl.cuh"

/* --------------------------------------------------------- step 3: scatter -- */

/* Fast path: each disc goes to start[cell] + rank; the state leaves in cell order. The
 * cell is computed again from the state (the same function of the same floats as the bin's):
 * cheaper than storing it in the pass and reading it back. */
__global__ void k_scatter(ad_params p, ad_n nn, const unsigned *__restrict__ rank, const unsigned *__restrict__ start,
                          const ad_state *__restrict__ s_in, const unsigned *__restrict__ id_in,
                          const ad_accel *__restrict__ a_in, ad_state *__restrict__ s_out,
                          unsigned *__restrict__ id_out, ad_accel *__restrict__ a_out,
                          const unsigned *__restrict__ t_in, unsigned *__restrict__ t_out)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x, n = ad_n_get(nn);
    if (i >= n) return;
    float4 q = reinterpret_cast<const float4 *>(s_in)[i];
    ad_state qs = {q.x, q.y, q.z, q.w};
    unsigned slot = start[ad_bin_cell(&p, qs)] + rank[i]; /* removed discs after the others (open.h) */
    if (slot >= n) return; /* only after a counter overflowed (counts.cuh) */
    reinterpret_cast<float4 *>(s_out)[slot] = q;
    id_out[slot] = id_in[i];
    if (a_out) a_out[slot] = a_in[i];
    if (t_out) t_out[slot] = t_in[i];
}

/* Deterministic path: slot s takes disc perm[s] (the order of a stable sort by cell). */
__global__ void k_gather(ad_n nn, const unsigned *__restrict__ perm, const ad_state *__restrict__ s_in,
                         const unsigned *__restrict__ id_in, const ad_accel *__restrict__ a_in,
                         ad_state *__restrict__ s_out, unsigned *__restrict__ id_out, ad_accel *__restrict__ a_out,
                         const unsigned *__restrict__ t_in, unsigned *__restrict__ t_out)
{
    unsigned s = blockIdx.x * blockDim.x + threadIdx.x, n = ad_n_get(nn);
    if (s >= n) return;
    unsigned i = perm[s];
    if (i >= n) return; /* only after a counter overflowed (counts.cuh) */
    reinterpret_cast<float4 *>(s_out)[s] = reinterpret_cast<const float4 *>(s_in)[i];
    id_out[s] = id_in[i];
    if (a_out) a_out[s] = a_in[i];
    if (t_out) t_out[s] = t_in[i];
}

/* Deterministic path without a sort, 1 of 2: the previous slots of each cell's discs, in
 * the cell's slot range, in the order of the atomic ranks (any). */
__global__ void k_cell_members(ad_n nn, const unsigned *__restrict__ cell_of, const unsigned *__restrict__ rank,
                               const unsigned *__restrict__ start, unsigned *__restrict__ members)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x, n = ad_n_get(nn);
    if (i >= n) return;
    unsigned slot = start[cell_of[i]] + rank[i];
    if (slot < n) members[slot] = i; /* always, unless a counter overflowed (counts.cuh) */
}

/* 2 of 2: disc i's stable rank in its cell is the number of the cell's discs with a lower
 * previous slot, so slot perm[s] is what a stable sort by cell puts at s. */
__global__ void k_stable_rank(ad_n nn, unsigned dead_cell, const unsigned *__restrict__ dead,
                              const unsigned *__restrict__ cell_of, const unsigned *__restrict__ start,
                              const unsigned *__restrict__ members, unsigned *__restrict__ perm)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x, n = ad_n_get(nn);
    if (i >= n) return;
    /* the dead cell's range ends with its own counter (the starts past the grid hold the total) */
    unsigned c = cell_of[i], a = start[c], b = c == dead_cell ? a + *dead : start[c + 1], r = 0;
    for (unsigned k = a; k < b; k++) r += members[k] < i;
    perm[a + r] = i;
}

/* After a sort (open sides): the removed discs were put after the others, in [start[dead cell],
 * n): the world ends there. Their counter starts again for the next bin. */
__global__ void k_after_sort(const unsigned *__restrict__ start, unsigned dead_cell, ad_ctrl *ctrl)
{
    ctrl->n = start[dead_cell];
    ctrl->dead = 0;
    ctrl->removed = 0;
}

#endif
