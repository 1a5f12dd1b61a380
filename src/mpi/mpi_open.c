/* backend = mpi: step 5's open sides over the ranks (mpi_world.h), the plain pipeline's
 * (plain_open_dim.h) with what a rank cannot see alone combined over the ranks, in both dimensions (the
 * entries written once: mpi_open_dim.h, included for 2D and 3D):
 *  - the reservoir's plan: a box's count is the sum of the ranks' counts of their own discs in it; every
 *    rank's controller (a copy) then decides alike; the removals are the discs of the box with the
 *    smallest keys of the step among all ranks' (each rank offers its smallest few, ties by id);
 *  - the entries: the step's spots are listed alike on every rank (counter-based draws); a spot has room
 *    in the gas where no rank's own discs lie within a diameter (each rank judges its own, the answers
 *    combined by a minimum), room among the earlier spots is judged alike on every rank (in 3D from the
 *    combined answers of the gas, as open3.h's ad_room_among_spots3 asks); a spot with room
 *    joins the rank that owns its column, and every rank counts its id. */
#include <stdlib.h>
#include <string.h>

#include "mpi_world.h"

uint32_t mpi_res_merge(const ad_res_pick *all, int ranks, int K, int k, uint32_t rm, ad_res_pick *best)
{
    uint32_t want = rm > AD_RES_PICK_MAX ? AD_RES_PICK_MAX : rm, n = 0;
    for (int r = 0; r < ranks; r++) { /* the ranks' few, merged into the smallest `want` */
        const ad_res_pick *c = all + ((size_t)r * (size_t)K + (size_t)k) * AD_RES_PICK_MAX;
        for (int q = 0; q < AD_RES_PICK_MAX && c[q].slot != UINT32_MAX; q++) ad_res_pick_keep(best, &n, want, c[q]);
    }
    return n;
}

ad_status mpi_reservoir_plan(ad_world *w, mpi_world *m, const uint32_t *start, const uint32_t *id,
                             unsigned char *doomed, uint32_t *res_add, float dt)
{
    const ad_params *P = &w->params;
    ad_open_state *o = &m->open;
    int nb = P->res_boxes;
    uint32_t *cnt = calloc(2 * (size_t)nb + 1, sizeof *cnt), *rm = calloc((size_t)nb + 1, sizeof *rm);
    int *boxes = malloc(((size_t)nb + 1) * sizeof *boxes);
    ad_status st = cnt && rm && boxes ? ad_ok() : ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory for the reservoir's plan");
    AD_TRY(mpi_check(m, st));
    for (int b = 0; b < nb; b++) cnt[b] = ad_reservoir_box_count_in(P, start, b, m->c_lo, m->c_hi);
    MPI_Allreduce(cnt, cnt + nb, nb, MPI_UINT32_T, MPI_SUM, m->comm);
    double nu = (double)P->res_rate / AD_RES_CONTROL_SLOWER;
    int K = 0;
    for (int b = 0; b < nb; b++) {
        uint32_t add;
        double want = P->dims == 3 ? ad_reservoir_want3(P, b) : ad_reservoir_want(P, b);
        rm[b] = ad_reservoir_decide(&o->res_state[2 * b], want, cnt[nb + b], nu, dt, &add);
        res_add[b] = add;
        if (rm[b]) boxes[K++] = b;
    }
    ad_res_pick *mine = K ? malloc((size_t)K * AD_RES_PICK_MAX * sizeof *mine) : NULL;
    ad_res_pick *all = K ? malloc((size_t)K * AD_RES_PICK_MAX * (size_t)m->ranks * sizeof *all) : NULL;
    st = !K || (mine && all) ? ad_ok() : ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory for the reservoir's removals");
    st = mpi_check(m, st);
    if (!st.code && K) {
        for (int k = 0; k < K; k++)
            ad_reservoir_picks_in(P, start, id, boxes[k], w->stats.step, rm[boxes[k]], m->c_lo, m->c_hi,
                                  mine + (size_t)k * AD_RES_PICK_MAX);
        int bytes = K * AD_RES_PICK_MAX * (int)sizeof(ad_res_pick);
        MPI_Allgather(mine, bytes, MPI_BYTE, all, bytes, MPI_BYTE, m->comm);
        for (int k = 0; k < K; k++) {
            int b = boxes[k];
            ad_res_pick best[AD_RES_PICK_MAX];
            uint32_t n = mpi_res_merge(all, m->ranks, K, k, rm[b], best);
            ad_reservoir_doom_in(P, start, id, b, m->c_lo, m->c_hi, best, n, doomed);
            o->res_state[2 * b] -= (double)(rm[b] - n); /* those not marked stay owed */
        }
    }
    free(mine);
    free(all);
    free(cnt);
    free(rm);
    free(boxes);
    return st;
}

/* A rank's slab as the entries ask it: whether a centre at x lies in the rank's columns. */
typedef struct slab {
    const mpi_world *m;
    const ad_params *P;
} slab;

static int in_slab(const void *ctx, float x)
{
    const slab *s = ctx;
    int c = mpi_column(s->P, x);
    return c >= s->m->c_lo && c < s->m->c_hi;
}

#define AD_DIM 2
#include "mpi_open_dim.h"
#undef AD_DIM
#define AD_DIM 3
#include "mpi_open_dim.h"
#undef AD_DIM
