/* The cell of a centre in one dimension (included by grid.h with AD_DIM 2, then 3; see dim.h): cells
 * are numbered x fastest, then y, then z. No include guard: it is meant to be included once a
 * dimension. */
#include "dim.h"

AD_HD static inline uint32_t AD_D(ad_cell_index)(const ad_params *p, AD_ARGS())
{
#define AD_M(c) int k##c = ad_cell_coord(c, p->origin_##c, p->inv_cell_##c, p->n##c);
    AD_EACH(AD_M)
#undef AD_M
#if AD_DIM == 2
    return (uint32_t)ky * (uint32_t)p->nx + (uint32_t)kx;
#else
    return ((uint32_t)kz * (uint32_t)p->ny + (uint32_t)ky) * (uint32_t)p->nx + (uint32_t)kx;
#endif
}

/* 1 when the centre lies outside the domain (it was clamped into a border cell). Along an open axis
 * a disc is past its side only until the end of its step (Verlet's drift leaves the removal to
 * then): not counted. */
AD_HD static inline int AD_D(ad_outside_domain)(const ad_params *p, AD_ARGS())
{
#define AD_M(c) (p->open_##c || (c >= p->c##_min && c <= p->c##_max))
    return !AD_ALL(AD_M);
#undef AD_M
}

#include "dim_end.h"
