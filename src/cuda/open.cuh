/* Open sides and the free-stream reservoir of 2D worlds on the device (src/physics/open.h): what the
 * discs bring to enter.cuh's kernels, which are written once for both dimensions (k_reservoir_plan<2>
 * before the pass, k_enter_new<ad_enter_discs> after it), with no host round trip. */
#ifndef AD_CUDA_OPEN_CUH
#define AD_CUDA_OPEN_CUH

#include "../physics/open.h"
#include "../physics/room.h"
#include "bin.cuh"
#include "ctrl.cuh"
#include "enter.cuh"

/* The world's slots that entering discs take (after the last in use, up to the capacity). */
struct ad_enter_slots {
    ad_state *state;
    unsigned *ids;
    float *pressure, *virial; /* zeroed for a new disc */
    ad_accel *acc;            /* Verlet's accelerations (zeroed), or NULL */
    unsigned *touch;          /* the contact states of sampled surfaces (zeroed: no contact yet), or NULL */
};

/* The discs' side of k_enter_new (enter.cuh): their draws (open.h), the judged spots in buckets
 * (room.h: spots, spot_next, and the heads in shared memory), a new disc binned where the pass binned
 * (bin_mode, bin). */
struct ad_enter_discs {
    typedef ad_state state;
    typedef ad_entry entry;
    struct shared {
        unsigned head[AD_SPOT_BUCKETS];
    };
    ad_enter_lists<ad_entry> l;
    ad_enter_slots slots;
    ad_state *spots;
    unsigned *spot_next;
    int bin_mode;
    ad_bin_next bin;

    static __device__ __forceinline__ ad_entry draw(const ad_params &p, int f, uint64_t step, uint32_t j)
    {
        return ad_entry_draw(&p, f, step, j);
    }
    static __device__ __forceinline__ ad_state spot(const ad_params &p, ad_entry e, float dt, uint64_t step, uint32_t i)
    {
        return ad_entry_spot(&p, e, dt, step, i);
    }
    static __device__ __forceinline__ ad_state res_spot(const ad_params &p, int b, uint32_t j, uint64_t step)
    {
        return ad_reservoir_spot(&p, b, j, step);
    }
    static __device__ __forceinline__ float speed2(ad_state q) { return q.vx * q.vx + q.vy * q.vy; }
    __device__ __forceinline__ void begin(shared &sh, unsigned t, unsigned threads) const
    {
        for (unsigned b = t; b < AD_SPOT_BUCKETS; b += threads) sh.head[b] = AD_SPOT_NONE;
    }
    /* spot i of the step, listed in its bucket (a bucket's order: any) */
    __device__ __forceinline__ void judge(const ad_params &p, const unsigned *, shared &sh, unsigned i, ad_state q) const
    {
        spots[i] = q;
        spot_next[i] = atomicExch(&sh.head[ad_spot_bucket_of(&p, q)], i);
    }
    __device__ __forceinline__ int room(const ad_params &p, const unsigned *start, const shared &sh, unsigned i) const
    {
        if (l.gas_room) /* GPU ranks: the gas's answer is every rank's, combined (cuda_ranks.cu) */
            return ad_room_among_spots(&p, sh.head, spot_next, spots, i) && l.gas_room[i];
        return ad_room_for(&p, start, NULL, slots.state, sh.head, spot_next, spots, i);
    }
    /* the room the gas leaves at q (k_enter_gas_room) */
    __device__ __forceinline__ int gas(const ad_params &p, const unsigned *start, ad_state q) const
    {
        return ad_room_in_gas(&p, start, NULL, slots.state, q.x, q.y);
    }
    /* a new disc q in slot `slot` (below the capacity) with id `id`: zero observables, binned where the
     * pass binned */
    __device__ __forceinline__ void place(const ad_params &p, unsigned slot, unsigned id, ad_state q) const
    {
        slots.state[slot] = q;
        slots.ids[slot] = id;
        slots.pressure[slot] = 0.0f;
        slots.virial[slot] = 0.0f;
        if (slots.acc) slots.acc[slot] = ad_accel{0.0f, 0.0f};
        if (slots.touch) slots.touch[slot] = 0u;
        if (bin_mode != AD_BIN_NONE) {
            ad_bin_diag d;
            ad_bin_one(p, bin, slot, q.x, q.y, &d);
        }
    }
};

/* GPU ranks (cuda_ranks.cu): the room in the gas of the step's first AD_ROOM_MAX spots, each rank's answer
 * about its own discs combined over the ranks (the minimum), on the device; d: the step's enter_discs as
 * k_enter_new takes them. A failure is kept for ad_cuda_ranks_pass to return. */
const unsigned char *ad_cuda_ranks_gas_room(ad_world *w, const ad_enter_discs &d);

#endif
