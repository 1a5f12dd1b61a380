/* Field sampling in one dimension (included by fields.h with AD_DIM 2, then 3; see dim.h): the probe's
 * test and values, a centre's field cell, a disc's values. No include guard: it is meant to be included
 * once a dimension. */
#include "dim.h"

#if AD_DIM == 2
#define AD_FS_AT(name) AD_FS_##name
#else
#define AD_FS_AT(name) AD_FS3_##name
#endif

/* 1 when a disc counts in the probe: its centre in the rectangle (box), moving along the direction. */
AD_HD static inline int AD_D(ad_in_probe)(const ad_field_grid *g, AD_STATE s)
{
#define AD_M(c) (s.c >= g->p##c##0 && s.c < g->p##c##1)
    return g->probe && AD_ALL(AD_M) && (g->probe_all || s.vx * g->pdx + s.vy * g->pdy > 0.0f);
#undef AD_M
}

/* What a disc adds to the probe's sums, in AD_PS_* order (fields.h: the across sums in 3D). */
AD_HD static inline void AD_D(ad_probe_values)(const ad_field_grid *g, AD_STATE s, double v[AD_PS_COUNT])
{
    double a = (double)s.vx * g->pdx + (double)s.vy * g->pdy, b = -(double)s.vx * g->pdy + (double)s.vy * g->pdx;
    v[AD_PS_N] = 1.0;
    v[AD_PS_PAR] = a;
#if AD_DIM == 2
    v[AD_PS_PERP] = b;
    v[AD_PS_PAR2] = a * a;
    v[AD_PS_PERP2] = b * b;
#else
    v[AD_PS_PERP] = (b + (double)s.vz) * 0.7071067811865476;
    v[AD_PS_PAR2] = a * a;
    v[AD_PS_PERP2] = 0.5 * (b * b + (double)s.vz * s.vz);
#endif
}

/* The cell of a centre, or -1 outside the field's extent (fields never clamp). */
AD_HD static inline int AD_D(ad_field_cell)(const ad_field_grid *g, AD_ARGS())
{
#define AD_M(c) float f##c = (c - g->c##0) * g->inv_d##c;
    AD_EACH(AD_M)
#undef AD_M
    /* compared before the conversion: a disc far outside (or NaN) must not reach (int) of a float
     * beyond int's range, which is undefined */
#define AD_M(c) f##c >= 0.0f
#define AD_N(c) f##c < (float)g->n##c
    if (!(AD_ALL(AD_M) && AD_ALL(AD_N))) return -1;
#undef AD_M
#undef AD_N
#define AD_M(c) int k##c = (int)f##c;
    AD_EACH(AD_M)
#undef AD_M
    /* f just below n can round to n in float */
#define AD_M(c) k##c < g->n##c
    if (!AD_ALL(AD_M)) return -1;
#undef AD_M
#if AD_DIM == 2
    return ky * g->nx + kx;
#else
    return (kz * g->ny + ky) * g->nx + kx;
#endif
}

/* The values one disc adds to its cell's sums, in AD_FS_* (3D: AD_FS3_*) order. */
AD_HD static inline void AD_D(ad_field_values)(AD_STATE s, float virial, float contact, AD_ARGS(a),
                                               double v[AD_FS_COUNT_DIM(AD_DIM)])
{
    v[AD_FS_AT(N)] = 1.0;
#define AD_M(c) v[AD_FS_AT(VX) + AD_AXIS(c)] = s.v##c;
    AD_EACH(AD_M)
#undef AD_M
#define AD_M(c) (double)s.v##c * s.v##c
    v[AD_FS_AT(V2)] = AD_SUM(AD_M);
#undef AD_M
    v[AD_FS_AT(VIRIAL)] = virial;
    v[AD_FS_AT(CONTACT)] = contact;
#define AD_M(c) v[AD_FS_AT(AX) + AD_AXIS(c)] = a##c;
    AD_EACH(AD_M)
#undef AD_M
}

#undef AD_FS_AT
#include "dim_end.h"
