/* What the step's kernels share with each other and with the host (cuda_world.cuh): the control
 * record that lives on the device between steps (ad_ctrl), a kernel's disc count, the rule of the
 * step size, the block size and the per-block sums' record, and the sizes of the buffers the host
 * allocates for the fold (fold.cuh) and for the room of entering discs (open.cuh). No kernels: every
 * file of the backend may include it. */
#ifndef AD_CUDA_CTRL_CUH
#define AD_CUDA_CTRL_CUH

/* Everything of a step that lives on the device between steps: the step size and
 * the statistics. The host reads it only when asked (ad_world_get_stats). */
struct ad_ctrl {
    double dt, time;
    unsigned long long step;
    double ke, pe, px, py, virial, body_fx, body_fy;
    double body_impulse_x, body_impulse_y, wall_impulse[4], ke_integral, virial_integral;
    float vmax2, max_overlap;
    unsigned long long nonfinite, skin_violations;
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

/* A kernel's disc count: `bound` discs at most (the launch's size), and where the count lives on the
 * device (open sides), the count there. */
struct ad_n {
    unsigned bound;
    const unsigned *dev; /* NULL: bound is the count */
};

__device__ __forceinline__ unsigned ad_n_get(const ad_n &n) { return n.dev ? *n.dev : n.bound; }

/* How the next step is chosen (ad_next_dt, on the device). */
struct ad_dt_rule {
    int adaptive;
    double dt_max, dt_contact, move; /* move = max_move * radius */
};

__device__ __forceinline__ double ad_dev_next_dt(const ad_dt_rule &r, double vmax)
{
    if (!r.adaptive) return r.dt_max;
    double dt = fmin(r.dt_max, r.dt_contact);
    if (vmax > 0.0) dt = fmin(dt, r.move / vmax);
    return dt;
}

/* ----------------------------------------------- block sums (fixed order) -- */

#define AD_CUDA_BLOCK 256

/* The per-block partials of a step: doubles summed in a fixed tree order. */
struct ad_dev_sums {
    double v[11]; /* ke pe px py virial body_fx body_fy wall0..3 */
    float vmax2, max_overlap;
    unsigned nonfinite, skin;
    unsigned occupancy, overflow, outside, pad; /* grid diagnostics, written by the DIAG bin kernel */
};

/* ------------------------------------------------ sizes the host allocates -- */

#define AD_REDUCE_BLOCKS 512 /* at most this many first-level blocks in k_fold_step */
#define AD_FOLD_SHARE 128     /* and about this many partials each, so a small world takes few */
#define AD_ROOM_MAX 8192 /* spots judged for room in one step (as on the CPU, src/cpu/open_cpu.c) */

#endif
