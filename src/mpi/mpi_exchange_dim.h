/* backend = mpi in one dimension (included by mpi_exchange.c with AD_DIM 2, then 3; see physics/dim.h):
 * what moves between ranks (mpi_world.h), the ghost layer, the migrants, the whole world gathered for a
 * read or a checkpoint; and the rank's sort, whose cell order is the same for any number of ranks; written
 * once for discs and spheres. No include guard: it is meant to be included once a dimension. */
#include "../physics/dim.h"

#define MPI_DISC AD_D(mpi_disc)
#define MPI_DISCS AD_D(mpi_discs)
#define PLAIN AD_D(ad_plain)
#define G(m) (&(m)->AD_D(g))
#if AD_DIM == 2
#define MPI_WHAT "discs"
#define MPI_ONE "disc"
#else
#define MPI_WHAT "spheres"
#define MPI_ONE "sphere"
#endif

ad_status AD_D(mpi_discs_reserve)(MPI_DISCS *b, size_t n)
{
    if (n <= b->cap) return ad_ok();
    size_t cap = b->cap ? b->cap : 1024;
    while (cap < n) cap *= 2;
    MPI_DISC *d = realloc(b->d, cap * sizeof *d);
    if (!d) return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory for %zu " MPI_WHAT " to send between ranks", n);
    b->d = d;
    b->cap = cap;
    return ad_ok();
}

void AD_D(mpi_discs_free)(MPI_DISCS *b)
{
    free(b->d);
    memset(b, 0, sizeof *b);
}

static ad_status AD_D(push)(MPI_DISCS *b, const MPI_DISC *d)
{
    AD_TRY(AD_D(mpi_discs_reserve)(b, b->n + 1));
    b->d[b->n++] = *d;
    return ad_ok();
}

void AD_D(mpi_disc_pack)(const PLAIN *g, size_t s, MPI_DISC *d)
{
    d->state = g->state[s];
    d->id = g->id[s];
    d->touch = g->touch[s];
    d->acc = g->acc[s];
    d->pressure = g->pressure[s];
    d->virial = g->virial[s];
}

void AD_D(mpi_disc_append)(PLAIN *g, const MPI_DISC *d)
{
    size_t s = g->n++;
    g->state[s] = d->state;
    g->id[s] = d->id;
    g->touch[s] = d->touch;
    g->acc[s] = d->acc;
    g->pressure[s] = d->pressure;
    g->virial[s] = d->virial;
}

/* Sends out_l to the left neighbour and out_r to the right one, receives what they send into `in`
 * (the left's first); a missing neighbour sends and receives nothing. */
static ad_status AD_D(swap_sides)(mpi_world *m)
{
    unsigned long long nl = m->AD_D(out_l).n, nr = m->AD_D(out_r).n, gl = 0, gr = 0;
    MPI_Request rq[4];
    int k = 0;
    if (m->left >= 0) {
        MPI_Irecv(&gl, 1, MPI_UNSIGNED_LONG_LONG, m->left, TAG_COUNT_R, m->comm, &rq[k++]);
        MPI_Isend(&nl, 1, MPI_UNSIGNED_LONG_LONG, m->left, TAG_COUNT_L, m->comm, &rq[k++]);
    }
    if (m->right >= 0) {
        MPI_Irecv(&gr, 1, MPI_UNSIGNED_LONG_LONG, m->right, TAG_COUNT_L, m->comm, &rq[k++]);
        MPI_Isend(&nr, 1, MPI_UNSIGNED_LONG_LONG, m->right, TAG_COUNT_R, m->comm, &rq[k++]);
    }
    MPI_Waitall(k, rq, MPI_STATUSES_IGNORE);
    ad_status st = AD_D(mpi_discs_reserve)(&m->AD_D(in), (size_t)(gl + gr));
    AD_TRY(mpi_check(m, st));
    m->AD_D(in).n = (size_t)(gl + gr);
    m->in_left = (size_t)gl;
    k = 0;
    int sz = (int)sizeof(MPI_DISC);
    if (m->left >= 0) {
        MPI_Irecv(m->AD_D(in).d, (int)gl * sz, MPI_BYTE, m->left, TAG_DATA_R, m->comm, &rq[k++]);
        MPI_Isend(m->AD_D(out_l).d, (int)nl * sz, MPI_BYTE, m->left, TAG_DATA_L, m->comm, &rq[k++]);
    }
    if (m->right >= 0) {
        MPI_Irecv(m->AD_D(in).d + gl, (int)gr * sz, MPI_BYTE, m->right, TAG_DATA_L, m->comm, &rq[k++]);
        MPI_Isend(m->AD_D(out_r).d, (int)nr * sz, MPI_BYTE, m->right, TAG_DATA_R, m->comm, &rq[k++]);
    }
    MPI_Waitall(k, rq, MPI_STATUSES_IGNORE);
    return ad_ok();
}

/* Appends what came in; refused (on every rank) where it would pass the capacity. */
static ad_status AD_D(take_in)(mpi_world *m, const char *what)
{
    ad_status st = ad_ok();
    if (G(m)->n + m->AD_D(in).n > G(m)->cap)
        st = ad_fail(AD_ERR_CAPACITY, "capacity",
                     "capacity: rank %d holds %zu " MPI_WHAT " and receives %zu %s, past its capacity of %zu (backend = "
                     "mpi: each rank's capacity is the world's; a dense slab needs more)",
                     m->rank, G(m)->n, m->AD_D(in).n, what, G(m)->cap);
    AD_TRY(mpi_check(m, st));
    for (size_t k = 0; k < m->AD_D(in).n; k++) AD_D(mpi_disc_append)(G(m), &m->AD_D(in).d[k]);
    return ad_ok();
}

ad_status AD_D(mpi_ghosts)(ad_world *w, mpi_world *m)
{
    const ad_params *P = &w->params;
    m->AD_D(out_l).n = m->AD_D(out_r).n = 0;
    ad_status st = ad_ok();
    if (m->ranks > 1)
        for (size_t s = 0; s < G(m)->n && !st.code; s++) {
            int c = mpi_column(P, G(m)->state[s].x);
            MPI_DISC d;
            AD_D(mpi_disc_pack)(G(m), s, &d);
            if (m->left >= 0 && c < m->c_lo + m->reach) st = AD_D(push)(&m->AD_D(out_l), &d);
            if (m->right >= 0 && c >= m->c_hi - m->reach && !st.code) st = AD_D(push)(&m->AD_D(out_r), &d);
        }
    AD_TRY(mpi_check(m, st));
    if (m->ranks > 1) AD_TRY(AD_D(swap_sides)(m));
    else m->AD_D(in).n = 0;
    return AD_D(take_in)(m, "ghosts");
}

/* The slots of column c (mod nx) over every row, in cell order, one after the other: the visit of a
 * ghost layer's columns that sender and receiver share (the same cells, each cell's discs by id). */
typedef int (*AD_D(slot_visit))(mpi_world *m, size_t s, void *arg);

static int AD_D(visit_columns)(mpi_world *m, const ad_params *P, int c0, AD_D(slot_visit) f, void *arg)
{
    const PLAIN *g = G(m);
    for (int row = 0; row < mpi_rows(P); row++)
        for (int j = 0; j < m->reach; j++) {
            size_t c = (size_t)row * (size_t)P->nx + (size_t)((c0 + j + P->nx) % P->nx);
            for (uint32_t s = g->start[c]; s < g->start[c + 1]; s++)
                if (!f(m, s, arg)) return 0;
        }
    return 1;
}

typedef struct AD_D(stage_io) {
    AD_STATE *st;     /* the stage's states: read where sending, written where receiving */
    MPI_DISCS *out;  /* sending: the buffer filled */
    size_t next, end; /* receiving: the next record of m->in and the end of this side's */
    int fail;
} AD_D(stage_io);

static int AD_D(stage_send)(mpi_world *m, size_t s, void *arg)
{
    AD_D(stage_io) *io = arg;
    MPI_DISC d;
    memset(&d, 0, sizeof d);
    d.state = io->st[s];
    d.id = G(m)->id[s];
    if (AD_D(push)(io->out, &d).code) return io->fail = 1, 0;
    return 1;
}

static int AD_D(stage_take)(mpi_world *m, size_t s, void *arg)
{
    AD_D(stage_io) *io = arg;
    if (io->next >= io->end || m->AD_D(in).d[io->next].id != G(m)->id[s]) return io->fail = 1, 0;
    io->st[s] = m->AD_D(in).d[io->next++].state;
    return 1;
}

ad_status AD_D(mpi_ghost_states)(ad_world *w, mpi_world *m, AD_STATE *st)
{
    const ad_params *P = &w->params;
    if (m->ranks == 1) return ad_ok();
    m->AD_D(out_l).n = m->AD_D(out_r).n = 0;
    AD_D(stage_io) l = {st, &m->AD_D(out_l), 0, 0, 0}, r = {st, &m->AD_D(out_r), 0, 0, 0};
    if (m->left >= 0) AD_D(visit_columns)(m, P, m->c_lo, AD_D(stage_send), &l);
    if (m->right >= 0) AD_D(visit_columns)(m, P, m->c_hi - m->reach, AD_D(stage_send), &r);
    ad_status ok = l.fail || r.fail ? ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory for the ghosts' RK4 stages")
                                    : ad_ok();
    AD_TRY(mpi_check(m, ok));
    AD_TRY(AD_D(swap_sides)(m));
    AD_D(stage_io) from_l = {st, NULL, 0, m->in_left, 0}, from_r = {st, NULL, m->in_left, m->AD_D(in).n, 0};
    if (m->left >= 0) AD_D(visit_columns)(m, P, m->c_lo - m->reach, AD_D(stage_take), &from_l);
    if (m->right >= 0) AD_D(visit_columns)(m, P, m->c_hi, AD_D(stage_take), &from_r);
    /* every record placed on the ghost of its id: the two sides' layers hold the same discs in the same order */
    int bad = from_l.fail || from_r.fail || from_l.next != from_l.end || from_r.next != from_r.end;
    ad_status mine = bad ? ad_fail(AD_ERR_BACKEND, "", "step %llu: rank %d's ghosts do not match its neighbours' "
                                   "layers for RK4's stages", (unsigned long long)w->stats.step, m->rank)
                         : ad_ok();
    return mpi_check(m, mine);
}

ad_status AD_D(mpi_migrate)(ad_world *w, mpi_world *m)
{
    const ad_params *P = &w->params;
    PLAIN *g = G(m);
    m->AD_D(out_l).n = m->AD_D(out_r).n = 0;
    ad_status st = ad_ok();
    size_t kept = 0;
    for (size_t s = 0; s < g->n; s++) {
        if (AD_D(ad_is_dead)(g->state[s])) continue;
        int c = mpi_column(P, g->state[s].x);
        MPI_DISC d;
        AD_D(mpi_disc_pack)(g, s, &d);
        if (c >= m->c_lo && c < m->c_hi) {
            g->state[kept] = d.state, g->id[kept] = d.id, g->touch[kept] = d.touch, g->acc[kept] = d.acc;
            g->pressure[kept] = d.pressure, g->virial[kept++] = d.virial;
            continue;
        }
        int to = m->col_rank[c];
        if (to == m->left && !st.code) st = AD_D(push)(&m->AD_D(out_l), &d);
        else if (to == m->right && !st.code) st = AD_D(push)(&m->AD_D(out_r), &d);
        else if (!st.code)
            st = ad_fail(AD_ERR_UNSTABLE, "dt",
                         "step %llu: " MPI_ONE " %u moved from rank %d's slab to column %d of rank %d, past a neighbour's slab, "
                         "in one step (the step is too large, or the slabs too narrow)",
                         (unsigned long long)w->stats.step, d.id, m->rank, c, to);
    }
    g->n = kept;
    AD_TRY(mpi_check(m, st));
    if (m->ranks > 1) AD_TRY(AD_D(swap_sides)(m));
    else m->AD_D(in).n = 0;
    return AD_D(take_in)(m, "migrants");
}

/* The rank-independent order of a read: by cell (the grid's order), then id; or by id. */

static int AD_D(by_cell_cmp)(const void *a, const void *b)
{
    const MPI_DISC *x = a, *y = b;
    uint32_t cx = AD_D(ad_bin_cell)(cmp_params, x->state), cy = AD_D(ad_bin_cell)(cmp_params, y->state);
    if (cx != cy) return cx < cy ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int AD_D(by_id_cmp)(const void *a, const void *b)
{
    const MPI_DISC *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

ad_status AD_D(mpi_gather_all)(const ad_world *w, const mpi_world *m, int by_id, MPI_DISCS *all)
{
    const PLAIN *g = G(m);
    int sz = (int)sizeof(MPI_DISC);
    MPI_DISCS mine = {0};
    size_t live = 0;
    for (size_t s = 0; s < g->n; s++) live += !AD_D(ad_is_dead)(g->state[s]);
    ad_status st = AD_D(mpi_discs_reserve)(&mine, live + 1);
    for (size_t s = 0; s < g->n && !st.code; s++)
        if (!AD_D(ad_is_dead)(g->state[s])) AD_D(mpi_disc_pack)(g, s, &mine.d[mine.n++]);
    int *counts = calloc((size_t)m->ranks, sizeof *counts), *displs = calloc((size_t)m->ranks, sizeof *displs);
    if (!st.code && (!counts || !displs)) st = ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory gathering the world");
    if (!st.code && (double)mine.n * sz > 2147483647.0)
        st = ad_fail(AD_ERR_CAPACITY, "capacity", "rank %d holds %zu " MPI_WHAT ": a read gathers at most 2 GB a rank", m->rank,
                     mine.n);
    st = mpi_check(m, st);
    long long total = 0;
    if (!st.code) {
        int bytes = (int)mine.n * sz;
        MPI_Allgather(&bytes, 1, MPI_INT, counts, 1, MPI_INT, m->comm);
        for (int r = 0; r < m->ranks; r++) displs[r] = (int)total, total += counts[r];
        if (total > 2147483647LL)
            st = ad_fail(AD_ERR_CAPACITY, "capacity", "a read of %lld bytes gathers at most 2 GB", total);
    }
    if (!st.code) st = AD_D(mpi_discs_reserve)(all, (size_t)total / (size_t)sz + 1);
    st = mpi_check(m, st);
    if (!st.code) {
        MPI_Allgatherv(mine.d, counts[m->rank], MPI_BYTE, all->d, counts, displs, MPI_BYTE, m->comm);
        all->n = (size_t)total / (size_t)sz;
        cmp_params = &w->params;
        qsort(all->d, all->n, sizeof *all->d, by_id ? AD_D(by_id_cmp) : AD_D(by_cell_cmp));
    }
    free(counts);
    free(displs);
    AD_D(mpi_discs_free)(&mine);
    return st;
}

/* Every cell's slots by id (an insertion sort: a cell holds a few discs), state, id, contact state,
 * acceleration, pressure and virial together. */
static void AD_D(cells_by_id)(PLAIN *g)
{
    for (size_t c = 0; c + 1 < g->ncell; c++) {
        uint32_t a = g->start[c], e = g->start[c + 1];
        for (uint32_t i = a + 1; i < e; i++) {
            MPI_DISC d;
            AD_D(mpi_disc_pack)(g, i, &d);
            uint32_t j = i;
            while (j > a && g->id[j - 1] > d.id) {
                g->state[j] = g->state[j - 1], g->id[j] = g->id[j - 1], g->touch[j] = g->touch[j - 1];
                g->acc[j] = g->acc[j - 1], g->pressure[j] = g->pressure[j - 1], g->virial[j] = g->virial[j - 1];
                j--;
            }
            g->state[j] = d.state, g->id[j] = d.id, g->touch[j] = d.touch, g->acc[j] = d.acc;
            g->pressure[j] = d.pressure, g->virial[j] = d.virial;
        }
    }
}

void AD_D(mpi_sort)(ad_world *w, mpi_world *m)
{
    PLAIN *g = G(m);
    const ad_params *P = &w->params;
    double t0 = ad_plain_now();
    for (size_t i = 0; i < g->n; i++) g->cell_of[i] = AD_D(ad_bin_cell)(P, g->state[i]);
    double t1 = ad_plain_now();
    ad_plain_scan(w, g->cell_of, g->n, g->count, g->start, g->ncell);
    double t2 = ad_plain_now();
    /* the plain scatter, pressure and virial moved too (a field sample reads them after a sort) */
    for (size_t i = 0; i < g->n; i++) {
        uint32_t k = g->count[g->cell_of[i]]++;
        g->spare[k] = g->state[i];
        g->id_spare[k] = g->id[i];
        g->acc_spare[k] = g->acc[i];
        g->touch_spare[k] = g->touch[i];
        m->p_spare[k] = g->pressure[i];
        m->v_spare[k] = g->virial[i];
    }
#define SWAP(a, b)                                                                                                     \
    do {                                                                                                               \
        void *t_ = (void *)g->a;                                                                                       \
        g->a = g->b;                                                                                                   \
        g->b = t_;                                                                                                     \
    } while (0)
    SWAP(state, spare);
    SWAP(id, id_spare);
    SWAP(acc, acc_spare);
    SWAP(touch, touch_spare);
#undef SWAP
    float *t = g->pressure;
    g->pressure = m->p_spare, m->p_spare = t;
    t = g->virial;
    g->virial = m->v_spare, m->v_spare = t;
    g->n = g->start[g->ncell - 1]; /* the removed discs (the dead cell, last) drop off */
    AD_D(cells_by_id)(g);
    w->stats.phase_seconds[AD_PHASE_BIN] += t1 - t0;
    w->stats.phase_seconds[AD_PHASE_SCAN] += t2 - t1;
    w->stats.phase_seconds[AD_PHASE_SCATTER] += ad_plain_now() - t2;
}

#undef MPI_DISC
#undef MPI_DISCS
#undef PLAIN
#undef G
#undef MPI_WHAT
#undef MPI_ONE
#include "../physics/dim_end.h"
