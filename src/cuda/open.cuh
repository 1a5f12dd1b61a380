/* Open sides and the free-stream reservoir on the device (src/physics/open.h): the reservoir's plan
 * before the pass, and the discs that enter after it, with no host round trip. */
#ifndef AD_CUDA_OPEN_CUH
#define AD_CUDA_OPEN_CUH

#include <cub/block/block_scan.cuh>

#include "../physics/open.h"
#include "../physics/room.h"
#include "bin.cuh"
#include "ctrl.cuh"
#include "enter.cuh"

#define AD_ENTER_THREADS 1024
/* AD_ROOM_MAX, the spots judged for room in one step: src/physics/room.h (the host allocates by it) */

/* Before the pass, on the grid of the step: each reservoir box's count, its controller, the discs it
 * removes in the pass (marked in `doomed`, which the pass clears) and adds after it (`add`). One
 * thread a box; the same functions and order as the CPU's (ad_cpu_reservoir_plan). */
__global__ void k_reservoir_plan(ad_params p, const unsigned *__restrict__ start, const unsigned *__restrict__ ids,
                                 const ad_ctrl *__restrict__ ctrl, double *__restrict__ state,
                                 unsigned *__restrict__ add, unsigned char *__restrict__ doomed)
{
    int b = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (b >= p.res_boxes) return;
    uint32_t n = ad_reservoir_box_count(&p, start, b), a;
    double nu = (double)p.res_rate / AD_RES_CONTROL_SLOWER;
    uint32_t rm = ad_reservoir_decide(&state[2 * b], ad_reservoir_want(&p, b), n, nu, ctrl->stats.dt, &a);
    if (rm) {
        uint32_t slot[AD_RES_PICK_MAX];
        uint32_t m = ad_reservoir_pick(&p, start, ids, b, ctrl->stats.step, rm, slot);
        for (uint32_t k = 0; k < m; k++) doomed[slot[k]] = 1;
        state[2 * b] -= (double)(rm - m); /* the ones not marked stay owed */
    }
    add[b] = a;
}

/* Candidate i of the step: its spot, and its entry (where it is one) or its box. */
__device__ __forceinline__ ad_state ad_enter_candidate(const ad_params &p, const ad_enter_plan &pl, unsigned i,
                                                       const ad_entry *__restrict__ waiting,
                                                       const unsigned *__restrict__ add_start, float dt,
                                                       uint64_t step, ad_entry *e, int *box)
{
    *box = -1;
    if (i < pl.ne) {
        if (i < pl.nwait) {
            *e = waiting[i];
        } else {
            int f = ad_enter_side(pl, i);
            *e = ad_entry_draw(&p, f, step, i - pl.first[f]);
        }
        return ad_entry_spot(&p, *e, dt, step, i);
    }
    unsigned k = i - pl.ne;
    int lo = 0, hi = p.res_boxes - 1; /* the last box whose additions start at or before k */
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (add_start[mid] <= k) lo = mid;
        else hi = mid - 1;
    }
    *box = lo;
    return ad_reservoir_spot(&p, lo, k - add_start[lo], step);
}

/* The world's slots that entering discs take (after the last in use, up to the capacity). */
struct ad_enter_slots {
    ad_state *state;
    unsigned *ids;
    float *pressure, *virial; /* zeroed for a new disc */
    ad_accel *acc;            /* Verlet's accelerations (zeroed), or NULL */
    unsigned cap;
};

/* The entries' own buffers: the waiting list (read, and the next one written), the reservoir's
 * adds per box (their counts, scanned starts and the boxes' state), the judged spots in their
 * buckets (room.h), and the largest speed squared of the new discs (float bits, for the next step). */
struct ad_enter_work {
    ad_entry *waiting, *waiting_next;
    const unsigned *res_add, *res_add_start;
    double *res_state;
    ad_state *spots;
    unsigned *spot_next;
    unsigned *vmax2_bits;
};

/* A new disc q in slot `slot` (below the capacity) with id `id`: its state, zero observables, binned
 * where the pass binned, and its speed in the step's largest. */
__device__ __forceinline__ void ad_enter_place(const ad_params &p, const ad_enter_slots &slots, unsigned slot,
                                               unsigned id, ad_state q, int bin_mode, const ad_bin_next &bin,
                                               unsigned *vmax2_bits)
{
    slots.state[slot] = q;
    slots.ids[slot] = id;
    slots.pressure[slot] = 0.0f;
    slots.virial[slot] = 0.0f;
    if (slots.acc) slots.acc[slot] = ad_accel{0.0f, 0.0f};
    if (bin_mode != AD_BIN_NONE) {
        ad_bin_diag d;
        ad_bin_one(p, bin, slot, q.x, q.y, &d);
    }
    atomicMax(vmax2_bits, __float_as_uint(q.vx * q.vx + q.vy * q.vy));
}

/* After the pass: the step's new discs appended at slot ctrl->n in a fixed order (one block, chunks
 * of AD_ENTER_THREADS, block scans), judged for room against the gas after the pass (slots.state, in
 * the grid's order `start`) and the spots before them; entries without room wait, in order. Binned
 * where the pass binned (bin_mode). The same order and functions as the CPU (ad_cpu_open_enter). */
__global__ void __launch_bounds__(AD_ENTER_THREADS)
    k_enter(ad_params p, ad_ctrl *ctrl, const unsigned *__restrict__ start, ad_enter_slots slots, ad_enter_work work,
            int bin_mode, ad_bin_next bin)
{
    ad_state *__restrict__ spots = work.spots;
    unsigned *__restrict__ spot_next = work.spot_next;
    const unsigned cap = slots.cap;
    typedef cub::BlockScan<unsigned, AD_ENTER_THREADS> scan_t;
    __shared__ typename scan_t::TempStorage tmp;
    __shared__ unsigned head[AD_SPOT_BUCKETS]; /* the judged spots in buckets (room.h), next in spot_next */
    __shared__ ad_enter_plan pl;
    __shared__ ad_enter_tally n;
    const unsigned t = threadIdx.x;
    const float dt = (float)ctrl->stats.dt;
    const uint64_t step = ctrl->stats.step;
    if (t == 0) {
        pl = ad_enter_plan_step(p, ctrl, work.res_add, work.res_add_start, cap, dt);
        n = ad_enter_tally{0, 0, 0, 0, ctrl->n, ctrl->next_id, 0};
        *work.vmax2_bits = 0;
    }
    for (unsigned b = t; b < AD_SPOT_BUCKETS; b += AD_ENTER_THREADS) head[b] = AD_SPOT_NONE;
    __syncthreads();
    const unsigned judged = p.disc_contacts ? min(pl.total, (unsigned)AD_ROOM_MAX) : pl.total;
    for (unsigned base = 0; base < pl.total; base += AD_ENTER_THREADS) {
        unsigned i = base + t;
        int valid = i < pl.total, box = -1;
        ad_entry e;
        ad_state q = {0, 0, 0, 0};
        if (valid) {
            q = ad_enter_candidate(p, pl, i, work.waiting, work.res_add_start, dt, step, &e, &box);
            if (p.disc_contacts && i < AD_ROOM_MAX) {
                spots[i] = q;
                spot_next[i] = atomicExch(&head[ad_spot_bucket_of(&p, q)], i); /* a bucket's order: any */
            }
        }
        __syncthreads(); /* this chunk's spots are there for the later ones */
        unsigned ok = valid && (!p.disc_contacts ||
                                (i < judged && ad_room_for(&p, start, NULL, slots.state, head, spot_next, spots, i)));
        unsigned pre, sum;
        scan_t(tmp).ExclusiveSum(ok, pre, sum);
        __syncthreads();
        if (ok) {
            unsigned slot = n.n0 + n.placed + pre;
            if (slot < cap) {
                ad_enter_place(p, slots, slot, n.id0 + n.placed + pre, q, bin_mode, bin, work.vmax2_bits);
                if (box < 0) atomicAdd(&n.entered, 1u);
                else {
                    atomicAdd(&n.added, 1u);
                    atomicAdd(&work.res_state[2 * box], -1.0); /* settled (integers in a double: any order) */
                }
            } else {
                n.full = 1;
            }
        }
        unsigned w = valid && !ok && i < pl.ne, wpre, wsum;
        scan_t(tmp).ExclusiveSum(w, wpre, wsum);
        if (w && n.waited + wpre < AD_WAITING_MAX) work.waiting_next[n.waited + wpre] = e;
        __syncthreads();
        if (t == 0) {
            n.placed += sum;
            n.waited += wsum;
        }
        __syncthreads();
    }
    unsigned keep = min(n.waited, (unsigned)AD_WAITING_MAX);
    for (unsigned k = t; k < keep; k += AD_ENTER_THREADS) work.waiting[k] = work.waiting_next[k];
    if (t == 0) ad_enter_finish(ctrl, n, keep, cap);
}

#endif
