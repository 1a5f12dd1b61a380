/* CUDA kernels of one step (DESIGN.md steps 1-6), each calling the shared physics headers: one
 * header per family, all of them here. The BVH's kernels are bvh.cuh's, the open sides' open.cuh's. */
#ifndef AD_CUDA_KERNELS_CUH
#define AD_CUDA_KERNELS_CUH

#include "bin.cuh"            /* step 1: bin */
#include "scan.cuh"           /* step 2: scan (the cell counters: counts.cuh) */
#include "scatter.cuh"        /* step 3: scatter */
#include "interact.cuh"       /* steps 4-5: interact + integrate, boundaries */
#include "fold.cuh"           /* step 6: fold the partials */
#include "fields_kernels.cuh" /* fields (every K), the largest speed */

#endif
