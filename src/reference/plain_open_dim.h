/* Step 5's owed removals and additions on the plain pipeline in one dimension (included by plain.h with
 * AD_DIM 2, then 3; see physics/dim.h), written once for discs and spheres (reference_backend.c,
 * reference3.c):
 *   - before the pass, the reservoir's plan: each box's count from the step's grid, its controller
 *     (ad_reservoir_decide), the particles it removes marked doomed (the pass removes them), the
 *     additions it asks for;
 *   - after the pass, the step's new spots in a fixed order: the entering particles waiting for room,
 *     each open side's new ones, the boxes' additions; each placed where it has room (none of the gas
 *     through the step's grid, none of the earlier spots within a diameter; in 3D none of the earlier
 *     spots that have room in the gas, open3.h), the entering ones without room waiting.
 * No include guard: it is meant to be included once a dimension. */
#include "../physics/dim.h"

#if AD_DIM == 2
#define AD_ENTRY ad_entry
#define AD_WAITING waiting
#define AD_ROOM_FOR(P, g, spots, k) ad_room_for_plain(P, (g)->start, NULL, (g)->state, spots, k)
#define AD_WHAT "discs"
#else
#define AD_ENTRY ad_entry3
#define AD_WAITING waiting3

#define AD_WHAT "spheres"
#endif

/* A step's new spots and the reservoir's additions (grown as needed). */
typedef struct AD_D(ad_plain_spots) {
    AD_ENTRY *entries; /* a step's entering particles: the waiting ones, then the new ones */
    AD_STATE *spots;   /* where the step's new particles would go: the entries', then the reservoir's */
    int *spot_box;     /* per spot: its reservoir box, -1 for an entering particle */
    unsigned char *room;
    size_t cap;
    uint32_t *res_add; /* per reservoir box: the particles to add after the pass */
} AD_D(ad_plain_spots);

static inline int AD_D(ad_plain_spots_alloc)(AD_D(ad_plain_spots) *sp, int res_boxes)
{
    sp->res_add = calloc((size_t)res_boxes + 1, sizeof *sp->res_add);
    return sp->res_add != NULL;
}

static inline void AD_D(ad_plain_spots_free)(AD_D(ad_plain_spots) *sp)
{
    AD_FREE_EACH(sp->res_add, sp->entries, sp->spots, sp->spot_box, sp->room);
}

/* Before the pass: each reservoir box's count from the grid, its controller, the particles it removes
 * (marked doomed; those it cannot mark stay owed) and the additions it asks for after the pass. */
static inline void AD_D(ad_plain_reservoir_plan)(const ad_world *w, AD_D(ad_plain) *g, ad_open_state *o,
                                                 AD_D(ad_plain_spots) *sp, float dt)
{
    const ad_params *P = &w->params;
    double nu = (double)P->res_rate / AD_RES_CONTROL_SLOWER;
    for (int b = 0; b < P->res_boxes; b++) {
        uint32_t n = ad_reservoir_box_count(P, g->start, b), add, slot[AD_RES_PICK_MAX];
        uint32_t rm = ad_reservoir_decide(&o->res_state[2 * b], AD_D(ad_reservoir_want)(P, b), n, nu, dt, &add);
        uint32_t m = ad_reservoir_pick(P, g->start, g->id, b, w->stats.step, rm, slot);
        for (uint32_t k = 0; k < m; k++) g->doomed[slot[k]] = 1;
        o->res_state[2 * b] -= (double)(rm - m); /* those not marked stay owed */
        sp->res_add[b] = add;
    }
}

static inline int AD_D(ad_plain_grow_spots)(AD_D(ad_plain_spots) *sp, size_t need)
{
    if (need <= sp->cap) return 1;
    AD_ENTRY *e = realloc(sp->entries, need * sizeof *e);
    if (e) sp->entries = e;
    AD_STATE *s = realloc(sp->spots, need * sizeof *s);
    if (s) sp->spots = s;
    int *b = realloc(sp->spot_box, need * sizeof *b);
    if (b) sp->spot_box = b;
    unsigned char *room = realloc(sp->room, need);
    if (room) sp->room = room;
    if (!e || !s || !b || !room) return 0;
    sp->cap = need;
    return 1;
}

/* The step's new spots in their fixed order: the waiting entries, each open side's new ones, the
 * reservoir boxes' additions; *ns of them, the first *ne entering particles. */
static inline ad_status AD_D(ad_plain_list_spots)(ad_world *w, const AD_D(ad_plain) *g, ad_open_state *o,
                                                  AD_D(ad_plain_spots) *sp, float dt, size_t *ne, size_t *ns)
{
    const ad_params *P = &w->params;
    uint64_t step = w->stats.step;
    uint32_t owe[4];
    size_t e = o->nwaiting + ad_open_owe(o, P, dt, owe), add = 0;
    for (int b = 0; b < P->res_boxes; b++) add += sp->res_add[b];
    *ne = e;
    *ns = e + add;
    if (*ns == 0) return ad_ok();
    if (ad_entries_overflow(*ns, g->n, g->cap, AD_WAITING_MAX))
        return ad_fail(AD_ERR_CAPACITY, "capacity", "capacity: at step %llu the free stream brings %zu " AD_WHAT " in one "
                       "step to a world of %zu " AD_WHAT " with a capacity of %zu (a stream far denser or faster than the "
                       "world was sized for)", (unsigned long long)step, *ns, g->n, g->cap);
    if (!AD_D(ad_plain_grow_spots)(sp, *ns))
        return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory for %zu entering " AD_WHAT, *ns);
    memcpy(sp->entries, o->AD_WAITING, o->nwaiting * sizeof *sp->entries);
    size_t k = o->nwaiting;
    for (int f = 0; f < 4; f++)
        for (uint32_t j = 0; j < owe[f]; j++) sp->entries[k++] = AD_D(ad_entry_draw)(P, f, step, j);
    for (size_t i = 0; i < e; i++) {
        sp->spots[i] = AD_D(ad_entry_spot)(P, sp->entries[i], dt, step, (uint32_t)i);
        sp->spot_box[i] = -1;
    }
    for (int b = 0; b < P->res_boxes; b++)
        for (uint32_t j = 0; j < sp->res_add[b]; j++, k++) {
            sp->spots[k] = AD_D(ad_reservoir_spot)(P, b, j, step);
            sp->spot_box[k] = b;
        }
    return ad_ok();
}

/* Appends particle q at slot n with a new id. */
static inline void AD_D(ad_plain_append)(AD_D(ad_plain) *g, ad_open_state *o, AD_STATE q)
{
    size_t s = g->n++;
    g->state[s] = q;
    g->id[s] = o->next_id++;
    g->touch[s] = 0;
    memset(&g->acc[s], 0, sizeof g->acc[s]);
    g->pressure[s] = g->virial[s] = 0.0f;
}

/* Whether this world holds a placed particle (ad_plain_place; NULL: always): where another process
 * holds it (backend = mpi), only its id is counted here. */
typedef int (*AD_D(ad_plain_keep))(const void *ctx, AD_STATE q);

/* Step 5's placement of the ns spots (the first ne entering particles), in list order: a spot with room
 * becomes a particle with the next id (appended where `keep` says this world holds it), its speed
 * squared into *vmax2 and its count into the statistics; an entering one without room waits. */
static inline void AD_D(ad_plain_place)(ad_world *w, AD_D(ad_plain) *g, ad_open_state *o,
                                        const AD_D(ad_plain_spots) *sp, size_t ne, size_t ns,
                                        AD_D(ad_plain_keep) keep, const void *ctx, float *vmax2)
{
    uint32_t waiting = 0;
    for (size_t i = 0; i < ns; i++) {
        if (sp->room[i]) {
            AD_STATE q = sp->spots[i];
            if (!keep || keep(ctx, q)) AD_D(ad_plain_append)(g, o, q);
            else o->next_id++;
#define AD_M(c) q.v##c *q.v##c
            float v2 = AD_SUM(AD_M);
#undef AD_M
            *vmax2 = *vmax2 > v2 ? *vmax2 : v2;
            if (i < ne) {
                w->stats.entered++;
            } else {
                w->stats.reservoir_added++;
                o->res_state[2 * sp->spot_box[i]] -= 1.0; /* settled */
            }
        } else if (i < ne) {
            if (waiting < AD_WAITING_MAX) o->AD_WAITING[waiting++] = sp->entries[i];
            else w->stats.entries_lost++;
        }
    }
    o->nwaiting = waiting;
    w->stats.entries_waiting = waiting;
}

/* After the pass: the free stream's entering particles and the reservoir's additions, placed in list
 * order where they have room (without contacts every spot has room; the plain room test compares every
 * earlier spot); entering ones without room wait. *vmax2: the largest speed squared of those placed. */
static inline ad_status AD_D(ad_plain_enter)(ad_world *w, AD_D(ad_plain) *g, ad_open_state *o,
                                             AD_D(ad_plain_spots) *sp, float dt, float *vmax2)
{
    const ad_params *P = &w->params;
    size_t ne, ns;
    *vmax2 = 0.0f;
    AD_TRY(AD_D(ad_plain_list_spots)(w, g, o, sp, dt, &ne, &ns));
    if (ns == 0) return ad_ok();
    size_t placed = 0;
#if AD_DIM == 2
    for (size_t i = 0; i < ns; i++)
        sp->room[i] = !P->disc_contacts || (i < AD_ROOM_MAX && AD_ROOM_FOR(P, g, sp->spots, (uint32_t)i));
#else
    /* room in the gas, then among the earlier spots with room in the gas (open3.h); the second pass
     * runs from the last spot down, so that each reads the first pass's answers of those before it */
    for (size_t i = 0; i < ns; i++)
        sp->room[i] = !P->disc_contacts || (i < AD_ROOM_MAX && ad_room_in_grid3(P, g->start, g->state, sp->spots[i].x,
                                                                             sp->spots[i].y, sp->spots[i].z));
    for (size_t i = ns; P->disc_contacts && i-- > 0;)
        sp->room[i] = sp->room[i] && ad_room_among_spots3(P, sp->room, sp->spots, (uint32_t)i);
#endif
    for (size_t i = 0; i < ns; i++) placed += sp->room[i];
    if (g->n + placed > g->cap)
        return ad_fail(AD_ERR_CAPACITY, "capacity", "capacity: at step %llu the free stream brings the world to %zu "
                       AD_WHAT ", past its capacity of %zu", (unsigned long long)w->stats.step, g->n + placed, g->cap);
    AD_D(ad_plain_place)(w, g, o, sp, ne, ns, NULL, NULL, vmax2);
    return ad_ok();
}

/* A snapshot's open sides into the world's: the entries owed, the id counter, the reservoir's controllers
 * and the entering particles waiting (checked: at most AD_WAITING_MAX, the world's number of boxes). */
static inline ad_status AD_D(ad_plain_import_open)(ad_open_state *o, const ad_snapshot *s)
{
    if (s->open.nwaiting > AD_WAITING_MAX || (s->open.nwaiting && !s->open.AD_WAITING) ||
        (s->open.res_state && s->open.res_boxes != o->res_boxes))
        return ad_fail(AD_ERR_FORMAT, "checkpoint",
                       "the snapshot has %u entries waiting (at most %d) and %u reservoir boxes (the world has %u)",
                       s->open.nwaiting, AD_WAITING_MAX, s->open.res_boxes, o->res_boxes);
    memcpy(o->owed, s->open.owed, sizeof o->owed);
    o->next_id = s->open.next_id;
    if (s->open.res_state) memcpy(o->res_state, s->open.res_state, 2 * (size_t)s->open.res_boxes * sizeof(double));
    o->nwaiting = s->open.nwaiting;
    if (s->open.nwaiting) memcpy(o->AD_WAITING, s->open.AD_WAITING, s->open.nwaiting * sizeof(AD_ENTRY));
    return ad_ok();
}

#undef AD_ENTRY
#undef AD_WAITING
#if AD_DIM == 2
#undef AD_ROOM_FOR
#endif
#undef AD_WHAT
#include "../physics/dim_end.h"
