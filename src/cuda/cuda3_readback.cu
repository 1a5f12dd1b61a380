/* The CUDA backend's 3D read-back (cuda3_world.cuh): the control record's statistics both ways, the
 * spheres read back, checkpoints' export and import (with the contact states of sampled surfaces), the
 * field sums and the panels' sums (panels.cuh). */
#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>

#include "cuda3_world.cuh"

/* The device's control record into the host's mirror. */
cudaError_t ad_cuda3_pull_ctrl(const cuda3_world *c)
{
    cudaError_t e = cudaMemcpyAsync(c->ctrl_host, c->ctrl, sizeof(ad_ctrl), cudaMemcpyDeviceToHost, c->stream);
    return e ? e : cudaStreamSynchronize(c->stream);
}

/* The host's statistics of the step into the device's control record (a new world, a load, a new
 * step size), with the mirror's own fields (the count, the free stream's) as last pulled or set. */
ad_status ad_cuda3_push_stats(ad_world *w)
{
    cuda3_world *c = C3(w);
    ad_ctrl &h = *c->ctrl_host;
    const ad_stats &s = w->stats;
    ad_stats_copy_step(&h.stats, &s);
    h.stats.panel_time = s.panel_time; /* the device's fold adds to it where the panels are sampled */
#define TO_CTRL(cf, sf) h.cf = (decltype(h.cf))s.sf;
    AD_CTRL_STATS(TO_CTRL)
#undef TO_CTRL
    h.nonfinite = 0;
    h.fold_done = 0;
    CU(cudaMemcpyAsync(c->ctrl, c->ctrl_host, sizeof(ad_ctrl), cudaMemcpyHostToDevice, c->stream));
    CU(cudaStreamSynchronize(c->stream));
    return ad_ok();
}

ad_status ad_cuda3_pull_stats(ad_world *w)
{
    cuda3_world *c = C3(w);
    CU(ad_cuda3_pull_ctrl(c));
    const ad_ctrl &h = *c->ctrl_host;
    ad_stats &s = w->stats;
    ad_stats_copy_step(&s, &h.stats);
    s.panel_time = h.stats.panel_time;
#define TO_STATS(cf, sf) s.sf = (decltype(s.sf))h.cf;
    AD_CTRL_STATS(TO_STATS)
#undef TO_STATS
    if (c->open) w->count = s.count = h.n - h.removed; /* the slots less the spheres the last pass removed */
    if (h.count_overflow)
        return ad_fail(AD_ERR_UNSTABLE, "cell_size",
                       "by step %llu, more than %u spheres fell in one grid cell, past the GPU's %u-bit cell counters "
                       "(docs/ARCHITECTURE.md): spheres were pushed deep into each other or clamped into a border cell "
                       "by the thousands; the run's state is lost",
                       (unsigned long long)h.stats.step, ~0u >> (32 - (32 >> c->count_lg)), 32u >> c->count_lg);
    if (h.nonfinite)
        return ad_fail(AD_ERR_UNSTABLE, "dt",
                       "by step %llu, %llu sphere states became non-finite on the GPU (the step is too large for the "
                       "stiffness, or spheres were placed overlapping)",
                       (unsigned long long)h.stats.step, (unsigned long long)h.nonfinite);
    if (h.capacity_exceeded)
        return ad_fail(AD_ERR_CAPACITY, "capacity",
                       "capacity: by step %llu the free stream brought the world to %u spheres, past its capacity of "
                       "%zu (a denser or faster stream than the capacity was sized for); the new spheres past it were "
                       "not placed",
                       (unsigned long long)h.stats.step, h.capacity_exceeded, c->cap);
    return ad_ok();
}

/* The world's arrays copied to host arrays of its slots (s, id, pressure, virial, acc): with open
 * faces the device's count, removed spheres included (they hold their slots until the next sort). */
static ad_status copy_out(const cuda3_world *c, ad_snapshot *s)
{
    CU(ad_cuda3_pull_ctrl(c));
    size_t n = c->open ? c->ctrl_host->n : c->n;
    s->n = n;
    s->state3 = (ad_state3 *)malloc(n * sizeof(ad_state3) + 1);
    s->id = (uint32_t *)malloc(n * 4 + 1);
    s->pressure = (float *)malloc(n * 4 + 1);
    s->virial = (float *)malloc(n * 4 + 1);
    s->accel3 = (ad_accel3 *)malloc(n * sizeof(ad_accel3) + 1);
    s->owned = 1;
    if (!s->state3 || !s->id || !s->pressure || !s->virial || !s->accel3)
        return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory reading %zu spheres", n);
    CU(cudaMemcpy(s->state3, c->state, n * sizeof(ad_state3), cudaMemcpyDeviceToHost));
    CU(cudaMemcpy(s->id, c->id, n * 4, cudaMemcpyDeviceToHost));
    CU(cudaMemcpy(s->pressure, c->pressure, n * 4, cudaMemcpyDeviceToHost));
    CU(cudaMemcpy(s->virial, c->virial, n * 4, cudaMemcpyDeviceToHost));
    CU(cudaMemcpy(s->accel3, c->acc, n * sizeof(ad_accel3), cudaMemcpyDeviceToHost));
    return ad_ok();
}

ad_status ad_cuda3_read(const ad_world *w, int flags, size_t max, const ad_particle_out *out, size_t *count)
{
    const cuda3_world *c = C3(w);
    CU(cudaStreamSynchronize(c->stream));
    ad_snapshot s;
    memset(&s, 0, sizeof s);
    ad_status st = copy_out(c, &s);
    if (!st.code) st = ad_read3_host(s.state3, s.id, s.pressure, s.virial, s.accel3, s.n, flags, max, out, count);
    ad_snapshot_free(&s);
    return st;
}

/* The free stream's state (the entries owed, the id counter, the entries waiting, the reservoir's
 * controllers) into a snapshot. */
static ad_status export_open(const ad_world *w, const cuda3_world *c, ad_snapshot *s)
{
    const ad_ctrl &k = *c->ctrl_host;
    memcpy(s->open.owed, k.owed, sizeof s->open.owed);
    s->open.next_id = k.next_id;
    s->open.nwaiting = c->open ? k.nwaiting : 0;
    if (!c->open) return ad_ok();
    int nb = w->params.res_boxes;
    AD_TRY(ad_open_state_alloc(&s->open_alloc, (uint32_t)nb, 3));
    s->open.waiting3 = s->open_alloc.waiting3;
    s->open.res_state = s->open_alloc.res_state;
    s->open.res_boxes = (uint32_t)nb;
    CU(cudaMemcpy(s->open.waiting3, c->waiting, k.nwaiting * sizeof(ad_entry3), cudaMemcpyDeviceToHost));
    if (nb) CU(cudaMemcpy(s->open.res_state, c->res_state, 2 * (size_t)nb * sizeof(double), cudaMemcpyDeviceToHost));
    return ad_ok();
}

/* The live spheres in slot order (removed ones left out) and the free stream's state. */
ad_status ad_cuda3_export(const ad_world *w, ad_snapshot *s)
{
    const cuda3_world *c = C3(w);
    memset(s, 0, sizeof *s);
    CU(cudaStreamSynchronize(c->stream));
    s->primed = c->primed;
    ad_status st = copy_out(c, s);
    /* where the world samples its surfaces: the contact states, and the panels' sums to the host */
    if (!st.code) st = ad_dev_panels_export(&c->panels, (ad_world *)w, 0, s->n, &s->touch, c->stream);
    size_t m = 0;
    for (size_t k = 0; !st.code && k < s->n; k++) {
        if (ad_is_dead3(s->state3[k])) continue;
        s->state3[m] = s->state3[k];
        s->id[m] = s->id[k];
        if (s->touch) s->touch[m] = s->touch[k];
        s->pressure[m] = s->pressure[k];
        s->virial[m] = s->virial[k];
        s->accel3[m++] = s->accel3[k];
    }
    s->n = m;
    if (!st.code) st = export_open(w, c, s);
    if (st.code) ad_snapshot_free(s);
    return st;
}

ad_status ad_cuda3_import(ad_world *w, const ad_snapshot *s)
{
    cuda3_world *c = C3(w);
    if (s->n > c->cap)
        return ad_fail(AD_ERR_CAPACITY, "capacity", "capacity: the snapshot holds %zu spheres, the world %zu", s->n,
                       c->cap);
    int nb = w->params.res_boxes;
    if (s->open.nwaiting > (c->open ? AD_WAITING_MAX : 0) || (s->open.nwaiting && !s->open.waiting3) ||
        (s->open.res_state && s->open.res_boxes != (uint32_t)nb))
        return ad_fail(AD_ERR_FORMAT, "checkpoint",
                       "the snapshot has %u entering spheres waiting (at most %d) and %u reservoir boxes (the world "
                       "has %d)",
                       s->open.nwaiting, c->open ? AD_WAITING_MAX : 0, s->open.res_boxes, nb);
    size_t n = s->n;
    CU(cudaMemcpy(c->state, s->state3, n * sizeof(ad_state3), cudaMemcpyHostToDevice));
    CU(cudaMemcpy(c->id, s->id, n * 4, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(c->pressure, s->pressure, n * 4, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(c->virial, s->virial, n * 4, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(c->acc, s->accel3, n * sizeof(ad_accel3), cudaMemcpyHostToDevice));
    if (s->open.nwaiting)
        CU(cudaMemcpy(c->waiting, s->open.waiting3, s->open.nwaiting * sizeof(ad_entry3), cudaMemcpyHostToDevice));
    if (nb && s->open.res_state)
        CU(cudaMemcpy(c->res_state, s->open.res_state, 2 * (size_t)nb * sizeof(double), cudaMemcpyHostToDevice));
    int changed = 0; /* the contact states and the loader's panel sums, where the world samples them */
    AD_TRY(ad_dev_panels_import(&c->panels, w, c->cap, 0, s->touch, n, c->stream, &changed));
    c->n = n;
    c->primed = s->primed;
    c->dt_stale = 0;
    ad_cuda3_forget_graph(c);
    ad_ctrl &k = *c->ctrl_host;
    k.n = (unsigned)n;
    k.next_id = c->open ? s->open.next_id : (unsigned)n; /* without open faces the ids are 0 .. n-1 */
    k.nwaiting = s->open.nwaiting;
    k.dead = k.removed = k.capacity_exceeded = 0;
    memcpy(k.owed, s->open.owed, sizeof k.owed);
    return ad_cuda3_push_stats(w);
}

/* The field sums to the device (a new grid, a reset, a load) and back (a read, a checkpoint). */
ad_status ad_cuda3_fields_to_device(ad_world *w)
{
    cuda3_world *c = C3(w);
    size_t vals = ad_field_sum_count(&w->fields.def, 3);
    if (c->field_vals != vals) {
        cudaFree(c->field_sums);
        c->field_sums = NULL;
        c->field_vals = 0;
        CU(cudaMalloc((void **)&c->field_sums, vals * sizeof(double)));
        c->field_vals = vals;
    }
    CU(cudaMemcpyAsync(c->field_sums, w->fields.sums, vals * sizeof(double), cudaMemcpyHostToDevice, c->stream));
    CU(cudaStreamSynchronize(c->stream));
    c->sums_on_host = 1;
    return ad_ok();
}

ad_status ad_cuda3_fields_to_host(ad_world *w)
{
    cuda3_world *c = C3(w);
    if (c->sums_on_host) return ad_ok(); /* no step since the last copy: reading ten fields copies once */
    CU(cudaMemcpyAsync(w->fields.sums, c->field_sums, c->field_vals * sizeof(double), cudaMemcpyDeviceToHost,
                       c->stream));
    CU(cudaStreamSynchronize(c->stream));
    c->sums_on_host = 1;
    return ad_ok();
}

ad_status ad_cuda3_panels_to_host(ad_world *w)
{
    cuda3_world *c = C3(w);
    return ad_dev_panels_to_host(&c->panels, w, &c->ctrl->stats.panel_time, c->stream);
}

ad_status ad_cuda3_panels_reset(ad_world *w)
{
    cuda3_world *c = C3(w);
    int changed = 0; /* sampling starts: the graphs are captured again */
    ad_status st = ad_dev_panels_reset(&c->panels, w, c->cap, c->ctrl, c->ctrl_host, c->stream, &changed);
    if (changed) ad_cuda3_forget_graph(c);
    return st;
}
