/* backend = mpi in one dimension (included by mpi_backend.c with AD_DIM 2, then 3; see physics/dim.h):
 * adding particles, the step (mpi_world.h says what it does), the read-back and the checkpoints'
 * snapshots, written once for discs and spheres. No include guard: it is meant to be included once a
 * dimension. */
#include "../physics/dim.h"

#define PLAIN AD_D(ad_plain)
#define MPI_DISC AD_D(mpi_disc)
#if AD_DIM == 2
#define MPI_PARTICLE ad_particle
#define MPI_SNAP_STATE state
#define MPI_SNAP_ACCEL accel
#define MPI_WHAT "discs"
#else
#define MPI_PARTICLE ad_particle3
#define MPI_SNAP_STATE state3
#define MPI_SNAP_ACCEL accel3
#define MPI_WHAT "spheres"
#endif

static int AD_D(own)(const mpi_world *m, const ad_params *P, AD_STATE q)
{
    int c = mpi_column(P, q.x);
    return c >= m->c_lo && c < m->c_hi;
}

/* The fastest particle of every rank: the next step's size. */
static void AD_D(refresh_dt)(ad_world *w, mpi_world *m)
{
    float v2 = AD_D(ad_plain_vmax_sq)(&m->AD_D(g));
    MPI_Allreduce(MPI_IN_PLACE, &v2, 1, MPI_FLOAT, MPI_MAX, m->comm);
    w->stats.dt = ad_dt_next(&w->dt_rule, sqrt((double)v2));
    m->AD_D(g).dt_stale = 0;
}

/* A particle as the user gives it, wrapped on the periodic axes. */
static AD_STATE AD_D(given_state)(const ad_params *P, const MPI_PARTICLE *p)
{
#if AD_DIM == 2
    return ad_wrap_state(P, (ad_state){p->x, p->y, p->vx, p->vy});
#else
    return ad_wrap_state3(P, (ad_state3){p->x, p->y, p->z, 0.0f, p->vx, p->vy, p->vz, 0.0f});
#endif
}

/* Every rank is given the same particles: each keeps those of its columns; ids count for all. */
static ad_status AD_D(mpi_add_particles)(ad_world *w, const MPI_PARTICLE *p, size_t n)
{
    mpi_world *m = w->impl;
    PLAIN *g = &m->AD_D(g);
    size_t mine = 0;
    for (size_t i = 0; i < n; i++) mine += AD_D(own)(m, &w->params, AD_D(given_state)(&w->params, &p[i]));
    ad_status st = g->n + mine > g->cap ? ad_fail(AD_ERR_CAPACITY, "capacity",
                                                  "capacity: adding %zu " MPI_WHAT " to rank %d's %zu exceeds %zu",
                                                  mine, m->rank, g->n, g->cap)
                                        : ad_ok();
    AD_TRY(mpi_check(m, st));
    for (size_t i = 0; i < n; i++) {
        MPI_DISC d;
        memset(&d, 0, sizeof d);
        d.state = AD_D(given_state)(&w->params, &p[i]);
        d.id = m->open.next_id++;
        if (AD_D(own)(m, &w->params, d.state)) AD_D(mpi_disc_append)(g, &d);
    }
    AD_D(refresh_dt)(w, m);
    return ad_ok();
}

/* ---------------------------------------------------------------- the step -- */

/* Step 4 over group k: its rows' own slots in cell order, the plain pipeline's pass for each (stage < 0:
 * one force evaluation, ad_plain_pass_slot; 0-3: that RK4 stage, ad_plain_rk4_slot); the group's sums
 * cleared by its first evaluation, its motion folded by its last; its time counted for the slabs' edges. */
static void AD_D(pass_group)(ad_world *w, mpi_world *m, int k, float dt, int stage)
{
    double t0 = ad_plain_now();
    const ad_params *P = &w->params;
    PLAIN *r = &m->AD_D(g);
    ad_step_sums *sums = &m->sums[k];
    if (stage <= 0) memset(sums, 0, sizeof *sums);
    ad_motion8 m8;
    memset(&m8, 0, sizeof m8);
    unsigned lane = 0;
    for (int cy = 0; cy < mpi_rows(P); cy++) {
        uint32_t row = (uint32_t)cy * (uint32_t)P->nx;
        uint32_t a = r->start[row + (uint32_t)m->group_col[k]], e = r->start[row + (uint32_t)m->group_col[k + 1]];
        for (uint32_t s = a; s < e; s++, lane++) {
            if (stage == ONE_EVALUATION) AD_D(ad_plain_pass_slot)(w, r, s, lane, dt, sums, &m8, NULL);
            else AD_D(ad_plain_rk4_slot)(w, r, s, lane, dt, stage, sums, &m8, NULL);
        }
    }
    if (stage == ONE_EVALUATION || stage == 3) AD_D(ad_motion8_fold)(&m8, sums);
    m->group_busy[k] += ad_plain_now() - t0;
}

/* RK4's four stages over the rank's groups, on the grid of the step's start; after each of the first three,
 * the ghosts' stage states come from their owners (the next stage's gathers read them). */
static ad_status AD_D(rk4_stages)(ad_world *w, mpi_world *m, float dt, double *waited)
{
    PLAIN *r = &m->AD_D(g);
    for (int stage = 0; stage < 4; stage++) {
#pragma omp parallel for num_threads(r->threads) schedule(dynamic, 1)
        for (int k = m->g_lo; k < m->g_hi; k++) AD_D(pass_group)(w, m, k, dt, stage);
        if (stage == 3) break;
        double t0 = ad_plain_now();
        AD_TRY(AD_D(mpi_ghost_states)(w, m, r->rk_out));
        *waited += ad_plain_now() - t0;
        AD_STATE *t = r->rk_in; /* the stage just written is the next one's input */
        r->rk_in = r->rk_out, r->rk_out = t;
    }
    return ad_ok();
}

/* Step 4 over the rank's groups (one force evaluation, or RK4's four); the ghosts' slots become removed
 * particles. *waited: the seconds spent in RK4's exchanges (not the rank's own work). */
static ad_status AD_D(pass)(ad_world *w, mpi_world *m, float dt, double *waited)
{
    const ad_params *P = &w->params;
    PLAIN *r = &m->AD_D(g);
    if (w->def.integrator == AD_INTEGRATOR_RK4) AD_TRY(AD_D(rk4_stages)(w, m, dt, waited));
    else {
#pragma omp parallel for num_threads(r->threads) schedule(dynamic, 1)
        for (int k = m->g_lo; k < m->g_hi; k++) AD_D(pass_group)(w, m, k, dt, ONE_EVALUATION);
    }
    for (size_t s = 0; s < r->n; s++)
        if (!AD_D(own)(m, P, r->state[s])) r->spare[s] = AD_D(ad_dead_state)();
    AD_STATE *t = r->state;
    r->state = r->spare, r->spare = t;
    return ad_ok();
}

/* Velocity Verlet before the step's forces (the plain pipeline's ad_plain_before_pass, over the ranks):
 * once, its prime (the forces of the current state, the ghosts' included), then its drift with the last
 * acceleration; a particle the drift took into a neighbour's column goes there before the ghosts are sent. */
static ad_status AD_D(verlet_start)(ad_world *w, mpi_world *m, float dt)
{
    PLAIN *g = &m->AD_D(g);
    const ad_params *P = &w->params;
    if (!g->primed) {
        AD_TRY(AD_D(mpi_ghosts)(w, m));
        AD_D(mpi_sort)(w, m);
        AD_D(ad_plain_verlet_prime)(w, g); /* the plain prime over own particles and ghosts; the ghosts' then dropped */
        for (size_t s = 0; s < g->n; s++)
            if (!AD_D(own)(m, P, g->state[s])) g->state[s] = AD_D(ad_dead_state)();
    }
    AD_D(ad_plain_verlet_drift)(w, g, dt);
    return AD_D(mpi_migrate)(w, m);
}

/* The rank's particles outside the domain, and its own cells' occupancy past the capacity. */
static void AD_D(own_diagnostics)(const ad_world *w, const mpi_world *m, rank_note *note)
{
    const ad_params *P = &w->params;
    const PLAIN *g = &m->AD_D(g);
    for (size_t s = 0; s < g->n; s++) {
        AD_STATE q = g->state[s];
#define AD_M(c) q.c
        note->outside += AD_D(ad_outside_domain)(P, AD_LIST(AD_M));
#undef AD_M
    }
    uint32_t cap = w->stats.cell_capacity;
    for (int cy = 0; cy < mpi_rows(P); cy++)
        for (int cx = m->c_lo; cx < m->c_hi; cx++) {
            size_t c = (size_t)cy * (size_t)P->nx + (size_t)cx;
            uint32_t v = g->start[c + 1] - g->start[c];
            note->occupancy = v > note->occupancy ? v : note->occupancy;
            note->overflow += v > cap ? v - cap : 0;
        }
}

static ad_status AD_D(one_step)(ad_world *w, mpi_world *m, float dt, int *stop)
{
    PLAIN *g = &m->AD_D(g);
    rank_note note;
    memset(&note, 0, sizeof note);
    note.stop = w->interrupt && *w->interrupt;
    /* a rank's busy time: its sort and its pass, the work that its particles set (the exchanges and the
     * collectives of the plan, the entries and the sums wait for the slowest rank: they are left out) */
    if (w->def.integrator == AD_INTEGRATOR_VERLET) AD_TRY(AD_D(verlet_start)(w, m, dt));
    AD_TRY(AD_D(mpi_ghosts)(w, m));
    double c0 = ad_plain_now();
    AD_D(mpi_sort)(w, m);
    double busy = ad_plain_now() - c0;
    m->n_grid = g->n;
    if (w->params.res_boxes) AD_TRY(mpi_reservoir_plan(w, m, g->start, g->id, g->doomed, m->AD_D(sp).res_add, dt));
    double t1 = ad_plain_now();
    double waited = 0.0;
    AD_TRY(AD_D(pass)(w, m, dt, &waited));
    busy += ad_plain_now() - t1 - waited;
    memset(g->doomed, 0, g->n);
    float v2_new = 0.0f;
    AD_TRY(ad_world_open(w) ? AD_D(mpi_enter)(w, m, dt, &v2_new) : ad_ok());
    AD_TRY(fold_sums(w, m, dt, v2_new, t1));
    AD_TRY(AD_D(mpi_migrate)(w, m));
    if (w->fields.enabled && w->stats.step % w->fields.def.interval == 0) AD_TRY(AD_D(mpi_fields_sample)(w, m));
    AD_D(own_diagnostics)(w, m, &note); /* outside, occupancy and overflow of the rank's particles after the step */
    note.n = g->n;
    note.busy = busy;
    return fold_notes(w, m, &note, stop);
}

static ad_status AD_D(mpi_step)(ad_world *w, uint64_t nsteps)
{
    mpi_world *m = w->impl;
    if (m->AD_D(g).dt_stale) AD_D(refresh_dt)(w, m);
    for (uint64_t k = 0; k < nsteps; k++) {
        int stop = 0;
        AD_TRY(AD_D(one_step)(w, m, (float)w->stats.dt, &stop));
        if (stop) break;
    }
    return ad_ok();
}

/* ------------------------------------------------- read-back and checkpoints -- */

/* n gathered particles written into out's arrays (reads on the CPU ranks and the GPU ranks). */
void AD_D(mpi_put_out)(const MPI_DISC *d, size_t n, const ad_particle_out *out)
{
    for (size_t o = 0; o < n; o++, d++) {
#define AD_M(c) d->state.c
        const float x[AD_DIM] = {AD_LIST(AD_M)};
#undef AD_M
#define AD_M(c) d->state.v##c
        const float v[AD_DIM] = {AD_LIST(AD_M)};
#undef AD_M
#define AD_M(c) d->acc.a##c
        const float a[AD_DIM] = {AD_LIST(AD_M)};
#undef AD_M
        ad_particle_out_put(out, o, AD_DIM, x, v, d->id, d->pressure, d->virial, a);
    }
}

/* A snapshot of n gathered particles: its arrays allocated (owned) and filled, the open sides' state left
 * to the caller; on failure the snapshot is freed (checkpoints of the CPU ranks and the GPU ranks). */
ad_status AD_D(mpi_snapshot_of)(const MPI_DISC *d, size_t n, ad_snapshot *s)
{
    memset(s, 0, sizeof *s);
    s->owned = 1;
    s->MPI_SNAP_STATE = malloc(n * sizeof *s->MPI_SNAP_STATE + 1);
    s->id = malloc(n * sizeof *s->id + 1);
    s->touch = malloc(n * sizeof *s->touch + 1);
    s->pressure = malloc(n * sizeof *s->pressure + 1);
    s->virial = malloc(n * sizeof *s->virial + 1);
    s->MPI_SNAP_ACCEL = malloc(n * sizeof *s->MPI_SNAP_ACCEL + 1);
    if (!s->MPI_SNAP_STATE || !s->id || !s->touch || !s->pressure || !s->virial || !s->MPI_SNAP_ACCEL) {
        ad_snapshot_free(s);
        return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory for a snapshot of %zu " MPI_WHAT, n);
    }
    for (size_t k = 0; k < n; k++) {
        s->MPI_SNAP_STATE[k] = d[k].state;
        s->id[k] = d[k].id;
        s->touch[k] = d[k].touch;
        s->pressure[k] = d[k].pressure;
        s->virial[k] = d[k].virial;
        s->MPI_SNAP_ACCEL[k] = d[k].acc;
    }
    s->n = n;
    return ad_ok();
}

static ad_status AD_D(mpi_read)(const ad_world *w, int flags, size_t max, const ad_particle_out *out, size_t *count)
{
    const mpi_world *m = w->impl;
    AD_D(mpi_discs) all = {0};
    AD_TRY(AD_D(mpi_gather_all)(w, m, (flags & AD_READ_BY_ID) != 0, &all));
    size_t n = all.n < max ? all.n : max;
    AD_D(mpi_put_out)(all.d, n, out);
    AD_D(mpi_discs_free)(&all);
    if (count) *count = n;
    return ad_ok();
}

/* The whole world in cell order (then id) on every rank; the open sides' state is the rank's copy. */
static ad_status AD_D(mpi_export)(const ad_world *w, ad_snapshot *s)
{
    const mpi_world *m = w->impl;
    AD_D(mpi_discs) all = {0};
    memset(s, 0, sizeof *s);
    AD_TRY(AD_D(mpi_gather_all)(w, m, 0, &all));
    ad_status st = mpi_check(m, AD_D(mpi_snapshot_of)(all.d, all.n, s));
    AD_D(mpi_discs_free)(&all);
    if (st.code) ad_snapshot_free(s);
    else s->open = m->open;
    return st;
}

/* A snapshot of the whole world (every rank loads the same file): each rank keeps its columns' particles. */
static ad_status AD_D(mpi_import)(ad_world *w, const ad_snapshot *s)
{
    mpi_world *m = w->impl;
    PLAIN *g = &m->AD_D(g);
    size_t mine = 0;
    for (size_t k = 0; k < s->n; k++) mine += AD_D(own)(m, &w->params, s->MPI_SNAP_STATE[k]);
    ad_status st = mine > g->cap ? ad_fail(AD_ERR_CAPACITY, "capacity", "capacity: the snapshot gives rank %d %zu "
                                           MPI_WHAT ", past its capacity of %zu", m->rank, mine, g->cap)
                                 : AD_D(ad_plain_import_open)(&m->open, s);
    AD_TRY(mpi_check(m, st));
    g->n = 0;
    for (size_t k = 0; k < s->n; k++) {
        if (!AD_D(own)(m, &w->params, s->MPI_SNAP_STATE[k])) continue;
        MPI_DISC d = {s->MPI_SNAP_STATE[k], s->id[k], s->touch ? s->touch[k] : 0u, s->MPI_SNAP_ACCEL[k], s->pressure[k],
                      s->virial[k]};
        AD_D(mpi_disc_append)(g, &d);
    }
    g->primed = s->primed;
    g->dt_stale = 0;
    return ad_ok();
}

#undef PLAIN
#undef MPI_DISC
#undef MPI_PARTICLE
#undef MPI_SNAP_STATE
#undef MPI_SNAP_ACCEL
#undef MPI_WHAT
#include "../physics/dim_end.h"
