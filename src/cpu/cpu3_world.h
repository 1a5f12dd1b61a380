/* The CPU backend's 3D world: its arrays, shared by world3_cpu.c (the world's lifecycle, spheres in and
 * out, checkpoints) and step3_cpu.c (the step). */
#ifndef AD_CPU_CPU3_WORLD_H
#define AD_CPU_CPU3_WORLD_H

#include "../core/world_internal.h"

typedef struct cpu3_world {
    size_t cap, n, ncell;      /* ncell: nx ny nz cells */
    int threads;
    ad_state3 *state, *spare;  /* the spheres in cell order; the scatter's and the pass's output */
    uint32_t *id, *id_spare;
    ad_accel3 *acc, *acc_spare; /* the acceleration of the last force evaluation (Verlet's kick reads it) */
    float *pressure, *virial;  /* per slot, from the last force evaluation */
    ad_state3 *rk_in, *rk_out, *rk_sum; /* RK4: a stage's input and output, the weighted sum */
    uint32_t *cell_of, *count, *start; /* start: ncell + 1 entries */
    ad_step_sums *blocks;
    int primed;   /* Verlet: acc holds the forces of the current state */
    int dt_stale; /* spheres were added: the next step's size comes from their speeds */
} cpu3_world;

static inline size_t cpu3_blocks(size_t n) { return (n + AD_BLOCK - 1) / AD_BLOCK; }

/* Advances n steps (step3_cpu.c). */
ad_status ad_cpu3_step(ad_world *w, uint64_t n);

#endif
