/* What the step's kernels share with each other and with the host (cuda_world.cuh): the control
 * record that lives on the device between steps (ad_ctrl), a kernel's disc count, the block size,
 * and the sizes of the buffers the host allocates for the fold (fold.cuh); the room of entering
 * discs is sized by AD_ROOM_MAX (src/physics/room.h). No kernels: every file of the backend may
 * include it. */
#ifndef AD_CUDA_CTRL_CUH
#define AD_CUDA_CTRL_CUH

#include "../physics/room.h"
#include "../physics/step_sums.h"

/* Everything of a step that lives on the device between steps: the step size and
 * the statistics. The host reads it only when asked (ad_world_get_stats). */
struct ad_ctrl {
    /* the statistics the step computes (dt, time, step, energies, forces, impulses: ad_stats_add_step,
     * src/physics/step_sums.h); the host's own fields of ad_stats (timers, the grid) are not kept here */
    ad_stats stats;
    unsigned long long nonfinite; /* disc states that became non-finite, summed over steps */
    /* grid diagnostics of the last step (the DIAG bin variant writes them) */
    unsigned int max_occupancy;
    unsigned int fold_done; /* blocks of k_fold_step done in this step; 0 between steps */
    unsigned long long overflow, outside;
    unsigned int count_overflow; /* a cell counter passed its width (counts.cuh): the run is lost */
    /* open sides (open.h): the world's disc count changes on the device */
    unsigned int n;              /* slots in use: the discs, and those removed in the last pass until the sort */
    unsigned int dead;           /* removed discs binned for the next sort (their ranks in the dead cell) */
    unsigned int removed;        /* discs removed in the last pass */
    unsigned int next_id;        /* the id of the next disc added or entering */
    unsigned int nwaiting;       /* entering discs waiting for room */
    unsigned int capacity_exceeded; /* the step's new discs did not fit: the count stayed, the run is stopped */
    double owed[4];              /* entries owed per side */
    unsigned long long entered, left, res_added, res_removed, entries_lost;
};

/* The statistics the device keeps besides those of the step's fold (ad_stats_copy_step,
 * src/physics/step_sums.h), as (ad_ctrl field, ad_stats field): one list for both directions
 * and both dimensions. */
#define AD_CTRL_STATS(X)                                                                                          \
    X(entered, entered)                                                                                           \
    X(left, left)                                                                                                 \
    X(res_added, reservoir_added)                                                                                 \
    X(res_removed, reservoir_removed)                                                                             \
    X(entries_lost, entries_lost)                                                                                 \
    X(nwaiting, entries_waiting)

/* A kernel's disc count: `bound` discs at most (the launch's size), and where the count lives on the
 * device (open sides), the count there. */
struct ad_n {
    unsigned bound;
    const unsigned *dev; /* NULL: bound is the count */
};

__device__ __forceinline__ unsigned ad_n_get(const ad_n &n) { return n.dev ? *n.dev : n.bound; }

/* ----------------------------------------------- block sums (fixed order) -- */

#define AD_CUDA_BLOCK 256

/* The per-block partials of a step are ad_step_sums (src/physics/step_sums.h), doubles summed in
 * a fixed tree order. */

/* ------------------------------------------------ sizes the host allocates -- */

#define AD_REDUCE_BLOCKS 512 /* at most this many first-level blocks in k_fold_step */
#define AD_FOLD_SHARE 128     /* and about this many partials each, so a small world takes few */

#endif
