/* backend = mpi: step 5's open sides over the ranks (mpi_world.h), the plain pipeline's
 * (plain_open_dim.h) with what a rank cannot see alone combined over the ranks:
 *  - the reservoir's plan: a box's count is the sum of the ranks' counts of their own discs in it; every
 *    rank's controller (a copy) then decides alike; the removals are the discs of the box with the
 *    smallest keys of the step among all ranks' (each rank offers its smallest few, ties by id);
 *  - the entries: the step's spots are listed alike on every rank (counter-based draws); a spot has room
 *    in the gas where no rank's own discs lie within a diameter (each rank judges its own, the answers
 *    combined by a minimum), room among the earlier spots is judged alike on every rank; a spot with room
 *    joins the rank that owns its column, and every rank counts its id. */
#include <stdlib.h>
#include <string.h>

#include "mpi_world.h"

/* Box b's own slots: rows [lo1, hi1), each the slot range of the box's columns within the rank's. */
typedef struct box_rows {
    int lo[3], hi[3], a, e; /* a, e: the box's columns within the rank's [a, e) (empty where a >= e) */
} box_rows;

static box_rows own_rows(const ad_params *P, const mpi_world *m, int b)
{
    box_rows r;
    ad_reservoir_box_cells(P, b, r.lo, r.hi);
    r.a = r.lo[0] > m->c_lo ? r.lo[0] : m->c_lo;
    r.e = r.hi[0] < m->c_hi ? r.hi[0] : m->c_hi;
    return r;
}

/* A removal's candidate: the key of the step, the id. */
typedef struct pick {
    uint64_t key;
    uint64_t id; /* UINT64_MAX: none */
} pick;

static int pick_cmp(const void *x, const void *y)
{
    const pick *a = x, *b = y;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* The rank's smallest `rm` candidates of box b into c[0..AD_RES_PICK_MAX) (the rest none). */
static void own_picks(const ad_world *w, const mpi_world *m, int b, uint32_t rm, pick *c)
{
    const ad_params *P = &w->params;
    for (int k = 0; k < AD_RES_PICK_MAX; k++) c[k] = (pick){UINT64_MAX, UINT64_MAX};
    box_rows r = own_rows(P, m, b);
    uint32_t n = 0;
    for (int cy = r.lo[1]; cy < r.hi[1] && r.a < r.e; cy++) {
        uint32_t row = ad_reservoir_row(P, cy, 0);
        for (uint32_t j = m->g.start[row + (uint32_t)r.a]; j < m->g.start[row + (uint32_t)r.e]; j++) {
            pick p = {ad_reservoir_key(P, w->stats.step, m->g.id[j]), m->g.id[j]};
            if (n == rm && pick_cmp(&p, &c[n - 1]) >= 0) continue;
            uint32_t at = n < rm ? n++ : n - 1;
            while (at > 0 && pick_cmp(&c[at - 1], &p) > 0) c[at] = c[at - 1], at--;
            c[at] = p;
        }
    }
}

/* Marks doomed the rank's discs of box b whose ids are among chosen[0..k). */
static void doom_own(const ad_world *w, mpi_world *m, int b, const pick *chosen, uint32_t k)
{
    const ad_params *P = &w->params;
    box_rows r = own_rows(P, m, b);
    for (int cy = r.lo[1]; cy < r.hi[1] && r.a < r.e; cy++) {
        uint32_t row = ad_reservoir_row(P, cy, 0);
        for (uint32_t j = m->g.start[row + (uint32_t)r.a]; j < m->g.start[row + (uint32_t)r.e]; j++)
            for (uint32_t q = 0; q < k; q++)
                if (chosen[q].id == m->g.id[j]) m->g.doomed[j] = 1;
    }
}

ad_status mpi_reservoir_plan(ad_world *w, mpi_world *m, float dt)
{
    const ad_params *P = &w->params;
    ad_open_state *o = &m->open;
    int nb = P->res_boxes;
    uint32_t *cnt = calloc(2 * (size_t)nb + 1, sizeof *cnt), *rm = calloc((size_t)nb + 1, sizeof *rm);
    int *boxes = malloc(((size_t)nb + 1) * sizeof *boxes);
    ad_status st = cnt && rm && boxes ? ad_ok() : ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory for the reservoir's plan");
    AD_TRY(mpi_check(m, st));
    for (int b = 0; b < nb; b++) {
        box_rows r = own_rows(P, m, b);
        for (int cy = r.lo[1]; cy < r.hi[1] && r.a < r.e; cy++) {
            uint32_t row = ad_reservoir_row(P, cy, 0);
            cnt[b] += m->g.start[row + (uint32_t)r.e] - m->g.start[row + (uint32_t)r.a];
        }
    }
    MPI_Allreduce(cnt, cnt + nb, nb, MPI_UINT32_T, MPI_SUM, m->comm);
    double nu = (double)P->res_rate / AD_RES_CONTROL_SLOWER;
    int K = 0;
    for (int b = 0; b < nb; b++) {
        uint32_t add;
        rm[b] = ad_reservoir_decide(&o->res_state[2 * b], ad_reservoir_want(P, b), cnt[nb + b], nu, dt, &add);
        m->sp.res_add[b] = add;
        if (rm[b]) boxes[K++] = b;
    }
    pick *mine = K ? malloc((size_t)K * AD_RES_PICK_MAX * sizeof *mine) : NULL;
    pick *all = K ? malloc((size_t)K * AD_RES_PICK_MAX * (size_t)m->ranks * sizeof *all) : NULL;
    st = !K || (mine && all) ? ad_ok() : ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory for the reservoir's removals");
    st = mpi_check(m, st);
    if (!st.code && K) {
        for (int k = 0; k < K; k++) {
            uint32_t want = rm[boxes[k]] > AD_RES_PICK_MAX ? AD_RES_PICK_MAX : rm[boxes[k]];
            own_picks(w, m, boxes[k], want, mine + (size_t)k * AD_RES_PICK_MAX);
        }
        int bytes = K * AD_RES_PICK_MAX * (int)sizeof(pick);
        MPI_Allgather(mine, bytes, MPI_BYTE, all, bytes, MPI_BYTE, m->comm);
        for (int k = 0; k < K; k++) {
            int b = boxes[k];
            uint32_t want = rm[b] > AD_RES_PICK_MAX ? AD_RES_PICK_MAX : rm[b], n = 0;
            pick best[AD_RES_PICK_MAX];
            for (int r = 0; r < m->ranks; r++) { /* the ranks' few, merged into the smallest `want` */
                const pick *c = all + ((size_t)r * (size_t)K + (size_t)k) * AD_RES_PICK_MAX;
                for (int q = 0; q < AD_RES_PICK_MAX && c[q].id != UINT64_MAX; q++) {
                    if (n == want && pick_cmp(&c[q], &best[n - 1]) >= 0) continue;
                    uint32_t at = n < want ? n++ : n - 1;
                    while (at > 0 && pick_cmp(&best[at - 1], &c[q]) > 0) best[at] = best[at - 1], at--;
                    best[at] = c[q];
                }
            }
            doom_own(w, m, b, best, n);
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

ad_status mpi_enter(ad_world *w, mpi_world *m, float dt, float *vmax2)
{
    const ad_params *P = &w->params;
    ad_plain *g = &m->g;
    ad_open_state *o = &m->open;
    ad_plain_spots *sp = &m->sp;
    size_t ne = 0, ns = 0;
    *vmax2 = 0.0f;
    AD_TRY(mpi_check(m, ad_plain_list_spots(w, g, o, sp, dt, &ne, &ns)));
    if (ns == 0) return ad_ok();
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
    size_t mine = 0;
    for (size_t i = 0; i < ns; i++) {
        int c = mpi_column(P, sp->spots[i].x);
        mine += sp->room[i] && c >= m->c_lo && c < m->c_hi;
    }
    st = g->n + mine > g->cap ? ad_fail(AD_ERR_CAPACITY, "capacity",
                                        "capacity: at step %llu the free stream brings rank %d to %zu discs, past its "
                                        "capacity of %zu",
                                        (unsigned long long)w->stats.step, m->rank, g->n + mine, g->cap)
                              : ad_ok();
    AD_TRY(mpi_check(m, st));
    uint32_t waiting = 0;
    for (size_t i = 0; i < ns; i++) {
        if (sp->room[i]) {
            ad_state q = sp->spots[i];
            int c = mpi_column(P, q.x);
            if (c >= m->c_lo && c < m->c_hi) ad_plain_append(g, o, q);
            else o->next_id++;
            float v2 = q.vx * q.vx + q.vy * q.vy;
            *vmax2 = *vmax2 > v2 ? *vmax2 : v2;
            if (i < ne) {
                w->stats.entered++;
            } else {
                w->stats.reservoir_added++;
                o->res_state[2 * sp->spot_box[i]] -= 1.0; /* settled */
            }
        } else if (i < ne) {
            if (waiting < AD_WAITING_MAX) o->waiting[waiting++] = sp->entries[i];
            else w->stats.entries_lost++;
        }
    }
    o->nwaiting = waiting;
    w->stats.entries_waiting = waiting;
    return ad_ok();
}
