/* backend = mpi with rank_backend = cuda: GPU ranks. Each rank runs a CUDA world of the whole domain holding
 * the discs of its slab (a run of whole grid columns along the stream; the ranks of a host take its GPUs in
 * turn). Each step the ranks swap their halo through pinned host buffers (src/cuda/cuda_ranks.h says what
 * moves and why one swap a step suffices), run their passes, and apply the sum of all ranks' step sums,
 * added in rank order: the clock, the next step, the forces and the statistics are the same on every rank.
 * What it does not run yet is refused by name (unsupported). Unlike the CPU ranks (mpi_backend.c) the
 * results are not the same bits for every rank count: a GPU world's sums follow its slots. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "../core/free_each.h"
#include "../core/world_internal.h"
#include "../cuda/cuda_ranks.h"
#include "../physics/grid.h"
#include "../physics/integrate.h"
#include "mpi_world.h"

enum { TAG_COUNT_L = 41, TAG_COUNT_R, TAG_DATA_L, TAG_DATA_R };

typedef struct mpi_gpu {
    MPI_Comm comm;
    int rank, ranks;
    int left, right;      /* neighbour ranks (-1: none; on a periodic x ring they wrap) */
    int *rank_col;        /* ranks + 1: rank r owns columns [rank_col[r], rank_col[r + 1]) */
    /* the slabs in column groups, as the CPU ranks cut them (mpi_world.h), and the load balance's moves */
    int ngroups, least_cols;
    int group_col[MPI_GROUPS_MAX + 1];
    int *rank_group;      /* ranks + 1: rank r owns groups [rank_group[r], rank_group[r + 1]) */
    unsigned long long moves;
    uint32_t *col_n;      /* nx: the discs by column (the balance's measure) */
    unsigned char *dest;  /* nx: where a disc in that column goes (AD_HALO_*) */
    ad_halo_disc *in;     /* what came in a swap */
    size_t in_cap;
    uint32_t next_id;     /* the id of the next disc added: the same on every rank */
    ad_rank_links links;  /* what a step with open sides asks of the other ranks */
    ad_res_pick *picks_all; /* every rank's removal candidates: ranks x res_boxes x AD_RES_PICK_MAX */
    /* the discs that left and that the reservoir removed, as every rank's device held them when they were
     * loaded (a checkpoint's totals; each rank counts from there its own) */
    unsigned long long left0, removed0;
    double busy_max, busy_mean; /* sums over steps of the slowest rank's pass and the mean */
    int fields_summed;    /* the host's field sums are the world's, summed since the last step */
} mpi_gpu;

static mpi_gpu *G(const ad_world *w) { return (mpi_gpu *)w->outer; }

/* A status agreed by every rank: the lowest failing rank's, else ad_ok() (mpi_exchange.c). */
static ad_status agree(const mpi_gpu *g, ad_status mine) { return mpi_agree_on(g->comm, mine); }

/* What GPU ranks do not run yet, by the key that asks for it; NULL when they run the world. */
static const char *unsupported(const ad_world *w, const char **why)
{
    const ad_world_def *d = &w->def;
    if (d->dimensions == 3) return *why = "3D worlds are not decomposed on GPU ranks yet", "dimensions";
    if (d->broad_phase == AD_BROAD_PHASE_BVH) return *why = "the BVH broad phase is not decomposed: use grid", "broad_phase";
    if (d->integrator == AD_INTEGRATOR_VERLET || d->integrator == AD_INTEGRATOR_RK4)
        return *why = "GPU ranks run symplectic_euler or euler (velocity Verlet and RK4 run on rank_backend = cpu)",
               "integrator";
    return NULL;
}

/* ------------------------------------------------ the links (cuda_ranks.h) -- */

static void link_sum_u32(void *ctx, uint32_t *v, int n)
{
    MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_UINT32_T, MPI_SUM, ((mpi_gpu *)ctx)->comm);
}

static void link_sum_i64(void *ctx, int64_t *v, int n)
{
    MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_INT64_T, MPI_SUM, ((mpi_gpu *)ctx)->comm);
}

static void link_min_u8(void *ctx, unsigned char *v, int n)
{
    MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_UNSIGNED_CHAR, MPI_MIN, ((mpi_gpu *)ctx)->comm);
}

/* The boxes' removals chosen among every rank's candidates, as the CPU ranks choose them (mpi_open.c). */
static void link_choose(void *ctx, int K, const ad_res_pick *mine, const uint32_t *rm, ad_res_pick *chosen, uint32_t *n)
{
    mpi_gpu *g = ctx;
    int bytes = K * AD_RES_PICK_MAX * (int)sizeof(ad_res_pick);
    MPI_Allgather(mine, bytes, MPI_BYTE, g->picks_all, bytes, MPI_BYTE, g->comm);
    for (int k = 0; k < K; k++) n[k] = mpi_res_merge(g->picks_all, g->ranks, K, k, rm[k], chosen + (size_t)k * AD_RES_PICK_MAX);
}

/* Each rank takes the GPU of its place among the host's ranks, in turn. */
static ad_status pick_device(const mpi_gpu *g)
{
    MPI_Comm host;
    int local = 0;
    MPI_Comm_split_type(g->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
    MPI_Comm_rank(host, &local);
    MPI_Comm_free(&host);
    int n = ad_cuda_ranks_device_count();
    if (n <= 0)
        return ad_fail(AD_ERR_BACKEND, "rank_backend", "rank_backend = cuda: rank %d found no CUDA GPU on its host",
                       g->rank);
    return ad_cuda_ranks_use_device(local % n);
}

/* Where a disc in each column goes (AD_HALO_*): own, or to the neighbour that owns the column (after a move of
 * the edges a rank may hold discs several columns outside its own); where neither neighbour owns it, or both
 * are the one other rank of a periodic ring, the nearer side (around the ring where x is periodic). */
static void fill_dest(const ad_params *P, const mpi_gpu *g, unsigned char *dest)
{
    int nx = P->nx, lo = g->rank_col[g->rank], hi = g->rank_col[g->rank + 1], owner = 0;
    for (int c = 0; c < nx; c++) {
        while (c >= g->rank_col[owner + 1]) owner++;
        if (owner == g->rank) dest[c] = AD_HALO_OWN;
        else if (owner == g->left && owner != g->right) dest[c] = AD_HALO_LEFT;
        else if (owner == g->right && owner != g->left) dest[c] = AD_HALO_RIGHT;
        else if (!P->periodic_x) dest[c] = c < lo ? AD_HALO_LEFT : AD_HALO_RIGHT;
        else dest[c] = (lo - c + nx) % nx <= (c - (hi - 1) + nx) % nx ? AD_HALO_LEFT : AD_HALO_RIGHT;
    }
}

/* The rank's cut from the slabs' edges (rank_col), handed to its CUDA world: at creation and after each move. */
static ad_status apply_cut(ad_world *w, mpi_gpu *g)
{
    const ad_params *P = &w->params;
    for (int r = 0; r <= g->ranks; r++) g->rank_col[r] = g->group_col[g->rank_group[r]];
    int lo = g->rank_col[g->rank], hi = g->rank_col[g->rank + 1];
    fill_dest(P, g, g->dest);
    ad_rank_cut cut = {lo, hi, P->reach_x, g->left >= 0, g->right >= 0, g->dest, &g->links};
    return ad_cuda_ranks_attach(w, &cut);
}

/* The slabs: the columns in groups as the CPU ranks make them (at most MPI_GROUPS_MAX), the groups split as
 * evenly as they go, each slab wider than the ghost layer (a disc that crossed stands as a ghost for the
 * step it is sent in, cuda_ranks.h), and on two ranks of a periodic ring, than both layers (each rank is
 * both neighbours of the other: a disc must not come twice). */
static ad_status cut_slabs(ad_world *w, mpi_gpu *g)
{
    const ad_params *P = &w->params;
    int nx = P->nx, reach = P->reach_x;
    g->ngroups = mpi_column_groups(nx, g->group_col);
    g->least_cols = reach + 1;
    if (g->ranks == 2 && P->periodic_x && 2 * reach > g->least_cols) g->least_cols = 2 * reach;
    if ((long long)g->ranks * mpi_least_groups(nx, g->ngroups, g->least_cols) > g->ngroups)
        return ad_fail(AD_ERR_INVALID, "ranks",
                       "rank_backend = cuda: %d ranks over a grid of %d columns: each rank's slab must be at least %d "
                       "columns wide (its ghost layer and one more); use fewer ranks or smaller cells",
                       g->ranks, nx, g->least_cols);
    g->rank_col = calloc((size_t)g->ranks + 1, sizeof *g->rank_col);
    g->rank_group = calloc((size_t)g->ranks + 1, sizeof *g->rank_group);
    g->dest = malloc((size_t)nx);
    g->col_n = malloc((size_t)nx * sizeof *g->col_n);
    g->picks_all = malloc((size_t)g->ranks * ((size_t)P->res_boxes + 1) * AD_RES_PICK_MAX * sizeof *g->picks_all);
    if (!g->rank_col || !g->rank_group || !g->dest || !g->col_n || !g->picks_all)
        return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory for the slabs");
    for (int r = 0; r <= g->ranks; r++) g->rank_group[r] = (int)((long long)r * g->ngroups / g->ranks);
    int ring = P->periodic_x && g->ranks > 1;
    g->left = g->rank > 0 ? g->rank - 1 : ring ? g->ranks - 1 : -1;
    g->right = g->rank < g->ranks - 1 ? g->rank + 1 : ring ? 0 : -1;
    g->links = (ad_rank_links){g, g->ranks, link_sum_u32, link_min_u8, link_sum_i64, link_choose};
    return apply_cut(w, g);
}

/* The load balance of GPU ranks (every MPI_BALANCE_STEPS steps): the CPU ranks' choice (mpi_balance.c), its
 * measure the discs of each group summed over the ranks, not times: a GPU's pass costs in proportion to its
 * discs, and a count is the same in every run, so a run repeated on as many ranks from the same start moves
 * the same edges and gives the same bits (a GPU world's sums follow its slots, which the edges change; a
 * resumed run starts from the even split again). Counts are not noisy: each window's decide alone. The
 * columns that change hands go to a neighbour (the choice moves no edge past a neighbour's old one): their
 * discs are then outside the rank's columns and go at the next step's start as migrants do (fill_dest sends
 * each to the neighbour that owns its column). */
static ad_status balance(ad_world *w, mpi_gpu *g)
{
    AD_TRY(agree(g, ad_cuda_ranks_column_counts(w, g->col_n)));
    double t[MPI_GROUPS_MAX];
    for (int k = 0; k < g->ngroups; k++) {
        t[k] = 0.0;
        for (int c = g->group_col[k]; c < g->group_col[k + 1]; c++) t[k] += g->col_n[c];
    }
    MPI_Allreduce(MPI_IN_PLACE, t, g->ngroups, MPI_DOUBLE, MPI_SUM, g->comm); /* integers: exact in any order */
    /* an edge stays a ghost layer and one column inside the neighbours' old edges: the columns a rank's new
     * ghost layer covers then hold no disc that its neighbour receives only in the swap that follows (a
     * migrant of the rank beyond), so the neighbour holds every disc of them to send as a ghost */
    mpi_slabs cut = {g->ranks, g->ngroups, g->least_cols, w->params.reach_x + 1, g->group_col, g->rank_group};
    int edge[MPI_GROUPS_MAX + 1], old[MPI_GROUPS_MAX + 1];
    /* counts are not noisy: each window's decide alone (smoothed ones would lag a moving pile) */
    if (!mpi_slabs_next(&cut, t, edge)) return ad_ok();
    memcpy(old, g->rank_group, (size_t)(g->ranks + 1) * sizeof *old);
    memcpy(g->rank_group, edge, (size_t)(g->ranks + 1) * sizeof *edge);
    ad_status st = agree(g, apply_cut(w, g));
    if (st.code) { /* every rank back on the old edges (a failed attach left its cut as it was) */
        memcpy(g->rank_group, old, (size_t)(g->ranks + 1) * sizeof *old);
        apply_cut(w, g);
        return st;
    }
    g->moves++;
    return st;
}

static void gpu_destroy(ad_world *w)
{
    mpi_gpu *g = G(w);
    if (w->impl) {
        ad_cuda_ranks_detach(w);
        ad_cuda_backend.destroy(w);
    }
    if (!g) return;
    free(g->rank_col);
    free(g->rank_group);
    free(g->col_n);
    free(g->dest);
    free(g->picks_all);
    free(g->in);
    if (g->comm != MPI_COMM_NULL) MPI_Comm_free(&g->comm);
    free(g);
    w->outer = NULL;
}

static ad_status gpu_create(ad_world *w)
{
    int on = 0;
    MPI_Initialized(&on);
    if (!on)
        return ad_fail(AD_ERR_BACKEND, "backend", "backend = mpi: MPI is not started (ad_parallel_init first, under mpirun)");
    const char *why, *key = unsupported(w, &why);
    if (key) return ad_fail(AD_ERR_BACKEND, key, "%s: rank_backend = cuda does not run this world yet: %s", key, why);
    mpi_gpu *g = calloc(1, sizeof *g);
    if (!g) return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory");
    w->outer = g;
    MPI_Comm_dup(MPI_COMM_WORLD, &g->comm);
    MPI_Comm_rank(g->comm, &g->rank);
    MPI_Comm_size(g->comm, &g->ranks);
    ad_status st = agree(g, pick_device(g));
    if (!st.code) st = agree(g, ad_cuda_backend.create(w));
    if (!st.code) st = agree(g, cut_slabs(w, g));
    if (st.code) {
        gpu_destroy(w);
        return st;
    }
    w->stats.ranks = g->ranks;
    w->stats.rank_imbalance = 1.0;
    return ad_ok();
}

/* The device's statistics, with what each rank counts alone (its discs, the grid's diagnostics) summed
 * over the ranks; the rest comes from the sums every rank applied alike. */
static ad_status pull_global(ad_world *w)
{
    mpi_gpu *g = G(w);
    uint32_t next_id = g->next_id;
    ad_status st = agree(g, ad_cuda_ranks_pull_stats(w, &next_id));
    if (st.code) return st;
    g->next_id = next_id; /* the entries' ids: the same on every rank */
    /* what each rank counts of its own discs: the discs, the grid's diagnostics, those that left and that
     * the reservoir removed (from the totals they were loaded with) */
    unsigned long long sum[5] = {w->count, w->stats.outside_grid, w->stats.cell_overflow, w->stats.left - g->left0,
                                 w->stats.reservoir_removed - g->removed0};
    unsigned most = w->stats.max_cell_occupancy;
    MPI_Allreduce(MPI_IN_PLACE, sum, 5, MPI_UNSIGNED_LONG_LONG, MPI_SUM, g->comm);
    MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_UNSIGNED, MPI_MAX, g->comm);
    w->count = w->stats.count = (size_t)sum[0];
    w->stats.outside_grid = sum[1];
    w->stats.cell_overflow = sum[2];
    w->stats.left = g->left0 + sum[3];
    w->stats.reservoir_removed = g->removed0 + sum[4];
    w->stats.max_cell_occupancy = most;
    w->stats.ranks = g->ranks;
    w->stats.rank_imbalance = g->busy_mean > 0.0 ? g->busy_max / g->busy_mean : 1.0;
    return ad_ok();
}

/* The first step's size from the fastest disc of every rank; the ids of the next discs added. */
static ad_status set_clock(ad_world *w, mpi_gpu *g)
{
    float v2 = 0.0f;
    AD_TRY(agree(g, ad_cuda_ranks_vmax2(w, &v2)));
    MPI_Allreduce(MPI_IN_PLACE, &v2, 1, MPI_FLOAT, MPI_MAX, g->comm);
    size_t count = w->count; /* the world's: the pull below leaves the rank's */
    ad_status st = agree(g, ad_cuda_ranks_set_clock(w, ad_dt_next(&w->dt_rule, sqrt((double)v2)), g->next_id));
    w->count = w->stats.count = count;
    return st;
}

static int own_column(const ad_world *w, const mpi_gpu *g, float x)
{
    int c = ad_cell_coord(x, w->params.origin_x, w->params.inv_cell_x, w->params.nx);
    return c >= g->rank_col[g->rank] && c < g->rank_col[g->rank + 1];
}

/* Every rank is given the same discs: each keeps those of its columns; the ids count for all. */
static ad_status gpu_add_particles(ad_world *w, const ad_particle *p, size_t n)
{
    mpi_gpu *g = G(w);
    ad_halo_disc *mine = malloc((n + 1) * sizeof *mine);
    ad_status st = mine ? ad_ok() : ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory adding %zu discs", n);
    AD_TRY(agree(g, st));
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        ad_state q = ad_wrap_state(&w->params, (ad_state){p[i].x, p[i].y, p[i].vx, p[i].vy});
        if (own_column(w, g, q.x)) mine[k++] = (ad_halo_disc){q, g->next_id + (uint32_t)i, 0u};
    }
    st = agree(g, ad_cuda_ranks_append(w, mine, k));
    free(mine);
    AD_TRY(st);
    g->next_id += (uint32_t)n;
    return set_clock(w, g);
}

static ad_status gpu_set_segments(ad_world *w) { return agree(G(w), ad_cuda_backend.set_segments(w)); }

/* ---------------------------------------------------------------- the step -- */

static int by_id(const void *a, const void *b)
{
    uint32_t x = ((const ad_halo_disc *)a)->id, y = ((const ad_halo_disc *)b)->id;
    return x < y ? -1 : x > y;
}

static ad_status reserve_in(mpi_gpu *g, size_t n)
{
    if (n <= g->in_cap) return ad_ok();
    size_t cap = n + n / 2 + 1024;
    ad_halo_disc *d = realloc(g->in, cap * sizeof *d);
    if (!d) return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory for %zu discs from the neighbours", n);
    g->in = d;
    g->in_cap = cap;
    return ad_ok();
}

/* Steps 1 and 2 (cuda_ranks.h): the halo packed on the GPU, sent to the neighbours (the left side's to the
 * left, the right's to the right), what they sent put in the slots in the order of the ids (the same
 * world however the pack's atomics ordered it). */
static ad_status swap_halo(ad_world *w, mpi_gpu *g)
{
    const ad_halo_disc *out[2];
    size_t n_out[2] = {0, 0};
    AD_TRY(agree(g, ad_cuda_ranks_pack(w, &out[0], &n_out[0], &out[1], &n_out[1])));
    const int side[2] = {g->left, g->right};
    const int tag_count[2] = {TAG_COUNT_L, TAG_COUNT_R}, tag_data[2] = {TAG_DATA_L, TAG_DATA_R};
    unsigned long long sent[2] = {n_out[0], n_out[1]}, got[2] = {0, 0};
    MPI_Request rq[4];
    int k = 0;
    for (int s = 0; s < 2; s++) { /* what comes from the left was sent to its right, and the other way */
        if (side[s] < 0) continue;
        MPI_Irecv(&got[s], 1, MPI_UNSIGNED_LONG_LONG, side[s], tag_count[!s], g->comm, &rq[k++]);
        MPI_Isend(&sent[s], 1, MPI_UNSIGNED_LONG_LONG, side[s], tag_count[s], g->comm, &rq[k++]);
    }
    MPI_Waitall(k, rq, MPI_STATUSES_IGNORE);
    size_t total = (size_t)(got[0] + got[1]), rec = sizeof(ad_halo_disc);
    ad_status st = reserve_in(g, total);
    if (!st.code && (sent[0] > INT_MAX / rec || sent[1] > INT_MAX / rec || got[0] > INT_MAX / rec || got[1] > INT_MAX / rec))
        st = ad_fail(AD_ERR_CAPACITY, "ranks", "rank %d: a halo of more than %zu discs a side (use more ranks)", g->rank,
                     (size_t)INT_MAX / rec);
    AD_TRY(agree(g, st));
    k = 0;
    for (int s = 0; s < 2; s++) {
        if (side[s] < 0) continue;
        ad_halo_disc *into = g->in + (s ? got[0] : 0);
        MPI_Irecv(into, (int)(got[s] * rec), MPI_BYTE, side[s], tag_data[!s], g->comm, &rq[k++]);
        MPI_Isend(out[s], (int)(sent[s] * rec), MPI_BYTE, side[s], tag_data[s], g->comm, &rq[k++]);
    }
    MPI_Waitall(k, rq, MPI_STATUSES_IGNORE);
    qsort(g->in, total, rec, by_id);
    return agree(g, ad_cuda_ranks_append(w, g->in, total));
}

/* What each rank adds to the step's record: its sums, its pass's time, its state. */
typedef struct rank_note {
    ad_step_sums sums;
    double busy;
    int code, stop;
} rank_note;

/* Steps 3 and 4: the rank's pass, every rank's sums added in rank order and applied. *stop: some rank was
 * interrupted. */
static ad_status pass_and_apply(ad_world *w, mpi_gpu *g, int obs, uint64_t stand_for, int sample, rank_note *all,
                                int *stop)
{
    rank_note me;
    memset(&me, 0, sizeof me);
    double t0 = MPI_Wtime();
    ad_status st = ad_cuda_ranks_pass(w, obs, stand_for, &me.sums);
    me.busy = MPI_Wtime() - t0;
    me.code = st.code;
    me.stop = w->interrupt && *w->interrupt;
    MPI_Allgather(&me, (int)sizeof me, MPI_BYTE, all, (int)sizeof me, MPI_BYTE, g->comm);
    AD_TRY(agree(g, st));
    ad_step_sums sum;
    memset(&sum, 0, sizeof sum);
    double most = 0.0, mean = 0.0;
    *stop = 0;
    for (int r = 0; r < g->ranks; r++) {
        ad_step_sums_add(&sum, &all[r].sums, AD_SUMS);
        most = all[r].busy > most ? all[r].busy : most;
        mean += all[r].busy / g->ranks;
        *stop |= all[r].stop;
    }
    g->busy_max += most;
    g->busy_mean += mean;
    return agree(g, ad_cuda_ranks_apply(w, &sum, sample));
}

static ad_status gpu_step(ad_world *w, uint64_t nsteps)
{
    mpi_gpu *g = G(w);
    rank_note *all = malloc((size_t)g->ranks * sizeof *all);
    AD_TRY(agree(g, all ? ad_ok() : ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory")));
    uint64_t step0 = w->stats.step;
    g->fields_summed = 0;
    int last = 0; /* an interrupt was seen: this step observes and ends the call */
    ad_status st = ad_ok();
    for (uint64_t k = 0; k < nsteps && !st.code; k++) {
        if (g->ranks > 1) st = swap_halo(w, g);
        if (st.code) break;
        uint64_t done = step0 + k + 1;
        int sample = w->fields.enabled && done % w->fields.def.interval == 0;
        int obs = last || k + 1 == nsteps || sample, stop = 0;
        st = pass_and_apply(w, g, obs, k == 0 ? nsteps : 0, sample, all, &stop);
        if (!st.code && g->ranks > 1 && done % MPI_BALANCE_STEPS == 0) st = balance(w, g);
        if (last) break;
        last = stop;
    }
    free(all);
    AD_TRY(st);
    return pull_global(w);
}

/* ------------------------------------------------- read-back and checkpoints -- */

/* A disc of the whole world as gathered: the CPU ranks' record (mpi_dim.h). */
static int gpu_by_id(const void *a, const void *b)
{
    uint32_t x = ((const mpi_disc *)a)->id, y = ((const mpi_disc *)b)->id;
    return x < y ? -1 : x > y;
}

/* Every rank's discs on every rank, by id: *all (free it), *n of them; where open is not NULL, the open sides'
 * state into it (its arrays its own: the same on every rank). */
static ad_status gather_all(const ad_world *w, mpi_disc **all, size_t *n, ad_snapshot *open)
{
    const mpi_gpu *g = G(w);
    *all = NULL;
    *n = 0;
    ad_snapshot loc;
    ad_status mine_st = ad_cuda_backend.export_state(w, &loc), st0 = agree(g, mine_st);
    if (st0.code) {
        if (!mine_st.code) ad_snapshot_free(&loc);
        return st0;
    }
    mpi_disc *mine = malloc((loc.n + 1) * sizeof *mine);
    int *counts = malloc((size_t)g->ranks * sizeof *counts), *displs = malloc((size_t)g->ranks * sizeof *displs);
    ad_status st = mine && counts && displs ? ad_ok() : ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory");
    long long bytes = (long long)loc.n * (long long)sizeof(mpi_disc), total = 0;
    if (!st.code && bytes > INT_MAX)
        st = ad_fail(AD_ERR_CAPACITY, "ranks", "rank %d holds %zu discs: more than one gather moves", g->rank, loc.n);
    for (size_t k = 0; k < loc.n && !st.code; k++)
        mine[k] = (mpi_disc){loc.state[k], loc.id[k], loc.touch ? loc.touch[k] : 0u, loc.accel[k], loc.pressure[k],
                             loc.virial[k]};
    if (open) { /* the arrays move to it */
        open->open = loc.open;
        open->open_alloc = loc.open_alloc;
        memset(&loc.open_alloc, 0, sizeof loc.open_alloc);
    }
    ad_snapshot_free(&loc);
    st = agree(g, st);
    int b = (int)bytes;
    if (!st.code) MPI_Allgather(&b, 1, MPI_INT, counts, 1, MPI_INT, g->comm);
    for (int r = 0; r < g->ranks && !st.code; r++) {
        displs[r] = (int)total;
        total += counts[r];
    }
    if (!st.code && total > INT_MAX)
        st = ad_fail(AD_ERR_CAPACITY, "ranks", "the world's %lld bytes of discs are more than one gather moves", total);
    mpi_disc *every = st.code ? NULL : malloc((size_t)total + 1);
    if (!st.code && !every) st = ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory for %lld bytes of discs", total);
    st = agree(g, st);
    if (!st.code) {
        MPI_Allgatherv(mine, b, MPI_BYTE, every, counts, displs, MPI_BYTE, g->comm);
        *n = (size_t)total / sizeof(mpi_disc);
        qsort(every, *n, sizeof *every, gpu_by_id);
        *all = every;
    } else {
        free(every);
    }
    free(mine);
    free(counts);
    free(displs);
    return st;
}

/* The whole world on every rank, by id (whatever the flags ask: the order of the ids is the one order
 * that does not depend on the ranks). */
static ad_status gpu_read(const ad_world *w, int flags, size_t max, const ad_particle_out *out, size_t *count)
{
    (void)flags;
    mpi_disc *all;
    size_t n;
    AD_TRY(gather_all(w, &all, &n, NULL));
    if (n > max) n = max;
    mpi_put_out(all, n, out);
    free(all);
    if (count) *count = n;
    return ad_ok();
}

static ad_status gpu_export(const ad_world *w, ad_snapshot *s)
{
    memset(s, 0, sizeof *s);
    mpi_disc *all;
    size_t n;
    ad_snapshot open;
    memset(&open, 0, sizeof open);
    ad_status st = gather_all(w, &all, &n, &open);
    if (st.code) {
        ad_snapshot_free(&open);
        return st;
    }
    st = agree(G(w), mpi_snapshot_of(all, n, s));
    free(all);
    if (st.code) {
        ad_snapshot_free(s);
        ad_snapshot_free(&open);
        return st;
    }
    s->open = open.open; /* the device's (the entries' ids, the waiting ones, the reservoir's controllers) */
    s->open_alloc = open.open_alloc;
    s->open.next_id = G(w)->next_id;
    return st;
}

/* A snapshot of the whole world (every rank loads the same file): each rank keeps its columns' discs. */
static ad_status gpu_import(ad_world *w, const ad_snapshot *s)
{
    mpi_gpu *g = G(w);
    ad_snapshot mine = *s;
    mine.owned = 0;
    mine.touch = s->touch ? malloc(s->n * sizeof *mine.touch + 1) : NULL;
    mine.state = malloc(s->n * sizeof *mine.state + 1);
    mine.id = malloc(s->n * sizeof *mine.id + 1);
    mine.pressure = malloc(s->n * sizeof *mine.pressure + 1);
    mine.virial = malloc(s->n * sizeof *mine.virial + 1);
    mine.accel = malloc(s->n * sizeof *mine.accel + 1);
    ad_status st = mine.state && mine.id && mine.pressure && mine.virial && mine.accel && (mine.touch || !s->touch)
                       ? ad_ok()
                       : ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory loading %zu discs", s->n);
    size_t m = 0;
    for (size_t k = 0; k < s->n && !st.code; k++) {
        if (!own_column(w, g, s->state[k].x)) continue;
        mine.state[m] = s->state[k];
        mine.id[m] = s->id[k];
        mine.pressure[m] = s->pressure[k];
        mine.virial[m] = s->virial[k];
        mine.accel[m] = s->accel[k];
        if (mine.touch) mine.touch[m] = s->touch[k];
        m++;
    }
    mine.n = m;
    if (!st.code) st = ad_cuda_backend.import_state(w, &mine);
    AD_FREE_EACH(mine.state, mine.id, mine.pressure, mine.virial, mine.accel, mine.touch);
    AD_TRY(agree(g, st));
    g->next_id = s->open.next_id;
    g->left0 = w->stats.left; /* every rank's device holds the loaded totals */
    g->removed0 = w->stats.reservoir_removed;
    w->count = w->stats.count = s->n;
    return ad_ok();
}

/* The field sums: each rank's device holds its discs' share; the host's are the world's. */
static ad_status gpu_fields_to_host(ad_world *w)
{
    mpi_gpu *g = G(w);
    if (g->fields_summed) return ad_ok(); /* no step since: the device's shares are summed in the host's */
    AD_TRY(agree(g, ad_cuda_backend.fields_to_host(w)));
    size_t n = ad_field_sum_count(&w->fields.def, 2);
    MPI_Allreduce(MPI_IN_PLACE, w->fields.sums, (int)n, MPI_DOUBLE, MPI_SUM, g->comm);
    g->fields_summed = 1;
    return ad_ok();
}

/* The host's sums (the world's) go to rank 0's device; the others start again from zero, so that the next
 * sum over the ranks is the world's again. */
static ad_status gpu_fields_to_device(ad_world *w)
{
    mpi_gpu *g = G(w);
    ad_status st = ad_ok();
    if (g->rank == 0) {
        st = ad_cuda_backend.fields_to_device(w);
    } else {
        size_t n = ad_field_sum_count(&w->fields.def, 2);
        double *kept = w->fields.sums, *zero = calloc(n + 1, sizeof *zero);
        if (!zero) st = ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory for the field sums");
        w->fields.sums = zero;
        if (!st.code) st = ad_cuda_backend.fields_to_device(w);
        w->fields.sums = kept;
        free(zero);
    }
    g->fields_summed = 1; /* the host's stay the world's */
    return agree(g, st);
}

/* The panels' totals: every rank's device holds the world's (the step sums are summed over the ranks
 * before the fold, cuda_ranks.h). */
static ad_status gpu_panels_to_host(ad_world *w) { return agree(G(w), ad_cuda_backend.panels_to_host(w)); }
static ad_status gpu_panels_reset(ad_world *w) { return agree(G(w), ad_cuda_backend.panels_reset(w)); }

static size_t gpu_bytes_needed(const ad_world_def *d, const ad_params *p) { return ad_cuda_backend.bytes_needed(d, p); }

static int gpu_writer(const ad_world *w) { return G(w)->rank == 0; }

static ad_status gpu_agree(const ad_world *w, ad_status mine)
{
    ad_status st = mine;
    MPI_Bcast(&st, (int)sizeof st, MPI_BYTE, 0, G(w)->comm);
    return st;
}

int mpi_gpu_slab_edges(const ad_world *w, double *x, int max, unsigned long long *moves)
{
    const mpi_gpu *g = G(w);
    if (moves) *moves = g->moves;
    int n = g->ranks + 1 < max ? g->ranks + 1 : max;
    for (int r = 0; r < n; r++) x[r] = w->params.origin_x + (double)w->params.cell_x * g->rank_col[r];
    return n - 1;
}

const ad_backend_ops ad_mpi_gpu_backend = {
    .name = "mpi",
    .create = gpu_create,
    .destroy = gpu_destroy,
    .add_particles = gpu_add_particles,
    .set_segments = gpu_set_segments,
    .step = gpu_step,
    .read = gpu_read,
    .export_state = gpu_export,
    .import_state = gpu_import,
    .fields_to_host = gpu_fields_to_host,
    .fields_to_device = gpu_fields_to_device,
    .pull_stats = pull_global,
    .panels_to_host = gpu_panels_to_host,
    .panels_reset = gpu_panels_reset,
    .bytes_needed = gpu_bytes_needed,
    .writer = gpu_writer,
    .agree = gpu_agree,
};
