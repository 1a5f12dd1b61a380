/* The 3D free stream on the device (src/physics/open3.h; included by cuda3.cu only): after the pass,
 * the spheres that enter through the open faces, with no host round trip. The plan of the step's
 * entries and the bookkeeping are 2D's (enter.cuh); the draws, the spots and the room are open3.h's,
 * as on the CPU (reference3.c's enter), in the same order. */
#ifndef AD_CUDA_OPEN3_CUH
#define AD_CUDA_OPEN3_CUH

#include <cub/block/block_scan.cuh>

#include "../physics/open3.h"
#include "enter.cuh"

#define AD3_ENTER_THREADS 1024

/* The world's slots that entering spheres take (after the last in use, up to the capacity), and the
 * entries' own buffers: the waiting list (read, and the next one written: AD_WAITING_MAX each), the
 * judged spots (AD_ROOM_MAX), the largest speed squared of the new spheres (float bits, for the next
 * step's size). */
struct ad3_enter_io {
    ad_state3 *state;
    unsigned *ids;
    float *pressure, *virial; /* zeroed for a new sphere */
    ad_accel3 *acc;           /* zeroed */
    unsigned cap;
    ad_entry3 *waiting, *waiting_next;
    ad_state3 *spots;
    unsigned *vmax2_bits;
};

/* Candidate i of the step: a waiting entry, or entry j of its face's owed ones (ad_entry_draw3); its
 * spot (ad_entry_spot3). */
__device__ __forceinline__ ad_state3 ad3_enter_candidate(const ad_params &p, const ad_enter_plan &pl, unsigned i,
                                                         const ad_entry3 *__restrict__ waiting, float dt,
                                                         uint64_t step, ad_entry3 *e)
{
    if (i < pl.nwait) {
        *e = waiting[i];
    } else {
        int f = ad_enter_side(pl, i);
        *e = ad_entry_draw3(&p, f, step, i - pl.first[f]);
    }
    return ad_entry_spot3(&p, *e, dt, step, i);
}

/* A new sphere q in slot `slot` (below the capacity) with id `id`: zero observables and acceleration,
 * its speed in the step's largest. */
__device__ __forceinline__ void ad3_enter_place(const ad3_enter_io &io, unsigned slot, unsigned id, ad_state3 q)
{
    io.state[slot] = q;
    io.ids[slot] = id;
    io.pressure[slot] = 0.0f;
    io.virial[slot] = 0.0f;
    io.acc[slot] = ad_accel3{0.0f, 0.0f, 0.0f};
    atomicMax(io.vmax2_bits, __float_as_uint(q.vx * q.vx + q.vy * q.vy + q.vz * q.vz));
}

/* After the pass: the step's entering spheres appended at slot ctrl->n in list order (one block,
 * chunks of AD3_ENTER_THREADS, block scans), each where it has room (ad_room_for_plain3: no sphere
 * of the gas after the pass, through the step's grid `start`, and no earlier spot of the list within a
 * diameter; spots past AD_ROOM_MAX wait); the others wait, in order, AD_WAITING_MAX at most (the rest
 * are lost). The CPU's order and functions (reference3.c). */
__global__ void __launch_bounds__(AD3_ENTER_THREADS)
    k3_enter(ad_params p, ad_ctrl *ctrl, const unsigned *__restrict__ start, ad3_enter_io io)
{
    typedef cub::BlockScan<unsigned, AD3_ENTER_THREADS> scan_t;
    __shared__ typename scan_t::TempStorage tmp;
    __shared__ ad_enter_plan pl;
    __shared__ ad_enter_tally n;
    const unsigned t = threadIdx.x, cap = io.cap;
    const float dt = (float)ctrl->stats.dt;
    const uint64_t step = ctrl->stats.step;
    if (t == 0) {
        pl = ad_enter_plan_step(p, ctrl, NULL, NULL, cap, dt); /* no reservoir in 3D */
        n = ad_enter_tally{0, 0, 0, 0, ctrl->n, ctrl->next_id, 0};
        *io.vmax2_bits = 0;
    }
    __syncthreads();
    for (unsigned base = 0; base < pl.total; base += AD3_ENTER_THREADS) {
        unsigned i = base + t;
        int valid = i < pl.total;
        ad_entry3 e = {};
        ad_state3 q = {0, 0, 0, 0, 0, 0, 0, 0};
        if (valid) {
            q = ad3_enter_candidate(p, pl, i, io.waiting, dt, step, &e);
            if (p.disc_contacts && i < AD_ROOM_MAX) io.spots[i] = q;
        }
        __syncthreads(); /* this chunk's spots are there for the later ones */
        unsigned ok = valid && (!p.disc_contacts ||
                                (i < AD_ROOM_MAX && ad_room_for_plain3(&p, start, io.state, io.spots, i)));
        unsigned pre, sum;
        scan_t(tmp).ExclusiveSum(ok, pre, sum);
        __syncthreads();
        if (ok) {
            unsigned slot = n.n0 + n.placed + pre;
            if (slot < cap) {
                ad3_enter_place(io, slot, n.id0 + n.placed + pre, q);
                atomicAdd(&n.entered, 1u);
            } else {
                n.full = 1;
            }
        }
        unsigned w = valid && !ok, wpre, wsum;
        scan_t(tmp).ExclusiveSum(w, wpre, wsum);
        if (w && n.waited + wpre < AD_WAITING_MAX) io.waiting_next[n.waited + wpre] = e;
        __syncthreads();
        if (t == 0) {
            n.placed += sum;
            n.waited += wsum;
        }
        __syncthreads();
    }
    unsigned keep = min(n.waited, (unsigned)AD_WAITING_MAX);
    for (unsigned k = t; k < keep; k += AD3_ENTER_THREADS) io.waiting[k] = io.waiting_next[k];
    if (t == 0) ad_enter_finish(ctrl, n, keep, cap);
}

#endif
