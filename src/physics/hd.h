/* AD_HD marks shared physics functions: plain static inline in C, host+device under nvcc. */
#ifndef AD_PHYSICS_HD_H
#define AD_PHYSICS_HD_H

/* Forced inline: the gather loop must become one function with its accumulators in
 * registers; left to itself gcc keeps ad_gather_all out of line and spills them. */
#if defined(__CUDACC__)
#define AD_HD __host__ __device__ __attribute__((always_inline))
#elif defined(__GNUC__)
#define AD_HD __attribute__((always_inline))
#else
#define AD_HD
#endif

#include <math.h>
#include <stdint.h>

#define AD_PI 3.14159265358979323846

#endif
