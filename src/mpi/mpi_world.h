/* backend = mpi: a 2D or 3D world decomposed over MPI ranks (what mpi_backend.c, mpi_exchange.c, mpi_open.c,
 * mpi_fields.c and mpi_balance.c share).
 *
 * Both dimensions. What depends on the dimension is written once, in the _dim.h files (mpi_dim.h's
 * declarations; mpi_backend_dim.h, mpi_exchange_dim.h, mpi_open_dim.h, mpi_fields_dim.h), each included
 * by its .c file with AD_DIM 2 and then 3 (physics/dim.h), as plain.h includes plain_dim.h: mpi_ghosts
 * and mpi_ghosts3 are one text. A world uses g, sp and the exchange buffers (2D) or g3, sp3 and their
 * 3D twins; the rest (the slabs, the groups' sums, the balance, the field groups) serves both. Below,
 * "disc" reads "sphere" in 3D, and a "row" is a row of cells along x: in 3D one for each (y, z), so a
 * column is every cell of one x and the y and z axes are whole on every rank.
 *
 * The decomposition. The grid's columns (cells along x) are cut into column groups (at most
 * MPI_GROUPS_MAX, of equal width to one column), and each rank owns a run of whole groups: a slab along
 * the stream. A rank holds the discs whose centres lie in its columns, the whole body, the walls, the
 * definition and the grid of the whole domain (its cell arrays span the domain: a rank's cells outside
 * its slab and its ghost layer stay empty), and a copy of the open sides' state (the entries owed and
 * waiting, the id counter, the reservoir's controllers), which every rank updates alike.
 *
 * One step (mpi_backend_dim.h), grid broad phase, symplectic Euler, Euler, velocity Verlet (whose prime,
 * once, and drift come first, and a disc the drift took into a neighbour's column migrates before 1) or
 * RK4 (its four gathers on the grid of 2, the ghosts' stage states sent after each of the first three):
 *   1. ghosts: each rank sends the discs of its reach_x outermost columns to the neighbour on that side
 *      (the periodic axis's ring included) and appends those it receives;
 *   2. sort: bin, scan and scatter (plain_dim.h's), then every cell's discs by id: a cell order that
 *      depends only on the discs, never on which rank held them or in what order they came;
 *   3. the reservoir's plan with its box counts summed over the ranks and the removals picked among all
 *      ranks' discs (mpi_open.c);
 *   4. the pass over the rank's own cells, group by group, row by row: a disc's contacts are those of
 *      the plain pipeline (its cells, ghosts included, the body's segments or triangles, the walls), its
 *      sums those of its group; the ghosts' slots become removed discs;
 *   5. the entries and the reservoir's additions: the step's spots listed alike on every rank, room in
 *      the gas judged by each rank against its own discs and combined (a spot has room where no rank
 *      objects), room among the spots alike everywhere (3D: from the gas's combined answers, open3.h),
 *      a spot placed by the rank that owns its column, ids given in the list's order on every rank;
 *   6. the groups' sums gathered on every rank and folded in group order (ad_stats_fold): the statistics,
 *      the forces and the next step are the same on every rank and for any number of ranks; where the
 *      panels are sampled, their step sums (integers, panel.h) summed over the ranks (exact in any order);
 *   7. migration: a disc now in another rank's column goes to that rank (a neighbour: a disc moves less
 *      than a cell a step); the fields are sampled after it, own discs re-sorted, group by group;
 *   8. every MPI_BALANCE_STEPS steps, the load balance (mpi_balance.c): the slabs' edges moved from the
 *      groups' measured pass times, the groups that change hands sent to their new ranks.
 * Bit-identical for any number of ranks: every sum is taken in an order fixed by the groups, the cells
 * and the ids, and combined in group order; a maximum, a count or a bitwise test is exact in any order. */
#ifndef AD_MPI_WORLD_H
#define AD_MPI_WORLD_H

#include <mpi.h>

#include "../reference/plain.h"

#define MPI_GROUPS_MAX 256 /* column groups: the most ranks, and the grain of a slab's edge */
#define MPI_BALANCE_STEPS 100 /* the slabs' edges are reconsidered every this many steps (mpi_balance.c) */

typedef struct mpi_world mpi_world;

/* The particles as the ranks send them and their buffers, and what is written once for both dimensions
 * (mpi_dim.h): mpi_disc and mpi_ghosts in 2D, mpi_disc3 and mpi_ghosts3 in 3D, and so on. */
#define AD_DIM 2
#include "mpi_dim.h"
#undef AD_DIM
#define AD_DIM 3
#include "mpi_dim.h"
#undef AD_DIM

/* Field sums kept per column group (mpi_fields.c): a group's sums over the field columns [fa, fb] its
 * particles can reach, and its probe's record; the world's sums are the groups' added in group order. */
typedef struct mpi_field_group {
    int fa, fb;    /* field columns covered */
    double *sums;  /* (fb - fa + 1) * field ny * nz cells, AD_FS_COUNT (3D: AD_FS3_COUNT) each, then the probe's */
} mpi_field_group;

struct mpi_world {
    int dims;          /* 2 or 3: which of g, sp, out_l, out_r, in (2D) or their 3D twins is used */
    ad_plain g;        /* 2D: own discs (then, during a step, the ghosts), plain_dim.h's arrays */
    ad_plain3 g3;      /* 3D: own spheres (then the ghosts) */
    ad_open_state open; /* the open sides' state: the same on every rank */
    ad_plain_spots sp;
    ad_plain_spots3 sp3;
    MPI_Comm comm;
    int rank, ranks;
    int left, right;   /* neighbour ranks (-1: none; on a periodic x ring they wrap) */
    int ngroups;
    int group_col[MPI_GROUPS_MAX + 1]; /* group k: columns [group_col[k], group_col[k + 1]) */
    int *rank_group;   /* ranks + 1: rank r owns groups [rank_group[r], rank_group[r + 1]) */
    int g_lo, g_hi;    /* this rank's groups */
    int c_lo, c_hi;    /* this rank's columns */
    int *col_rank;     /* nx: a column's rank */
    int reach;         /* ghost columns each side */
    int least_cols;    /* a slab's fewest columns: reach, or 2 reach where two ranks share a periodic x ring */
    size_t n_grid;     /* slots binned in the step's grid (own, then ghosts) */
    ad_step_sums *sums; /* ngroups: every group's sums of the step (own filled, then gathered) */
    int *sum_counts, *sum_displs; /* per rank, in bytes: the groups' sums gathered */
    mpi_discs out_l, out_r, in; /* exchange buffers */
    mpi_discs3 out_l3, out_r3, in3;
    size_t in_left;    /* the records of `in` that came from the left neighbour (the first ones) */
    float *p_spare, *v_spare; /* per slot: the sort's pressure and virial output */
    mpi_field_group fg[MPI_GROUPS_MAX];
    ad_field_def fg_def; /* the field grid the groups' sums were laid out for */
    int fg_ready;
    double busy_max, busy_mean; /* the ranks' step times: sums over steps of the slowest and the mean */
    double group_busy[MPI_GROUPS_MAX]; /* own groups: seconds of their passes since the edges were last set */
    double group_avg[MPI_GROUPS_MAX];  /* every group's time a window, smoothed over windows (mpi_balance.c) */
    unsigned windows;          /* windows smoothed so far */
    unsigned long long moves;  /* times the edges moved */
};

/* A column's index of x (clamped to the grid, as the bin does). */
static inline int mpi_column(const ad_params *P, float x) { return ad_cell_coord(x, P->origin_x, P->inv_cell_x, P->nx); }

/* The grid's rows: its cells in cell order are nx columns of each row, row by row (cy, then cz in 3D). */
static inline int mpi_rows(const ad_params *P) { return P->ny * P->nz; }

/* mpi_exchange.c */
ad_status mpi_check(const mpi_world *m, ad_status mine);
/* A status agreed by every rank of comm: the lowest failing rank's, else ad_ok() (GPU ranks use it too). */
ad_status mpi_agree_on(MPI_Comm comm, ad_status mine);
ad_status mpi_migrate_any(ad_world *w, mpi_world *m); /* mpi_migrate or mpi_migrate3 */

/* mpi_open.c: the reservoir's plan over the ranks, from the step's grid (start, ids) of either dimension */
ad_status mpi_reservoir_plan(ad_world *w, mpi_world *m, const uint32_t *start, const uint32_t *id,
                             unsigned char *doomed, uint32_t *res_add, float dt);
/* Box k of K's removals: the `rm` (at most AD_RES_PICK_MAX) smallest of every rank's candidates, gathered in
 * `all` (rank by rank, K boxes of AD_RES_PICK_MAX each), into best; their number returned (CPU and GPU ranks). */
uint32_t mpi_res_merge(const ad_res_pick *all, int ranks, int K, int k, uint32_t rm, ad_res_pick *best);

/* The slabs as the load balance's choice reads them (CPU ranks: mpi_world's; GPU ranks: mpi_gpu.c's):
 * ngroups column groups (group k: columns [group_col[k], group_col[k + 1])), rank r owning groups
 * [rank_group[r], rank_group[r + 1]), no slab narrower than least_cols columns, and no edge moved to
 * fewer than margin columns from a neighbour's old edge (0: up to the next group; GPU ranks keep a ghost
 * layer and one column, mpi_gpu.c). */
typedef struct mpi_slabs {
    int ranks, ngroups, least_cols, margin;
    const int *group_col, *rank_group;
} mpi_slabs;
/* The choice from the groups' work t (ngroups: times, smoothed or not, or any measure of it): the next edges
 * into edge (ranks + 1; 1), half way toward the even split (no swing back and forth on noise), or all the
 * way where half way gains too little (a pile far from the edge), moved where the slowest slab gets at
 * least 5 % faster; or none (0: the edges stay). Every rank that calls it with the same numbers chooses
 * the same. */
int mpi_slabs_next(const mpi_slabs *m, const double *t, int *edge);
/* The column groups of a grid of nx columns, as many as it has columns, at most MPI_GROUPS_MAX, of near-equal
 * width (group k: columns [group_col[k], group_col[k + 1])); their number. */
int mpi_column_groups(int nx, int *group_col);
/* The fewest groups that hold least_cols columns (a slab's narrowest). */
int mpi_least_groups(int nx, int ngroups, int least_cols);

/* mpi_balance.c: the slabs' edges set (rank_group: ranks + 1 group indices) and moved */
ad_status mpi_assign(mpi_world *m, const int *rank_group);
ad_status mpi_balance(ad_world *w, mpi_world *m);
/* The load balance's choice, for its test: the window's group times t folded into m's smoothed ones
 * (m->group_avg, m->windows), and from those the next edges (1) or none (0: the edges stay); m's edges are
 * not changed. */
int mpi_balance_choose(mpi_world *m, const double *t, int *edge);
int mpi_slab_edges(const ad_world *w, double *x, int max, unsigned long long *moves);

/* mpi_fields.c */
size_t mpi_field_group_doubles(const ad_world *w, const mpi_world *m, int k, int *fa, int *fb);
ad_status mpi_fields_to_host(ad_world *w);
ad_status mpi_fields_to_device(ad_world *w);
void mpi_fields_free(mpi_world *m);

#endif
