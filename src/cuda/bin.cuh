/* Step 1, binning (DESIGN.md): each disc's cell and its rank in it, from the cell counters
 * (counts.cuh); k_bin and k_bin_aggregated bin every disc, the pass (interact.cuh) and the
 * entries (open.cuh) the discs they write. */
#ifndef AD_CUDA_BIN_CUH
#define AD_CUDA_BIN_CUH

#include "../core/world_internal.h"
#include "block_sums.cuh"
#include "counts.cuh"
#include "ctrl.cuh"

/* ------------------------------------------------------------- step 1: bin -- */

/* Binning one disc (step 1): its cell, its rank in it (the counter's old value) and the
 * occupancy diagnostics. k_bin bins every disc; the pass bins each disc where it has
 * just written its new position, for the next step, and k_reenter the discs listed for
 * re-entry once their place is chosen. */
struct ad_bin_next {
    unsigned *cell_of, *rank; /* cell_of: NULL where nobody reads it (fast path) */
    ad_counts count;
    unsigned capacity;
    unsigned *dead;           /* the rank counter of removed discs (ad_ctrl.dead), after the grid's cells */
};

enum { AD_BIN_NONE = 0, AD_BIN_FAST = 1, AD_BIN_DIAG = 2 };

struct ad_bin_diag {
    unsigned occ, over, out;
};

/* Disc s at (x, y) took rank `old` in its cell: the rank kept, and the diagnostics. */
__device__ __forceinline__ void ad_bin_rank(const ad_params &p, const ad_bin_next &b, unsigned s, unsigned old,
                                            float x, float y, ad_bin_diag *d)
{
    b.rank[s] = old;
    d->occ = old + 1;
    d->over = old + 1 > b.capacity;
    d->out = ad_outside_domain(&p, x, y);
}

/* A removed disc (open.h) takes the dead cell, after the grid's: a rank from its own 32-bit counter,
 * none of the diagnostics. */
__device__ __forceinline__ void ad_bin_dead(const ad_params &p, const ad_bin_next &b, unsigned s, ad_bin_diag *d)
{
    if (b.cell_of) b.cell_of[s] = (unsigned)p.nx * (unsigned)p.ny;
    b.rank[s] = atomicAdd(b.dead, 1u);
    d->occ = d->over = d->out = 0;
}

__device__ __forceinline__ void ad_bin_one(const ad_params &p, const ad_bin_next &b, unsigned s, float x, float y,
                                           ad_bin_diag *d)
{
    if (x != x) {
        ad_bin_dead(p, b, s, d);
        return;
    }
    unsigned c = ad_cell_index(&p, x, y);
    if (b.cell_of) b.cell_of[s] = c;
    ad_bin_rank(p, b, s, ad_count_add(b.count, c, 1u), x, y, d);
}

/* Every disc binned (ad_bin_one), the cell kept where bin.cell_of is given (the deterministic
 * path; the fast path's scatter computes it again from the state it reads anyway); the rank
 * saves the scatter a second pass of atomics (the cursor of DESIGN.md step 3 is taken here).
 * DIAG adds the occupancy diagnostics. */
template <bool DIAG>
__global__ void __launch_bounds__(AD_CUDA_BLOCK)
    k_bin(ad_params p, const ad_state *__restrict__ s, ad_n n, ad_bin_next bin, ad_step_sums *__restrict__ diag)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    ad_bin_diag d = {0, 0, 0};
    if (i < ad_n_get(n)) {
        float4 q = reinterpret_cast<const float4 *>(s)[i];
        ad_bin_one(p, bin, i, q.x, q.y, &d);
    }
    if (DIAG) ad_block_diag(d.occ, d.over, d.out, &diag[blockIdx.x]);
}

/* Warp-aggregated variant for piled-up gases: lanes with the same cell elect a
 * leader that adds the group's size once (__match_any_sync). */
template <bool DIAG>
__global__ void __launch_bounds__(AD_CUDA_BLOCK)
    k_bin_aggregated(ad_params p, const ad_state *__restrict__ s, ad_n nn, ad_bin_next bin,
                     ad_step_sums *__restrict__ diag)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x, n = ad_n_get(nn);
    ad_bin_diag d = {0, 0, 0};
    /* lanes past the end take a cell of their own (~0u) so the warp stays whole; removed discs
     * (rare) take the dead cell's counter one by one */
    unsigned c = ~0u;
    float4 q = make_float4(0, 0, 0, 0);
    int dead = 0;
    if (i < n) {
        q = reinterpret_cast<const float4 *>(s)[i];
        dead = q.x != q.x;
        if (dead) ad_bin_dead(p, bin, i, &d);
        else c = ad_cell_index(&p, q.x, q.y);
        if (bin.cell_of && !dead) bin.cell_of[i] = c;
    }
    if (dead) c = ~0u - 1u - (threadIdx.x & 31); /* a group of its own */
    unsigned peers = __match_any_sync(0xffffffffu, c);
    int leader = __ffs(peers) - 1, lane = threadIdx.x & 31;
    unsigned base = 0;
    int live = i < n && !dead;
    if (lane == leader && live) base = ad_count_add(bin.count, c, (unsigned)__popc(peers));
    base = __shfl_sync(0xffffffffu, base, leader);
    if (live) ad_bin_rank(p, bin, i, base + __popc(peers & ((1u << lane) - 1u)), q.x, q.y, &d);
    if (DIAG) ad_block_diag(d.occ, d.over, d.out, &diag[blockIdx.x]);
}

#endif
