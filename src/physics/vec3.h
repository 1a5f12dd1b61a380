/* A vector of three floats and what the 3D physics does with it (shared by the backends). */
#ifndef AD_PHYSICS_VEC3_H
#define AD_PHYSICS_VEC3_H

#include "hd.h"

typedef struct ad_vec3 {
    float x, y, z;
} ad_vec3;

AD_HD static inline ad_vec3 ad_v3(float x, float y, float z)
{
    ad_vec3 v = {x, y, z};
    return v;
}
AD_HD static inline ad_vec3 ad_v3_add(ad_vec3 a, ad_vec3 b) { return ad_v3(a.x + b.x, a.y + b.y, a.z + b.z); }
AD_HD static inline ad_vec3 ad_v3_sub(ad_vec3 a, ad_vec3 b) { return ad_v3(a.x - b.x, a.y - b.y, a.z - b.z); }
AD_HD static inline ad_vec3 ad_v3_scale(ad_vec3 a, float s) { return ad_v3(a.x * s, a.y * s, a.z * s); }
/* a + s b */
AD_HD static inline ad_vec3 ad_v3_axpy(ad_vec3 a, float s, ad_vec3 b)
{
    return ad_v3(a.x + s * b.x, a.y + s * b.y, a.z + s * b.z);
}
AD_HD static inline float ad_v3_dot(ad_vec3 a, ad_vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
AD_HD static inline ad_vec3 ad_v3_cross(ad_vec3 a, ad_vec3 b)
{
    return ad_v3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}

#endif
