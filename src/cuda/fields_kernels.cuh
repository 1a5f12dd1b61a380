/* The field sums' kernel (every K steps, DESIGN.md) and the largest speed's (the first step's
 * size after the host changed the discs). */
#ifndef AD_CUDA_FIELDS_KERNELS_CUH
#define AD_CUDA_FIELDS_KERNELS_CUH

#include "../core/world_internal.h"
#include "../physics/fields.h"
#include "ctrl.cuh"

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
