/* The CUDA backend's world (a world's device buffers and stream, behind ad_world.impl) and what the
 * backend's three files share: cuda_backend.cu (the ops table, creation and allocation, the discs and
 * segments the host sets), cuda_step.cu (the step as kernels on one stream, captured as CUDA graphs)
 * and cuda_readback.cu (the statistics, the discs and fields read back, checkpoints). Only
 * cuda_step.cu includes the kernels' headers (kernels.cuh, bvh.cuh, open.cuh): their kernels are
 * defined once, in it. */
#ifndef AD_CUDA_WORLD_CUH
#define AD_CUDA_WORLD_CUH

#include <cuda_runtime.h>

#include "../core/world_internal.h"
#include "ctrl.cuh"
#include "leaf_tree.cuh"
#include "panels.cuh"

#define CU(call)                                                                                                  \
    do {                                                                                                          \
        cudaError_t e_ = (call);                                                                                  \
        if (e_ != cudaSuccess)                                                                                    \
            return ad_fail(AD_ERR_BACKEND, "cuda", "CUDA error at %s:%d: %s (%s)", __FILE__, __LINE__,           \
                           cudaGetErrorString(e_), #call);                                                        \
    } while (0)

struct cuda_world {
    size_t cap, ncell;
    unsigned nblocks_cap;
    cudaStream_t stream;
    ad_state *state[2];
    unsigned *id[2];
    int cur; /* state parity: a step flips it twice (scatter, interact), so it is the same after every step */
    int idp; /* id parity: the scatter alone moves ids, so it flips once a step */
    unsigned *cell_of, *rank, *start;
    unsigned *count;   /* the cell counters, 32 >> count_lg bits a cell (counts.cuh) */
    unsigned count_lg;
    unsigned *scan_state; /* the scan's sum a tile (counts.cuh) */
    unsigned *perm, *iota; /* deterministic mode: the stable order, each cell's members */
    /* open sides and the reservoir (open.cuh): the disc count lives on the device (ad_ctrl.n) and
     * per-disc kernels are launched for the capacity */
    int open;
    int dev_count; /* the count lives on the device (ad_ctrl.n): open sides, or GPU ranks */
    ad_entry *waiting, *waiting_next; /* entering discs waiting for room (AD_WAITING_MAX) */
    ad_state *spots;                  /* a step's new spots, judged for room (AD_ROOM_MAX) */
    unsigned *spot_next;              /* per spot the next of its bucket (room.h; the heads are k_enter_new's) */
    unsigned *vmax2_new;              /* the largest speed squared of a step's new discs (float bits) */
    double *res_state;                /* per reservoir box: the controller's debt and integral */
    unsigned *res_add, *res_add_start;
    void *res_scan_temp;
    size_t res_scan_bytes;
    unsigned char *doomed;            /* per slot: the reservoir's plan removes it in this step's pass */
    void *temp;
    size_t temp_bytes;
    float *pressure, *virial;
    ad_accel *acc[2]; /* accelerations of the last evaluation; [cur] pairs with state[cur] */
    ad_state *rk[3];
    ad_step_sums *blocks, *blocks2;
    ad_ctrl *ctrl;      /* device */
    ad_ctrl *ctrl_host; /* pinned mirror */
    unsigned *vmax_bits;
    /* segments on the device */
    ad_seg *segs;
    unsigned *seg_start, *seg_index;
    ad_seg_grid gdev;
    /* fields */
    double *field_sums;
    int sums_on_host;          /* the host's copy of field_sums is current: no step since the last copy either way */
    size_t field_cells;
    int primed;
    int dt_stale;
    /* the step as a graph (one per id parity), rebuilt when the world changes */
    cudaEvent_t batch[2];
    cudaEvent_t phase[5]; /* recorded inside the step graph between phases */
    unsigned long long phase_steps; /* steps the timed step stands for, not yet folded */
    cudaGraphExec_t graph[2][2]; /* [id parity][observing] */
    int graph_ok[2][2];
    int aggregate; /* bin with warp-aggregated atomics (piled-up discs) */
    int binned;    /* the last step's pass binned its results (cell_of, rank, count are the current state's) */
    size_t graph_n;
    /* BVH broad phase (broad_phase = bvh): replaces bin, scan and scatter */
    int bvh;
    unsigned *code, *code_sorted, *bindex, *bperm; /* Morton codes and the sort's values */
    unsigned *child, *rightmost, *parent, *visits;
    ad_bvh_box *box;
    float *forces;   /* reflexive: 6 arrays of cap floats (ad_bvh_forces) */
    ad_bvh tree;     /* device pointers; leaves are state[cur] after the build */
    /* the segment tree on the device */
    ad_dev_tree<ad_bvh_box, ad_bvh> st;
    ad_seg_tree stree;
    /* sampled surfaces: the contact states (by id parity, moved by the scatter) and the panels' sums */
    ad_dev_panels panels;
    /* GPU ranks (cuda_ranks.cu): the halo's buffers; the fold keeps the step's sums in sums_keep */
    struct cuda_ranks *ranks;
    ad_step_sums *sums_keep;
};

static inline cuda_world *CW(const ad_world *w) { return (cuda_world *)w->impl; }

/* cuda_backend.cu */
cudaError_t ad_cuda_forget_bin(cuda_world *c);
size_t ad_cuda_reservoir_scan_bytes(int boxes); /* the scratch of ad_cuda_reservoir_scan */
size_t ad_cuda_sort_bytes(size_t n, int bits);
cudaError_t ad_cuda_pull_count(cuda_world *c);

/* cuda_step.cu */
void ad_cuda_invalidate_graphs(cuda_world *c);
/* Steps 2 and 3's kernels for the 3D path (cuda3.cu), which are defined in cuda_step.cu: the scan of
 * the cell counters into start (scan.cuh); the order of a stable sort by cell from the cells and
 * atomic ranks of the particles (k_cell_members, k_stable_rank): perm[s] is the previous slot of what
 * goes to slot s, members is scratch of nn.bound; with open sides (dead: the removed particles'
 * counter, ad_ctrl.dead, else NULL) the removed ones are in dead_cell, after the grid's; and after the
 * sort the world's new end (k_after_sort: ad_ctrl.n from start[dead_cell], the counter cleared). */
cudaError_t ad_cuda_scan(unsigned *counts, unsigned lg, unsigned *start, unsigned *tile_sum, size_t ncell,
                         cudaStream_t st);
cudaError_t ad_cuda_stable_order(ad_n nn, unsigned dead_cell, const unsigned *dead, const unsigned *cell_of,
                                 const unsigned *rank, const unsigned *start, unsigned *members, unsigned *perm,
                                 cudaStream_t st);
cudaError_t ad_cuda_after_sort(const unsigned *start, unsigned dead_cell, ad_ctrl *ctrl, cudaStream_t st);
cudaError_t ad_cuda_allow_shared_stack(void);
/* The exclusive scan of the reservoir boxes' additions (add) into add_start, on the stream (both
 * dimensions' step; temp: ad_cuda_reservoir_scan_bytes(boxes) of scratch). */
cudaError_t ad_cuda_reservoir_scan(void *temp, size_t bytes, const unsigned *add, unsigned *add_start, int boxes,
                                   cudaStream_t st);
ad_status ad_cuda_step(ad_world *w, uint64_t nsteps);
/* For the GPU ranks (cuda_ranks.cu): the size per-disc kernels are launched for, one step's kernels on the
 * stream (timed: with the phase events), the field sample, the largest speed squared of the discs. */
unsigned ad_cuda_launch_n(const ad_world *w);
cudaError_t ad_cuda_enqueue_step(ad_world *w, unsigned n, int timed, int obs);
ad_status ad_cuda_sample_fields(ad_world *w);
cudaError_t ad_cuda_vmax2(cuda_world *c, unsigned n, float *v2);
/* cuda_ranks.cu, inside a GPU rank's step with open sides: the reservoir's plan over the ranks (instead of
 * k_reservoir_plan; a failure is kept for ad_cuda_ranks_pass to return). The entries' room in the gas:
 * open.cuh's ad_cuda_ranks_gas_room. */
void ad_cuda_ranks_plan(ad_world *w);
/* cuda_ranks.cu: the panels' step sums summed over the ranks, before the panels' fold. */
void ad_cuda_ranks_panel_sums(ad_world *w);

/* cuda_readback.cu */
ad_status ad_cuda_push_ctrl(ad_world *w);
ad_status ad_cuda_pull_ctrl(ad_world *w);
ad_status ad_cuda_pull_stats(ad_world *w);
ad_status ad_cuda_read(const ad_world *w, int flags, size_t max, const ad_particle_out *out, size_t *count);
ad_status ad_cuda_export(const ad_world *w, ad_snapshot *s);
ad_status ad_cuda_import(ad_world *w, const ad_snapshot *s);
ad_status ad_cuda_fields_to_host(ad_world *w);
ad_status ad_cuda_fields_to_device(ad_world *w);
ad_status ad_cuda_panels_to_host(ad_world *w);
ad_status ad_cuda_panels_reset(ad_world *w);

#endif
