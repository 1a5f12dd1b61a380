/* Uniform-grid cell arithmetic shared by both backends: the one place positions are clamped to the grid. */
/* The per-axis arithmetic here is the same in every dimension; the cell index and the domain test are
 * written once for both (grid_dim.h): cy * nx + cx in 2D, (cz * ny + cy) * nx + cx in 3D. */
#ifndef AD_PHYSICS_GRID_H
#define AD_PHYSICS_GRID_H

#include "params.h"

/* Cell coordinate along one axis, clamped to [0, n-1]. Clamping happens here and
 * nowhere else: a centre outside the domain (a disc pressed into a wall, a NaN)
 * still lands in a border cell, and since clamping never increases the distance
 * between two coordinates, every pair closer than a cell stays in adjacent cells. */
AD_HD static inline int ad_cell_coord(float x, float origin, float inv_cell, int n)
{
    float f = (x - origin) * inv_cell;
    /* comparisons, not floorf/fminf (library calls on baseline x86-64); !(f >= 0)
     * also catches NaN. In [0, n) truncation is the floor. */
    if (!(f >= 0.0f)) return 0;
    if (f >= (float)n) return n - 1;
    int c = (int)f;
    return c < n ? c : n - 1;
}

/* The most discs of radius r whose centres can lie in a cell of cx x cy with no two closer
 * than a diameter: hexagonal packing of the centres over the cell grown by r each side. */
AD_HD static inline double ad_cell_packing(double cx, double cy, double r)
{
    return (cx + 2.0 * r) * (cy + 2.0 * r) / (2.0 * 1.7320508075688772 * r * r);
}

/* 3D: the most spheres of radius r whose centres can lie in a cell of cx x cy x cz with no two closer
 * than a diameter: the densest packing (face-centred cubic, 1 / (4 sqrt 2 r^3) centres a volume) over
 * the cell grown by r each side. */
AD_HD static inline double ad_cell_packing3(double cx, double cy, double cz, double r)
{
    return (cx + 2.0 * r) * (cy + 2.0 * r) * (cz + 2.0 * r) / (5.656854249492381 * r * r * r);
}

/* The columns [lo, hi] of neighbour cells of column cx within `reach`, split in
 * at most two runs when a periodic axis wraps. Returns the number of runs. */
AD_HD static inline int ad_neighbour_runs(int c, int reach, int n, int periodic, int lo[2], int hi[2])
{
    int a = c - reach, b = c + reach;
    if (!periodic) {
        lo[0] = a < 0 ? 0 : a;
        hi[0] = b > n - 1 ? n - 1 : b;
        return 1;
    }
    /* periodic: n >= 2*reach + 1 is guaranteed at creation, so runs never overlap */
    if (a < 0) {
        lo[0] = 0; hi[0] = b;
        lo[1] = n + a; hi[1] = n - 1;
        return 2;
    }
    if (b > n - 1) {
        lo[0] = a; hi[0] = n - 1;
        lo[1] = 0; hi[1] = b - n;
        return 2;
    }
    lo[0] = a; hi[0] = b;
    return 1;
}

/* Neighbour row cy + d (d in [-reach, reach]); -1 when it falls off a solid axis. */
AD_HD static inline int ad_neighbour_row(int cy, int d, int n, int periodic)
{
    int r = cy + d;
    if (r < 0) return periodic ? r + n : -1;
    if (r >= n) return periodic ? r - n : -1;
    return r;
}

/* Minimum-image separation along a periodic axis. Exactly antisymmetric:
 * ad_min_image(-d) == -ad_min_image(d), so pair forces cancel bit for bit. */
AD_HD static inline float ad_min_image(float d, int periodic, float len, float half)
{
    if (periodic) {
        if (d > half) d -= len;
        else if (d < -half) d += len;
    }
    return d;
}

/* Wraps a coordinate of a periodic axis into [lo, lo + len). */
AD_HD static inline float ad_wrap(float x, float lo, float len)
{
    if (x < lo) x += len;
    else if (x >= lo + len) x -= len;
    if (!(x >= lo && x < lo + len)) { /* far outside (a first placement): reduce fully */
        x = lo + fmodf(x - lo, len);
        if (x < lo) x += len;
        if (x >= lo + len) x = lo;
    }
    return x;
}

/* GPU ranks (backend = mpi, rank_backend = cuda): a disc outside the rank's own columns is a ghost, or one
 * that crossed to a neighbour in the last step (sent there at this step's start): the pass leaves it out. */
AD_HD static inline int ad_not_own(const ad_params *p, float x)
{
    if (p->own_hi <= 0) return 0;
    int c = ad_cell_coord(x, p->origin_x, p->inv_cell_x, p->nx);
    return c < p->own_lo || c >= p->own_hi;
}

#define AD_DIM 2
#include "grid_dim.h"
#undef AD_DIM
#define AD_DIM 3
#include "grid_dim.h"
#undef AD_DIM

#endif
