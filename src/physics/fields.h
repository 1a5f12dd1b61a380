/* Field sampling shared by both backends: which coarse cell a disc counts in and what it adds. */
/* Two dimensions: the fields are an image of 2D cells (sums of vx, vy, ax, ay, |v|^2 over 2 components); 3D
 * fields are a volume. */
#ifndef AD_PHYSICS_FIELDS_H
#define AD_PHYSICS_FIELDS_H

#include "hd.h"
#include "state.h"

/* Per-cell sums kept between samples (doubles: they grow over many samples). */
enum {
    AD_FS_N = 0,       /* discs seen */
    AD_FS_VX,          /* sum vx */
    AD_FS_VY,          /* sum vy */
    AD_FS_V2,          /* sum |v|^2 */
    AD_FS_VIRIAL,      /* sum of per-disc virial */
    AD_FS_CONTACT,     /* sum of per-disc contact force magnitude */
    AD_FS_AX,          /* sum ax */
    AD_FS_AY,          /* sum ay */
    AD_FS_COUNT
};

typedef struct ad_field_grid {
    float x0, y0, inv_dx, inv_dy;
    int nx, ny;
    int probe;                           /* the probe is set: its sums follow the cells' (AD_PS_* order) */
    int probe_all;                       /* every disc counts (no direction given) */
    float px0, py0, px1, py1;            /* the probe's rectangle [m] */
    float pdx, pdy;                      /* its direction (unit) */
} ad_field_grid;

/* The probe's sums (in the record after the cells'). */
enum { AD_PS_N = 0, AD_PS_PAR, AD_PS_PERP, AD_PS_PAR2, AD_PS_PERP2, AD_PS_COUNT };

/* 1 when a disc counts in the probe: its centre in the rectangle, moving along the direction. */
AD_HD static inline int ad_in_probe(const ad_field_grid *g, ad_state s)
{
    return g->probe && s.x >= g->px0 && s.x < g->px1 && s.y >= g->py0 && s.y < g->py1 &&
           (g->probe_all || s.vx * g->pdx + s.vy * g->pdy > 0.0f);
}

/* What a disc adds to the probe's sums, in AD_PS_* order. */
AD_HD static inline void ad_probe_values(const ad_field_grid *g, ad_state s, double v[AD_PS_COUNT])
{
    double a = (double)s.vx * g->pdx + (double)s.vy * g->pdy, b = -(double)s.vx * g->pdy + (double)s.vy * g->pdx;
    v[AD_PS_N] = 1.0;
    v[AD_PS_PAR] = a;
    v[AD_PS_PERP] = b;
    v[AD_PS_PAR2] = a * a;
    v[AD_PS_PERP2] = b * b;
}

/* The cell of a centre, or -1 outside the field's extent (fields never clamp). */
AD_HD static inline int ad_field_cell(const ad_field_grid *g, float x, float y)
{
    float fx = (x - g->x0) * g->inv_dx, fy = (y - g->y0) * g->inv_dy;
    /* compared before the conversion: a disc far outside (or NaN) must not reach (int) of a float
     * beyond int's range, which is undefined */
    if (!(fx >= 0.0f && fy >= 0.0f && fx < (float)g->nx && fy < (float)g->ny)) return -1;
    int cx = (int)fx, cy = (int)fy;
    if (cx >= g->nx || cy >= g->ny) return -1; /* fx just below nx can round to nx in float */
    return cy * g->nx + cx;
}

/* The values one disc adds to its cell's sums, in AD_FS_* order. */
AD_HD static inline void ad_field_values(ad_state s, float virial, float contact, float ax, float ay,
                                         double v[AD_FS_COUNT])
{
    v[AD_FS_N] = 1.0;
    v[AD_FS_VX] = s.vx;
    v[AD_FS_VY] = s.vy;
    v[AD_FS_V2] = (double)s.vx * s.vx + (double)s.vy * s.vy;
    v[AD_FS_VIRIAL] = virial;
    v[AD_FS_CONTACT] = contact;
    v[AD_FS_AX] = ax;
    v[AD_FS_AY] = ay;
}

#endif
