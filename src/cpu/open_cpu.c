/* Open sides and the free-stream reservoir on the CPU: the discs that enter, those the reservoir adds, ids. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../physics/open.h"
#include "../physics/room.h"
#include "cpu_world.h"

ad_status ad_cpu_open_create(ad_world *w, cpu_world *c)
{
    const ad_params *P = &w->params;
    ad_status st = ad_open_state_alloc(&c->open, (uint32_t)P->res_boxes, 2);
    if (st.code) return st;
    c->res_debt = c->open.res_state;
    c->spot_head = malloc(AD_SPOT_BUCKETS * sizeof *c->spot_head);
    c->spot_next = malloc(AD_ROOM_MAX * sizeof *c->spot_next);
    if (!c->spot_head || !c->spot_next)
        return ad_fail(AD_ERR_NO_MEMORY, "capacity", "out of host memory for the entering discs' buckets");
    if (P->res_boxes) {
        c->res_add = calloc((size_t)P->res_boxes, sizeof *c->res_add);
        c->res_doomed = calloc(c->cap ? c->cap : 1, 1);
        if (!c->res_add || !c->res_doomed)
            return ad_fail(AD_ERR_NO_MEMORY, "reservoir", "out of host memory for the reservoir's boxes");
    }
    return ad_ok();
}

void ad_cpu_open_destroy(cpu_world *c)
{
    ad_open_state_free(&c->open); /* res_debt is its res_state */
    free(c->entries);
    free(c->spots);
    free(c->room);
    free(c->res_add);
    free(c->res_doomed);
    free(c->res_doomed_list);
    free(c->spot_box);
    free(c->spot_head);
    free(c->spot_next);
}

uint32_t ad_cpu_new_id(cpu_world *c) { return c->open.next_id++; }

void ad_cpu_open_compact(ad_world *w, cpu_world *c, size_t alive)
{
    c->n = alive;
    w->count = alive;
    w->stats.count = alive;
}

/* Marks slot k for removal in this step's pass. */
static int doom(cpu_world *c, uint32_t k)
{
    if (c->res_ndoomed == c->res_doomed_cap) {
        size_t cap = c->res_doomed_cap ? 2 * c->res_doomed_cap : 256;
        uint32_t *l = realloc(c->res_doomed_list, cap * sizeof *l);
        if (!l) return 0;
        c->res_doomed_list = l;
        c->res_doomed_cap = cap;
    }
    c->res_doomed_list[c->res_ndoomed++] = k;
    c->res_doomed[k] = 1;
    return 1;
}

/* The rm discs of box b chosen for removal (ad_reservoir_pick), marked; with the BVH (no cells)
 * the same choice over every disc of the box. */
static uint32_t doom_box(const ad_world *w, cpu_world *c, int b, uint32_t rm)
{
    const ad_params *P = &w->params;
    uint32_t slot[AD_RES_PICK_MAX], m;
    if (!c->use_bvh) {
        m = ad_reservoir_pick(P, c->start, c->id, b, w->stats.step, rm, slot);
    } else {
        uint64_t key[AD_RES_PICK_MAX];
        const ad_state *s = c->state[c->cur];
        if (rm > AD_RES_PICK_MAX) rm = AD_RES_PICK_MAX;
        m = 0;
        for (size_t j = 0; j < c->n && rm; j++) {
            if (ad_reservoir_box(P, s[j].x, s[j].y) != b) continue;
            uint64_t k = ad_reservoir_key(P, w->stats.step, c->id[j]);
            if (m == rm && k >= key[m - 1]) continue;
            uint32_t at = m < rm ? m++ : m - 1;
            while (at > 0 && key[at - 1] > k) {
                key[at] = key[at - 1];
                slot[at] = slot[at - 1];
                at--;
            }
            key[at] = k;
            slot[at] = (uint32_t)j;
        }
    }
    for (uint32_t i = 0; i < m; i++)
        if (!doom(c, slot[i])) return i;
    return m;
}

void ad_cpu_reservoir_plan(const ad_world *w, cpu_world *c, float dt)
{
    const ad_params *P = &w->params;
    if (!P->res_boxes) return;
    int nb = P->res_boxes;
    uint32_t *count = c->res_add; /* the counts first, then the additions in place */
    if (c->use_bvh) { /* no cells: the discs binned into boxes */
        memset(count, 0, (size_t)nb * sizeof *count);
        const ad_state *s = c->state[c->cur];
        for (size_t i = 0; i < c->n; i++) {
            int b = ad_reservoir_box(P, s[i].x, s[i].y);
            if (b >= 0) count[b]++;
        }
    } else {
        for (int b = 0; b < nb; b++) count[b] = ad_reservoir_box_count(P, c->start, b);
    }
    double nu = (double)P->res_rate / AD_RES_CONTROL_SLOWER;
    for (int b = 0; b < nb; b++) {
        uint32_t add, rm = ad_reservoir_decide(&c->res_debt[2 * b], ad_reservoir_want(P, b), count[b], nu, dt, &add);
        if (rm) c->res_debt[2 * b] -= (double)(rm - doom_box(w, c, b, rm)); /* the ones not marked stay owed */
        count[b] = add;
    }
}

/* Room for a step's spots: `ns` of them, lists grown as needed. */
static int grow(cpu_world *c, size_t need)
{
    if (need <= c->spots_cap) return 1;
    size_t cap = need * 2 > 1024 ? need * 2 : 1024;
    ad_entry *e = realloc(c->entries, cap * sizeof *e);
    if (e) c->entries = e;
    ad_state *s = realloc(c->spots, cap * sizeof *s);
    if (s) c->spots = s;
    unsigned char *r = realloc(c->room, cap);
    if (r) c->room = r;
    int *bx = realloc(c->spot_box, cap * sizeof *bx);
    if (bx) c->spot_box = bx;
    if (!e || !s || !r || !bx) return 0;
    c->spots_cap = cap;
    return 1;
}

/* Appends disc q at slot c->n with a new id (binned where the pass binned its own). */
static void append(ad_world *w, cpu_world *c, ad_state q)
{
    size_t slot = c->n++;
    c->state[c->cur][slot] = q;
    c->id[slot] = ad_cpu_new_id(c);
    c->touch[slot] = 0;
    c->pressure[slot] = 0.0f;
    c->virial[slot] = 0.0f;
    if (c->accel) c->accel[slot] = (ad_accel){0.0f, 0.0f};
    if (c->acc[c->cur]) c->acc[c->cur][slot] = (ad_accel){0.0f, 0.0f};
    if (c->bin_current) {
        uint32_t cell = ad_bin_cell(&w->params, q);
        c->cell_of[slot] = cell;
        c->count[cell]++;
        c->leavers_valid = 0; /* the pass's leavers do not list it (fused_bin_cpu.h) */
    }
}

ad_status ad_cpu_open_enter(ad_world *w, cpu_world *c, float dt, float *vmax2)
{
    const ad_params *P = &w->params;
    ad_open_state *o = &c->open;
    uint64_t step = w->stats.step;
    *vmax2 = 0.0f;
    for (size_t k = 0; k < c->res_ndoomed; k++) c->res_doomed[c->res_doomed_list[k]] = 0; /* the pass took them */
    c->res_ndoomed = 0;
    /* the entering discs: those waiting, then this step's, side by side */
    uint32_t owe[4];
    size_t ne = o->nwaiting + ad_open_owe(o, P, dt, owe);
    size_t nadd = 0;
    for (int b = 0; b < P->res_boxes; b++) nadd += c->res_add[b];
    if (ne + nadd == 0) return ad_ok();
    if (ad_entries_overflow(ne + nadd, c->n, c->cap, AD_WAITING_MAX))
        return ad_fail(AD_ERR_CAPACITY, "capacity",
                       "capacity: at step %llu the free stream brings %zu discs in one step to a world of %zu discs "
                       "with a capacity of %zu (a stream far denser or faster than the world was sized for)",
                       (unsigned long long)step, ne + nadd, c->n, c->cap);
    if (!grow(c, ne + nadd)) return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory for %zu entering discs", ne + nadd);
    memcpy(c->entries, o->waiting, o->nwaiting * sizeof *o->waiting);
    size_t k = o->nwaiting;
    for (int f = 0; f < 4; f++)
        for (uint32_t j = 0; j < owe[f]; j++) c->entries[k++] = ad_entry_draw(P, f, step, j);
    /* their spots at the step's end, then the reservoir's */
    for (size_t i = 0; i < ne; i++) {
        c->spots[i] = ad_entry_spot(P, c->entries[i], dt, step, (uint32_t)i);
        c->spot_box[i] = -1;
    }
    size_t ns = ne;
    for (int b = 0; b < P->res_boxes; b++)
        for (uint32_t j = 0; j < c->res_add[b]; j++, ns++) {
            c->spots[ns] = ad_reservoir_spot(P, b, j, step);
            c->spot_box[ns] = b;
        }
    /* room, where discs touch each other: the gas after the pass, and the spots before */
    size_t judged = ns;
    if (P->disc_contacts) {
        if (judged > AD_ROOM_MAX) judged = AD_ROOM_MAX;
        const ad_bvh *tree = c->use_bvh ? &c->tree : NULL;
        const ad_state *gas = c->state[c->cur];
        const ad_state *spots = c->spots;
        unsigned char *room = c->room;
        const ad_params Pl = *P;
        uint32_t *head = c->spot_head, *next = c->spot_next;
        for (uint32_t b = 0; b < AD_SPOT_BUCKETS; b++) head[b] = AD_SPOT_NONE;
        for (size_t i = 0; i < judged; i++) {
            uint32_t b = ad_spot_bucket_of(P, spots[i]);
            next[i] = head[b];
            head[b] = (uint32_t)i;
        }
#pragma omp parallel for num_threads(c->threads) schedule(dynamic, 8) if (judged > 64)
        for (size_t i = 0; i < judged; i++)
            room[i] = (unsigned char)ad_room_for(&Pl, c->start, tree, gas, head, next, spots, (uint32_t)i);
        for (size_t i = judged; i < ns; i++) room[i] = 0;
    } else {
        memset(c->room, 1, ns);
    }
    size_t placed = 0;
    for (size_t i = 0; i < ns; i++) placed += c->room[i];
    if (c->n + placed > c->cap)
        return ad_fail(AD_ERR_CAPACITY, "capacity",
                       "capacity: at step %llu the free stream brings the world to %zu discs, past its capacity of %zu "
                       "(a denser or faster stream than the capacity was sized for, or gas piling up ahead of the body)",
                       (unsigned long long)step, c->n + placed, c->cap);
    /* placed in list order; entering discs without room wait, in order */
    uint32_t waiting = 0;
    for (size_t i = 0; i < ns; i++) {
        if (c->room[i]) {
            ad_state q = c->spots[i];
            append(w, c, q);
            float v2 = q.vx * q.vx + q.vy * q.vy;
            *vmax2 = *vmax2 > v2 ? *vmax2 : v2;
            if (i < ne) {
                w->stats.entered++;
            } else {
                w->stats.reservoir_added++;
                c->res_debt[2 * c->spot_box[i]] -= 1.0; /* settled */
            }
        } else if (i < ne) {
            if (waiting < AD_WAITING_MAX) o->waiting[waiting++] = c->entries[i];
            else w->stats.entries_lost++;
        }
    }
    o->nwaiting = waiting;
    w->stats.entries_waiting = waiting;
    return ad_ok();
}
