/* backend = mpi: the slabs' edges (mpi_world.h). A rank's run of column groups is set at the start as
 * an even split, then moved every MPI_BALANCE_STEPS steps from the measured time of each group's pass:
 * the groups' times are gathered on every rank (the same numbers everywhere, so every rank makes the same
 * choice) and smoothed over the windows (a running mean of the first BALANCE_MEMORY, then an exponential
 * one of that memory: one window's noise on shared cores moves no edge), the edges that would split the
 * total time evenly found, and each edge moved half way there
 * (all the way where half gains too little), never past its neighbours' old edges (a group so changes hands between neighbours only, and the discs
 * and field sums it carries go by the neighbour exchange) and never leaving a slab narrower than the
 * ghost layer. The results do not depend on where the edges are (every sum is a group's, in group
 * order): moving them changes the time a step takes, never a bit of what it computes. GPU ranks make the
 * same choice (mpi_slabs_next) from each window's disc counts instead of smoothed times (mpi_gpu.c says
 * why). */
#include <stdlib.h>
#include <string.h>

#include "mpi_world.h"

#define TAG_FIELDS 1000 /* + the group: its field sums, handed to its new rank */
#define BALANCE_MEMORY 4 /* windows the smoothed group times remember */

ad_status mpi_assign(mpi_world *m, const int *rank_group)
{
    for (int r = 0; r < m->ranks; r++) {
        int a = m->group_col[rank_group[r]], e = m->group_col[rank_group[r + 1]];
        if (e - a < m->least_cols)
            return ad_fail(AD_ERR_INVALID, "ranks", "backend = mpi: rank %d's slab has %d columns, fewer than the %d "
                           "its ghost layers need; use fewer ranks", r, e - a, m->least_cols);
    }
    for (int r = 0; r <= m->ranks; r++) m->rank_group[r] = rank_group[r];
    for (int r = 0; r < m->ranks; r++) {
        for (int c = m->group_col[rank_group[r]]; c < m->group_col[rank_group[r + 1]]; c++) m->col_rank[c] = r;
        m->sum_counts[r] = (rank_group[r + 1] - rank_group[r]) * (int)sizeof(ad_step_sums);
        m->sum_displs[r] = rank_group[r] * (int)sizeof(ad_step_sums);
    }
    m->g_lo = m->rank_group[m->rank];
    m->g_hi = m->rank_group[m->rank + 1];
    m->c_lo = m->group_col[m->g_lo];
    m->c_hi = m->group_col[m->g_hi];
    return ad_ok();
}

/* The edges that split the groups' times t[0..n) evenly over `ranks`: edge r where the running total
 * is nearest r / ranks of the whole. */
static void even_edges(const double *t, int n, int ranks, int *edge)
{
    double total = 0.0;
    for (int k = 0; k < n; k++) total += t[k];
    edge[0] = 0, edge[ranks] = n;
    double run = 0.0;
    int k = 0;
    for (int r = 1; r < ranks; r++) {
        double want = total * r / ranks;
        while (k < n && run + t[k] <= want) run += t[k++];
        /* the group that crosses the share: on the side that leaves the running total nearer */
        edge[r] = k < n && want - run > run + t[k] - want ? k + 1 : k;
    }
}

/* The slowest slab's time under the edges. */
static double slowest(const double *t, int ranks, const int *edge)
{
    double most = 0.0;
    for (int r = 0; r < ranks; r++) {
        double s = 0.0;
        for (int k = edge[r]; k < edge[r + 1]; k++) s += t[k];
        most = s > most ? s : most;
    }
    return most;
}

/* The edges moved toward the even ones by the share `full` of the way (1: all of it, 0: half way),
 * within the old neighbours' edges (at least `margin` columns inside them), slabs at least least_cols
 * wide; 0 where they stay or break those bounds. */
static int moved_edges(const mpi_slabs *m, const int *even, int full, int *edge)
{
    const int *old = m->rank_group, *col = m->group_col;
    edge[0] = 0, edge[m->ranks] = m->ngroups;
    for (int r = 1; r < m->ranks; r++) {
        int d = even[r] - old[r];
        int e = old[r] + (full || d == 1 || d == -1 ? d : d / 2);
        if (e < old[r - 1] + 1) e = old[r - 1] + 1;
        if (e > old[r + 1] - 1) e = old[r + 1] - 1;
        while (e < old[r] && col[e] - col[old[r - 1]] < m->margin) e++;
        while (e > old[r] && col[old[r + 1]] - col[e] < m->margin) e--;
        edge[r] = e;
    }
    int moved = 0;
    for (int r = 1; r <= m->ranks; r++) {
        if (edge[r] <= edge[r - 1] || m->group_col[edge[r]] - m->group_col[edge[r - 1]] < m->least_cols) return 0;
        moved |= r < m->ranks && edge[r] != old[r];
    }
    return moved;
}

int mpi_slabs_next(const mpi_slabs *m, const double *t, int *edge)
{
    int even[MPI_GROUPS_MAX + 1];
    even_edges(t, m->ngroups, m->ranks, even);
    double now = slowest(t, m->ranks, m->rank_group);
    for (int full = 0; full < 2; full++)
        if (moved_edges(m, even, full, edge) && slowest(t, m->ranks, edge) < 0.95 * now) return 1;
    return 0;
}

/* The field sums of the groups that change hands go to their new ranks (neighbours). */
static ad_status hand_fields(ad_world *w, mpi_world *m, const int *old)
{
    if (!m->fg_ready || !w->fields.enabled) return ad_ok();
    MPI_Request rq[2 * MPI_GROUPS_MAX];
    int nq = 0, lost = 0;
    double *sent[MPI_GROUPS_MAX];
    int ns = 0;
    for (int k = 0; k < m->ngroups; k++) {
        int was = k >= old[m->rank] && k < old[m->rank + 1], is = k >= m->g_lo && k < m->g_hi;
        if (was == is) continue;
        mpi_field_group *q = &m->fg[k];
        size_t n = mpi_field_group_doubles(w, m, k, &q->fa, &q->fb);
        int other = 0;
        while (other < m->ranks && !(k >= (is ? old : m->rank_group)[other] && k < (is ? old : m->rank_group)[other + 1]))
            other++;
        if (is) {
            q->sums = malloc(n * sizeof(double));
            if (!q->sums) {
                lost = 1;
                continue;
            }
            MPI_Irecv(q->sums, (int)n, MPI_DOUBLE, other, TAG_FIELDS + k, m->comm, &rq[nq++]);
        } else {
            MPI_Isend(q->sums, (int)n, MPI_DOUBLE, other, TAG_FIELDS + k, m->comm, &rq[nq++]);
            sent[ns++] = q->sums;
            q->sums = NULL;
        }
    }
    MPI_Waitall(nq, rq, MPI_STATUSES_IGNORE);
    for (int k = 0; k < ns; k++) free(sent[k]);
    ad_status st = lost ? ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory for the field sums of rank %d", m->rank)
                        : ad_ok();
    return mpi_check(m, st);
}

int mpi_balance_choose(mpi_world *m, const double *t, int *edge)
{
    m->windows++;
    double keep = 1.0 / (m->windows < BALANCE_MEMORY ? m->windows : BALANCE_MEMORY);
    for (int k = 0; k < m->ngroups; k++) m->group_avg[k] += keep * (t[k] - m->group_avg[k]);
    mpi_slabs cut = {m->ranks, m->ngroups, m->least_cols, 0, m->group_col, m->rank_group};
    return mpi_slabs_next(&cut, m->group_avg, edge);
}

int mpi_column_groups(int nx, int *group_col)
{
    int n = nx < MPI_GROUPS_MAX ? nx : MPI_GROUPS_MAX;
    for (int k = 0; k <= n; k++) group_col[k] = (int)((long long)k * nx / n);
    return n;
}

int mpi_least_groups(int nx, int ngroups, int least_cols)
{
    int width = nx / ngroups; /* a group's fewest columns: at least one, as ngroups <= nx */
    int least = (least_cols + width - 1) / width;
    return least < 1 ? 1 : least;
}

ad_status mpi_balance(ad_world *w, mpi_world *m)
{
    double t[MPI_GROUPS_MAX];
    int counts[MPI_GROUPS_MAX], displs[MPI_GROUPS_MAX];
    for (int r = 0; r < m->ranks; r++) {
        counts[r] = m->rank_group[r + 1] - m->rank_group[r];
        displs[r] = m->rank_group[r];
    }
    memcpy(t + m->g_lo, m->group_busy + m->g_lo, (size_t)(m->g_hi - m->g_lo) * sizeof *t);
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DOUBLE, t, counts, displs, MPI_DOUBLE, m->comm);
    memset(m->group_busy, 0, sizeof m->group_busy);
    int edge[MPI_GROUPS_MAX + 1], old[MPI_GROUPS_MAX + 1];
    if (!mpi_balance_choose(m, t, edge)) return ad_ok();
    memcpy(old, m->rank_group, (size_t)(m->ranks + 1) * sizeof *old);
    AD_TRY(mpi_check(m, mpi_assign(m, edge)));
    AD_TRY(hand_fields(w, m, old));
    m->moves++;
    /* the discs of the groups that changed hands go to their new ranks, as migrants do */
    return mpi_migrate_any(w, m);
}

int mpi_slab_edges(const ad_world *w, double *x, int max, unsigned long long *moves)
{
    const mpi_world *m = w->impl;
    const ad_params *P = &w->params;
    for (int r = 0; r <= m->ranks && r < max; r++)
        x[r] = P->origin_x + (double)P->cell_x * m->group_col[m->rank_group[r]];
    if (moves) *moves = m->moves;
    return m->ranks;
}
