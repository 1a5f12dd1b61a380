/* The numbers every contact, cell and integration kernel reads, in float, derived once per world. */
#ifndef AD_PHYSICS_PARAMS_H
#define AD_PHYSICS_PARAMS_H

#include "hd.h"

/* Derived from ad_world_def by ad_params_from_def() (src/core/world.c); both backends
 * pass it by value to their kernels. */
typedef struct ad_params {
    float radius, diameter, diameter_sq;
    float mass, inv_mass;
    float k;            /* normal stiffness [N/m] */
    float gamma_pp;     /* disc-disc damping coefficient [N s/m] */
    float gamma_wall;   /* disc-wall / disc-segment damping coefficient [N s/m] */
    float gx, gy;       /* body acceleration [m/s^2] */
    float x_min, x_max, y_min, y_max;
    float len_x, len_y, half_x, half_y;
    int disc_contacts;        /* 0: discs pass through each other (free-molecular flow) */
    int periodic_x, periodic_y; /* flow (inlet/outlet) axes count as periodic for contacts */
    int flow_x;               /* x is an inlet/outlet pair */
    float inflow_vx, inflow_vy, inflow_sigma; /* free stream and thermal speed per component */
    uint64_t seed;
    /* grid */
    float origin_x, origin_y; /* lower corner of cell (0,0) [m] */
    float cell_x, cell_y;     /* cell edges [m] */
    float inv_cell_x, inv_cell_y;
    int nx, ny;               /* cells per axis */
    int reach_x, reach_y;     /* neighbour cells searched on each side (1 when cell >= cutoff) */
    /* BVH broad phase */
    int broad_phase;          /* ad_broad_phase */
    float search;             /* half-edge of a disc's query box [m]: the contact search distance
                                 (a diameter, plus the RK4 skin) with a rounding margin */
} ad_params;

#endif
