/* The free-stream reservoir's parts that depend on the dimension (open.h includes this file with AD_DIM
 * 2, then 3; see dim.h): a free-stream velocity, the box of a position, the stream's number in a box,
 * an addition's spot, and step 5 of a particle in the band. The boxes themselves, the controller, the
 * keys and the picks are open.h's, one for both dimensions (a 2D grid is a 3D one of one layer).
 *
 * In 3D the band lines the open faces of x and y and spans the domain's depth, cut along z into layers
 * of boxes (world_def.c lays them out); a box holds the stream's number density per volume, and the
 * thermostat draws all three components of a velocity (the stream has no z drift, open3.h). The draws
 * are 2D's on the same seeds and counters, a third component from a second pair: counter-based on
 * (seed, step, box, index) or (seed, step, id), the same on every backend and thread count. No include
 * guard: it is meant to be included once a dimension. */
#include "dim.h"

/* A free-stream velocity (the reservoir's draws) from (seed, counter). */
AD_HD static inline void AD_D(ad_stream_velocity)(const ad_params *p, uint64_t seed, uint64_t counter, AD_PARGS(v))
{
    double g1, g2;
    ad_rng_normal2(seed, counter, &g1, &g2);
    *vx = p->stream_vx + (float)(p->stream_sigma * g1);
    *vy = p->stream_vy + (float)(p->stream_sigma * g2);
#if AD_DIM == 3
    double g3, g4;
    ad_rng_normal2(seed ^ 0x2E1B213827B70A85ull, counter, &g3, &g4);
    *vz = (float)(p->stream_sigma * g3);
#endif
}

/* The reservoir box of a centre (by its grid cell), or -1 inside the band's inner edge or without one. */
AD_HD static inline int AD_D(ad_reservoir_box)(const ad_params *p, AD_ARGS(q))
{
    if (!p->res_boxes) return -1;
#if AD_DIM == 2
    int cz = 0;
#else
    int cz = ad_cell_coord(qz, p->origin_z, p->inv_cell_z, p->nz);
#endif
    return ad_reservoir_box_of_cell(p, ad_cell_coord(qx, p->origin_x, p->inv_cell_x, p->nx),
                                    ad_cell_coord(qy, p->origin_y, p->inv_cell_y, p->ny), cz);
}

/* The stream's number of discs (spheres) in box b: its density times the box's area (volume). */
AD_HD static inline double AD_D(ad_reservoir_want)(const ad_params *p, int b)
{
    float lo[3], hi[3];
    ad_reservoir_box_rect(p, b, lo, hi);
#if AD_DIM == 2
    double size = (hi[0] > lo[0] && hi[1] > lo[1]) ? ((double)hi[0] - lo[0]) * ((double)hi[1] - lo[1]) : 0.0;
#else
    double size = (hi[0] > lo[0] && hi[1] > lo[1] && hi[2] > lo[2])
                      ? ((double)hi[0] - lo[0]) * ((double)hi[1] - lo[1]) * ((double)hi[2] - lo[2])
                      : 0.0;
#endif
    return (double)p->stream_density * size;
}

/* Addition j of box b in `step`: a random spot in the box's part of the domain, a free-stream velocity. */
AD_HD static inline AD_STATE AD_D(ad_reservoir_spot)(const ad_params *p, int b, uint32_t j, uint64_t step)
{
    float lo[3], hi[3];
    ad_reservoir_box_rect(p, b, lo, hi);
    uint64_t seed = (p->seed ^ 0xE9B5DBA58189DBBCull ^ 0x59F111F1B605D019ull) + step * 0x3956C25BF348B538ull;
    uint64_t q = ((uint64_t)(uint32_t)b << 8 | (j & 255u)) * 4;
    AD_STATE s;
#if AD_DIM == 3
    s.spare_p = s.spare_v = 0.0f;
#endif
    /* axis a from counter q + a: x, y (and z) */
#define AD_M(c)                                                                                                    \
    s.c = lo[AD_AXIS(c)] + (float)(ad_rng_uniform(seed, q + AD_AXIS(c)) * ((double)hi[AD_AXIS(c)] - lo[AD_AXIS(c)]));
    AD_EACH(AD_M)
#undef AD_M
#define AD_M(c) if (!(s.c < hi[AD_AXIS(c)])) s.c = lo[AD_AXIS(c)];
    AD_EACH(AD_M)
#undef AD_M
#define AD_M(c) &s.v##c
    AD_D(ad_stream_velocity)(p, seed ^ 0x923F82A4AB1C5ED5ull, q / 4, AD_LIST(AD_M));
#undef AD_M
    return s;
}

/* What the pass does to a disc (sphere) after it moved (step 5, after the periodic wraps): removal past
 * an open side; in the reservoir, removal where the step's plan chose it (`doomed`), else the
 * thermostat. Returns its fate. Counter-based draws on (seed, step, id), id = ids[slot]: the same on
 * every backend and thread count. */
AD_HD static inline int AD_D(ad_open_motion)(const ad_params *p, AD_STATE *s, const uint32_t *ids, size_t slot,
                                             uint64_t step, float dt, int doomed)
{
    if (ad_left_open(p, s->x, s->y)) return AD_LEFT;
    if (doomed) return AD_RESERVOIR_REMOVED;
    /* the band by its cells, as the grid bins it (the AVX2 tail tests the same) */
#define AD_M(c) s->c
    if (!p->res_boxes || AD_D(ad_reservoir_box)(p, AD_LIST(AD_M)) < 0) return AD_KEPT;
#undef AD_M
    uint64_t seed = (p->seed ^ 0x1F83D9ABFB41BD6Bull) + step * 0x5BE0CD19137E2179ull;
    double hit = -expm1(-(double)p->res_rate * dt); /* Andersen: a fresh velocity at the rate nu */
    uint32_t id = ids[slot];
#define AD_M(c) &s->v##c
    if (ad_rng_uniform(seed, (uint64_t)id) <= hit)
        AD_D(ad_stream_velocity)(p, seed ^ 0xCBBB9D5DC1059ED8ull, id, AD_LIST(AD_M));
#undef AD_M
    return AD_KEPT;
}

#include "dim_end.h"
