/* The CUDA backend's 3D worlds (dimensions = 3): the device buffers, spheres and triangles in, the step as
 * kernels on one stream captured as a CUDA graph (no host round trip in a step); read-back and checkpoints:
 * cuda3_readback.cu, what the two share: cuda3_world.cuh. The kernels: kernels3.cuh. The sort is 2D's
 * counting sort (DESIGN.md): each sphere's cell and its rank from the cell counters (8, 16 or 32 bits,
 * counts.cuh), their scan, and the order of a stable sort by cell from the ranks (k_cell_members,
 * k_stable_rank), so the order of a cell's spheres is their previous order and a run is the same bits every
 * time (there is no non-deterministic mode in 3D). Every `interval` steps the field sums (fields3.cuh)
 * after the step's graph, on the device. What the 2D GPU path adds for speed (the bin fused into the pass,
 * steps nobody reads skipping their observables) is not here yet.
 *
 * Open faces (the free stream, physics/open3.h) as 2D's open sides: the count lives on the device
 * (ad_ctrl.n) and the per-sphere kernels are launched for the capacity; the pass removes the spheres
 * past an open face (they keep their slots, dead, until the next sort puts them in the dead cell after
 * the grid's and the world ends before them), and k_enter_new (enter.cuh, open3.cuh) appends the step's
 * entries after the pass, inside the step's graph. The reservoir (a dense gas's band along the open
 * faces, physics/open.h, reservoir_dim.h) as 2D's: after the sort its plan (k_reservoir_plan<3>: each
 * box's count, controller and the spheres it removes, marked in `doomed`), the pass removes the
 * marked ones and runs the thermostat, and after the pass the boxes' additions join the entries: the
 * CPU's functions in the CPU's order, so the same choices from the same state. */
#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>

#include "cuda3_world.cuh"
#include "fold.cuh"
#include "fields3.cuh"
#include "kernels3.cuh"
#include "open3.cuh"

static int open3(const ad_params *p) { return p->open_x || p->open_y; }

/* The entries' buffers of a world with open faces, and the reservoir's (its boxes, the slots' marks). */
static size_t open_bytes(const ad_params *p, size_t cap)
{
    size_t nb = (size_t)p->res_boxes;
    size_t res = nb ? nb * (2 * sizeof(double) + 2 * 4) + ad_cuda_reservoir_scan_bytes(p->res_boxes) + cap : 0;
    return open3(p) ? 2 * AD_WAITING_MAX * sizeof(ad_entry3) + AD_ROOM_MAX * (sizeof(ad_state3) + 1) + 4 + res : 0;
}

/* Bytes a sphere takes: two states, ids and accelerations, pressure, virial, its cell and rank, the
 * stable order's members and permutation; RK4 three states more. */
static size_t per_sphere(const ad_world_def *d)
{
    size_t b = 2 * sizeof(ad_state3) + 2 * 4 + 2 * sizeof(ad_accel3) + 2 * 4 + 4 * 4;
    if (ad_surfaces_nonspecular(d)) b += 2 * 4; /* the contact states (panels.cuh) */
    return d->integrator == AD_INTEGRATOR_RK4 ? b + 3 * sizeof(ad_state3) : b;
}

/* The counters' width from the most spheres a cell can hold without overlaps (counts.cuh). */
static unsigned count_lg3(const ad_world_def *d, const ad_params *p)
{
    return ad_count_lg(ad_cell_packing3(p->cell_x, p->cell_y, p->cell_z, d->radius), d->capacity);
}

static size_t cuda3_bytes_needed(const ad_world_def *d, const ad_params *p)
{
    size_t cells = (size_t)p->nx * (size_t)p->ny * (size_t)p->nz;
    unsigned lg = count_lg3(d, p);
    return d->capacity * per_sphere(d) + ad_count_bytes(cells, lg) + ad_start_slots(cells, lg) * 4 +
           ad_scan_state_bytes(cells, lg) + 2 * (grid3_of(d->capacity) + 1) * sizeof(ad_step_sums) +
           AD_REDUCE_BLOCKS * sizeof(ad_step_sums) + sizeof(ad_ctrl) + open_bytes(p, d->capacity);
}

static void free_triangles(cuda3_world *c)
{
    cudaFree(c->tris);
    c->tris = NULL;
    ad_dev_tree_free(&c->tree);
    memset(&c->gdev, 0, sizeof c->gdev);
}

static void cuda3_destroy(ad_world *w)
{
    cuda3_world *c = C3(w);
    if (!c) return;
    for (int o = 0; o < 2; o++)
        if (c->graph_ok[o]) cudaGraphExecDestroy(c->graph[o]);
    void *dev[] = {c->state,   c->sorted, c->id,      c->id_sorted, c->acc,    c->acc_sorted, c->pressure,
                   c->virial,  c->cell_of, c->rank,   c->members,   c->perm,   c->count,      c->start,
                   c->tile_sum, c->rk[0],  c->rk[1],  c->rk[2],     c->blocks, c->blocks2,    c->ctrl,
                   c->field_sums, c->waiting, c->waiting_next, c->spots, c->spot_gas, c->vmax2_new, c->res_state,
                   c->res_add, c->res_add_start, c->res_scan_temp, c->doomed};
    for (size_t k = 0; k < sizeof dev / sizeof dev[0]; k++) cudaFree(dev[k]);
    free_triangles(c);
    ad_dev_panels_free(&c->panels);
    cudaFreeHost(c->ctrl_host);
    for (int k = 0; k < 2; k++)
        if (c->batch[k]) cudaEventDestroy(c->batch[k]);
    if (c->stream) cudaStreamDestroy(c->stream);
    free(c);
    w->impl = NULL;
}

static ad_status cuda3_create(ad_world *w)
{
    const ad_world_def *d = &w->def;
    cuda3_world *c = (cuda3_world *)calloc(1, sizeof *c);
    if (!c) return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory");
    w->impl = c;
    size_t free_b = 0, total_b = 0, need = cuda3_bytes_needed(d, &w->params);
    CU(cudaMemGetInfo(&free_b, &total_b));
    if (need > free_b)
        return ad_fail(AD_ERR_NO_MEMORY, "capacity", "capacity: the world needs %zu bytes of GPU memory (%zu spheres x "
                       "%zu bytes, the grid, the sort) but %zu are free", need, d->capacity, per_sphere(d), free_b);
    c->cap = d->capacity;
    c->ncell = (size_t)w->params.nx * (size_t)w->params.ny * (size_t)w->params.nz;
    c->count_lg = count_lg3(d, &w->params);
    c->open = open3(&w->params);
    w->stats.threads = 1;
    w->stats.cell_counter_bits = 32 >> c->count_lg;
    CU(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
    for (int k = 0; k < 2; k++) CU(cudaEventCreateWithFlags(&c->batch[k], cudaEventDisableTiming));
    size_t cap = c->cap, nb = grid3_of(cap) + 1, nres = (size_t)w->params.res_boxes;
    c->res_scan_bytes = nres ? ad_cuda_reservoir_scan_bytes((int)nres) : 0;
    int rk4 = d->integrator == AD_INTEGRATOR_RK4;
    const struct {
        void **p;
        size_t bytes;
    } arrays[] = {
        {(void **)&c->state, cap * sizeof(ad_state3)},      {(void **)&c->sorted, cap * sizeof(ad_state3)},
        {(void **)&c->id, cap * 4},                         {(void **)&c->id_sorted, cap * 4},
        {(void **)&c->acc, cap * sizeof(ad_accel3)},        {(void **)&c->acc_sorted, cap * sizeof(ad_accel3)},
        {(void **)&c->pressure, cap * 4},                   {(void **)&c->virial, cap * 4},
        {(void **)&c->cell_of, cap * 4},                    {(void **)&c->rank, cap * 4},
        {(void **)&c->members, cap * 4},                    {(void **)&c->perm, cap * 4},
        {(void **)&c->count, ad_count_bytes(c->ncell, c->count_lg)},
        {(void **)&c->start, ad_start_slots(c->ncell, c->count_lg) * 4},
        {(void **)&c->tile_sum, ad_scan_state_bytes(c->ncell, c->count_lg)},
        {(void **)&c->blocks, 2 * nb * sizeof(ad_step_sums)},
        {(void **)&c->blocks2, AD_REDUCE_BLOCKS * sizeof(ad_step_sums)}, {(void **)&c->ctrl, sizeof(ad_ctrl)},
        {(void **)&c->rk[0], rk4 ? cap * sizeof(ad_state3) : 0}, {(void **)&c->rk[1], rk4 ? cap * sizeof(ad_state3) : 0},
        {(void **)&c->rk[2], rk4 ? cap * sizeof(ad_state3) : 0},
        {(void **)&c->waiting, c->open ? AD_WAITING_MAX * sizeof(ad_entry3) : 0},
        {(void **)&c->waiting_next, c->open ? AD_WAITING_MAX * sizeof(ad_entry3) : 0},
        {(void **)&c->spots, c->open ? AD_ROOM_MAX * sizeof(ad_state3) : 0},
        {(void **)&c->spot_gas, c->open ? (size_t)AD_ROOM_MAX : 0},
        {(void **)&c->vmax2_new, c->open ? sizeof(unsigned) : 0},
        /* cleared below: the controllers start at rest, no sphere marked */
        {(void **)&c->res_state, nres * 2 * sizeof(double)}, {(void **)&c->res_add, nres * 4},
        {(void **)&c->res_add_start, nres * 4}, {(void **)&c->res_scan_temp, c->res_scan_bytes},
        {(void **)&c->doomed, nres ? cap : 0},
    };
    for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; k++) {
        if (!arrays[k].bytes) continue;
        if (cudaMalloc(arrays[k].p, arrays[k].bytes) != cudaSuccess) {
            cudaGetLastError();
            return ad_fail(AD_ERR_NO_MEMORY, "capacity", "capacity: allocating %zu bytes of GPU memory failed",
                           arrays[k].bytes);
        }
        CU(cudaMemsetAsync(*arrays[k].p, 0, arrays[k].bytes, c->stream));
    }
    CU(cudaMallocHost((void **)&c->ctrl_host, sizeof(ad_ctrl)));
    memset(c->ctrl_host, 0, sizeof(ad_ctrl));
    c->ctrl_host->stats = w->stats;
    CU(cudaMemcpyAsync(c->ctrl, c->ctrl_host, sizeof(ad_ctrl), cudaMemcpyHostToDevice, c->stream));
    CU(cudaStreamSynchronize(c->stream));
    return ad_ok();
}

void ad_cuda3_forget_graph(cuda3_world *c)
{
    for (int o = 0; o < 2; o++)
        if (c->graph_ok[o]) cudaGraphExecDestroy(c->graph[o]);
    c->graph_ok[0] = c->graph_ok[1] = 0;
}

/* New spheres at the device's count of slots (removed spheres hold theirs until the next sort), ids
 * from the device's counter. */
static ad_status cuda3_add(ad_world *w, const ad_particle3 *p, size_t n)
{
    cuda3_world *c = C3(w);
    CU(ad_cuda3_pull_ctrl(c));
    size_t at = c->open ? c->ctrl_host->n : c->n;
    unsigned id0 = c->ctrl_host->next_id;
    if (at + n > c->cap)
        return ad_fail(AD_ERR_CAPACITY, "capacity", "capacity: adding %zu spheres to %zu slots in use exceeds %zu", n,
                       at, c->cap);
    ad_state3 *s = (ad_state3 *)malloc(n * sizeof *s + 1);
    unsigned *id = (unsigned *)malloc(n * 4 + 1);
    if (!s || !id) {
        free(s);
        free(id);
        return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory adding %zu spheres", n);
    }
    for (size_t i = 0; i < n; i++) {
        ad_state3 q = {p[i].x, p[i].y, p[i].z, 0.0f, p[i].vx, p[i].vy, p[i].vz, 0.0f};
        s[i] = ad_wrap_state3(&w->params, q);
        id[i] = id0 + (unsigned)i;
    }
    c->ctrl_host->n = (unsigned)(at + n);
    c->ctrl_host->next_id = id0 + (unsigned)n;
    cudaError_t e = cudaMemcpyAsync(c->state + at, s, n * sizeof *s, cudaMemcpyHostToDevice, c->stream);
    if (!e) e = cudaMemcpyAsync(c->id + at, id, n * 4, cudaMemcpyHostToDevice, c->stream);
    if (!e) e = cudaMemsetAsync(c->acc + at, 0, n * sizeof(ad_accel3), c->stream);
    if (!e) e = cudaMemsetAsync(c->pressure + at, 0, n * 4, c->stream);
    if (!e) e = cudaMemsetAsync(c->virial + at, 0, n * 4, c->stream);
    if (!e) e = ad_dev_panels_clear(&c->panels, 0, at, n, c->stream); /* no contact yet */
    if (!e) e = cudaMemcpyAsync(&c->ctrl->n, &c->ctrl_host->n, 4, cudaMemcpyHostToDevice, c->stream);
    if (!e) e = cudaMemcpyAsync(&c->ctrl->next_id, &c->ctrl_host->next_id, 4, cudaMemcpyHostToDevice, c->stream);
    if (!e) e = cudaStreamSynchronize(c->stream);
    free(s);
    free(id);
    CU(e);
    c->n = at + n;
    c->primed = 0;
    c->dt_stale = 1;
    ad_cuda3_forget_graph(c);
    return ad_ok();
}

/* The triangles and their tree on the device (the host built them: world3.c). */
static ad_status cuda3_body_changed(ad_world *w)
{
    cuda3_world *c = C3(w);
    const ad_triangles *t = &w->tri;
    free_triangles(c);
    if (t->count) {
        CU(cudaMalloc(&c->tris, t->count * sizeof(ad_tri)));
        CU(cudaMemcpy(c->tris, t->tris, t->count * sizeof(ad_tri), cudaMemcpyHostToDevice));
        CU(ad_dev_tree_upload(&c->tree, t->tree.t, t->tree.item));
        c->gdev.t = c->tree.t;
        c->gdev.item = c->tree.item;
        c->gdev.tris = c->tris;
    }
    c->primed = 0;
    ad_cuda3_forget_graph(c);
    return ad_ok();
}

/* ------------------------------------------------------------ the step -- */

/* The contact states where surfaces are sampled: [0] in the world's order, [1] sorted; else NULL. */
static unsigned *touch_of(const cuda3_world *c, int k)
{
    return c->panels.on ? c->panels.touch[k] : NULL;
}

static ad3_pass pass_io(cuda3_world *c)
{
    ad3_pass io = {c->start, c->sorted,   c->id_sorted,   c->acc_sorted,  c->state,     c->id,
                   c->acc,   c->pressure, c->virial,      c->blocks,      NULL,         NULL,
                   c->rk[2], c->doomed,   touch_of(c, 1), touch_of(c, 0), c->panels.fix};
    return io;
}

/* Steps 1-3: the world's state into cell order (sorted, id_sorted, acc_sorted) and the cells' starts;
 * with open faces the removed spheres go to the dead cell, after the others, and the world ends there. */
static cudaError_t enqueue_sort(ad_world *w, cuda3_world *c)
{
    unsigned n = launch_n(c), g = grid3_of(n), dead_cell = (unsigned)c->ncell;
    ad_n nn = count_of(c, n);
    unsigned *dead = c->open ? &c->ctrl->dead : NULL;
    cudaStream_t st = c->stream;
    ad_counts count = {c->count, c->count_lg, &c->ctrl->count_overflow};
    k3_count<<<g, AD_CUDA_BLOCK, 0, st>>>(w->params, c->state, nn, count, c->cell_of, c->rank, dead);
    /* the scan leaves the counters cleared for the next bin */
    cudaError_t e = ad_cuda_scan(c->count, c->count_lg, c->start, c->tile_sum, c->ncell, st);
    if (!e) e = ad_cuda_stable_order(nn, dead_cell, dead, c->cell_of, c->rank, c->start, c->members, c->perm, st);
    if (e) return e;
    /* only Verlet's kick reads the accelerations of the last step; the others compute them afresh */
    const ad_accel3 *acc = w->def.integrator == AD_INTEGRATOR_VERLET ? c->acc : NULL;
    k3_reorder<<<g, AD_CUDA_BLOCK, 0, st>>>(c->perm, c->state, c->id, acc, nn, c->sorted, c->id_sorted, c->acc_sorted,
                                            touch_of(c, 0), touch_of(c, 1));
    e = cudaGetLastError();
    if (!e && c->open) e = ad_cuda_after_sort(c->start, dead_cell, c->ctrl, st);
    return e;
}

/* Before the pass, on the step's grid: the reservoir's plan (enter.cuh). */
static void enqueue_reservoir_plan(ad_world *w, cuda3_world *c)
{
    int nb = w->params.res_boxes;
    if (!nb) return;
    k_reservoir_plan<3><<<grid3_of((size_t)nb), AD_CUDA_BLOCK, 0, c->stream>>>(w->params, c->start, c->id_sorted, c->ctrl,
                                                                               c->res_state, c->res_add, c->doomed);
}

/* Step 5's entries and the reservoir's additions after the pass (enter.cuh, open3.cuh), appended to the
 * world's state. */
static void enqueue_enter(ad_world *w, cuda3_world *c)
{
    if (!c->open) return;
    int nb = w->params.res_boxes;
    if (nb) ad_cuda_reservoir_scan(c->res_scan_temp, c->res_scan_bytes, c->res_add, c->res_add_start, nb, c->stream);
    const ad_enter_lists<ad_entry3> l{c->waiting, c->waiting_next, c->res_add, c->res_add_start, c->res_state,
                                      c->vmax2_new, (unsigned)c->cap, NULL};
    const ad_enter_spheres d{l, c->state, c->id, c->pressure, c->virial, c->acc, touch_of(c, 0), c->spots, c->spot_gas};
    k_enter_new<<<1, AD_ENTER_THREADS, 0, c->stream>>>(w->params, c->ctrl, c->start, d);
}

/* The one-evaluation pass, observing or not, sampling the surfaces or not (kernels3.cuh). */
template <bool OBS, bool SURF>
static void enqueue_pass_surf(ad_world *w, cuda3_world *c, const ad3_pass &io, unsigned g, ad_n nn)
{
    cudaStream_t st = c->stream;
    const ad_params &p = w->params;
    ad_integrator integ = w->def.integrator;
    if (integ == AD_INTEGRATOR_EULER)
        k3_interact<AD_INTEGRATOR_EULER, OBS, SURF><<<g, AD_CUDA_BLOCK, 0, st>>>(p, c->gdev, io, nn, c->ctrl);
    else if (integ == AD_INTEGRATOR_VERLET)
        k3_interact<AD_INTEGRATOR_VERLET, OBS, SURF><<<g, AD_CUDA_BLOCK, 0, st>>>(p, c->gdev, io, nn, c->ctrl);
    else
        k3_interact<AD_INTEGRATOR_SYMPLECTIC_EULER, OBS, SURF>
            <<<g, AD_CUDA_BLOCK, 0, st>>>(p, c->gdev, io, nn, c->ctrl);
}

template <bool OBS> static void enqueue_pass(ad_world *w, cuda3_world *c, const ad3_pass &io, unsigned g, ad_n nn)
{
    if (c->panels.on)
        enqueue_pass_surf<OBS, true>(w, c, io, g, nn);
    else
        enqueue_pass_surf<OBS, false>(w, c, io, g, nn);
}

/* One step: [Verlet's drift], the sort, [the reservoir's plan], the pass (or RK4's four stages), the
 * entries, the fold. obs: a
 * step somebody reads (its observables and snapshot sums written; RK4 always writes them). */
static cudaError_t enqueue_step(ad_world *w, cuda3_world *c, int obs)
{
    unsigned n = launch_n(c), g = grid3_of(n);
    ad_n nn = count_of(c, n);
    cudaStream_t st = c->stream;
    ad_integrator integ = w->def.integrator;
    const ad_params &p = w->params;
    if (integ == AD_INTEGRATOR_VERLET) k3_drift<<<g, AD_CUDA_BLOCK, 0, st>>>(p, c->state, c->acc, nn, c->ctrl);
    cudaError_t e = enqueue_sort(w, c);
    if (e) return e;
    enqueue_reservoir_plan(w, c);
    ad3_pass io = pass_io(c);
    unsigned nrec = g;
    if (integ == AD_INTEGRATOR_RK4) {
        float skin = (float)w->dt_rule.move;
        io.rk_out = c->rk[0];
        k3_rk4<0><<<g, AD_CUDA_BLOCK, 0, st>>>(p, c->gdev, io, nn, c->ctrl, skin);
        io.rk_in = c->rk[0], io.rk_out = c->rk[1];
        k3_rk4<1><<<g, AD_CUDA_BLOCK, 0, st>>>(p, c->gdev, io, nn, c->ctrl, skin);
        io.rk_in = c->rk[1], io.rk_out = c->rk[0];
        k3_rk4<2><<<g, AD_CUDA_BLOCK, 0, st>>>(p, c->gdev, io, nn, c->ctrl, skin);
        io.rk_in = c->rk[0], io.rk_out = NULL;
        if (c->panels.on)
            k3_rk4<3, true><<<g, AD_CUDA_BLOCK, 0, st>>>(p, c->gdev, io, nn, c->ctrl, skin);
        else
            k3_rk4<3><<<g, AD_CUDA_BLOCK, 0, st>>>(p, c->gdev, io, nn, c->ctrl, skin);
        nrec = 2 * g;
    } else if (obs) {
        enqueue_pass<true>(w, c, io, g, nn);
    } else {
        enqueue_pass<false>(w, c, io, g, nn);
    }
    enqueue_enter(w, c);
    unsigned nr = (nrec + AD_FOLD_SHARE - 1) / AD_FOLD_SHARE;
    if (nr > AD_REDUCE_BLOCKS) nr = AD_REDUCE_BLOCKS;
    /* the panels' sums over this step's dt, before the fold chooses the next */
    if (c->panels.on && (e = ad_dev_panels_fold(&c->panels, &p, c->ctrl, st)) != cudaSuccess) return e;
    k_fold_step<AD_SUMS3><<<nr, AD_CUDA_BLOCK, 0, st>>>(c->blocks, nrec, c->blocks2, c->ctrl, w->dt_rule,
                                                         (float)(1.0 / w->def.radius), c->open ? c->vmax2_new : NULL, NULL);
    return cudaGetLastError();
}

static ad_status step_graph(ad_world *w, cuda3_world *c, int obs)
{
    if (c->graph_ok[obs]) return ad_ok();
    cudaGraph_t g;
    CU(cudaStreamBeginCapture(c->stream, cudaStreamCaptureModeThreadLocal));
    cudaError_t e = enqueue_step(w, c, obs);
    cudaError_t e2 = cudaStreamEndCapture(c->stream, &g);
    if (e || e2) return ad_fail(AD_ERR_BACKEND, "cuda", "capturing the 3D step: %s", cudaGetErrorString(e ? e : e2));
    e = cudaGraphInstantiate(&c->graph[obs], g, 0);
    cudaGraphDestroy(g);
    if (e) return ad_fail(AD_ERR_BACKEND, "cuda", "instantiating the 3D step graph: %s", cudaGetErrorString(e));
    c->graph_ok[obs] = 1;
    return ad_ok();
}

/* After spheres were added the next step's size comes from the fastest sphere (read once; a removed
 * one has no speed). */
static ad_status refresh_dt(ad_world *w, cuda3_world *c)
{
    AD_TRY(ad_cuda3_pull_stats(w));
    size_t n = c->open ? c->ctrl_host->n : c->n;
    ad_state3 *s = (ad_state3 *)malloc(n * sizeof *s + 1);
    if (!s) return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory");
    cudaError_t e = cudaMemcpy(s, c->state, n * sizeof *s, cudaMemcpyDeviceToHost);
    float v2 = 0.0f;
    for (size_t k = 0; !e && k < n; k++) v2 = fmaxf(v2, s[k].vx * s[k].vx + s[k].vy * s[k].vy + s[k].vz * s[k].vz);
    free(s);
    CU(e);
    w->stats.dt = ad_dt_next(&w->dt_rule, sqrt((double)v2));
    c->dt_stale = 0;
    return ad_cuda3_push_stats(w);
}

/* Step 6's field sample, after the step's graph on the same stream: no host round trip. */
static ad_status sample_fields(ad_world *w, cuda3_world *c)
{
    /* with open faces the count lives on the device (c->n is not kept): launched for the capacity, the
     * kernel reads it there, so the slots past the world's end (removed spheres) are not sampled */
    unsigned n = launch_n(c);
    k3_fields<<<grid3_of(n), AD_CUDA_BLOCK, 0, c->stream>>>(w->fields.grid, count_of(c, n), c->state, c->virial, c->pressure,
                                                           c->acc, c->field_sums);
    CU(cudaGetLastError());
    w->fields.samples++;
    if (w->fields.grid.probe) w->fields.probe_samples++;
    return ad_ok();
}

static ad_status cuda3_step(ad_world *w, uint64_t nsteps)
{
    cuda3_world *c = C3(w);
    c->sums_on_host = 0; /* the steps sample the fields on the device */
    uint64_t step0 = w->stats.step; /* the host knows when to sample without asking the device */
    int changed = 0;                /* sampling starts, or the body grew: new arrays, new graphs */
    AD_TRY(ad_dev_panels_sync(&c->panels, w, c->cap, c->stream, &changed));
    if (changed) ad_cuda3_forget_graph(c);
    if (c->dt_stale) AD_TRY(refresh_dt(w, c));
    if (w->def.integrator == AD_INTEGRATOR_VERLET && !c->primed) {
        if (enqueue_sort(w, c) != cudaSuccess) return ad_fail(AD_ERR_BACKEND, "cuda", "the sort's launch failed");
        unsigned n = launch_n(c);
        k3_prime<<<grid3_of(n), AD_CUDA_BLOCK, 0, c->stream>>>(w->params, c->gdev, pass_io(c), count_of(c, n));
        CU(cudaGetLastError());
        c->primed = 1;
    }
    for (uint64_t k = 0; k < nsteps; k++) {
        /* the per-sphere observables and snapshot sums are written on the steps somebody reads:
         * before a field sample and at the end of the call */
        int sample = w->fields.enabled && (step0 + k + 1) % w->fields.def.interval == 0;
        int obs = k + 1 == nsteps || sample;
        AD_TRY(step_graph(w, c, obs));
        CU(cudaGraphLaunch(c->graph[obs], c->stream));
        if (sample) AD_TRY(sample_fields(w, c));
        /* a bounded queue: at most two batches of 32 steps in flight, so Ctrl-C stops soon */
        if ((k & 31) == 31) {
            int b = (int)((k >> 5) & 1);
            CU(cudaEventRecord(c->batch[b], c->stream));
            CU(cudaEventSynchronize(c->batch[!b]));
            if (w->interrupt && *w->interrupt) {
                if (!obs) { /* the last step did not observe: one more, observing, ends the call */
                    AD_TRY(step_graph(w, c, 1));
                    CU(cudaGraphLaunch(c->graph[1], c->stream));
                    if (w->fields.enabled && (step0 + k + 2) % w->fields.def.interval == 0) AD_TRY(sample_fields(w, c));
                }
                break;
            }
        }
    }
    return ad_cuda3_pull_stats(w);
}

extern "C" const ad_backend_ops ad_cuda3_backend = {
    "cuda",
    cuda3_create,
    cuda3_destroy,
    nullptr, /* add_particles: 2D */
    cuda3_add,
    cuda3_body_changed,
    cuda3_step,
    ad_cuda3_read,
    ad_cuda3_export,
    ad_cuda3_import,
    ad_cuda3_fields_to_host,
    ad_cuda3_fields_to_device,
    ad_cuda3_pull_stats,
    cuda3_bytes_needed,
    ad_cuda3_panels_to_host,
    ad_cuda3_panels_reset,
    NULL, /* writer: one process */
    NULL, /* agree */
};
