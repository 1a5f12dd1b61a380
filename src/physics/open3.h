/* The free stream of a 3D world: open faces, the spheres that enter through them and the room each
 * needs, once for both backends. The kinetic theory is open.h's (the drifting Maxwellian, the one-way
 * flux and the flux-weighted normal speed, ad_flux_per_length and ad_flux_speed, are the same
 * functions): through a face of area A with inward normal nhat, u = U . nhat,
 *   the spheres entering per time     A n sigma (phi(a) + a Phi(a)),  a = u / sigma, n per volume;
 *   their normal speed                 flux-weighted, as in 2D;
 *   their two tangential velocities    U_t + sigma N(0, 1) each;
 *   where they cross                   uniformly over the face, at a uniform instant of the step.
 * The faces of x and y may be open (boundary_x, boundary_y); z is solid or periodic; the reservoir is
 * open.h's (reservoir_dim.h). An entering sphere whose spot is taken waits, as a disc does (open.h), in
 * the world's list of ad_entry3; a spot has room where no sphere of the gas and no earlier spot with
 * room in the gas lies within a diameter (ad_room_in_grid3, ad_room_among_spots3). Counter-based
 * throughout: the same spheres on every backend and any thread count. */
#ifndef AD_PHYSICS_OPEN3_H
#define AD_PHYSICS_OPEN3_H

#include "open.h"
#include "room.h"

/* A face of the box: 0 x_min, 1 x_max, 2 y_min, 3 y_max (the open ones). t[0], t[1] are its two
 * tangential axes in axis order (y, z for an x face; x, z for a y face). */
typedef struct ad_face3 {
    int axis, t[2];
    float inward;          /* +1 or -1 along the axis */
    float at;              /* the face's coordinate */
    float lo[2], hi[2];    /* the centres that may enter, along t[0] and t[1] (a radius off solid walls) */
    float len[2];          /* the periodic length along t[k] (0: not periodic) */
} ad_face3;

AD_HD static inline float ad_axis_min3(const ad_params *p, int a) { return a == 0 ? p->x_min : a == 1 ? p->y_min : p->z_min; }
AD_HD static inline float ad_axis_max3(const ad_params *p, int a) { return a == 0 ? p->x_max : a == 1 ? p->y_max : p->z_max; }
AD_HD static inline int ad_axis_periodic3(const ad_params *p, int a)
{
    return a == 0 ? p->periodic_x : a == 1 ? p->periodic_y : p->periodic_z;
}

AD_HD static inline ad_face3 ad_face_of3(const ad_params *p, int f)
{
    ad_face3 s;
    s.axis = f / 2;
    s.t[0] = s.axis == 0 ? 1 : 0;
    s.t[1] = 2;
    s.inward = f % 2 == 0 ? 1.0f : -1.0f;
    s.at = f % 2 == 0 ? ad_axis_min3(p, s.axis) : ad_axis_max3(p, s.axis);
    for (int k = 0; k < 2; k++) {
        int a = s.t[k];
        float lo = ad_axis_min3(p, a), hi = ad_axis_max3(p, a);
        s.lo[k] = p->wall[2 * a] ? lo + p->radius : lo;
        s.hi[k] = p->wall[2 * a + 1] ? hi - p->radius : hi;
        s.len[k] = ad_axis_periodic3(p, a) ? hi - lo : 0.0f;
    }
    return s;
}

/* The stream's velocity along axis a (the 3D free stream has no z component: yaw the body instead). */
AD_HD static inline double ad_stream_along3(const ad_params *p, int a)
{
    return a == 0 ? (double)p->stream_vx : a == 1 ? (double)p->stream_vy : 0.0;
}

/* The free stream's entry rate through face f [1/s] (ad_params.side_rate holds it in 3D). */
static inline double ad_side_rate3(const ad_params *p, int f)
{
    if (!ad_side_open(p, f)) return 0.0;
    ad_face3 s = ad_face_of3(p, f);
    double area = ((double)s.hi[0] - (double)s.lo[0]) * ((double)s.hi[1] - (double)s.lo[1]);
    if (!(area > 0.0)) return 0.0;
    return area * ad_flux_per_length(p->stream_density, p->stream_sigma, ad_stream_along3(p, s.axis) * s.inward);
}

/* An entering sphere before its depth: the face, the point on it (along t[0], t[1]), its velocity
 * (normal inward, and along t[0], t[1]). 24 bytes. */
typedef struct ad_entry3 {
    float along[2], vn, vt[2];
    uint32_t side;
} ad_entry3;

/* Entering sphere j of face f in `step`, drawn from (seed, step, f, j): the seeds of open.h's discs. */
AD_HD static inline ad_entry3 ad_entry_draw3(const ad_params *p, int f, uint64_t step, uint32_t j)
{
    ad_face3 s = ad_face_of3(p, f);
    uint64_t seed = (p->seed ^ 0x6A09E667F3BCC909ull) + step * 0xBB67AE8584CAA73Bull + (uint64_t)f * 0x3C6EF372FE94F82Bull;
    double sig = p->stream_sigma, un = ad_stream_along3(p, s.axis) * s.inward;
    ad_entry3 e;
    for (int k = 0; k < 2; k++) {
        double u = ad_rng_uniform(seed, 3 * (uint64_t)j + (uint64_t)k);
        e.along[k] = s.lo[k] + (float)(u * ((double)s.hi[k] - (double)s.lo[k]));
        if (!(e.along[k] < s.hi[k])) e.along[k] = s.lo[k];
    }
    e.vn = sig > 0.0 ? (float)(sig * ad_flux_speed(seed ^ 0x510E527FADE682D1ull, j, un / sig)) : (float)un;
    double g[2];
    ad_rng_normal2(seed ^ 0x9B05688C2B3E6C1Full, j, &g[0], &g[1]);
    for (int k = 0; k < 2; k++) e.vt[k] = (float)(ad_stream_along3(p, s.t[k]) + sig * g[k]);
    e.side = (uint32_t)f;
    return e;
}

/* Where an entering sphere is at the end of the step: a fraction u of the step inside (u in (0, 1]). */
AD_HD static inline ad_state3 ad_entry_place3(const ad_params *p, ad_entry3 e, float dt, double u)
{
    ad_face3 s = ad_face_of3(p, (int)e.side);
    float pos[3], vel[3];
    pos[s.axis] = s.at + s.inward * (float)((double)e.vn * dt * u);
    vel[s.axis] = s.inward * e.vn;
    for (int k = 0; k < 2; k++) {
        float a = e.along[k] + (float)((double)e.vt[k] * dt * u);
        if (s.len[k] > 0.0f) a = ad_wrap(a, ad_axis_min3(p, s.t[k]), s.len[k]);
        else a = a < s.lo[k] ? s.lo[k] : (a > s.hi[k] ? s.hi[k] : a);
        pos[s.t[k]] = a;
        vel[s.t[k]] = e.vt[k];
    }
    /* inside the domain: an open face's own coordinate is in it at the minimum, not at the maximum */
    float top = ad_axis_max3(p, s.axis);
    if (e.side % 2 == 1 && !(pos[s.axis] < top)) pos[s.axis] = nextafterf(top, -INFINITY);
    ad_state3 q = {pos[0], pos[1], pos[2], 0.0f, vel[0], vel[1], vel[2], 0.0f};
    return q;
}

/* Where entering sphere k of a step goes, u from (seed, step, k) (open.h's seed). */
AD_HD static inline ad_state3 ad_entry_spot3(const ad_params *p, ad_entry3 e, float dt, uint64_t step, uint32_t k)
{
    uint64_t seed = (p->seed ^ 0xE9B5DBA58189DBBCull) + step * 0x3956C25BF348B538ull;
    return ad_entry_place3(p, e, dt, ad_rng_uniform(seed, k));
}

/* ----------------------------------------------------------------- room -- */

/* 1 when sphere o is closer to (x, y, z) than a diameter (a removed sphere, NaN, never is). */
AD_HD static inline int ad_room_near3(const ad_params *p, ad_state3 o, float x, float y, float z)
{
    float ex = ad_min_image(o.x - x, p->periodic_x, p->len_x, p->half_x);
    float ey = ad_min_image(o.y - y, p->periodic_y, p->len_y, p->half_y);
    float ez = ad_min_image(o.z - z, p->periodic_z, p->len_z, p->half_z);
    return ex * ex + ey * ey + ez * ez < p->diameter_sq;
}

/* 1 when no sphere of the gas is within a diameter of (x, y, z), through the grid (cells within 1.5
 * diameters: the gas moved at most max_move radii since it was binned). */
AD_HD static inline int ad_room_in_grid3(const ad_params *p, const uint32_t *start, const ad_state3 *s, float x,
                                         float y, float z)
{
    const int n[3] = {p->nx, p->ny, p->nz}, per[3] = {p->periodic_x, p->periodic_y, p->periodic_z};
    const float inv[3] = {p->inv_cell_x, p->inv_cell_y, p->inv_cell_z};
    const float org[3] = {p->origin_x, p->origin_y, p->origin_z}, at[3] = {x, y, z};
    int r[3], c[3];
    for (int a = 0; a < 3; a++) {
        r[a] = (int)(1.5f * p->diameter * inv[a]) + 1;
        if (2 * r[a] + 1 > n[a]) r[a] = n[a] / 2; /* every cell once, also on a wrapped axis */
        c[a] = ad_cell_coord(at[a], org[a], inv[a], n[a]);
    }
    for (int dz = -r[2]; dz <= r[2]; dz++) {
        int k = ad_room_wrap_cell(c[2] + dz, n[2], per[2]);
        if (k < 0) continue;
        for (int dy = -r[1]; dy <= r[1]; dy++) {
            int row = ad_room_wrap_cell(c[1] + dy, n[1], per[1]);
            if (row < 0) continue;
            for (int dx = -r[0]; dx <= r[0]; dx++) {
                int col = ad_room_wrap_cell(c[0] + dx, n[0], per[0]);
                if (col < 0) continue;
                uint32_t cell = ((uint32_t)k * (uint32_t)n[1] + (uint32_t)row) * (uint32_t)n[0] + (uint32_t)col;
                for (uint32_t j = start[cell]; j < start[cell + 1]; j++)
                    if (ad_room_near3(p, s[j], x, y, z)) return 0;
            }
        }
    }
    return 1;
}

/* 1 when spot k of the step's list has room among the spots: none of the earlier spots that have room
 * in the gas (gas_ok[j], ad_room_in_grid3) lies within a diameter. A spot the gas takes is no place for
 * a sphere and holds none: it does not block the later ones (2D's room.h compares every earlier spot;
 * in 3D that jammed the inlet face of a dense stream: the spots of the thousands of entries waiting for
 * room covered the face, so that neither they nor the reservoir's additions within a diameter of it
 * found any, and the band's first boxes stayed 20 % thin: docs/VALIDATION.md). Two spots both placed
 * never overlap: of two within a diameter the later is refused where the earlier has room in the gas.
 * Each spot's answer depends on the gas test of the earlier ones only: parallel in two passes. */
AD_HD static inline int ad_room_among_spots3(const ad_params *p, const unsigned char *gas_ok, const ad_state3 *spots,
                                             uint32_t k)
{
    float x = spots[k].x, y = spots[k].y, z = spots[k].z;
    for (uint32_t j = 0; j < k; j++)
        if (gas_ok[j] && ad_room_near3(p, spots[j], x, y, z)) return 0;
    return 1;
}

#endif
