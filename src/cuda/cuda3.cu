/* The CUDA backend's 3D worlds (dimensions = 3): the device buffers, spheres and triangles in, the step
 * as kernels on one stream captured as a CUDA graph (no host round trip in a step), read-back and
 * checkpoints. The kernels: kernels3.cuh. The sort is 2D's counting sort (DESIGN.md): each sphere's
 * cell and its rank from the cell counters (8, 16 or 32 bits, counts.cuh), their scan, and the order
 * of a stable sort by cell from the ranks (k_cell_members, k_stable_rank), so the order of a cell's
 * spheres is their previous order and a run is the same bits every time (there is no
 * non-deterministic mode in 3D). Every `interval` steps the field sums (fields3.cuh) after the step's
 * graph, on the device. What the 2D GPU path adds for speed (the bin fused into the pass, steps nobody
 * reads skipping their observables) is not here yet.
 *
 * Open faces (the free stream, physics/open3.h) as 2D's open sides: the count lives on the device
 * (ad_ctrl.n) and the per-sphere kernels are launched for the capacity; the pass removes the spheres
 * past an open face (they keep their slots, dead, until the next sort puts them in the dead cell after
 * the grid's and the world ends before them), and k3_enter (open3.cuh) appends the step's entries
 * after the pass, inside the step's graph. */
#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>

#include "cuda_world.cuh"
#include "fold.cuh"
#include "fields3.cuh"
#include "kernels3.cuh"
#include "open3.cuh"

struct cuda3_world {
    size_t cap, n, ncell;
    unsigned count_lg; /* the cell counters' width: 32 >> count_lg bits (counts.cuh) */
    cudaStream_t stream;
    ad_state3 *state, *sorted; /* the world's state between steps; the step's in cell order */
    unsigned *id, *id_sorted;
    ad_accel3 *acc, *acc_sorted;
    float *pressure, *virial;
    unsigned *cell_of, *rank, *members, *perm; /* a sphere's cell, its rank in it; the stable order's */
    unsigned *count, *start, *tile_sum;        /* the cell counters, their scan (ad_start_slots), its scratch */
    ad_state3 *rk[3]; /* RK4: two stage buffers and the weighted sum */
    ad_step_sums *blocks, *blocks2;
    ad_ctrl *ctrl, *ctrl_host;
    ad_tri *tris;
    ad_dev_tree<ad_bvh_box3, ad_bvh3> tree; /* the triangle tree's arrays */
    ad_tri_tree gdev;                       /* what the kernels walk */
    cudaEvent_t batch[2];
    cudaGraphExec_t graph;
    int graph_ok, primed, dt_stale;
    double *field_sums; /* the field sums on the device (fields3.cuh), ad_field_sum_count of them */
    size_t field_vals;
    int sums_on_host;   /* the host's copy of field_sums is current: no step since the last copy either way */
    /* open faces: the count on the device (c->n unused), the entries' buffers (open3.cuh) */
    int open;
    ad_entry3 *waiting, *waiting_next; /* AD_WAITING_MAX each */
    ad_state3 *spots;                  /* AD_ROOM_MAX */
    unsigned *vmax2_new;
};

static cuda3_world *C3(const ad_world *w) { return (cuda3_world *)w->impl; }
static unsigned grid3_of(size_t n) { return (unsigned)((n + AD_CUDA_BLOCK - 1) / AD_CUDA_BLOCK); }

/* The size per-sphere kernels are launched for: the count, or with open faces the capacity; and the
 * count as the kernels take it (with open faces, read on the device). */
static unsigned launch_n(const cuda3_world *c) { return (unsigned)(c->open ? c->cap : c->n); }
static ad_n count_of(const cuda3_world *c, unsigned n) { return ad_n{n, c->open ? &c->ctrl->n : NULL}; }

static int open3(const ad_params *p) { return p->open_x || p->open_y; }

/* The entries' buffers of a world with open faces. */
static size_t open_bytes(const ad_params *p)
{
    return open3(p) ? 2 * AD_WAITING_MAX * sizeof(ad_entry3) + AD_ROOM_MAX * sizeof(ad_state3) + 4 : 0;
}

/* Bytes a sphere takes: two states, ids and accelerations, pressure, virial, its cell and rank, the
 * stable order's members and permutation; RK4 three states more. */
static size_t per_sphere(const ad_world_def *d)
{
    size_t b = 2 * sizeof(ad_state3) + 2 * 4 + 2 * sizeof(ad_accel3) + 2 * 4 + 4 * 4;
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
           AD_REDUCE_BLOCKS * sizeof(ad_step_sums) + sizeof(ad_ctrl) + open_bytes(p);
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
    if (c->graph_ok) cudaGraphExecDestroy(c->graph);
    void *dev[] = {c->state,   c->sorted, c->id,      c->id_sorted, c->acc,    c->acc_sorted, c->pressure,
                   c->virial,  c->cell_of, c->rank,   c->members,   c->perm,   c->count,      c->start,
                   c->tile_sum, c->rk[0],  c->rk[1],  c->rk[2],     c->blocks, c->blocks2,    c->ctrl,
                   c->field_sums, c->waiting, c->waiting_next, c->spots, c->vmax2_new};
    for (size_t k = 0; k < sizeof dev / sizeof dev[0]; k++) cudaFree(dev[k]);
    free_triangles(c);
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
    if (w->params.res_boxes)
        return ad_fail(AD_ERR_INVALID, "reservoir",
                       "reservoir = %g m: the 3D free-stream reservoir runs on backend = cpu or reference for now, not "
                       "on the GPU", d->reservoir);
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
    size_t cap = c->cap, nb = grid3_of(cap) + 1;
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
        {(void **)&c->vmax2_new, c->open ? sizeof(unsigned) : 0},
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

static void forget_graph(cuda3_world *c)
{
    if (c->graph_ok) cudaGraphExecDestroy(c->graph);
    c->graph_ok = 0;
}

/* The device's control record into the host's mirror. */
static cudaError_t pull_ctrl(const cuda3_world *c)
{
    cudaError_t e = cudaMemcpyAsync(c->ctrl_host, c->ctrl, sizeof(ad_ctrl), cudaMemcpyDeviceToHost, c->stream);
    return e ? e : cudaStreamSynchronize(c->stream);
}

/* The host's statistics of the step into the device's control record (a new world, a load, a new
 * step size), with the mirror's own fields (the count, the free stream's) as last pulled or set. */
static ad_status push_stats(ad_world *w)
{
    cuda3_world *c = C3(w);
    ad_ctrl &h = *c->ctrl_host;
    const ad_stats &s = w->stats;
    ad_stats_copy_step(&h.stats, &s);
#define TO_CTRL(cf, sf) h.cf = (decltype(h.cf))s.sf;
    AD_CTRL_STATS(TO_CTRL)
#undef TO_CTRL
    h.nonfinite = 0;
    h.fold_done = 0;
    CU(cudaMemcpyAsync(c->ctrl, c->ctrl_host, sizeof(ad_ctrl), cudaMemcpyHostToDevice, c->stream));
    CU(cudaStreamSynchronize(c->stream));
    return ad_ok();
}

static ad_status cuda3_pull_stats(ad_world *w)
{
    cuda3_world *c = C3(w);
    CU(pull_ctrl(c));
    const ad_ctrl &h = *c->ctrl_host;
    ad_stats &s = w->stats;
    ad_stats_copy_step(&s, &h.stats);
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
                       "not placed", (unsigned long long)h.stats.step, h.capacity_exceeded, c->cap);
    return ad_ok();
}

/* New spheres at the device's count of slots (removed spheres hold theirs until the next sort), ids
 * from the device's counter. */
static ad_status cuda3_add(ad_world *w, const ad_particle3 *p, size_t n)
{
    cuda3_world *c = C3(w);
    CU(pull_ctrl(c));
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
    if (!e) e = cudaMemcpyAsync(&c->ctrl->n, &c->ctrl_host->n, 4, cudaMemcpyHostToDevice, c->stream);
    if (!e) e = cudaMemcpyAsync(&c->ctrl->next_id, &c->ctrl_host->next_id, 4, cudaMemcpyHostToDevice, c->stream);
    if (!e) e = cudaStreamSynchronize(c->stream);
    free(s);
    free(id);
    CU(e);
    c->n = at + n;
    c->primed = 0;
    c->dt_stale = 1;
    forget_graph(c);
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
    forget_graph(c);
    return ad_ok();
}

/* ------------------------------------------------------------ the step -- */

static ad3_pass pass_io(cuda3_world *c)
{
    ad3_pass io = {c->start, c->sorted, c->id_sorted, c->acc_sorted, c->state, c->id, c->acc, c->pressure,
                   c->virial, c->blocks, NULL, NULL, c->rk[2]};
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
    k3_reorder<<<g, AD_CUDA_BLOCK, 0, st>>>(c->perm, c->state, c->id, acc, nn, c->sorted, c->id_sorted, c->acc_sorted);
    e = cudaGetLastError();
    if (!e && c->open) e = ad_cuda_after_sort(c->start, dead_cell, c->ctrl, st);
    return e;
}

/* Step 5's entries after the pass (open3.cuh), appended to the world's state. */
static void enqueue_enter(ad_world *w, cuda3_world *c)
{
    if (!c->open) return;
    ad3_enter_io io = {c->state, c->id, c->pressure, c->virial, c->acc, (unsigned)c->cap,
                       c->waiting, c->waiting_next, c->spots, c->vmax2_new};
    k3_enter<<<1, AD3_ENTER_THREADS, 0, c->stream>>>(w->params, c->ctrl, c->start, io);
}

/* One step: [Verlet's drift], the sort, the pass (or RK4's four stages), the entries, the fold. */
static cudaError_t enqueue_step(ad_world *w, cuda3_world *c)
{
    unsigned n = launch_n(c), g = grid3_of(n);
    ad_n nn = count_of(c, n);
    cudaStream_t st = c->stream;
    ad_integrator integ = w->def.integrator;
    const ad_params &p = w->params;
    if (integ == AD_INTEGRATOR_VERLET) k3_drift<<<g, AD_CUDA_BLOCK, 0, st>>>(p, c->state, c->acc, nn, c->ctrl);
    cudaError_t e = enqueue_sort(w, c);
    if (e) return e;
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
        k3_rk4<3><<<g, AD_CUDA_BLOCK, 0, st>>>(p, c->gdev, io, nn, c->ctrl, skin);
        nrec = 2 * g;
    } else if (integ == AD_INTEGRATOR_EULER) {
        k3_interact<AD_INTEGRATOR_EULER><<<g, AD_CUDA_BLOCK, 0, st>>>(p, c->gdev, io, nn, c->ctrl);
    } else if (integ == AD_INTEGRATOR_VERLET) {
        k3_interact<AD_INTEGRATOR_VERLET><<<g, AD_CUDA_BLOCK, 0, st>>>(p, c->gdev, io, nn, c->ctrl);
    } else {
        k3_interact<AD_INTEGRATOR_SYMPLECTIC_EULER><<<g, AD_CUDA_BLOCK, 0, st>>>(p, c->gdev, io, nn, c->ctrl);
    }
    enqueue_enter(w, c);
    unsigned nr = (nrec + AD_FOLD_SHARE - 1) / AD_FOLD_SHARE;
    if (nr > AD_REDUCE_BLOCKS) nr = AD_REDUCE_BLOCKS;
    k_fold_step<AD_SUMS3><<<nr, AD_CUDA_BLOCK, 0, st>>>(c->blocks, nrec, c->blocks2, c->ctrl, w->dt_rule,
                                                         (float)(1.0 / w->def.radius), c->open ? c->vmax2_new : NULL);
    return cudaGetLastError();
}

static ad_status step_graph(ad_world *w, cuda3_world *c)
{
    if (c->graph_ok) return ad_ok();
    cudaGraph_t g;
    CU(cudaStreamBeginCapture(c->stream, cudaStreamCaptureModeThreadLocal));
    cudaError_t e = enqueue_step(w, c);
    cudaError_t e2 = cudaStreamEndCapture(c->stream, &g);
    if (e || e2) return ad_fail(AD_ERR_BACKEND, "cuda", "capturing the 3D step: %s", cudaGetErrorString(e ? e : e2));
    e = cudaGraphInstantiate(&c->graph, g, 0);
    cudaGraphDestroy(g);
    if (e) return ad_fail(AD_ERR_BACKEND, "cuda", "instantiating the 3D step graph: %s", cudaGetErrorString(e));
    c->graph_ok = 1;
    return ad_ok();
}

/* After spheres were added the next step's size comes from the fastest sphere (read once; a removed
 * one has no speed). */
static ad_status refresh_dt(ad_world *w, cuda3_world *c)
{
    AD_TRY(cuda3_pull_stats(w));
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
    return push_stats(w);
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
    if (c->dt_stale) AD_TRY(refresh_dt(w, c));
    if (w->def.integrator == AD_INTEGRATOR_VERLET && !c->primed) {
        if (enqueue_sort(w, c) != cudaSuccess) return ad_fail(AD_ERR_BACKEND, "cuda", "the sort's launch failed");
        unsigned n = launch_n(c);
        k3_prime<<<grid3_of(n), AD_CUDA_BLOCK, 0, c->stream>>>(w->params, c->gdev, pass_io(c), count_of(c, n));
        CU(cudaGetLastError());
        c->primed = 1;
    }
    AD_TRY(step_graph(w, c));
    for (uint64_t k = 0; k < nsteps; k++) {
        CU(cudaGraphLaunch(c->graph, c->stream));
        if (w->fields.enabled && (step0 + k + 1) % w->fields.def.interval == 0) AD_TRY(sample_fields(w, c));
        /* a bounded queue: at most two batches of 32 steps in flight, so Ctrl-C stops soon */
        if ((k & 31) == 31) {
            int b = (int)((k >> 5) & 1);
            CU(cudaEventRecord(c->batch[b], c->stream));
            CU(cudaEventSynchronize(c->batch[!b]));
            if (w->interrupt && *w->interrupt) break;
        }
    }
    return cuda3_pull_stats(w);
}

/* ---------------------------------------------- read-back, checkpoints -- */

/* The world's arrays copied to host arrays of its slots (s, id, pressure, virial, acc): with open
 * faces the device's count, removed spheres included (they hold their slots until the next sort). */
static ad_status copy_out(const cuda3_world *c, ad_snapshot *s)
{
    CU(pull_ctrl(c));
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

static ad_status cuda3_read(const ad_world *w, int flags, size_t max, const ad_particle_out *out, size_t *count)
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

/* The free stream's state (the entries owed, the id counter, the entries waiting) into a snapshot. */
static ad_status export_open(const cuda3_world *c, ad_snapshot *s)
{
    const ad_ctrl &k = *c->ctrl_host;
    memcpy(s->open.owed, k.owed, sizeof s->open.owed);
    s->open.next_id = k.next_id;
    s->open.nwaiting = c->open ? k.nwaiting : 0;
    if (!c->open) return ad_ok();
    AD_TRY(ad_open_state_alloc(&s->open_alloc, 0, 3));
    s->open.waiting3 = s->open_alloc.waiting3;
    s->open.res_state = s->open_alloc.res_state;
    CU(cudaMemcpy(s->open.waiting3, c->waiting, k.nwaiting * sizeof(ad_entry3), cudaMemcpyDeviceToHost));
    return ad_ok();
}

/* The live spheres in slot order (removed ones left out) and the free stream's state. */
static ad_status cuda3_export(const ad_world *w, ad_snapshot *s)
{
    const cuda3_world *c = C3(w);
    memset(s, 0, sizeof *s);
    CU(cudaStreamSynchronize(c->stream));
    s->primed = c->primed;
    ad_status st = copy_out(c, s);
    size_t m = 0;
    for (size_t k = 0; !st.code && k < s->n; k++) {
        if (ad_is_dead3(s->state3[k])) continue;
        s->state3[m] = s->state3[k];
        s->id[m] = s->id[k];
        s->pressure[m] = s->pressure[k];
        s->virial[m] = s->virial[k];
        s->accel3[m++] = s->accel3[k];
    }
    s->n = m;
    if (!st.code) st = export_open(c, s);
    if (st.code) ad_snapshot_free(s);
    return st;
}

static ad_status cuda3_import(ad_world *w, const ad_snapshot *s)
{
    cuda3_world *c = C3(w);
    if (s->n > c->cap)
        return ad_fail(AD_ERR_CAPACITY, "capacity", "capacity: the snapshot holds %zu spheres, the world %zu", s->n,
                       c->cap);
    if (s->open.nwaiting > (c->open ? AD_WAITING_MAX : 0) || (s->open.nwaiting && !s->open.waiting3))
        return ad_fail(AD_ERR_FORMAT, "checkpoint", "the snapshot has %u entering spheres waiting (at most %d)",
                       s->open.nwaiting, c->open ? AD_WAITING_MAX : 0);
    size_t n = s->n;
    CU(cudaMemcpy(c->state, s->state3, n * sizeof(ad_state3), cudaMemcpyHostToDevice));
    CU(cudaMemcpy(c->id, s->id, n * 4, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(c->pressure, s->pressure, n * 4, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(c->virial, s->virial, n * 4, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(c->acc, s->accel3, n * sizeof(ad_accel3), cudaMemcpyHostToDevice));
    if (s->open.nwaiting)
        CU(cudaMemcpy(c->waiting, s->open.waiting3, s->open.nwaiting * sizeof(ad_entry3), cudaMemcpyHostToDevice));
    c->n = n;
    c->primed = s->primed;
    c->dt_stale = 0;
    forget_graph(c);
    ad_ctrl &k = *c->ctrl_host;
    k.n = (unsigned)n;
    k.next_id = c->open ? s->open.next_id : (unsigned)n; /* without open faces the ids are 0 .. n-1 */
    k.nwaiting = s->open.nwaiting;
    k.dead = k.removed = k.capacity_exceeded = 0;
    memcpy(k.owed, s->open.owed, sizeof k.owed);
    return push_stats(w);
}

/* The field sums to the device (a new grid, a reset, a load) and back (a read, a checkpoint). */
static ad_status cuda3_fields_to_device(ad_world *w)
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

static ad_status cuda3_fields_to_host(ad_world *w)
{
    cuda3_world *c = C3(w);
    if (c->sums_on_host) return ad_ok(); /* no step since the last copy: reading ten fields copies once */
    CU(cudaMemcpyAsync(w->fields.sums, c->field_sums, c->field_vals * sizeof(double), cudaMemcpyDeviceToHost,
                       c->stream));
    CU(cudaStreamSynchronize(c->stream));
    c->sums_on_host = 1;
    return ad_ok();
}

extern "C" const ad_backend_ops ad_cuda3_backend = {
    "cuda",
    cuda3_create,
    cuda3_destroy,
    nullptr, /* add_particles: 2D */
    cuda3_add,
    cuda3_body_changed,
    cuda3_step,
    cuda3_read,
    cuda3_export,
    cuda3_import,
    cuda3_fields_to_host,
    cuda3_fields_to_device,
    cuda3_pull_stats,
    cuda3_bytes_needed,
    nullptr, /* panels_to_host: the panels are not sampled on the GPU yet (refused by name, core/surface.c) */
    nullptr, /* panels_reset */
};
