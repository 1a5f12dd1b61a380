/* Field sampling shared by every backend: which coarse cell a disc (sphere) counts in and what it adds. */
/* The cell and the values are written once for both dimensions (fields_dim.h): an image of 2D cells
 * (sums of vx, vy, ax, ay and |v|^2 over 2 components, AD_FS_*), or a volume of 3D cells, numbered
 * x fastest, then y, then z (the same sums with vz, az and |v|^2 over 3 components, AD_FS3_*). */
#ifndef AD_PHYSICS_FIELDS_H
#define AD_PHYSICS_FIELDS_H

#include "hd.h"
#include "state.h"

/* Per-cell sums kept between samples (doubles: they grow over many samples). 2D: */
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

/* 3D: the same sums in the same order, with z's velocity and acceleration after y's. In both, the
 * velocity of axis k is at VX + k and its acceleration at AX + k (fields_dim.h relies on it). */
enum {
    AD_FS3_N = 0,
    AD_FS3_VX,
    AD_FS3_VY,
    AD_FS3_VZ,
    AD_FS3_V2,         /* sum |v|^2 over the three components */
    AD_FS3_VIRIAL,
    AD_FS3_CONTACT,
    AD_FS3_AX,
    AD_FS3_AY,
    AD_FS3_AZ,
    AD_FS3_COUNT
};

/* The sums a cell holds in a world of d dimensions. */
#define AD_FS_COUNT_DIM(d) ((d) == 3 ? (int)AD_FS3_COUNT : (int)AD_FS_COUNT)

typedef struct ad_field_grid {
    float x0, y0, inv_dx, inv_dy;
    int nx, ny;
    int probe;                           /* the probe is set: its sums follow the cells' (AD_PS_* order) */
    int probe_all;                       /* every disc counts (no direction given) */
    float px0, py0, px1, py1;            /* the probe's rectangle [m] */
    float pdx, pdy;                      /* its direction (unit) */
    float z0, inv_dz;                    /* 3D: the grid along z */
    int nz;                              /* 3D: cells along z (1 in 2D) */
    float pz0, pz1;                      /* 3D: the probe's box along z [m] */
} ad_field_grid;

/* The probe's sums (in the record after the cells'). Along: v . dir; across (2D): v . dir turned +90
 * degrees. 3D has two across components, e1 (dir turned +90 degrees in the xy plane) and z: PERP sums
 * the velocity along their diagonal (e1 + z) / sqrt 2 and PERP2 half the squared across speed, the
 * mean square of one across component; so PERP2/n - (PERP/n)^2 is the across variance of one
 * component, averaged over the two, wherever one of the two across means is zero (the stream has no
 * z component); otherwise it is off by the product of the two means. */
enum { AD_PS_N = 0, AD_PS_PAR, AD_PS_PERP, AD_PS_PAR2, AD_PS_PERP2, AD_PS_COUNT };

#define AD_DIM 2
#include "fields_dim.h"
#undef AD_DIM
#define AD_DIM 3
#include "fields_dim.h"
#undef AD_DIM

#endif
