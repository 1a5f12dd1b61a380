/* Particle hot state as the kernels see it: {x, y, vx, vy} in 2D (16 bytes, one aligned load), the
 * reference documents' 32-byte record {x, y, z, -; vx, vy, vz, -} in 3D (two aligned 16-byte halves:
 * two 128-bit loads on the GPU, the position half alone where only positions are read). */
#ifndef AD_PHYSICS_STATE_H
#define AD_PHYSICS_STATE_H

#include "hd.h"

#if defined(__CUDACC__) || defined(__cplusplus)
#define AD_ALIGN16 alignas(16)
#else
#define AD_ALIGN16 _Alignas(16)
#endif

typedef struct ad_state {
    AD_ALIGN16 float x;
    float y, vx, vy;
} ad_state;

/* 3D: the spare word of each half is zero (docs/ARCHITECTURE.md, "The 3D state", says why the
 * record is 32 bytes and not 24). */
typedef struct ad_state3 {
    AD_ALIGN16 float x;
    float y, z, spare_p;
    AD_ALIGN16 float vx;
    float vy, vz, spare_v;
} ad_state3;

#endif
