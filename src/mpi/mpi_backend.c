/* backend = mpi (mpi_world.h says how the domain is cut and what one step does): the backend table, the
 * slabs, what a step combines over the ranks; adding particles, the step, the read-back and the
 * checkpoints' snapshots are written once for both dimensions (mpi_backend_dim.h, included for 2D and 3D). */
#include <stdlib.h>
#include <string.h>

#include "mpi_world.h"

/* ------------------------------------------------------------- the world -- */

static size_t mpi_cells(const ad_params *p) { return (size_t)p->nx * (size_t)p->ny * (size_t)p->nz + 1; }

static size_t mpi_bytes_needed(const ad_world_def *d, const ad_params *p)
{
    size_t grid = d->dimensions == 3 ? ad_plain_bytes3(d->capacity, mpi_cells(p), d->integrator) +
                                           AD_WAITING_MAX * sizeof(ad_entry3)
                                     : ad_plain_bytes(d->capacity, mpi_cells(p), d->integrator);
    return grid + 2 * d->capacity * sizeof(float) + sizeof(mpi_world);
}

static void mpi_destroy(ad_world *w)
{
    mpi_world *m = w->impl;
    if (!m) return;
    ad_plain_free(&m->g);
    ad_plain_free3(&m->g3);
    ad_plain_spots_free(&m->sp);
    ad_plain_spots_free3(&m->sp3);
    ad_open_state_free(&m->open);
    mpi_discs_free(&m->out_l);
    mpi_discs_free(&m->out_r);
    mpi_discs_free(&m->in);
    mpi_discs_free3(&m->out_l3);
    mpi_discs_free3(&m->out_r3);
    mpi_discs_free3(&m->in3);
    mpi_fields_free(m);
    AD_FREE_EACH(m->rank_group, m->col_rank, m->sums, m->sum_counts, m->sum_displs, m->p_spare, m->v_spare);
    if (m->comm != MPI_COMM_NULL) MPI_Comm_free(&m->comm);
    free(m);
    w->impl = NULL;
}

/* What backend = mpi does not run yet, by the key that asks for it; NULL when it runs the world. */
static const char *unsupported(const ad_world_def *d, const char **why)
{
    *why = NULL;
    if (d->broad_phase == AD_BROAD_PHASE_BVH) return *why = "the BVH broad phase is not decomposed: use grid", "broad_phase";
    return NULL;
}

/* The column groups (as many as the grid has columns, at most MPI_GROUPS_MAX, of near-equal width) and
 * each rank's run of them: groups split as evenly as they go. */
static ad_status cut_slabs(ad_world *w, mpi_world *m)
{
    const ad_params *P = &w->params;
    int nx = P->nx;
    m->ngroups = mpi_column_groups(nx, m->group_col);
    m->reach = P->reach_x;
    /* two ranks on a periodic ring are each other's left and right neighbour: a slab narrower than both
     * ghost layers would send a disc twice to the same rank */
    m->least_cols = m->ranks == 2 && P->periodic_x ? 2 * m->reach : m->reach;
    if ((long long)m->ranks * mpi_least_groups(nx, m->ngroups, m->least_cols) > m->ngroups)
        return ad_fail(AD_ERR_INVALID, "ranks",
                       "backend = mpi: %d ranks over a grid of %d columns (%d column groups): each rank's slab must be "
                       "at least %d columns wide (the ghost layer%s); use fewer ranks or smaller cells",
                       m->ranks, nx, m->ngroups, m->least_cols,
                       m->least_cols > m->reach ? " on both sides: two ranks on a periodic x" : "");
    m->rank_group = calloc((size_t)m->ranks + 1, sizeof *m->rank_group);
    m->col_rank = calloc((size_t)nx, sizeof *m->col_rank);
    m->sums = calloc((size_t)m->ngroups, sizeof *m->sums);
    m->sum_counts = calloc((size_t)m->ranks, sizeof *m->sum_counts);
    m->sum_displs = calloc((size_t)m->ranks, sizeof *m->sum_displs);
    if (!m->rank_group || !m->col_rank || !m->sums || !m->sum_counts || !m->sum_displs)
        return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory for the slabs");
    int *even = malloc(((size_t)m->ranks + 1) * sizeof *even);
    if (!even) return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory for the slabs");
    for (int r = 0; r <= m->ranks; r++) even[r] = (int)((long long)r * m->ngroups / m->ranks);
    ad_status st = mpi_assign(m, even); /* an even split; mpi_balance.c moves the edges as the work goes */
    free(even);
    AD_TRY(st);
    m->left = m->rank > 0 ? m->rank - 1 : P->periodic_x && m->ranks > 1 ? m->ranks - 1 : -1;
    m->right = m->rank < m->ranks - 1 ? m->rank + 1 : P->periodic_x && m->ranks > 1 ? 0 : -1;
    return ad_ok();
}

static ad_status mpi_create(ad_world *w)
{
    const ad_world_def *d = &w->def;
    int on = 0;
    MPI_Initialized(&on);
    if (!on)
        return ad_fail(AD_ERR_BACKEND, "backend", "backend = mpi: MPI is not started (ad_parallel_init first, under mpirun)");
    const char *why, *key = unsupported(d, &why);
    if (key) return ad_fail(AD_ERR_BACKEND, key, "%s: backend = mpi does not run this world yet: %s", key, why);
    mpi_world *m = calloc(1, sizeof *m);
    if (!m) return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory");
    w->impl = m;
    m->comm = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &m->comm);
    MPI_Comm_rank(m->comm, &m->rank);
    MPI_Comm_size(m->comm, &m->ranks);
    w->stats.threads = d->threads > 0 ? d->threads : 1;
    w->stats.cell_counter_bits = 32;
    w->stats.ranks = m->ranks;
    w->stats.rank_imbalance = 1.0;
    m->dims = d->dimensions == 3 ? 3 : 2;
    m->g.threads = m->g3.threads = w->stats.threads;
    ad_status st = cut_slabs(w, m);
    if (!st.code) {
        int ok = m->dims == 3 ? ad_plain_alloc3(&m->g3, d->capacity, mpi_cells(&w->params), d->integrator) &&
                                    ad_plain_spots_alloc3(&m->sp3, w->params.res_boxes)
                              : ad_plain_alloc(&m->g, d->capacity, mpi_cells(&w->params), d->integrator);
        ok = (m->dims == 3 || ad_plain_spots_alloc(&m->sp, w->params.res_boxes)) && ok;
        m->p_spare = malloc((d->capacity + 1) * sizeof(float));
        m->v_spare = malloc((d->capacity + 1) * sizeof(float));
        st = !ok || !m->p_spare || !m->v_spare
                 ? ad_fail(AD_ERR_NO_MEMORY, "capacity", "capacity: allocating the world's %zu %s failed", d->capacity,
                           m->dims == 3 ? "spheres" : "discs")
                 : ad_open_state_alloc(&m->open, (uint32_t)w->params.res_boxes, m->dims);
    }
    st = mpi_check(m, st);
    if (st.code) mpi_destroy(w);
    return st;
}

static ad_status mpi_set_segments(ad_world *w)
{
    (void)w;
    return ad_ok();
}

/* ------------------------------------------------------ what a step combines -- */

#define ONE_EVALUATION (-1) /* pass_group's stage: one force evaluation (else RK4's stage 0-3) */

/* The groups' sums gathered on every rank and folded in group order: the statistics, the forces and the
 * next step the same on every rank for any number of ranks; refused where a particle went non-finite.
 * t1: when the step's pass began (its phase's time). */
static ad_status fold_sums(ad_world *w, mpi_world *m, float dt, float v2_new, double t1)
{
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_BYTE, m->sums, m->sum_counts, m->sum_displs, MPI_BYTE, m->comm);
    /* the panels' step sums: integers (fixed point, panel.h), so their sum over the ranks is exact in any
     * order; every rank folds the same totals */
    if (w->params.surfaces && w->panels.count)
        MPI_Allreduce(MPI_IN_PLACE, w->panels.fix, (int)(w->panels.count * AD_PANEL_WORDS), MPI_INT64_T, MPI_SUM,
                      m->comm);
    ad_stats_fold(w, m->sums, (size_t)m->ngroups, dt, v2_new);
    w->stats.phase_seconds[AD_PHASE_INTERACT] += ad_plain_now() - t1;
    uint64_t bad = 0;
    for (int k = 0; k < m->ngroups; k++) bad += m->sums[k].nonfinite;
    const char *what = m->dims == 3 ? "spheres" : "discs";
    if (bad)
        return ad_fail(AD_ERR_UNSTABLE, "dt", "step %llu: %llu %s reached a non-finite position or velocity (the step "
                       "of %g s is too large for the stiffness, or %s were placed overlapping)",
                       (unsigned long long)w->stats.step, (unsigned long long)bad, what, (double)dt, what);
    return ad_ok();
}

/* What each rank adds to the step's record besides its groups' sums. */
typedef struct rank_note {
    double busy;          /* seconds of the step's own work */
    unsigned long long n; /* particles held after the step */
    unsigned long long outside, overflow;
    unsigned int occupancy, stop;
} rank_note;

/* The ranks' notes gathered and folded into the statistics alike on every rank (*stop: any rank was
 * interrupted); every MPI_BALANCE_STEPS steps, the load balance. */
static ad_status fold_notes(ad_world *w, mpi_world *m, const rank_note *note, int *stop)
{
    rank_note *all = malloc((size_t)m->ranks * sizeof *all);
    ad_status st = all ? ad_ok() : ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory");
    AD_TRY(mpi_check(m, st));
    MPI_Allgather(note, (int)sizeof *note, MPI_BYTE, all, (int)sizeof *note, MPI_BYTE, m->comm);
    unsigned long long n = 0, outside = 0, overflow = 0;
    unsigned occupancy = 0, halt = 0;
    double most = 0.0, mean = 0.0;
    for (int r = 0; r < m->ranks; r++) {
        n += all[r].n, outside += all[r].outside, overflow += all[r].overflow, halt |= all[r].stop;
        occupancy = all[r].occupancy > occupancy ? all[r].occupancy : occupancy;
        most = all[r].busy > most ? all[r].busy : most;
        mean += all[r].busy / m->ranks;
    }
    free(all);
    w->count = w->stats.count = (size_t)n;
    w->stats.outside_grid = outside;
    w->stats.cell_overflow = overflow;
    w->stats.max_cell_occupancy = occupancy;
    m->busy_max += most;
    m->busy_mean += mean;
    w->stats.rank_imbalance = m->busy_mean > 0.0 ? m->busy_max / m->busy_mean : 1.0;
    *stop = (int)halt;
    if (m->ranks > 1 && w->stats.step % MPI_BALANCE_STEPS == 0) AD_TRY(mpi_balance(w, m));
    return ad_ok();
}

#define AD_DIM 2
#include "mpi_backend_dim.h"
#undef AD_DIM
#define AD_DIM 3
#include "mpi_backend_dim.h"
#undef AD_DIM

/* The table's entries that serve both dimensions. */
static ad_status mpi_step_any(ad_world *w, uint64_t n)
{
    return ((mpi_world *)w->impl)->dims == 3 ? mpi_step3(w, n) : mpi_step(w, n);
}

static ad_status mpi_read_any(const ad_world *w, int flags, size_t max, const ad_particle_out *out, size_t *count)
{
    return ((const mpi_world *)w->impl)->dims == 3 ? mpi_read3(w, flags, max, out, count)
                                                   : mpi_read(w, flags, max, out, count);
}

static ad_status mpi_export_any(const ad_world *w, ad_snapshot *s)
{
    return ((const mpi_world *)w->impl)->dims == 3 ? mpi_export3(w, s) : mpi_export(w, s);
}

static ad_status mpi_import_any(ad_world *w, const ad_snapshot *s)
{
    return ((mpi_world *)w->impl)->dims == 3 ? mpi_import3(w, s) : mpi_import(w, s);
}

static int mpi_writer(const ad_world *w) { return ((const mpi_world *)w->impl)->rank == 0; }

static ad_status mpi_agree(const ad_world *w, ad_status mine)
{
    const mpi_world *m = w->impl;
    ad_status st = mine;
    MPI_Bcast(&st, (int)sizeof st, MPI_BYTE, 0, m->comm);
    return st;
}

const ad_backend_ops ad_mpi_backend = {
    .name = "mpi",
    .create = mpi_create,
    .destroy = mpi_destroy,
    .add_particles = mpi_add_particles,
    .add_particles3 = mpi_add_particles3,
    .set_segments = mpi_set_segments,
    .step = mpi_step_any,
    .read = mpi_read_any,
    .export_state = mpi_export_any,
    .import_state = mpi_import_any,
    .fields_to_host = mpi_fields_to_host,
    .fields_to_device = mpi_fields_to_device,
    .pull_stats = NULL,
    .bytes_needed = mpi_bytes_needed,
    .writer = mpi_writer,
    .agree = mpi_agree,
};
