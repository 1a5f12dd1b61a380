/* Reading the CPU world back: particles out (slot or id order), checkpoint snapshots out and in, the BVH for tests. */
#include <stdlib.h>
#include <string.h>

#include "../core/world_internal.h"
#include "bvh_cpu.h"
#include "cpu_world.h"

const ad_accel *ad_cpu_observed_accel(const cpu_world *c)
{
    return c->accel ? c->accel : c->acc[c->cur];
}

ad_status ad_cpu_read(const ad_world *w, int flags, size_t max, const ad_particle_out *out, size_t *count)
{
    const cpu_world *c = w->impl;
    size_t n = w->count < max ? w->count : max;
    const ad_state *s = c->state[c->cur];
    const uint32_t *ids = c->id;
    const ad_accel *acc = ad_cpu_observed_accel(c);
    uint32_t *order;
    ad_status st = ad_slot_order(s, ids, c->n, w->count, (flags & AD_READ_BY_ID) != 0, &order);
    if (st.code) return st;
    for (size_t o = 0; o < n; o++) {
        size_t k = order ? order[o] : o;
        if (out->state) out->state[o] = (ad_particle){s[k].x, s[k].y, s[k].vx, s[k].vy};
        if (out->id) out->id[o] = ids[k];
        if (out->pressure) out->pressure[o] = c->pressure[k];
        if (out->virial) out->virial[o] = c->virial[k];
        if (out->accel) {
            out->accel[2 * o] = acc[k].ax;
            out->accel[2 * o + 1] = acc[k].ay;
        }
    }
    free(order);
    if (count) *count = n;
    return ad_ok();
}

/* The CPU's arrays are the snapshot, with no copy where no removed disc holds a slot; else the
 * discs are copied out in slot order. The open sides' state is the world's own (not owned). */
ad_status ad_cpu_export(const ad_world *w, ad_snapshot *s)
{
    const cpu_world *c = w->impl;
    memset(s, 0, sizeof *s);
    s->n = w->count;
    s->primed = c->verlet_primed;
    s->open = c->open;
    const ad_accel *acc = ad_cpu_observed_accel(c);
    if (c->n == w->count) {
        s->state = c->state[c->cur];
        s->id = c->id;
        s->touch = c->touch;
        s->pressure = c->pressure;
        s->virial = c->virial;
        s->accel = (ad_accel *)acc;
        return ad_ok();
    }
    size_t n = w->count;
    s->owned = 1;
    s->state = malloc(n * sizeof *s->state + 1);
    s->id = malloc(n * 4 + 1);
    s->touch = malloc(n * 4 + 1);
    s->pressure = malloc(n * 4 + 1);
    s->virial = malloc(n * 4 + 1);
    s->accel = malloc(n * sizeof *s->accel + 1);
    if (!s->state || !s->id || !s->touch || !s->pressure || !s->virial || !s->accel) {
        ad_snapshot_free(s);
        return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory for a snapshot of %zu particles", n);
    }
    const ad_state *st = c->state[c->cur];
    size_t m = 0;
    for (size_t k = 0; k < c->n && m < n; k++) {
        if (ad_is_dead(st[k])) continue;
        s->state[m] = st[k];
        s->id[m] = c->id[k];
        s->touch[m] = c->touch[k];
        s->pressure[m] = c->pressure[k];
        s->virial[m] = c->virial[k];
        s->accel[m] = acc[k];
        m++;
    }
    return ad_ok();
}

ad_status ad_cpu_import(ad_world *w, const ad_snapshot *s)
{
    cpu_world *c = w->impl;
    if (s->n > c->cap) return ad_fail(AD_ERR_CAPACITY, "capacity", "capacity: the snapshot holds %zu discs", s->n);
    /* the arrays below are the world's, sized at creation: a snapshot that does not fit them is refused */
    if (s->open.nwaiting > AD_WAITING_MAX || (s->open.res_state && s->open.res_boxes != c->open.res_boxes))
        return ad_fail(AD_ERR_FORMAT, "checkpoint",
                       "the snapshot has %u entries waiting (at most %d) and %u reservoir boxes (the world has %u)",
                       s->open.nwaiting, AD_WAITING_MAX, s->open.res_boxes, c->open.res_boxes);
    memcpy(c->state[c->cur], s->state, s->n * sizeof(ad_state));
    memcpy(c->id, s->id, s->n * sizeof(uint32_t));
    if (s->touch) memcpy(c->touch, s->touch, s->n * sizeof(uint32_t));
    else memset(c->touch, 0, s->n * sizeof(uint32_t));
    memcpy(c->pressure, s->pressure, s->n * sizeof(float));
    memcpy(c->virial, s->virial, s->n * sizeof(float));
    memcpy(c->accel ? c->accel : c->acc[c->cur], s->accel, s->n * sizeof(ad_accel));
    c->n = s->n;
    memcpy(c->open.owed, s->open.owed, sizeof c->open.owed);
    c->open.next_id = s->open.next_id;
    if (s->open.res_state)
        memcpy(c->open.res_state, s->open.res_state, 2 * (size_t)s->open.res_boxes * sizeof(double));
    c->open.nwaiting = s->open.nwaiting;
    if (s->open.nwaiting) memcpy(c->open.waiting, s->open.waiting, s->open.nwaiting * sizeof(ad_entry));
    c->verlet_primed = s->primed;
    c->dt_stale = 0;
    c->bin_current = 0;
    c->prefilter_valid = 0;
    return ad_ok();
}

ad_status ad_cpu_bvh_dump(const ad_world *w, ad_bvh_dump *out)
{
    const cpu_world *c = w->impl;
    if (!c->use_bvh || !c->tree.point) return ad_fail(AD_ERR_INVALID, "broad_phase", "no BVH has been built");
    size_t n = c->tree.n;
    out->n = n;
    memcpy(out->code, c->bvh.code, n * sizeof(uint32_t));
    memcpy(out->id, c->id, n * sizeof(uint32_t));
    memcpy(out->point, c->tree.point, n * sizeof(ad_state));
    if (n > 1) {
        memcpy(out->child, c->bvh.child, 2 * (n - 1) * sizeof(uint32_t));
        memcpy(out->rightmost, c->bvh.rightmost, (n - 1) * sizeof(uint32_t));
        memcpy(out->parent, c->bvh.parent, (2 * n - 1) * sizeof(uint32_t));
        memcpy(out->box, c->bvh.box, (n - 1) * sizeof(ad_bvh_box));
    }
    return ad_ok();
}
