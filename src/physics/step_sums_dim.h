/* A disc's (sphere's) motion sums in one dimension (included by step_sums.h with AD_DIM 2, then 3;
 * see dim.h). No include guard: it is meant to be included once a dimension. */
#include "dim.h"

/* A disc's motion sums, for slot s0 + l (mod 8): the lane sums, and the block's largest speed and
 * non-finite count. */
AD_HD static inline void AD_D(ad_motion8_add)(ad_motion8 *m, ad_step_sums *b, const ad_params *p, AD_STATE s,
                                              unsigned l)
{
#define AD_M(c) s.v##c * s.v##c
    float v2 = AD_SUM(AD_M);
#undef AD_M
    l &= 7u;
    m->ke[l] += 0.5 * (double)p->mass * (double)v2;
#define AD_M(c) m->p##c[l] += (double)p->mass * (double)s.v##c;
    AD_EACH(AD_M)
#undef AD_M
    b->vmax2 = b->vmax2 > v2 ? b->vmax2 : v2;
    /* x - x is NaN exactly when x is infinite or NaN, and a NaN survives the sum */
#define AD_M(c) (s.c - s.c)
    float z = AD_SUM(AD_M);
#undef AD_M
#define AD_M(c) (s.v##c - s.v##c)
    z += AD_SUM(AD_M);
#undef AD_M
    b->nonfinite += z != z;
}

#include "dim_end.h"
