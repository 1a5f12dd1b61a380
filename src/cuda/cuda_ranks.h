/* GPU ranks: what backend = mpi with rank_backend = cuda (src/mpi/mpi_gpu.c, C and MPI) asks of a rank's
 * CUDA world (src/cuda/cuda_ranks.cu, no MPI). The rank's world is a CUDA world of the whole domain whose
 * count lives on the device; its discs are those of its own columns (a slab along the stream), and each
 * step the host moves the halo between the ranks:
 *   1. ad_cuda_ranks_pack: on the GPU, the discs of the ghost layer (the reach_x outermost own columns on
 *      each side with a neighbour) and the discs that crossed into a neighbour's columns in the last step
 *      (the migrants) are packed into two device buffers by destination, then copied to pinned host
 *      buffers (Debian's MPI cannot read GPU memory);
 *   2. the host exchanges them (MPI) and ad_cuda_ranks_append puts what came after the rank's slots;
 *   3. ad_cuda_ranks_pass: the step's kernels (bin, scan, scatter, the pass, the fold); the pass leaves out
 *      every disc outside the own columns (the ghosts, and the migrants just sent: ad_not_own, grid.h), so
 *      they are removed at the next sort; the fold's sums are kept, not applied, and copied to the host.
 *      With open sides two parts of the step are combined over the ranks through the links (ad_rank_links,
 *      host round trips inside the step): the reservoir's plan (each box's count summed, its removals chosen
 *      among every rank's candidates) and the entries' room in the gas (each rank judges the spots against
 *      its own discs, the answers' minimum is the world's); every rank then lists, judges and counts the
 *      step's new discs alike (the same ids, controllers and counts) and keeps those of its own columns.
 *      Where the body's panels are sampled, their step sums (integers in fixed point, panel.h) are summed
 *      over the ranks before each rank folds them: every rank holds the world's panel totals, exactly;
 *   4. ad_cuda_ranks_apply: the ranks' sums, combined on the host in rank order (the same on every rank),
 *      applied on the device (time, the next step, the statistics), then the fields sampled if due.
 * A migrant is left in its old slot for the step it crossed in (it counts there, once) and is sent at the
 * next step's start; it stands there as the ghost its new rank cannot send yet, so a slab must be wider
 * than the ghost layer (mpi_gpu.c checks it). No type of the CUDA runtime appears here. */
#ifndef AD_CUDA_RANKS_H
#define AD_CUDA_RANKS_H

#include "../core/world_internal.h"
#include "../physics/open.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A disc as the GPU ranks send it: its state, id and contact state (panels); the rest is recomputed. */
typedef struct ad_halo_disc {
    ad_state state;
    uint32_t id, touch;
} ad_halo_disc;

/* What a rank is: its own columns, and per column where a disc there goes (AD_HALO_*). */
enum { AD_HALO_OWN = 0, AD_HALO_LEFT = 1, AD_HALO_RIGHT = 2 };
/* What a GPU rank's step asks of the other ranks (mpi_gpu.c answers through MPI): collective, every rank
 * calls each in the same order. */
typedef struct ad_rank_links {
    void *ctx;
    int ranks;
    void (*sum_u32)(void *ctx, uint32_t *v, int n);     /* v: every rank's summed, in place */
    void (*min_u8)(void *ctx, unsigned char *v, int n); /* v: every rank's minimum, in place */
    void (*sum_i64)(void *ctx, int64_t *v, int n);      /* v: every rank's summed, in place (exact) */
    /* K reservoir boxes' removals: of every rank's candidates (this rank's: mine, K x AD_RES_PICK_MAX) the
     * rm[k] (at most AD_RES_PICK_MAX) smallest, into chosen (K x AD_RES_PICK_MAX), their number into n[k] */
    void (*choose)(void *ctx, int K, const ad_res_pick *mine, const uint32_t *rm, ad_res_pick *chosen, uint32_t *n);
} ad_rank_links;

typedef struct ad_rank_cut {
    int col_lo, col_hi;     /* own columns [col_lo, col_hi) */
    int reach;              /* ghost columns on each side */
    int has_left, has_right; /* a neighbour on that side (on a periodic ring, both) */
    const unsigned char *dest; /* nx: AD_HALO_* of each column outside the own ones (own: AD_HALO_OWN) */
    const ad_rank_links *links; /* the other ranks (kept: it must outlive the world) */
} ad_rank_cut;

int ad_cuda_ranks_device_count(void);
ad_status ad_cuda_ranks_use_device(int device); /* before the world is created */
/* The rank's cut (at creation and whenever it changes); the buffers sized for the world's capacity. */
ad_status ad_cuda_ranks_attach(ad_world *w, const ad_rank_cut *cut);
void ad_cuda_ranks_detach(ad_world *w);
/* Step 1: the halo packed; *left, *right point to pinned host buffers of the world (valid to the next call). */
ad_status ad_cuda_ranks_pack(ad_world *w, const ad_halo_disc **left, size_t *nl, const ad_halo_disc **right,
                             size_t *nr);
/* Step 2 (and discs added by the host): n discs put after the world's slots. */
ad_status ad_cuda_ranks_append(ad_world *w, const ad_halo_disc *d, size_t n);
/* Step 3: the rank's pass; its folded sums into *mine. obs: the step's per-disc observables are written;
 * stand_for > 0: the step is timed by phase, its times standing for that many steps. */
ad_status ad_cuda_ranks_pass(ad_world *w, int obs, uint64_t stand_for, ad_step_sums *mine);
/* Step 4: all ranks' sums applied; then, where sample_fields, the fields sampled. */
ad_status ad_cuda_ranks_apply(ad_world *w, const ad_step_sums *all, int sample_fields);
/* The rank's statistics from its device (its own count, grid diagnostics and discs that left or the
 * reservoir removed; the rest are the world's), and the id the next disc takes (*next_id; may be NULL). */
ad_status ad_cuda_ranks_pull_stats(ad_world *w, uint32_t *next_id);
/* The load balance's measure: the rank's discs by column (counts: nx), where they are after the last step. */
ad_status ad_cuda_ranks_column_counts(ad_world *w, uint32_t *counts);
/* The largest speed squared of the rank's discs (the first step's size, agreed over the ranks). */
ad_status ad_cuda_ranks_vmax2(ad_world *w, float *v2);
/* The step size the ranks agreed on, and the ids the next added disc takes. */
ad_status ad_cuda_ranks_set_clock(ad_world *w, double dt, uint32_t next_id);

#ifdef __cplusplus
}
#endif

#endif
