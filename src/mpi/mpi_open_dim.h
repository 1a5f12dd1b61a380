/* backend = mpi in one dimension (included by mpi_open.c with AD_DIM 2, then 3; see physics/dim.h): step
 * 5's entries and the reservoir's additions over the ranks (mpi_open.c says how), written once for discs
 * and spheres. No include guard: it is meant to be included once a dimension. */
#include "../physics/dim.h"

#define PLAIN AD_D(ad_plain)
#if AD_DIM == 2
#define MPI_WHAT "discs"
#else
#define MPI_WHAT "spheres"
#endif

#if AD_DIM == 2
/* Room for the step's ns spots: in the gas where no rank's own discs lie within a diameter (each rank's
 * answers, combined by a minimum), then among the earlier spots, alike on every rank (room.h's buckets). */
static ad_status AD_D(room)(ad_world *w, mpi_world *m, const PLAIN *g, AD_D(ad_plain_spots) *sp, size_t ns)
{
    const ad_params *P = &w->params;
    uint32_t *head = malloc(AD_SPOT_BUCKETS * sizeof *head), *next = malloc(ns * sizeof *next);
    ad_status st = head && next ? ad_ok() : ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory for %zu spots", ns);
    st = mpi_check(m, st);
    if (st.code) {
        free(head);
        free(next);
        return st;
    }
    if (P->disc_contacts) {
        for (size_t i = 0; i < ns; i++)
            sp->room[i] = i < AD_ROOM_MAX && ad_room_in_grid(P, g->start, g->state, sp->spots[i].x, sp->spots[i].y);
        MPI_Allreduce(MPI_IN_PLACE, sp->room, (int)ns, MPI_UNSIGNED_CHAR, MPI_MIN, m->comm);
        for (uint32_t b = 0; b < AD_SPOT_BUCKETS; b++) head[b] = AD_SPOT_NONE;
        for (size_t i = ns; i-- > 0;) {
            uint32_t b = ad_spot_bucket_of(P, sp->spots[i]);
            next[i] = head[b];
            head[b] = (uint32_t)i;
        }
        for (size_t i = 0; i < ns; i++) sp->room[i] = sp->room[i] && ad_room_among_spots(P, head, next, sp->spots, (uint32_t)i);
    } else {
        memset(sp->room, 1, ns);
    }
    free(head);
    free(next);
    return ad_ok();
}
#else
/* Room for the step's ns spots: in the gas where no rank's own spheres lie within a diameter (each rank's
 * answers, combined by a minimum), then among the earlier spots that have room in the gas (open3.h), from
 * the last spot down so that each reads the combined answers of the gas of those before it. */
static ad_status AD_D(room)(ad_world *w, mpi_world *m, const PLAIN *g, AD_D(ad_plain_spots) *sp, size_t ns)
{
    const ad_params *P = &w->params;
    if (!P->disc_contacts) {
        memset(sp->room, 1, ns);
        return ad_ok();
    }
    for (size_t i = 0; i < ns; i++)
        sp->room[i] = i < AD_ROOM_MAX &&
                      ad_room_in_grid3(P, g->start, g->state, sp->spots[i].x, sp->spots[i].y, sp->spots[i].z);
    MPI_Allreduce(MPI_IN_PLACE, sp->room, (int)ns, MPI_UNSIGNED_CHAR, MPI_MIN, m->comm);
    for (size_t i = ns; i-- > 0;) sp->room[i] = sp->room[i] && ad_room_among_spots3(P, sp->room, sp->spots, (uint32_t)i);
    return ad_ok();
}
#endif

/* A placed particle stays on this rank where its column is the rank's (ad_plain_keep). */
static int AD_D(keep_own)(const void *ctx, AD_STATE q) { return in_slab(ctx, q.x); }

ad_status AD_D(mpi_enter)(ad_world *w, mpi_world *m, float dt, float *vmax2)
{
    const ad_params *P = &w->params;
    PLAIN *g = &m->AD_D(g);
    ad_open_state *o = &m->open;
    AD_D(ad_plain_spots) *sp = &m->AD_D(sp);
    size_t ne = 0, ns = 0;
    *vmax2 = 0.0f;
    AD_TRY(mpi_check(m, AD_D(ad_plain_list_spots)(w, g, o, sp, dt, &ne, &ns)));
    if (ns == 0) return ad_ok();
    AD_TRY(AD_D(room)(w, m, g, sp, ns));
    const slab own = {m, P}; /* a spot joins the rank of its column; the others count its id */
    size_t mine = 0;
    for (size_t i = 0; i < ns; i++) mine += sp->room[i] && in_slab(&own, sp->spots[i].x);
    ad_status st = g->n + mine > g->cap
                       ? ad_fail(AD_ERR_CAPACITY, "capacity", "capacity: at step %llu the free stream brings rank %d to "
                                 "%zu " MPI_WHAT ", past its capacity of %zu",
                                 (unsigned long long)w->stats.step, m->rank, g->n + mine, g->cap)
                       : ad_ok();
    AD_TRY(mpi_check(m, st));
    AD_D(ad_plain_place)(w, g, o, sp, ne, ns, AD_D(keep_own), &own, vmax2);
    return ad_ok();
}

#undef PLAIN
#undef MPI_WHAT
#include "../physics/dim_end.h"
