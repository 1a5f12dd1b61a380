/* backend = mpi's load balance (src/mpi/mpi_balance.c), its choice alone, without MPI running (the CPU ranks'
 * on measured times; then, moving pile, the GPU ranks' on disc counts): the group
 * times of windows on cores shared with other work are noisy, and the choice smooths them over windows
 * (BALANCE_MEMORY). Four ranks over 64 column groups, every window's measured time a group's true cost
 * times a factor uniform in [1 - NOISE, 1 + NOISE] (a fixed random stream), the chosen edges applied as
 * mpi_balance applies them:
 *   even:  every group the same cost: the even split is already right, so the edges should hardly move; with
 *          the smoothing at least 4x fewer moves than choosing from each window's own times, which the
 *          test also runs (and must see move: else the case would not show the difference);
 *   pile:  the first 8 groups cost 8x the others (the gas piled on a wall): the edges must follow, the
 *          slowest slab's true time within 15 % of the ideal (the total over the ranks) by window 40.
 * Exit 0 when both hold. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_world.h"

#define RANKS 4
#define GROUPS 64
#define WINDOWS 400
#define NOISE 0.4

static int failures, checks;
#define CHECK(c, ...) \
    do { \
        checks++; \
        if (!(c)) { \
            printf("FAIL: " __VA_ARGS__); \
            printf("\n"); \
            failures++; \
        } \
    } while (0)

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double uniform(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng >> 11) / 9007199254740992.0;
}

/* A world of RANKS ranks over GROUPS groups of 4 columns each, its edges an even split. */
static mpi_world *fresh(void)
{
    mpi_world *m = calloc(1, sizeof *m);
    m->ranks = RANKS;
    m->ngroups = GROUPS;
    m->least_cols = 2;
    for (int k = 0; k <= GROUPS; k++) m->group_col[k] = 4 * k;
    m->rank_group = calloc(RANKS + 1, sizeof *m->rank_group);
    m->col_rank = calloc(4 * GROUPS, sizeof *m->col_rank);
    m->sum_counts = calloc(RANKS, sizeof *m->sum_counts);
    m->sum_displs = calloc(RANKS, sizeof *m->sum_displs);
    int even[RANKS + 1];
    for (int r = 0; r <= RANKS; r++) even[r] = r * GROUPS / RANKS;
    if (mpi_assign(m, even).code) abort();
    return m;
}

static void done(mpi_world *m)
{
    free(m->rank_group);
    free(m->col_rank);
    free(m->sum_counts);
    free(m->sum_displs);
    free(m);
}

/* The slowest slab's true time over the ideal one. */
static double imbalance(const mpi_world *m, const double *cost)
{
    double total = 0.0, most = 0.0;
    for (int k = 0; k < GROUPS; k++) total += cost[k];
    for (int r = 0; r < RANKS; r++) {
        double s = 0.0;
        for (int k = m->rank_group[r]; k < m->rank_group[r + 1]; k++) s += cost[k];
        most = s > most ? s : most;
    }
    return most / (total / RANKS);
}

/* WINDOWS windows of noisy times of `cost`; smooth = 0: each window's own times decide (the smoothing's
 * memory emptied before each). The moves counted; the imbalance at window 40 and at the end. */
static int windows(const double *cost, int smooth, double *at40, double *end)
{
    mpi_world *m = fresh();
    int moves = 0;
    for (int win = 1; win <= WINDOWS; win++) {
        double t[GROUPS];
        for (int k = 0; k < GROUPS; k++) t[k] = cost[k] * (1.0 + NOISE * (2.0 * uniform() - 1.0));
        if (!smooth) m->windows = 0;
        int edge[RANKS + 1];
        if (mpi_balance_choose(m, t, edge)) {
            if (mpi_assign(m, edge).code) abort();
            moves++;
        }
        if (win == 40) *at40 = imbalance(m, cost);
    }
    *end = imbalance(m, cost);
    done(m);
    return moves;
}

/* The GPU ranks' choice (mpi_gpu.c): the measure is each group's disc count, the same in every run (no
 * noise), and an edge keeps `margin` columns inside its neighbours' old edges. A periodic box of 60 one-column
 * groups, a thin gas (5 discs a column) and a pile (25 more a column over 12 columns) that moves 0.44 columns
 * a window, 40 windows, on `ranks` ranks: every move keeps the margin and leaves slabs of 2 columns or more,
 * and from window 10 on the fullest slab holds at most 1.15 times the even share (each window's counts decide
 * alone: they are not noisy, and smoothed ones would lag the pile). The fullest share at the end
 * into *end; the moves returned. */
static int moving_pile(int ranks, double *worst, double *end)
{
    enum { COLS = 60, MARGIN = 2 };
    mpi_world *m = calloc(1, sizeof *m);
    m->ranks = ranks;
    m->ngroups = COLS;
    m->least_cols = 2;
    for (int k = 0; k <= COLS; k++) m->group_col[k] = k;
    m->rank_group = calloc((size_t)ranks + 1, sizeof *m->rank_group);
    m->col_rank = calloc(COLS, sizeof *m->col_rank);
    m->sum_counts = calloc((size_t)ranks, sizeof *m->sum_counts);
    m->sum_displs = calloc((size_t)ranks, sizeof *m->sum_displs);
    int even[MPI_GROUPS_MAX + 1];
    for (int r = 0; r <= ranks; r++) even[r] = r * COLS / ranks;
    if (mpi_assign(m, even).code) abort();
    mpi_slabs cut = {ranks, COLS, 2, MARGIN, m->group_col, m->rank_group};
    int moves = 0;
    *worst = 0.0;
    for (int win = 1; win <= 40; win++) {
        double t[COLS], total = 0.0, at = 0.44 * win;
        for (int k = 0; k < COLS; k++) {
            double d = fmod(k - at + COLS, COLS); /* the pile covers [at, at + 12) around the ring */
            t[k] = 5.0 + (d < 12.0 ? 25.0 : 0.0);
            total += t[k];
        }
        int edge[MPI_GROUPS_MAX + 1];
        if (mpi_slabs_next(&cut, t, edge)) { /* counts are not noisy: each window's own (mpi_gpu.c) */
            for (int r = 1; r < ranks; r++) {
                int lo = m->rank_group[r - 1], hi = m->rank_group[r + 1], e = edge[r], o = m->rank_group[r];
                CHECK(e == o || (e < o ? e - lo : hi - e) >= MARGIN, "%d ranks, window %d: edge %d moved from %d "
                      "to %d, within %d columns of a neighbour's old edge (%d, %d)", ranks, win, r, o, e, MARGIN, lo, hi);
                CHECK(edge[r + 1] - edge[r] >= 2 && edge[r] - edge[r - 1] >= 2, "%d ranks: a slab under 2 columns", ranks);
            }
            if (mpi_assign(m, edge).code) abort();
            moves++;
        }
        double most = 0.0;
        for (int r = 0; r < ranks; r++) {
            double n = 0.0;
            for (int k = m->rank_group[r]; k < m->rank_group[r + 1]; k++) n += t[k];
            most = n > most ? n : most;
        }
        double share = most / (total / ranks);
        if (win >= 10 && share > *worst) *worst = share;
        *end = share;
    }
    done(m);
    return moves;
}

int main(void)
{
    double even[GROUPS], pile[GROUPS], a40, end;
    for (int k = 0; k < GROUPS; k++) even[k] = 1.0, pile[k] = k < 8 ? 8.0 : 1.0;
    int raw = windows(even, 0, &a40, &end);
    printf("even, each window's own times: %d moves in %d windows, imbalance at the end %.3f\n", raw, WINDOWS, end);
    int smooth = windows(even, 1, &a40, &end);
    printf("even, smoothed: %d moves in %d windows, imbalance at the end %.3f\n", smooth, WINDOWS, end);
    CHECK(raw >= 20, "the noise moved the unsmoothed edges only %d times: the case shows nothing", raw);
    CHECK(4 * smooth <= raw, "smoothed %d moves, unsmoothed %d: not 4x fewer", smooth, raw);
    CHECK(end < 1.15, "even work, smoothed: imbalance %.3f at the end", end);
    smooth = windows(pile, 1, &a40, &end);
    printf("pile, smoothed: %d moves, imbalance %.3f at window 40, %.3f at the end\n", smooth, a40, end);
    CHECK(a40 < 1.15, "the pile: imbalance %.3f at window 40", a40);
    CHECK(end < 1.15, "the pile: imbalance %.3f at the end", end);
    for (int ranks = 2; ranks <= 4; ranks++) {
        double worst, last;
        int moves = moving_pile(ranks, &worst, &last);
        printf("moving pile, disc counts, %d ranks: %d moves, fullest slab %.3f of the even share at the end, at most "
               "%.3f from window 10\n", ranks, moves, last, worst);
        CHECK(worst <= 1.15, "the moving pile on %d ranks: the fullest slab %.3f of the even share", ranks, worst);
    }
    printf("%d passed, %d failed\n", checks - failures, failures);
    return failures ? 1 : 0;
}
