/* The numbers every contact, cell and integration kernel reads, in float, derived once per world. */
/* Per axis x, y and (3D) z: the domain, the grid, periodic and solid sides; open sides and the
 * free-stream reservoir's bands are those of x and y (z is solid or periodic; in 3D the bands span the
 * depth, in layers of boxes). */
#ifndef AD_PHYSICS_PARAMS_H
#define AD_PHYSICS_PARAMS_H

#include "hd.h"

enum { AD_STENCIL_ROWS_MAX = 25 };

/* The neighbour cells of a cell as data (stencil.h): rows along x at offsets (dy, dz), z outermost. */
typedef struct ad_stencil {
    int rows;
    signed char dy[AD_STENCIL_ROWS_MAX], dz[AD_STENCIL_ROWS_MAX];
} ad_stencil;

/* Derived from ad_world_def by ad_params_from_def() (src/core/world.c); both backends
 * pass it by value to their kernels. */
typedef struct ad_params {
    int dims;           /* 2 or 3 */
    float radius, diameter, diameter_sq;
    float mass, inv_mass;
    float k;            /* normal stiffness [N/m] */
    float gamma_pp;     /* disc-disc damping coefficient [N s/m] */
    float gamma_wall;   /* disc-wall / disc-segment damping coefficient [N s/m] */
    float gx, gy, gz;   /* body acceleration [m/s^2] */
    float x_min, x_max, y_min, y_max, z_min, z_max;
    float len_x, len_y, len_z, half_x, half_y, half_z;
    int disc_contacts;        /* 0: discs pass through each other (free-molecular flow) */
    int periodic_x, periodic_y, periodic_z; /* the axis wraps */
    int open_x, open_y, open_z; /* the axis is open (far field, open.h): its disc count changes (z: never) */
    int wall[6];              /* per side (x_min, x_max, y_min, y_max, z_min, z_max): a solid spring-dashpot wall */
    int open[4];              /* per side: discs past it are removed, the free stream enters through it */
    float stream_vx, stream_vy, stream_sigma, stream_density; /* free stream: velocity, thermal speed per
                                                                 component, number density [1/m^2] */
    uint64_t seed;
    /* the free-stream reservoir (open.h): the outer cells of the grid on open sides */
    int res_l, res_r, res_b, res_t; /* band width in cells: left, right, bottom, top (0: none) */
    int res_box[4];           /* per part: box edge along x and y [cells] */
    int res_box_z[4];         /* per part: box edge along z [cells] (1 in 2D) */
    int res_boxes;            /* boxes in all (0: no reservoir) */
    int res_first[4], res_cols[4], res_rows[4]; /* per part (left, right, bottom, top): first box, boxes
                                                   per row (along x), rows per layer (along y) */
    float res_rate;           /* the thermostat's and the density's rate nu [1/s] */
    double side_rate[4];      /* discs of the free stream entering per second through each open side
                                 (ad_side_rate, computed once on the host: both backends add the same) */
    /* grid */
    float origin_x, origin_y, origin_z; /* lower corner of cell (0,0,0) [m] */
    float cell_x, cell_y, cell_z;       /* cell edges [m] */
    float inv_cell_x, inv_cell_y, inv_cell_z;
    int nx, ny, nz;           /* cells per axis (nz = 1 in 2D) */
    int reach_x, reach_y, reach_z; /* neighbour cells searched on each side (1 when cell >= cutoff; reach_z 0 in 2D) */
    ad_stencil stencil;       /* the neighbour rows of reach_y by reach_z */
    int own_lo, own_hi;       /* GPU ranks (backend = mpi, rank_backend = cuda): the rank's own columns
                                 [own_lo, own_hi); a disc elsewhere is a ghost (ad_not_own). own_hi 0: all */
    /* BVH broad phase */
    int broad_phase;          /* ad_broad_phase */
    float search;             /* half-edge of a disc's query box [m]: the contact search distance
                                 (a diameter, plus the RK4 skin) with a rounding margin */
    /* gas-surface models and the panels' sampling (surface.h, panel.h) */
    int surfaces;             /* 1: contacts are sampled per panel and each disc's contact state kept */
    int rough;                /* 1: some surface is not specular (diffuse re-emissions happen) */
    float surf_diffuse[7];    /* the fraction of contacts ending diffusely: [0] the body, [1 + k] wall k */
    float surf_sigma[7];      /* the re-emission's thermal speed sqrt(kT/m) [m/s], the same order */
    double panel_inv_qf, panel_inv_qe; /* one over the fixed-point quanta: 2^32 / (k r) [1/N], 2^32 / (k r^2) [1/J] */
} ad_params;

#endif
