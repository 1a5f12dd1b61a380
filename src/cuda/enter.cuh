/* The free stream's step 5 on the device, once for both dimensions: the pass's count of the particles
 * it removed (ad_count_fate) and the reservoir's marks (ad_take_doomed); before the pass the
 * reservoir's plan (k_reservoir_plan<DIM>); after it the step's new particles (k_enter_new<D>): where
 * they come from (the waiting ones, each open side's owed entries, the reservoir's additions), each
 * placed where it has room, the block's running counts and the control record's update at the end.
 * What differs by the dimension (the draws, the room test, a new particle's place) comes from D:
 * open.cuh's ad_enter_discs, open3.cuh's ad_enter_spheres. cuda_step.cu and cuda3.cu both include it
 * (the kernels are templates). */
#ifndef AD_CUDA_ENTER_CUH
#define AD_CUDA_ENTER_CUH

#include <cub/block/block_scan.cuh>

#include "../core/world_internal.h"
#include "../physics/open.h"
#include "../physics/room.h"
#include "ctrl.cuh"

#define AD_ENTER_THREADS 1024
/* AD_ROOM_MAX, the spots judged for room in one step: src/physics/room.h (the host allocates by it) */

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

/* The stream's number in reservoir box b (reservoir_dim.h): DIM's. */
template <int DIM> __device__ __forceinline__ double ad_reservoir_want_dim(const ad_params &p, int b)
{
    return DIM == 2 ? ad_reservoir_want(&p, b) : ad_reservoir_want3(&p, b);
}

/* Box b's controller (one thread), from its count n: the removals it asks for (returned) and the additions
 * after the pass (*add); the step's dt, as the pass and the CPU's plan take it. */
template <int DIM>
__device__ __forceinline__ uint32_t ad_reservoir_decide_box(const ad_params &p, const ad_ctrl *ctrl, double *state, int b,
                                                            uint32_t n, uint32_t *add)
{
    double nu = (double)p.res_rate / AD_RES_CONTROL_SLOWER;
    return ad_reservoir_decide(&state[2 * b], ad_reservoir_want_dim<DIM>(p, b), n, nu, (float)ctrl->stats.dt, add);
}

/* Before the pass, on the grid of the step (start, and the ids in its order): each reservoir box's
 * count, its controller, the particles it removes (marked in `doomed`, which the pass clears) and adds
 * after it (`add`). One thread a box; the same functions and order as the CPU's
 * (ad_cpu_reservoir_plan, plain_open_dim.h). */
template <int DIM>
__global__ void k_reservoir_plan(ad_params p, const unsigned *__restrict__ start, const unsigned *__restrict__ ids,
                                 const ad_ctrl *__restrict__ ctrl, double *__restrict__ state,
                                 unsigned *__restrict__ add, unsigned char *__restrict__ doomed)
{
    int b = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (b >= p.res_boxes) return;
    uint32_t a, rm = ad_reservoir_decide_box<DIM>(p, ctrl, state, b, ad_reservoir_box_count(&p, start, b), &a);
    if (rm) {
        uint32_t slot[AD_RES_PICK_MAX];
        uint32_t m = ad_reservoir_pick(&p, start, ids, b, ctrl->stats.step, rm, slot);
        for (uint32_t k = 0; k < m; k++) doomed[slot[k]] = 1;
        state[2 * b] -= (double)(rm - m); /* the ones not marked stay owed */
    }
    add[b] = a;
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

/* The reservoir box whose additions hold addition k of the step (past the entries): the last box whose
 * additions start at or before k. */
__device__ __forceinline__ int ad_enter_box(const ad_params &p, const unsigned *__restrict__ add_start, unsigned k)
{
    int lo = 0, hi = p.res_boxes - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (add_start[mid] <= k) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* The lists of a step's new particles of either dimension (entries E): the waiting list (read, and the
 * next one written: AD_WAITING_MAX each), the reservoir's adds per box (their counts, scanned starts
 * and the boxes' state; NULL without a reservoir), the largest speed squared of the new particles
 * (float bits, for the next step), the world's capacity. */
template <class E> struct ad_enter_lists {
    E *waiting, *waiting_next;
    const unsigned *res_add, *res_add_start;
    double *res_state;
    unsigned *vmax2_bits;
    unsigned cap;
    /* GPU ranks (cuda_ranks.cu): the room in the gas of the step's first AD_ROOM_MAX spots, judged by every
     * rank over its own discs (k_enter_gas_room) and combined; NULL: judged here, over the world's gas */
    const unsigned char *gas_room;
};

/* Candidate i of the step: its spot, and its entry (where it is one: a waiting entry, or entry j of its
 * side's owed ones) or its reservoir box (*box, else -1). D's draws. */
template <class D>
__device__ __forceinline__ typename D::state ad_enter_candidate(const D &d, const ad_params &p, const ad_enter_plan &pl,
                                                                unsigned i, float dt, uint64_t step,
                                                                typename D::entry *e, int *box)
{
    *box = -1;
    if (i < pl.ne) {
        if (i < pl.nwait) {
            *e = d.l.waiting[i];
        } else {
            int f = ad_enter_side(pl, i);
            *e = D::draw(p, f, step, i - pl.first[f]);
        }
        return D::spot(p, *e, dt, step, i);
    }
    unsigned k = i - pl.ne;
    *box = ad_enter_box(p, d.l.res_add_start, k);
    return D::res_spot(p, *box, k - d.l.res_add_start[*box], step);
}

/* The block's running counts of the step's new discs (shared memory). */
struct ad_enter_tally {
    unsigned placed, waited, entered, added, n0, id0, full;
    unsigned mine; /* of the placed, those in the rank's own columns (GPU ranks; else all of them) */
};

/* Thread 0, at the end: the world's count and ids, the waiting list's length, the counts. */
__device__ __forceinline__ void ad_enter_finish(ad_ctrl *ctrl, const ad_enter_tally &n, unsigned keep, unsigned cap,
                                                int ranks)
{
    unsigned got = n.full ? (n.n0 < cap ? cap - n.n0 : 0) : n.mine;
    ctrl->n = n.n0 + got;
    ctrl->next_id = n.id0 + (n.full && !ranks ? got : n.placed); /* GPU ranks: the ids of every rank's discs */
    ctrl->nwaiting = keep;
    ctrl->entries_lost += n.waited - keep;
    ctrl->entered += n.entered;
    ctrl->res_added += n.added;
    if (n.full) ctrl->capacity_exceeded = n.n0 + n.mine; /* the slots it wanted (GPU ranks: this rank's) */
}

/* After the pass: the step's new particles appended at slot ctrl->n in a fixed order (one block, chunks
 * of AD_ENTER_THREADS, block scans), judged for room (D::room: against the gas after the pass, through
 * the step's grid `start`, and the spots before them; spots past AD_ROOM_MAX have none); entries
 * without room wait, in order, AD_WAITING_MAX at most (the rest are lost). The same order and
 * functions as the CPU (ad_cpu_open_enter, plain_open_dim.h). */
template <class D>
__global__ void __launch_bounds__(AD_ENTER_THREADS) k_enter_new(ad_params p, ad_ctrl *ctrl,
                                                                const unsigned *__restrict__ start, D d)
{
    typedef cub::BlockScan<unsigned, AD_ENTER_THREADS> scan_t;
    __shared__ typename scan_t::TempStorage tmp;
    __shared__ typename D::shared sh; /* D's own (2D: the judged spots' buckets) */
    __shared__ ad_enter_plan pl;
    __shared__ ad_enter_tally n;
    const ad_enter_lists<typename D::entry> &l = d.l;
    const unsigned t = threadIdx.x, cap = l.cap;
    const float dt = (float)ctrl->stats.dt;
    const uint64_t step = ctrl->stats.step;
    if (t == 0) {
        pl = ad_enter_plan_step(p, ctrl, l.res_add, l.res_add_start, cap, dt);
        if (l.gas_room && !l.gas_room[AD_ROOM_MAX]) /* GPU ranks: some rank's plan overflowed (it tells) */
            pl.total = pl.ne = pl.nwait = 0;
        n = ad_enter_tally{0, 0, 0, 0, ctrl->n, ctrl->next_id, 0, 0};
        *l.vmax2_bits = 0;
    }
    d.begin(sh, t, AD_ENTER_THREADS);
    __syncthreads();
    for (unsigned base = 0; base < pl.total; base += AD_ENTER_THREADS) {
        unsigned i = base + t;
        int valid = i < pl.total, box = -1;
        typename D::entry e = {};
        typename D::state q = {};
        if (valid) {
            q = ad_enter_candidate(d, p, pl, i, dt, step, &e, &box);
            if (p.disc_contacts && i < AD_ROOM_MAX) d.judge(p, start, sh, i, q);
        }
        __syncthreads(); /* this chunk's spots are there for the later ones */
        unsigned ok = valid && (!p.disc_contacts || (i < AD_ROOM_MAX && d.room(p, start, sh, i)));
        unsigned pre, sum;
        scan_t(tmp).ExclusiveSum(ok, pre, sum);
        __syncthreads();
        /* GPU ranks: every rank counts every placed disc (its id, the controllers) and keeps those of its own
         * columns (ad_not_own: none elsewhere), in slots of their own count */
        unsigned own = ok && !ad_not_own(&p, q.x), opre = pre, osum = sum;
        if (p.own_hi > 0) {
            scan_t(tmp).ExclusiveSum(own, opre, osum);
            __syncthreads();
        }
        if (ok) {
            unsigned slot = n.n0 + n.mine + opre;
            if (own && slot < cap) d.place(p, slot, n.id0 + n.placed + pre, q);
            /* another rank's disc takes no slot here; under GPU ranks every placed disc counts on every rank,
             * where this one is full too (the run then stops with the capacity error on all ranks) */
            if (!own || slot < cap || p.own_hi > 0) {
                atomicMax(l.vmax2_bits, __float_as_uint(D::speed2(q)));
                if (box < 0) atomicAdd(&n.entered, 1u);
                else {
                    atomicAdd(&n.added, 1u);
                    atomicAdd(&l.res_state[2 * box], -1.0); /* settled (integers in a double: any order) */
                }
            }
            if (own && slot >= cap) n.full = 1;
        }
        unsigned w = valid && !ok && i < pl.ne, wpre, wsum;
        scan_t(tmp).ExclusiveSum(w, wpre, wsum);
        if (w && n.waited + wpre < AD_WAITING_MAX) l.waiting_next[n.waited + wpre] = e;
        __syncthreads();
        if (t == 0) {
            n.placed += sum;
            n.mine += osum;
            n.waited += wsum;
        }
        __syncthreads();
    }
    unsigned keep = min(n.waited, (unsigned)AD_WAITING_MAX);
    for (unsigned k = t; k < keep; k += AD_ENTER_THREADS) l.waiting[k] = l.waiting_next[k];
    if (t == 0) ad_enter_finish(ctrl, n, keep, cap, p.own_hi > 0);
}

/* GPU ranks, before k_enter_new: the step's candidates as k_enter_new will list them (the plan on a copy of
 * the control record: nothing is changed), and for the first AD_ROOM_MAX of them the room in the gas that
 * this rank's discs leave (D::gas: its own discs only, the pass having written the others dead); 1 past
 * them and where discs do not collide, so that the ranks' minimum is the world's answer. room[AD_ROOM_MAX]:
 * 0 where this rank's plan overflows (its own count near the capacity), so that every rank skips the
 * step's entries alike. One block. */
template <class D>
__global__ void __launch_bounds__(AD_ENTER_THREADS) k_enter_gas_room(ad_params p, const ad_ctrl *ctrl,
                                                                     const unsigned *__restrict__ start, D d,
                                                                     unsigned char *__restrict__ room)
{
    __shared__ ad_enter_plan pl;
    const unsigned t = threadIdx.x;
    const float dt = (float)ctrl->stats.dt;
    const uint64_t step = ctrl->stats.step;
    if (t == 0) {
        ad_ctrl copy = *ctrl;
        copy.capacity_exceeded = 0;
        pl = ad_enter_plan_step(p, &copy, d.l.res_add, d.l.res_add_start, d.l.cap, dt);
        room[AD_ROOM_MAX] = copy.capacity_exceeded == 0;
    }
    __syncthreads();
    for (unsigned i = t; i < AD_ROOM_MAX; i += AD_ENTER_THREADS) {
        unsigned char r = 1;
        if (i < pl.total && p.disc_contacts) {
            typename D::entry e;
            int box;
            typename D::state q = ad_enter_candidate(d, p, pl, i, dt, step, &e, &box);
            r = (unsigned char)d.gas(p, start, q);
        }
        room[i] = r;
    }
}

#endif
