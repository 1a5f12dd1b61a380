/* The 3D field sums' kernel (every `interval` steps, DESIGN.md's step 6; included by cuda3.cu only). */
#ifndef AD_CUDA_FIELDS3_CUH
#define AD_CUDA_FIELDS3_CUH

#include "../core/world_internal.h"
#include "ctrl.cuh"
#include "../physics/fields.h"

/* Each sphere of the step's state (cell order; its pressure, virial and acceleration, of the step's force
 * evaluation, at the same slot) adds its values to its field cell and the probe's sums: the shared
 * ad_field_cell3 / ad_field_values3 / ad_probe_values3 (physics/fields.h), with double atomics as 2D's
 * k_fields. The sums are observations: equal to the CPU's to rounding, not bit-reproducible. */
__global__ void k3_fields(ad_field_grid fg, ad_n nn, const ad_state3 *__restrict__ s,
                          const float *__restrict__ virial, const float *__restrict__ pressure,
                          const ad_accel3 *__restrict__ acc, double *__restrict__ sums)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= ad_n_get(nn)) return;
    ad_state3 q = s[i];
    if (ad_in_probe3(&fg, q)) { /* the probe's sums follow the cells' (a removed sphere: not in it) */
        double v[AD_PS_COUNT];
        ad_probe_values3(&fg, q, v);
        double *dst = sums + (size_t)fg.nx * (size_t)fg.ny * (size_t)fg.nz * AD_FS3_COUNT;
#pragma unroll
        for (int k = 0; k < AD_PS_COUNT; k++) atomicAdd(&dst[k], v[k]);
    }
    int c = ad_field_cell3(&fg, q.x, q.y, q.z);
    if (c < 0) return;
    ad_accel3 a = acc[i];
    double v[AD_FS3_COUNT];
    ad_field_values3(q, virial[i], pressure[i], a.ax, a.ay, a.az, v);
    double *dst = sums + (size_t)c * AD_FS3_COUNT;
#pragma unroll
    for (int k = 0; k < AD_FS3_COUNT; k++) atomicAdd(&dst[k], v[k]);
}

#endif
