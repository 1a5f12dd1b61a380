/* AD_HD marks shared physics functions: plain static inline in C, host+device under nvcc. */
#ifndef AD_PHYSICS_HD_H
#define AD_PHYSICS_HD_H

#if defined(__CUDACC__)
#define AD_HD __host__ __device__
#else
#define AD_HD
#endif

#include <math.h>
#include <stdint.h>

#define AD_PI 3.14159265358979323846

#endif
