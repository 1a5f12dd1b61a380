/* The CUDA backend's read-back: the statistics the device keeps (both ways), the discs, checkpoints'
 * export and import (with the contact states of sampled surfaces), the field sums, the panels' sums
 * (panels.cuh), the BVH's dump. */
#include <cstdlib>
#include <cstring>

#include "cuda_world.cuh"

/* The statistics the device keeps besides those of the fold: AD_CTRL_STATS (ctrl.cuh). */

ad_status ad_cuda_push_ctrl(ad_world *w)
{
    cuda_world *c = CW(w);
    ad_ctrl h = *c->ctrl_host; /* the device's own fields (the count, the open sides) as last pulled or set */
    const ad_stats &s = w->stats;
    ad_stats_copy_step(&h.stats, &s);
    h.stats.panel_time = s.panel_time; /* the device's fold adds to it where the panels are sampled */
#define TO_CTRL(cf, sf) h.cf = (decltype(h.cf))s.sf;
    AD_CTRL_STATS(TO_CTRL)
#undef TO_CTRL
    *c->ctrl_host = h;
    CU(cudaMemcpyAsync(c->ctrl, c->ctrl_host, sizeof h, cudaMemcpyHostToDevice, c->stream));
    CU(cudaStreamSynchronize(c->stream));
    return ad_ok();
}

ad_status ad_cuda_pull_ctrl(ad_world *w)
{
    cuda_world *c = CW(w);
    CU(cudaMemcpyAsync(c->ctrl_host, c->ctrl, sizeof(ad_ctrl), cudaMemcpyDeviceToHost, c->stream));
    CU(cudaStreamSynchronize(c->stream));
    const ad_ctrl &h = *c->ctrl_host;
    ad_stats &s = w->stats;
    ad_stats_copy_step(&s, &h.stats);
    s.panel_time = h.stats.panel_time;
#define TO_STATS(cf, sf) s.sf = (decltype(s.sf))h.cf;
    AD_CTRL_STATS(TO_STATS)
#undef TO_STATS
    s.max_cell_occupancy = h.max_occupancy;
    s.cell_overflow = h.overflow;
    s.outside_grid = h.outside;
    if (c->dev_count) w->count = h.n - h.removed; /* the slots less the discs the last pass removed */
    s.count = w->count;
    /* phase times: the timed first step of the last call, counted for each of its steps */
    if (c->phase_steps) {
        float ms[4];
        int ok = 1;
        for (int k = 0; k < 4; k++) ok &= cudaEventElapsedTime(&ms[k], c->phase[k], c->phase[k + 1]) == cudaSuccess;
        if (ok)
            for (int k = 0; k < 4; k++) s.phase_seconds[k] += 1e-3 * ms[k] * (double)c->phase_steps;
        c->phase_steps = 0;
    }
    if (h.count_overflow)
        return ad_fail(AD_ERR_UNSTABLE, "cell_size",
                       "by step %llu, more than %u discs fell in one grid cell, past the GPU's %u-bit cell counters "
                       "(docs/ARCHITECTURE.md): discs were pushed deep into each other or clamped into a border cell by the "
                       "thousands; the run's state is lost (%llu disc states non-finite)",
                       (unsigned long long)h.stats.step, ~0u >> (32 - (32 >> c->count_lg)), 32u >> c->count_lg,
                       (unsigned long long)h.nonfinite);
    if (h.nonfinite)
        return ad_fail(AD_ERR_UNSTABLE, "dt",
                       "by step %llu, %llu disc states became non-finite on the GPU (the step is too large for the "
                       "stiffness, or discs were placed overlapping)",
                       (unsigned long long)h.stats.step, (unsigned long long)h.nonfinite);
    if (h.capacity_exceeded)
        return ad_fail(AD_ERR_CAPACITY, "capacity",
                       "capacity: by step %llu the free stream brought the world to %u discs, past its capacity of %zu "
                       "(a denser or faster stream than the capacity was sized for, or gas piling up ahead of the body); "
                       "the new discs past it were not placed",
                       (unsigned long long)h.stats.step, h.capacity_exceeded, c->cap);
    return ad_ok();
}

ad_status ad_cuda_pull_stats(ad_world *w) { return ad_cuda_pull_ctrl(w); }

/* The device's arrays of its slots (the discs, and those removed in the last pass) on the host. */
typedef struct host_copy {
    size_t slots;
    ad_state *s;
    unsigned *ids;
    float *pr, *vi;
    ad_accel *ac;
} host_copy;

static void host_copy_free(host_copy *h)
{
    void *const arrays[] = {h->s, h->ids, h->pr, h->vi, h->ac};
    for (void *a : arrays) free(a);
}

/* What a read needs besides the states and ids (which give the order of the discs). */
enum { COPY_PRESSURE = 1, COPY_VIRIAL = 2, COPY_ACCEL = 4, COPY_ALL = 7 };

static ad_status copy_to_host(const ad_world *w, cuda_world *c, host_copy *h, int want)
{
    memset(h, 0, sizeof *h);
    cudaError_t e = ad_cuda_pull_count(c);
    if (e) return ad_fail(AD_ERR_BACKEND, "cuda", "reading the GPU's count: %s", cudaGetErrorString(e));
    size_t n = c->dev_count ? c->ctrl_host->n : w->count;
    h->slots = n;
    h->s = (ad_state *)malloc(n * sizeof(ad_state) + 1);
    h->ids = (unsigned *)malloc(n * 4 + 1);
    if (want & COPY_PRESSURE) h->pr = (float *)malloc(n * 4 + 1);
    if (want & COPY_VIRIAL) h->vi = (float *)malloc(n * 4 + 1);
    if (want & COPY_ACCEL) h->ac = (ad_accel *)malloc(n * sizeof(ad_accel) + 1);
    if (!h->s || !h->ids || (!h->pr && (want & COPY_PRESSURE)) || (!h->vi && (want & COPY_VIRIAL)) ||
        (!h->ac && (want & COPY_ACCEL))) {
        host_copy_free(h);
        return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory reading %zu particles", n);
    }
    e = cudaMemcpyAsync(h->s, c->state[c->cur], n * sizeof(ad_state), cudaMemcpyDeviceToHost, c->stream);
    if (!e) e = cudaMemcpyAsync(h->ids, c->id[c->idp], n * 4, cudaMemcpyDeviceToHost, c->stream);
    if (!e && h->pr) e = cudaMemcpyAsync(h->pr, c->pressure, n * 4, cudaMemcpyDeviceToHost, c->stream);
    if (!e && h->vi) e = cudaMemcpyAsync(h->vi, c->virial, n * 4, cudaMemcpyDeviceToHost, c->stream);
    if (!e && h->ac) e = cudaMemcpyAsync(h->ac, c->acc[c->cur], n * sizeof(ad_accel), cudaMemcpyDeviceToHost, c->stream);
    if (!e) e = cudaStreamSynchronize(c->stream);
    if (e) {
        host_copy_free(h);
        return ad_fail(AD_ERR_BACKEND, "cuda", "reading particles from the GPU: %s", cudaGetErrorString(e));
    }
    return ad_ok();
}

ad_status ad_cuda_read(const ad_world *w, int flags, size_t max, const ad_particle_out *out, size_t *count)
{
    cuda_world *c = CW(w);
    host_copy h;
    /* only the arrays asked for cross the bus (a frame of a million discs: 24 of 36 bytes a disc) */
    int want = (out->pressure ? COPY_PRESSURE : 0) | (out->virial ? COPY_VIRIAL : 0) | (out->accel ? COPY_ACCEL : 0);
    ad_status st = copy_to_host(w, c, &h, want);
    if (st.code) return st;
    size_t n = w->count < max ? w->count : max;
    uint32_t *order;
    st = ad_slot_order(h.s, h.ids, h.slots, w->count, (flags & AD_READ_BY_ID) != 0, &order);
    if (!st.code)
        for (size_t o = 0; o < n; o++) {
            size_t k = order ? order[o] : o;
            if (out->state) out->state[o] = ad_particle{h.s[k].x, h.s[k].y, h.s[k].vx, h.s[k].vy};
            if (out->id) out->id[o] = h.ids[k];
            if (out->pressure) out->pressure[o] = h.pr[k];
            if (out->virial) out->virial[o] = h.vi[k];
            if (out->accel) {
                out->accel[2 * o] = h.ac[k].ax;
                out->accel[2 * o + 1] = h.ac[k].ay;
            }
        }
    free(order);
    host_copy_free(&h);
    if (!st.code && count) *count = n;
    return st;
}

/* The discs (removed ones left out, slot order kept) and the open sides' state. */
ad_status ad_cuda_export(const ad_world *w, ad_snapshot *s)
{
    memset(s, 0, sizeof *s);
    cuda_world *c = CW(w);
    host_copy h;
    ad_status st = copy_to_host(w, c, &h, COPY_ALL);
    if (st.code) return st;
    uint32_t *touch = NULL; /* where the world samples its surfaces (the panels' sums to the host with them) */
    st = ad_dev_panels_export(&c->panels, (ad_world *)w, c->idp, h.slots, &touch, c->stream);
    if (st.code) {
        host_copy_free(&h);
        return st;
    }
    size_t m = 0;
    for (size_t k = 0; k < h.slots; k++) {
        if (ad_is_dead(h.s[k])) continue;
        h.s[m] = h.s[k];
        h.ids[m] = h.ids[k];
        if (touch) touch[m] = touch[k];
        h.pr[m] = h.pr[k];
        h.vi[m] = h.vi[k];
        h.ac[m] = h.ac[k];
        m++;
    }
    s->n = m;
    s->owned = 1;
    s->state = h.s;
    s->id = h.ids;
    s->touch = touch;
    s->pressure = h.pr;
    s->virial = h.vi;
    s->accel = h.ac;
    s->primed = c->primed;
    const ad_ctrl &k = *c->ctrl_host;
    memcpy(s->open.owed, k.owed, sizeof s->open.owed);
    s->open.next_id = k.next_id;
    s->open.nwaiting = k.nwaiting;
    if (c->open) {
        int nb = w->params.res_boxes;
        st = ad_open_state_alloc(&s->open_alloc, (uint32_t)nb, 2);
        if (st.code) {
            ad_snapshot_free(s);
            return st;
        }
        s->open.waiting = s->open_alloc.waiting;
        s->open.res_state = s->open_alloc.res_state;
        s->open.res_boxes = (uint32_t)nb;
        CU(cudaMemcpy(s->open.waiting, c->waiting, k.nwaiting * sizeof(ad_entry), cudaMemcpyDeviceToHost));
        if (nb) CU(cudaMemcpy(s->open.res_state, c->res_state, 2 * (size_t)nb * sizeof(double), cudaMemcpyDeviceToHost));
    }
    return ad_ok();
}

ad_status ad_cuda_import(ad_world *w, const ad_snapshot *s)
{
    cuda_world *c = CW(w);
    if (s->n > c->cap) return ad_fail(AD_ERR_CAPACITY, "capacity", "capacity: the snapshot holds %zu discs", s->n);
    /* the device arrays are the world's, sized at creation: a snapshot that does not fit them is refused */
    if (s->open.nwaiting > AD_WAITING_MAX || (s->open.res_state && s->open.res_boxes != (uint32_t)w->params.res_boxes))
        return ad_fail(AD_ERR_FORMAT, "checkpoint",
                       "the snapshot has %u entries waiting (at most %d) and %u reservoir boxes (the world has %d)",
                       s->open.nwaiting, AD_WAITING_MAX, s->open.res_boxes, w->params.res_boxes);
    size_t n = s->n;
    CU(cudaMemcpy(c->state[c->cur], s->state, n * sizeof(ad_state), cudaMemcpyHostToDevice));
    CU(cudaMemcpy(c->id[c->idp], s->id, n * 4, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(c->pressure, s->pressure, n * 4, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(c->virial, s->virial, n * 4, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(c->acc[c->cur], s->accel, n * sizeof(ad_accel), cudaMemcpyHostToDevice));
    if (c->open && s->open.nwaiting)
        CU(cudaMemcpy(c->waiting, s->open.waiting, s->open.nwaiting * sizeof(ad_entry), cudaMemcpyHostToDevice));
    if (c->res_state && s->open.res_state)
        CU(cudaMemcpy(c->res_state, s->open.res_state, 2 * (size_t)s->open.res_boxes * sizeof(double),
                      cudaMemcpyHostToDevice));
    int changed = 0; /* the contact states and the loader's panel sums, where the world samples them */
    AD_TRY(ad_dev_panels_import(&c->panels, w, c->cap, c->idp, s->touch, n, c->stream, &changed));
    c->primed = s->primed;
    c->dt_stale = 0;
    CU(ad_cuda_forget_bin(c));
    ad_cuda_invalidate_graphs(c);
    ad_ctrl &k = *c->ctrl_host;
    k.n = (unsigned)n;
    k.next_id = s->open.next_id;
    k.nwaiting = s->open.nwaiting;
    k.dead = k.removed = 0;
    memcpy(k.owed, s->open.owed, sizeof k.owed);
    return ad_cuda_push_ctrl(w);
}

ad_status ad_cuda_fields_to_device(ad_world *w)
{
    cuda_world *c = CW(w);
    size_t cells = (size_t)w->fields.def.nx * w->fields.def.ny + 1; /* the cells, then the probe */
    if (c->field_cells != cells) {
        if (c->field_sums) cudaFree(c->field_sums);
        c->field_sums = NULL;
        CU(cudaMalloc((void **)&c->field_sums, cells * AD_FS_COUNT * sizeof(double)));
        c->field_cells = cells;
    }
    CU(cudaMemcpy(c->field_sums, w->fields.sums, cells * AD_FS_COUNT * sizeof(double), cudaMemcpyHostToDevice));
    c->sums_on_host = 1;
    return ad_ok();
}

ad_status ad_cuda_fields_to_host(ad_world *w)
{
    cuda_world *c = CW(w);
    if (c->sums_on_host) return ad_ok(); /* no step since the last copy: reading eight fields copies once */
    size_t cells = (size_t)w->fields.def.nx * w->fields.def.ny + 1; /* the cells, then the probe */
    CU(cudaMemcpyAsync(w->fields.sums, c->field_sums, cells * AD_FS_COUNT * sizeof(double), cudaMemcpyDeviceToHost,
                       c->stream));
    CU(cudaStreamSynchronize(c->stream));
    c->sums_on_host = 1;
    return ad_ok();
}

ad_status ad_cuda_panels_to_host(ad_world *w)
{
    cuda_world *c = CW(w);
    return ad_dev_panels_to_host(&c->panels, w, &c->ctrl->stats.panel_time, c->stream);
}

ad_status ad_cuda_panels_reset(ad_world *w)
{
    cuda_world *c = CW(w);
    int changed = 0; /* sampling starts: the graphs are captured again */
    ad_status st = ad_dev_panels_reset(&c->panels, w, c->cap, c->ctrl, c->ctrl_host, c->stream, &changed);
    if (changed) ad_cuda_invalidate_graphs(c);
    return st;
}

extern "C" ad_status ad_cuda_bvh_dump(const ad_world *w, ad_bvh_dump *out)
{
    cuda_world *c = CW(w);
    if (!c->bvh || !c->tree.point) return ad_fail(AD_ERR_INVALID, "broad_phase", "no BVH has been built");
    size_t n = c->tree.n;
    out->n = n;
    CU(cudaStreamSynchronize(c->stream));
    CU(cudaMemcpy(out->code, c->code_sorted, n * 4, cudaMemcpyDeviceToHost));
    CU(cudaMemcpy(out->id, c->id[c->idp], n * 4, cudaMemcpyDeviceToHost));
    CU(cudaMemcpy(out->point, c->tree.point, n * sizeof(ad_state), cudaMemcpyDeviceToHost));
    if (n > 1) {
        CU(cudaMemcpy(out->child, c->child, 2 * (n - 1) * 4, cudaMemcpyDeviceToHost));
        CU(cudaMemcpy(out->rightmost, c->rightmost, (n - 1) * 4, cudaMemcpyDeviceToHost));
        CU(cudaMemcpy(out->parent, c->parent, (2 * n - 1) * 4, cudaMemcpyDeviceToHost));
        CU(cudaMemcpy(out->box, c->box, (n - 1) * sizeof(ad_bvh_box), cudaMemcpyDeviceToHost));
    }
    return ad_ok();
}
