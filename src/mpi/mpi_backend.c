/* backend = mpi (mpi_world.h says how the domain is cut and what one step does): the backend table,
 * the slabs, adding discs, the step, the read-back and the checkpoints' snapshots. */
#include <stdlib.h>
#include <string.h>

#include "mpi_world.h"

/* ------------------------------------------------------------- the world -- */

static size_t mpi_cells(const ad_params *p) { return (size_t)p->nx * (size_t)p->ny + 1; }

static size_t mpi_bytes_needed(const ad_world_def *d, const ad_params *p)
{
    return ad_plain_bytes(d->capacity, mpi_cells(p), d->integrator) + 2 * d->capacity * sizeof(float) +
           sizeof(mpi_world);
}

static void mpi_destroy(ad_world *w)
{
    mpi_world *m = w->impl;
    if (!m) return;
    ad_plain_free(&m->g);
    ad_plain_spots_free(&m->sp);
    ad_open_state_free(&m->open);
    mpi_discs_free(&m->out_l);
    mpi_discs_free(&m->out_r);
    mpi_discs_free(&m->in);
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
    if (d->dimensions == 3) return *why = "3D worlds (spheres) are not decomposed yet", "dimensions";
    if (d->broad_phase == AD_BROAD_PHASE_BVH) return *why = "the BVH broad phase is not decomposed: use grid", "broad_phase";
    return NULL;
}

/* The column groups (as many as the grid has columns, at most MPI_GROUPS_MAX, of near-equal width) and
 * each rank's run of them: groups split as evenly as they go. */
static ad_status cut_slabs(ad_world *w, mpi_world *m)
{
    const ad_params *P = &w->params;
    int nx = P->nx;
    m->ngroups = nx < MPI_GROUPS_MAX ? nx : MPI_GROUPS_MAX;
    for (int k = 0; k <= m->ngroups; k++) m->group_col[k] = (int)((long long)k * nx / m->ngroups);
    m->reach = P->reach_x;
    /* two ranks on a periodic ring are each other's left and right neighbour: a slab narrower than both
     * ghost layers would send a disc twice to the same rank */
    m->least_cols = m->ranks == 2 && P->periodic_x ? 2 * m->reach : m->reach;
    int least = (m->least_cols + (nx / m->ngroups) - 1) / (nx / m->ngroups > 0 ? nx / m->ngroups : 1);
    if (least < 1) least = 1;
    if ((long long)m->ranks * least > m->ngroups)
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
    m->g.threads = w->stats.threads;
    ad_status st = cut_slabs(w, m);
    if (!st.code) {
        int ok = ad_plain_alloc(&m->g, d->capacity, mpi_cells(&w->params), d->integrator);
        ok = ad_plain_spots_alloc(&m->sp, w->params.res_boxes) && ok;
        m->p_spare = malloc((d->capacity + 1) * sizeof(float));
        m->v_spare = malloc((d->capacity + 1) * sizeof(float));
        st = !ok || !m->p_spare || !m->v_spare
                 ? ad_fail(AD_ERR_NO_MEMORY, "capacity", "capacity: allocating the world's %zu discs failed", d->capacity)
                 : ad_open_state_alloc(&m->open, (uint32_t)w->params.res_boxes, 2);
    }
    st = mpi_check(m, st);
    if (st.code) mpi_destroy(w);
    return st;
}

static int own(const mpi_world *m, const ad_params *P, ad_state q)
{
    int c = mpi_column(P, q.x);
    return c >= m->c_lo && c < m->c_hi;
}

/* The fastest disc of every rank: the next step's size. */
static void refresh_dt(ad_world *w, mpi_world *m)
{
    float v2 = ad_plain_vmax_sq(&m->g);
    MPI_Allreduce(MPI_IN_PLACE, &v2, 1, MPI_FLOAT, MPI_MAX, m->comm);
    w->stats.dt = ad_dt_next(&w->dt_rule, sqrt((double)v2));
    m->g.dt_stale = 0;
}

/* Every rank is given the same discs: each keeps those of its columns; ids count for all. */
static ad_status mpi_add_particles(ad_world *w, const ad_particle *p, size_t n)
{
    mpi_world *m = w->impl;
    size_t mine = 0;
    for (size_t i = 0; i < n; i++) mine += own(m, &w->params, ad_wrap_state(&w->params, (ad_state){p[i].x, p[i].y, 0, 0}));
    ad_status st = m->g.n + mine > m->g.cap ? ad_fail(AD_ERR_CAPACITY, "capacity",
                                                      "capacity: adding %zu discs to rank %d's %zu exceeds %zu", mine,
                                                      m->rank, m->g.n, m->g.cap)
                                            : ad_ok();
    AD_TRY(mpi_check(m, st));
    for (size_t i = 0; i < n; i++) {
        ad_state q = ad_wrap_state(&w->params, (ad_state){p[i].x, p[i].y, p[i].vx, p[i].vy});
        uint32_t id = m->open.next_id++;
        if (!own(m, &w->params, q)) continue;
        mpi_disc d = {q, id, 0, {0.0f, 0.0f}, 0.0f, 0.0f};
        mpi_disc_append(&m->g, &d);
    }
    refresh_dt(w, m);
    return ad_ok();
}

static ad_status mpi_set_segments(ad_world *w)
{
    (void)w;
    return ad_ok();
}

/* ---------------------------------------------------------------- the step -- */

/* Step 4 over group k: its rows' own slots in cell order, the plain pipeline's pass for each (stage < 0:
 * one force evaluation, ad_plain_pass_slot; 0-3: that RK4 stage, ad_plain_rk4_slot); the group's sums
 * cleared by its first evaluation, its motion folded by its last; its time counted for the slabs' edges. */
#define ONE_EVALUATION (-1)
static void pass_group(ad_world *w, mpi_world *m, int k, float dt, int stage)
{
    double t0 = ad_plain_now();
    const ad_params *P = &w->params;
    ad_plain *r = &m->g;
    ad_step_sums *sums = &m->sums[k];
    if (stage <= 0) memset(sums, 0, sizeof *sums);
    ad_motion8 m8;
    memset(&m8, 0, sizeof m8);
    unsigned lane = 0;
    for (int cy = 0; cy < P->ny; cy++) {
        uint32_t row = (uint32_t)cy * (uint32_t)P->nx;
        uint32_t a = r->start[row + (uint32_t)m->group_col[k]], e = r->start[row + (uint32_t)m->group_col[k + 1]];
        for (uint32_t s = a; s < e; s++, lane++) {
            if (stage == ONE_EVALUATION) ad_plain_pass_slot(w, r, s, lane, dt, sums, &m8, NULL);
            else ad_plain_rk4_slot(w, r, s, lane, dt, stage, sums, &m8, NULL);
        }
    }
    if (stage == ONE_EVALUATION || stage == 3) ad_motion8_fold(&m8, sums);
    m->group_busy[k] += ad_plain_now() - t0;
}

/* RK4's four stages over the rank's groups, on the grid of the step's start; after each of the first three,
 * the ghosts' stage states come from their owners (the next stage's gathers read them). */
static ad_status rk4_stages(ad_world *w, mpi_world *m, float dt, double *waited)
{
    ad_plain *r = &m->g;
    for (int stage = 0; stage < 4; stage++) {
#pragma omp parallel for num_threads(r->threads) schedule(dynamic, 1)
        for (int k = m->g_lo; k < m->g_hi; k++) pass_group(w, m, k, dt, stage);
        if (stage == 3) break;
        double t0 = ad_plain_now();
        AD_TRY(mpi_ghost_states(w, m, r->rk_out));
        *waited += ad_plain_now() - t0;
        ad_state *t = r->rk_in; /* the stage just written is the next one's input */
        r->rk_in = r->rk_out, r->rk_out = t;
    }
    return ad_ok();
}

/* Step 4 over the rank's groups (one force evaluation, or RK4's four); the ghosts' slots become removed
 * discs. *waited: the seconds spent in RK4's exchanges (not the rank's own work). */
static ad_status pass(ad_world *w, mpi_world *m, float dt, double *waited)
{
    const ad_params *P = &w->params;
    ad_plain *r = &m->g;
    if (w->def.integrator == AD_INTEGRATOR_RK4) AD_TRY(rk4_stages(w, m, dt, waited));
    else {
#pragma omp parallel for num_threads(r->threads) schedule(dynamic, 1)
        for (int k = m->g_lo; k < m->g_hi; k++) pass_group(w, m, k, dt, ONE_EVALUATION);
    }
    for (size_t s = 0; s < r->n; s++)
        if (!own(m, P, r->state[s])) r->spare[s] = ad_dead_state();
    ad_state *t = r->state;
    r->state = r->spare, r->spare = t;
    return ad_ok();
}

/* Velocity Verlet before the step's forces (the plain pipeline's ad_plain_before_pass, over the ranks):
 * once, its prime (the forces of the current state, the ghosts' included), then its drift with the last
 * acceleration; a disc the drift took into a neighbour's column goes there before the ghosts are sent. */
static ad_status verlet_start(ad_world *w, mpi_world *m, float dt)
{
    ad_plain *g = &m->g;
    const ad_params *P = &w->params;
    if (!g->primed) {
        AD_TRY(mpi_ghosts(w, m));
        mpi_sort(w, m);
        ad_plain_verlet_prime(w, g); /* the plain prime over own discs and ghosts; the ghosts' then dropped */
        for (size_t s = 0; s < g->n; s++)
            if (!own(m, P, g->state[s])) g->state[s] = ad_dead_state();
    }
    ad_plain_verlet_drift(w, g, dt);
    return mpi_migrate(w, m);
}

/* What each rank adds to the step's record besides its groups' sums. */
typedef struct rank_note {
    double busy;          /* seconds of the step's own work */
    unsigned long long n; /* discs held after the step */
    unsigned long long outside, overflow;
    unsigned int occupancy, stop;
} rank_note;

/* The rank's discs outside the domain, and its own cells' occupancy past the capacity. */
static void own_diagnostics(const ad_world *w, const mpi_world *m, rank_note *note)
{
    const ad_params *P = &w->params;
    const ad_plain *g = &m->g;
    for (size_t s = 0; s < g->n; s++) note->outside += ad_outside_domain(P, g->state[s].x, g->state[s].y);
    uint32_t cap = w->stats.cell_capacity;
    for (int cy = 0; cy < P->ny; cy++)
        for (int cx = m->c_lo; cx < m->c_hi; cx++) {
            size_t c = (size_t)cy * (size_t)P->nx + (size_t)cx;
            uint32_t v = g->start[c + 1] - g->start[c];
            note->occupancy = v > note->occupancy ? v : note->occupancy;
            note->overflow += v > cap ? v - cap : 0;
        }
}

static ad_status one_step(ad_world *w, mpi_world *m, float dt, int *stop)
{
    rank_note note;
    memset(&note, 0, sizeof note);
    note.stop = w->interrupt && *w->interrupt;
    /* a rank's busy time: its sort and its pass, the work that its discs set (the exchanges and the
     * collectives of the plan, the entries and the sums wait for the slowest rank: they are left out) */
    if (w->def.integrator == AD_INTEGRATOR_VERLET) AD_TRY(verlet_start(w, m, dt));
    AD_TRY(mpi_ghosts(w, m));
    double c0 = ad_plain_now();
    mpi_sort(w, m);
    double busy = ad_plain_now() - c0;
    m->n_grid = m->g.n;
    if (w->params.res_boxes) AD_TRY(mpi_reservoir_plan(w, m, dt));
    double t1 = ad_plain_now();
    double waited = 0.0;
    AD_TRY(pass(w, m, dt, &waited));
    busy += ad_plain_now() - t1 - waited;
    memset(m->g.doomed, 0, m->g.n);
    float v2_new = 0.0f;
    AD_TRY(ad_world_open(w) ? mpi_enter(w, m, dt, &v2_new) : ad_ok());
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
    if (bad)
        return ad_fail(AD_ERR_UNSTABLE, "dt", "step %llu: %llu discs reached a non-finite position or velocity (the step "
                       "of %g s is too large for the stiffness, or discs were placed overlapping)",
                       (unsigned long long)w->stats.step, (unsigned long long)bad, (double)dt);
    AD_TRY(mpi_migrate(w, m));
    if (w->fields.enabled && w->stats.step % w->fields.def.interval == 0) AD_TRY(mpi_fields_sample(w, m));
    own_diagnostics(w, m, &note); /* outside, occupancy and overflow of the rank's discs after the step */
    note.n = m->g.n;
    note.busy = busy;
    rank_note *all = malloc((size_t)m->ranks * sizeof *all);
    ad_status st = all ? ad_ok() : ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory");
    AD_TRY(mpi_check(m, st));
    MPI_Allgather(&note, (int)sizeof note, MPI_BYTE, all, (int)sizeof note, MPI_BYTE, m->comm);
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

static ad_status mpi_step(ad_world *w, uint64_t nsteps)
{
    mpi_world *m = w->impl;
    if (m->g.dt_stale) refresh_dt(w, m);
    for (uint64_t k = 0; k < nsteps; k++) {
        int stop = 0;
        AD_TRY(one_step(w, m, (float)w->stats.dt, &stop));
        if (stop) break;
    }
    return ad_ok();
}

/* ------------------------------------------------- read-back and checkpoints -- */

static ad_status mpi_read(const ad_world *w, int flags, size_t max, const ad_particle_out *out, size_t *count)
{
    const mpi_world *m = w->impl;
    mpi_discs all = {0};
    AD_TRY(mpi_gather_all(w, m, (flags & AD_READ_BY_ID) != 0, &all));
    size_t n = all.n < max ? all.n : max;
    for (size_t o = 0; o < n; o++) {
        const mpi_disc *d = &all.d[o];
        ad_particle_out_put(out, o, 2, (const float[2]){d->state.x, d->state.y},
                            (const float[2]){d->state.vx, d->state.vy}, d->id, d->pressure, d->virial,
                            (const float[2]){d->acc.ax, d->acc.ay});
    }
    mpi_discs_free(&all);
    if (count) *count = n;
    return ad_ok();
}

/* The whole world in cell order (then id) on every rank; the open sides' state is the rank's copy. */
static ad_status mpi_export(const ad_world *w, ad_snapshot *s)
{
    const mpi_world *m = w->impl;
    mpi_discs all = {0};
    memset(s, 0, sizeof *s);
    AD_TRY(mpi_gather_all(w, m, 0, &all));
    size_t n = all.n;
    s->owned = 1;
    s->state = malloc(n * sizeof *s->state + 1);
    s->id = malloc(n * sizeof *s->id + 1);
    s->touch = malloc(n * sizeof *s->touch + 1);
    s->pressure = malloc(n * sizeof *s->pressure + 1);
    s->virial = malloc(n * sizeof *s->virial + 1);
    s->accel = malloc(n * sizeof *s->accel + 1);
    ad_status st = s->state && s->id && s->touch && s->pressure && s->virial && s->accel
                       ? ad_ok()
                       : ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory for a snapshot of %zu discs", n);
    for (size_t k = 0; k < n && !st.code; k++) {
        s->state[k] = all.d[k].state;
        s->id[k] = all.d[k].id;
        s->touch[k] = all.d[k].touch;
        s->pressure[k] = all.d[k].pressure;
        s->virial[k] = all.d[k].virial;
        s->accel[k] = all.d[k].acc;
    }
    s->n = n;
    mpi_discs_free(&all);
    st = mpi_check(m, st);
    if (st.code) ad_snapshot_free(s);
    else s->open = m->open;
    return st;
}

/* A snapshot of the whole world (every rank loads the same file): each rank keeps its columns' discs. */
static ad_status mpi_import(ad_world *w, const ad_snapshot *s)
{
    mpi_world *m = w->impl;
    size_t mine = 0;
    for (size_t k = 0; k < s->n; k++) mine += own(m, &w->params, s->state[k]);
    ad_status st = mine > m->g.cap ? ad_fail(AD_ERR_CAPACITY, "capacity", "capacity: the snapshot gives rank %d %zu "
                                             "discs, past its capacity of %zu", m->rank, mine, m->g.cap)
                                   : ad_plain_import_open(&m->open, s);
    AD_TRY(mpi_check(m, st));
    m->g.n = 0;
    for (size_t k = 0; k < s->n; k++) {
        if (!own(m, &w->params, s->state[k])) continue;
        mpi_disc d = {s->state[k], s->id[k], s->touch ? s->touch[k] : 0u, s->accel[k], s->pressure[k], s->virial[k]};
        mpi_disc_append(&m->g, &d);
    }
    m->g.primed = s->primed;
    m->g.dt_stale = 0;
    return ad_ok();
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
    .set_segments = mpi_set_segments,
    .step = mpi_step,
    .read = mpi_read,
    .export_state = mpi_export,
    .import_state = mpi_import,
    .fields_to_host = mpi_fields_to_host,
    .fields_to_device = mpi_fields_to_device,
    .pull_stats = NULL,
    .bytes_needed = mpi_bytes_needed,
    .writer = mpi_writer,
    .agree = mpi_agree,
};
