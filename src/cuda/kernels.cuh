/* CUDA kernels of one step (DESIGN.md steps 1-6), each calling the shared physics headers. */
#ifndef AD_CUDA_KERNELS_CUH
#define AD_CUDA_KERNELS_CUH

#include <cstdint>

#include "../core/world_internal.h"
#include "../physics/fields.h"
#include "../physics/gather.h"
#include "../physics/integrate.h"
#include "../physics/open.h"
#include "counts.cuh"

/* Everything of a step that lives on the device between steps: the step size and
 * the statistics. The host reads it only when asked (ad_world_get_stats). */
struct ad_ctrl {
    double dt, time;
    unsigned long long step;
    double ke, pe, px, py, virial, body_fx, body_fy;
    double body_impulse_x, body_impulse_y, wall_impulse[4], ke_integral, virial_integral;
    float vmax2, max_overlap;
    unsigned long long nonfinite, skin_violations;
    /* grid diagnostics of the last step (the DIAG bin variant writes them) */
    unsigned int max_occupancy;
    unsigned int fold_done; /* blocks of k_fold_step done in this step; 0 between steps */
    unsigned long long overflow, outside;
    unsigned int count_overflow; /* a cell counter passed its width (counts.cuh): the run is lost */
    /* open sides (open.h): the world's disc count changes on the device */
    unsigned int n;              /* slots in use: the discs, and those removed in the last pass until the sort */
    unsigned int dead;           /* removed discs binned for the next sort (their ranks in the dead cell) */
    unsigned int removed;        /* discs removed in the last pass */
    unsigned int next_id;        /* the id of the next disc added or entering */
    unsigned int nwaiting;       /* entering discs waiting for room */
    unsigned int capacity_exceeded; /* the step's new discs did not fit: the count stayed, the run is stopped */
    double owed[4];              /* entries owed per side */
    unsigned long long entered, left, res_added, res_removed, entries_lost;
};

/* A kernel's disc count: `bound` discs at most (the launch's size), and where the count lives on the
 * device (open sides), the count there. */
struct ad_n {
    unsigned bound;
    const unsigned *dev; /* NULL: bound is the count */
};

__device__ __forceinline__ unsigned ad_n_get(const ad_n &n) { return n.dev ? *n.dev : n.bound; }

/* How the next step is chosen (ad_next_dt, on the device). */
struct ad_dt_rule {
    int adaptive;
    double dt_max, dt_contact, move; /* move = max_move * radius */
};

__device__ __forceinline__ double ad_dev_next_dt(const ad_dt_rule &r, double vmax)
{
    if (!r.adaptive) return r.dt_max;
    double dt = fmin(r.dt_max, r.dt_contact);
    if (vmax > 0.0) dt = fmin(dt, r.move / vmax);
    return dt;
}

/* ----------------------------------------------- block sums (fixed order) -- */

#define AD_CUDA_BLOCK 256

/* The per-block partials of a step: doubles summed in a fixed tree order. */
struct ad_dev_sums {
    double v[11]; /* ke pe px py virial body_fx body_fy wall0..3 */
    float vmax2, max_overlap;
    unsigned nonfinite, skin;
    unsigned occupancy, overflow, outside, pad; /* grid diagnostics, written by the DIAG bin kernel */
};

/* One disc's share of the step sums, in float (a single disc's values): few registers. */
struct ad_thread_sums {
    float v[11];
    float vmax2, max_overlap;
    unsigned nonfinite, skin;
};

template <bool OBS = true>
__device__ __forceinline__ void ad_block_reduce(const ad_thread_sums &mine, ad_dev_sums *out)
{
    __shared__ double sh[AD_CUDA_BLOCK / 32][11];
    __shared__ float shf[AD_CUDA_BLOCK / 32][2];
    __shared__ unsigned shu[AD_CUDA_BLOCK / 32][2];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    /* within a warp in float (32 terms), across warps in double; a sum that is zero in
     * every lane (walls, the body, most contacts) skips its shuffles */
#pragma unroll
    for (int k = 0; k < 11; k++) {
        float x = mine.v[k];
        const bool snapshot = k >= 1 && k <= 3; /* zero on steps nobody reads (ad_sums_contacts) */
        if (!OBS && snapshot) x = 0.0f;
        else if (k == 0 || snapshot || __any_sync(0xffffffffu, x != 0.0f))
            for (int o = 16; o > 0; o >>= 1) x += __shfl_down_sync(0xffffffffu, x, o);
        if (lane == 0) sh[warp][k] = x;
    }
    float a = mine.vmax2, b = mine.max_overlap;
    unsigned c = mine.nonfinite, d = mine.skin;
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
        ad_dev_sums t = {};
        for (int w = 0; w < AD_CUDA_BLOCK / 32; w++) {
            for (int k = 0; k < 11; k++) t.v[k] += sh[w][k];
            t.vmax2 = fmaxf(t.vmax2, shf[w][0]);
            t.max_overlap = fmaxf(t.max_overlap, shf[w][1]);
            t.nonfinite += shu[w][0];
            t.skin += shu[w][1];
        }
        /* field by field: the bin kernel's diagnostics in the same record stay */
        for (int k = 0; k < 11; k++) out->v[k] = t.v[k];
        out->vmax2 = t.vmax2;
        out->max_overlap = t.max_overlap;
        out->nonfinite = t.nonfinite;
        out->skin = t.skin;
    }
}

/* The DIAG bin kernel's per-block diagnostics: a record per block, folded with the
 * step's other sums, so no thread ever waits on a shared global counter. */
__device__ __forceinline__ void ad_block_diag(unsigned occ, unsigned over, unsigned out_, ad_dev_sums *dst)
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
    if (OBS) b.v[1] += a.energy;
    b.v[4] += a.virial;
    b.v[5] += a.body_fx;
    b.v[6] += a.body_fy;
    for (int k = 0; k < 4; k++) b.v[7 + k] += a.wall[k];
    if (OBS) b.max_overlap = fmaxf(b.max_overlap, a.max_overlap);
}

template <bool OBS = true>
__device__ __forceinline__ void ad_sums_motion(ad_thread_sums &b, const ad_params &p, ad_state s)
{
    float v2 = s.vx * s.vx + s.vy * s.vy;
    b.v[0] += 0.5f * p.mass * v2;
    if (OBS) {
        b.v[2] += p.mass * s.vx;
        b.v[3] += p.mass * s.vy;
    }
    b.vmax2 = fmaxf(b.vmax2, v2);
    b.nonfinite += !(isfinite(s.x) && isfinite(s.y) && isfinite(s.vx) && isfinite(s.vy));
}

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
    k_bin(ad_params p, const ad_state *__restrict__ s, ad_n n, ad_bin_next bin, ad_dev_sums *__restrict__ diag)
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
                     ad_dev_sums *__restrict__ diag)
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

/* --------------------------------------------------------- step 3: scatter -- */

/* Fast path: each disc goes to start[cell] + rank; the state leaves in cell order. The
 * cell is computed again from the state (the same function of the same floats as the bin's):
 * cheaper than storing it in the pass and reading it back. */
__global__ void k_scatter(ad_params p, ad_n nn, const unsigned *__restrict__ rank,
                          const unsigned *__restrict__ start, const ad_state *__restrict__ s_in,
                          const unsigned *__restrict__ id_in, const ad_accel *__restrict__ a_in,
                          ad_state *__restrict__ s_out, unsigned *__restrict__ id_out, ad_accel *__restrict__ a_out)
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
}

/* Deterministic path: slot s takes disc perm[s] (a stable radix sort by cell). */
__global__ void k_gather(ad_n nn, const unsigned *__restrict__ perm, const ad_state *__restrict__ s_in,
                         const unsigned *__restrict__ id_in, const ad_accel *__restrict__ a_in,
                         ad_state *__restrict__ s_out, unsigned *__restrict__ id_out, ad_accel *__restrict__ a_out)
{
    unsigned s = blockIdx.x * blockDim.x + threadIdx.x, n = ad_n_get(nn);
    if (s >= n) return;
    unsigned i = perm[s];
    if (i >= n) return; /* only after a counter overflowed (counts.cuh) */
    reinterpret_cast<float4 *>(s_out)[s] = reinterpret_cast<const float4 *>(s_in)[i];
    id_out[s] = id_in[i];
    if (a_out) a_out[s] = a_in[i];
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

__global__ void k_iota(ad_n n, unsigned *__restrict__ v)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < ad_n_get(n)) v[i] = i;
}

/* After a sort (open sides): the removed discs were put after the others, in [start[dead cell],
 * n): the world ends there. Their counter starts again for the next bin. */
__global__ void k_after_sort(const unsigned *__restrict__ start, unsigned dead_cell, ad_ctrl *ctrl)
{
    ctrl->n = start[dead_cell];
    ctrl->dead = 0;
    ctrl->removed = 0;
}

/* ---------------------------------------------- step 4: interact + integrate -- */

enum { AD_PASS_STEP = 0, AD_PASS_PRIME = 1 };

/* The list's loop. The slot of the next entry is stepped, not computed: one past the
 * last, or the start of the next row where the entry count reaches a row's end (tests on
 * the entry count, which are exact whatever order the rows' slot ranges have), and the load
 * past the list's end reads its first entry again instead of branching around it. x needs
 * no minimum image (the list is never used at a periodic seam column, so every candidate is
 * within a cell in x); y only where the rows wrap (WRAP_Y: the loop is compiled twice rather
 * than testing the axis for every candidate). */
template <bool WRAP_Y>
__device__ __forceinline__ void ad_list_loop(const ad_params &p, const ad_state *__restrict__ s, ad_state me,
                                             const unsigned b[3], const unsigned n[3], ad_accum *a)
{
    unsigned n01 = n[0] + n[1], total = n01 + n[2];
    if (total == 0) return;
    const float4 *s4 = reinterpret_cast<const float4 *>(s);
    unsigned first = n[0] ? b[0] : n[1] ? b[1] : b[2], j = first;
    float4 o = s4[j];
    /* not unrolled: lanes of a warp have lists of different lengths, and an unrolled body
     * with a remainder loop makes them take different paths one after the other (4x
     * unrolled: the pass 0.466 -> 0.488 ms, H200) */
#pragma unroll 1
    for (unsigned k = 1; k <= total; k++) {
        float4 q = o;
        j = k == n[0] ? b[1] : j + 1;
        j = k == n01 ? b[2] : j;
        o = s4[k < total ? j : first];
        float dx = q.x - me.x;
        float dy = WRAP_Y ? ad_min_image(q.y - me.y, 1, p.len_y, p.half_y) : q.y - me.y;
        ad_contact_disc(&p, dx, dy, q.z - me.vx, q.w - me.vy, a);
    }
}

/* The disc contacts of ad_gather_discs (gather.h) for the usual grid, a cell of at
 * least the contact distance (reach 1) and a column away from a periodic seam: the
 * three rows' slot ranges are one list, walked by one loop. Row by row, a warp waits
 * for its longest row three times (about 13 candidates for 3.4 useful ones at area
 * fraction 0.3); one list waits once for the longest list (about 9). The order of
 * the terms is gather.h's, so the sums are the same. The disc itself is not skipped:
 * at zero distance ad_contact_disc adds exact zeros, cheaper than a divergent branch.
 * Each candidate's state is loaded one iteration ahead. Returns 0, having done
 * nothing, where this shape does not apply (the caller takes gather.h's loops). */
__device__ __forceinline__ int ad_gather_discs_list(const ad_params &p, const unsigned *__restrict__ start,
                                                    const ad_state *__restrict__ s, ad_state me, int cx, int cy,
                                                    ad_accum *a)
{
#ifdef AD_CUDA_ROW_GATHER /* measurement switch: gather.h's row-by-row loops everywhere */
    const bool rows_only = true;
#else
    const bool rows_only = false;
#endif
    if (rows_only || p.reach_x != 1 || p.reach_y != 1) return 0;
    if (p.periodic_x && (cx == 0 || cx == p.nx - 1)) return 0;
    int lo = cx > 0 ? cx - 1 : 0, hi = cx < p.nx - 1 ? cx + 1 : cx;
    unsigned b[3], n[3];
#pragma unroll
    for (int d = 0; d < 3; d++) {
        int row = ad_neighbour_row(cy, d - 1, p.ny, p.periodic_y);
        unsigned base = (unsigned)(row < 0 ? 0 : row) * (unsigned)p.nx;
        unsigned j0 = start[base + (unsigned)lo], j1 = start[base + (unsigned)hi + 1];
        b[d] = j0;
        n[d] = row < 0 ? 0u : j1 - j0;
    }
    if (p.periodic_y) ad_list_loop<true>(p, s, me, b, n, a);
    else ad_list_loop<false>(p, s, me, b, n, a);
    return 1;
}

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
};

/* Blocks per multiprocessor the interact kernel is compiled for, by broad phase. The grid's:
 * 8 caps it at 32 registers (full occupancy, 48-64 bytes of spills to L1), 5 % faster than 6
 * (40 registers, no spills), which was 4 % faster than 5 (48), at 1.6e7 discs on an H200
 * (docs/PERFORMANCE.md); 7 gives the same 32-register code. The BVH's walks keep 5, the bound
 * they were measured with (at 32 registers the local-stack walk spills 92 bytes; not measured). */
#ifndef AD_INTERACT_MIN_BLOCKS
#define AD_INTERACT_MIN_BLOCKS 8
#endif
template <class G> struct ad_interact_min_blocks {
    static constexpr int value = 5;
};
template <> struct ad_interact_min_blocks<ad_grid_gather> {
    static constexpr int value = AD_INTERACT_MIN_BLOCKS;
};

/* Step 5's removals (open.h), counted on the device: rare, so atomics. */
__device__ __forceinline__ void ad_count_fate(ad_ctrl *ctrl, int fate)
{
    if (fate == AD_KEPT) return;
    atomicAdd(&ctrl->removed, 1u);
    atomicAdd(fate == AD_LEFT ? &ctrl->left : &ctrl->res_removed, 1ull);
}

/* 1 where the reservoir's plan removes slot s in this step; the mark is cleared here. */
__device__ __forceinline__ int ad_take_doomed(unsigned char *doomed, unsigned s)
{
    if (!doomed || !doomed[s]) return 0;
    doomed[s] = 0;
    return 1;
}

/* One thread per slot: gather contacts, integrate, apply boundaries, write the
 * other buffer and the observables, and the block's partial sums. */
template <int INTEG, int PASS, bool OBS, class G, int BIN = AD_BIN_NONE>
__global__ void __launch_bounds__(AD_CUDA_BLOCK, ad_interact_min_blocks<G>::value)
    k_interact(ad_params p, G gather, ad_n nn, const ad_state *__restrict__ in, ad_state *__restrict__ out, const unsigned *__restrict__ ids,
               const ad_accel *__restrict__ acc_in, ad_accel *__restrict__ acc_out, float *__restrict__ pressure,
               float *__restrict__ virial, ad_ctrl *__restrict__ ctrl, ad_dev_sums *__restrict__ blocks,
               unsigned char *__restrict__ doomed, ad_bin_next bin)
{
    unsigned s = blockIdx.x * blockDim.x + threadIdx.x;
    ad_thread_sums sums = {};
    ad_bin_diag diag = {0, 0, 0};
    if (s < ad_n_get(nn)) {
        float dt = (float)ctrl->dt;
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
            if (INTEG == AD_INTEGRATOR_VERLET) /* the drift left the removals to here */
                nw = ad_verlet_kick(me, acc_in[s].ax, acc_in[s].ay, ax, ay, dt);
            else
                nw = INTEG == AD_INTEGRATOR_EULER ? ad_step_euler(me, ax, ay, dt) : ad_step_symplectic(me, ax, ay, dt);
            nw = ad_apply_boundaries(&p, nw, ids, s, ctrl->step, dt, ad_take_doomed(doomed, s), &fate);
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
template <int K, class G>
__global__ void __launch_bounds__(AD_CUDA_BLOCK)
    k_rk4_stage(ad_params p, G gather, ad_n nn, const ad_state *__restrict__ base, const ad_state *__restrict__ in, ad_state *__restrict__ out,
                ad_state *__restrict__ acc, const unsigned *__restrict__ ids, ad_accel *__restrict__ accel,
                float *__restrict__ pressure, float *__restrict__ virial, ad_ctrl *__restrict__ ctrl,
                float skin, ad_dev_sums *__restrict__ blocks, unsigned char *__restrict__ doomed)
{
    unsigned s = blockIdx.x * blockDim.x + threadIdx.x;
    ad_thread_sums sums = {};
    if (s < ad_n_get(nn)) {
        float dt = (float)ctrl->dt;
        ad_state b0 = base[s], me = in[s];
        ad_accum a;
        gather(p, in, s, b0, me, &a);
        float ax = a.fx * p.inv_mass + p.gx, ay = a.fy * p.inv_mass + p.gy;
        if (K == 0) {
            pressure[s] = a.pressure;
            virial[s] = a.virial;
            accel[s] = ad_accel{ax, ay};
            ad_sums_contacts(sums, a);
        }
        ad_state nx = ad_rk4_stage(b0, me, ax, ay, dt, K, &acc[s]);
        if (K == 3) {
            int fate;
            nx = ad_apply_boundaries(&p, nx, ids, s, ctrl->step, dt, ad_take_doomed(doomed, s), &fate);
            ad_count_fate(ctrl, fate);
            if (fate == AD_KEPT) {
                ad_sums_motion(sums, p, nx);
                float dx = ad_min_image(nx.x - b0.x, p.periodic_x, p.len_x, p.half_x);
                float dy = ad_min_image(nx.y - b0.y, p.periodic_y, p.len_y, p.half_y);
                sums.skin += dx * dx + dy * dy > skin * skin;
            }
        }
        out[s] = nx;
    }
    if (K == 0 || K == 3) {
        /* stage 0 holds the contact sums, stage 3 the motion sums: keep both */
        __shared__ ad_dev_sums prev;
        if (K == 3 && threadIdx.x == 0) prev = blocks[blockIdx.x];
        __syncthreads();
        ad_block_reduce(sums, &blocks[blockIdx.x]);
        __syncthreads();
        if (K == 3 && threadIdx.x == 0) {
            ad_dev_sums t = blocks[blockIdx.x];
            for (int k = 1; k < 11; k++)
                if (k != 2 && k != 3) t.v[k] = prev.v[k];
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
    float dt = (float)ctrl->dt;
    s[i] = ad_wrap_state(&p, ad_verlet_drift(s[i], acc[i].ax, acc[i].ay, dt)); /* removals: end of step */
}

/* ------------------------------------------------ step 6: fold the partials -- */

/* Partial sums of a fixed range of partials per block, in a fixed tree order:
 * the partition depends only on the count, so the sums are deterministic. */
__device__ __forceinline__ void ad_sums_add(ad_dev_sums &a, const ad_dev_sums &b)
{
    for (int k = 0; k < 11; k++) a.v[k] += b.v[k];
    a.vmax2 = fmaxf(a.vmax2, b.vmax2);
    a.max_overlap = fmaxf(a.max_overlap, b.max_overlap);
    a.nonfinite += b.nonfinite;
    a.skin += b.skin;
    a.occupancy = max(a.occupancy, b.occupancy);
    a.overflow += b.overflow;
    a.outside += b.outside;
}

/* A record written by another block of the running kernel: read through L2 (__ldcg), never
 * from a cache that is not kept coherent within a kernel. */
__device__ __forceinline__ ad_dev_sums ad_sums_load_cg(const ad_dev_sums *p)
{
    ad_dev_sums r;
    for (int k = 0; k < 11; k++) r.v[k] = __ldcg(&p->v[k]);
    r.vmax2 = __ldcg(&p->vmax2);
    r.max_overlap = __ldcg(&p->max_overlap);
    r.nonfinite = __ldcg(&p->nonfinite);
    r.skin = __ldcg(&p->skin);
    r.occupancy = __ldcg(&p->occupancy);
    r.overflow = __ldcg(&p->overflow);
    r.outside = __ldcg(&p->outside);
    r.pad = 0;
    return r;
}

/* Lane + o's record added to this lane's (a warp shuffle per field). */
__device__ __forceinline__ void ad_sums_add_down(ad_dev_sums &t, unsigned o)
{
    const unsigned m = 0xffffffffu;
    for (int k = 0; k < 11; k++) t.v[k] += __shfl_down_sync(m, t.v[k], o);
    t.vmax2 = fmaxf(t.vmax2, __shfl_down_sync(m, t.vmax2, o));
    t.max_overlap = fmaxf(t.max_overlap, __shfl_down_sync(m, t.max_overlap, o));
    t.nonfinite += __shfl_down_sync(m, t.nonfinite, o);
    t.skin += __shfl_down_sync(m, t.skin, o);
    t.occupancy = max(t.occupancy, __shfl_down_sync(m, t.occupancy, o));
    t.overflow += __shfl_down_sync(m, t.overflow, o);
    t.outside += __shfl_down_sync(m, t.outside, o);
}

/* The records in[a..b) folded in a fixed order (each thread's strided share, then a warp
 * tree of shuffles, then the warps in order by thread 0: registers, not a tree of
 * 128-byte records in shared memory, whose same-bank accesses serialised 32 ways).
 * CG: written by other blocks of this kernel. The result is valid in thread 0. */
template <bool CG = false>
__device__ __forceinline__ ad_dev_sums ad_sums_range(const ad_dev_sums *in, unsigned a, unsigned b,
                                                     ad_dev_sums *part /* shared, AD_CUDA_BLOCK / 32 records */)
{
    ad_dev_sums t = {};
    for (unsigned i = a + threadIdx.x; i < b; i += blockDim.x) ad_sums_add(t, CG ? ad_sums_load_cg(in + i) : in[i]);
    for (unsigned o = 16; o > 0; o >>= 1) ad_sums_add_down(t, o);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = t;
    __syncthreads();
    if (threadIdx.x == 0)
        for (unsigned w = 1; w < blockDim.x / 32; w++) ad_sums_add(t, part[w]);
    __syncthreads(); /* part is free again */
    return t;
}

#define AD_REDUCE_BLOCKS 512 /* at most this many first-level blocks in k_fold_step */
#define AD_FOLD_SHARE 128     /* and about this many partials each, so a small world takes few */

/* Step 6 in one kernel: its blocks (a number fixed by the disc count) each fold a contiguous
 * share of the partials into `shares`; the last block to finish (a counter in ctrl, after a
 * fence) folds the shares in their fixed order, advances time and chooses the next step, on
 * the device: nothing goes back to the host, and the sums do not depend on which block came
 * last. vmax2_new (may be NULL): the largest speed squared of the discs that entered after the pass. */
__global__ void __launch_bounds__(AD_CUDA_BLOCK) k_fold_step(const ad_dev_sums *__restrict__ blocks,
                                                             unsigned nblocks, ad_dev_sums *shares, ad_ctrl *ctrl,
                                                             ad_dt_rule rule, float inv_radius,
                                                             const unsigned *vmax2_new)
{
    __shared__ ad_dev_sums part[AD_CUDA_BLOCK / 32];
    __shared__ bool last;
    unsigned chunk = (nblocks + gridDim.x - 1) / gridDim.x;
    unsigned a = blockIdx.x * chunk, b = min(a + chunk, nblocks);
    ad_dev_sums share = ad_sums_range(blocks, min(a, nblocks), b, part);
    if (threadIdx.x == 0) {
        shares[blockIdx.x] = share;
        __threadfence();
        last = atomicAdd(&ctrl->fold_done, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    ad_dev_sums s = ad_sums_range<true>(shares, 0, gridDim.x, part);
    if (threadIdx.x == 0) {
        ctrl->fold_done = 0;
        if (vmax2_new) s.vmax2 = fmaxf(s.vmax2, __uint_as_float(*vmax2_new));
        double dt = ctrl->dt;
        ctrl->ke = s.v[0];
        ctrl->pe = s.v[1];
        ctrl->px = s.v[2];
        ctrl->py = s.v[3];
        ctrl->virial = s.v[4];
        ctrl->body_fx = s.v[5];
        ctrl->body_fy = s.v[6];
        ctrl->body_impulse_x += s.v[5] * dt;
        ctrl->body_impulse_y += s.v[6] * dt;
        for (int k = 0; k < 4; k++) ctrl->wall_impulse[k] += s.v[7 + k] * dt;
        ctrl->ke_integral += s.v[0] * dt;
        ctrl->virial_integral += s.v[4] * dt;
        ctrl->vmax2 = s.vmax2;
        ctrl->max_overlap = s.max_overlap * inv_radius;
        ctrl->nonfinite += s.nonfinite;
        ctrl->skin_violations += s.skin;
        ctrl->max_occupancy = s.occupancy;
        ctrl->overflow = s.overflow;
        ctrl->outside = s.outside;
        ctrl->time += dt;
        ctrl->step += 1;
        ctrl->dt = ad_dev_next_dt(rule, sqrt((double)s.vmax2));
    }
}

/* -------------------------------------------------------- fields (every K) -- */

/* Adds the discs to the field sums. Double atomics: the sums are observations,
 * equal to the CPU's to rounding but not bit-reproducible. */
__global__ void k_fields(ad_field_grid fg, ad_n n, const ad_state *__restrict__ s, const float *__restrict__ virial,
                         const float *__restrict__ pressure, const ad_accel *__restrict__ acc, double *__restrict__ sums)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= ad_n_get(n)) return;
    ad_state q = s[i];
    if (ad_in_probe(&fg, q)) { /* the probe's sums follow the cells' (a removed disc: not in it) */
        double v[AD_PS_COUNT];
        ad_probe_values(&fg, q, v);
        double *dst = sums + (size_t)fg.nx * (size_t)fg.ny * AD_FS_COUNT;
#pragma unroll
        for (int k = 0; k < AD_PS_COUNT; k++) atomicAdd(&dst[k], v[k]);
    }
    int c = ad_field_cell(&fg, q.x, q.y);
    if (c < 0) return;
    double v[AD_FS_COUNT];
    ad_field_values(q, virial[i], pressure[i], acc[i].ax, acc[i].ay, v);
    double *dst = sums + (size_t)c * AD_FS_COUNT;
#pragma unroll
    for (int k = 0; k < AD_FS_COUNT; k++) atomicAdd(&dst[k], v[k]);
}

/* Largest speed of the discs (the first step's size after particles are added). */
__global__ void k_vmax2(ad_n n, const ad_state *__restrict__ s, unsigned *__restrict__ out_bits)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= ad_n_get(n)) return;
    float v2 = s[i].vx * s[i].vx + s[i].vy * s[i].vy;
    if (v2 > 0.0f) atomicMax(out_bits, __float_as_uint(v2)); /* non-negative floats order like their bits (NaN: no) */
}

#endif
