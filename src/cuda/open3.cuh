/* The 3D free stream and its reservoir on the device (src/physics/open3.h, reservoir_dim.h; included by
 * cuda3.cu only): what the spheres bring to enter.cuh's kernels, written once for both dimensions
 * (k_reservoir_plan<3> before the pass, k_enter_new<ad_enter_spheres> after it, inside the step's
 * graph: no host round trip). The draws, the spots and the room are open3.h's and reservoir_dim.h's,
 * as on the CPU (plain_open_dim.h), in the same order. */
#ifndef AD_CUDA_OPEN3_CUH
#define AD_CUDA_OPEN3_CUH

#include "../physics/open3.h"
#include "enter.cuh"

/* The spheres' side of k_enter_new: the world's slots that entering spheres take (after the last in
 * use, up to the capacity), the judged spots (AD_ROOM_MAX) and whether each has room in the gas
 * (spot_gas: ad_room_in_grid3, when it is judged); a spot has room where it has room in the gas and
 * none of the earlier spots with room there lies within a diameter (ad_room_among_spots3: the CPU's
 * two passes, the second reading the first's answers of the earlier spots). */
struct ad_enter_spheres {
    typedef ad_state3 state;
    typedef ad_entry3 entry;
    struct shared {
        unsigned unused;
    };
    ad_enter_lists<ad_entry3> l;
    ad_state3 *state_out;
    unsigned *ids;
    float *pressure, *virial; /* zeroed for a new sphere */
    ad_accel3 *acc;           /* zeroed */
    unsigned *touch;          /* the contact states of sampled surfaces (zeroed: no contact yet), or NULL */
    ad_state3 *spots;
    unsigned char *spot_gas;

    static __device__ __forceinline__ ad_entry3 draw(const ad_params &p, int f, uint64_t step, uint32_t j)
    {
        return ad_entry_draw3(&p, f, step, j);
    }
    static __device__ __forceinline__ ad_state3 spot(const ad_params &p, ad_entry3 e, float dt, uint64_t step,
                                                     uint32_t i)
    {
        return ad_entry_spot3(&p, e, dt, step, i);
    }
    static __device__ __forceinline__ ad_state3 res_spot(const ad_params &p, int b, uint32_t j, uint64_t step)
    {
        return ad_reservoir_spot3(&p, b, j, step);
    }
    static __device__ __forceinline__ float speed2(ad_state3 q) { return q.vx * q.vx + q.vy * q.vy + q.vz * q.vz; }
    __device__ __forceinline__ void begin(shared &, unsigned, unsigned) const {}
    __device__ __forceinline__ void judge(const ad_params &p, const unsigned *start, shared &, unsigned i,
                                          ad_state3 q) const
    {
        spots[i] = q;
        spot_gas[i] = (unsigned char)ad_room_in_grid3(&p, start, state_out, q.x, q.y, q.z);
    }
    __device__ __forceinline__ int room(const ad_params &p, const unsigned *, const shared &, unsigned i) const
    {
        return spot_gas[i] && ad_room_among_spots3(&p, spot_gas, spots, i);
    }
    /* a new sphere q in slot `slot` (below the capacity) with id `id`: zero observables and acceleration */
    __device__ __forceinline__ void place(const ad_params &, unsigned slot, unsigned id, ad_state3 q) const
    {
        state_out[slot] = q;
        ids[slot] = id;
        pressure[slot] = 0.0f;
        virial[slot] = 0.0f;
        acc[slot] = ad_accel3{0.0f, 0.0f, 0.0f};
        if (touch) touch[slot] = 0u;
    }
};

#endif
