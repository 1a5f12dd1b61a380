/* Particle hot state as the kernels see it: {x, y, vx, vy}, 16 bytes, one aligned load. */
/* Two dimensions: ad_state is {x, y, vx, vy} (16 bytes, one aligned load) and ad_accel {ax, ay}; 3D
 * needs z and vz (a 32-byte state or a split layout). */
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

#endif
