/* The CUDA backend: device buffers, the step as kernels on one stream (captured as a CUDA graph), read-back. */
#include <cuda_runtime.h>

#include <cub/device/device_radix_sort.cuh>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cub/device/device_scan.cuh>

#include "bvh.cuh"
#include "kernels.cuh"
#include "open.cuh"

#define CU(call)                                                                                                  \
    do {                                                                                                          \
        cudaError_t e_ = (call);                                                                                  \
        if (e_ != cudaSuccess)                                                                                    \
            return ad_fail(AD_ERR_BACKEND, "cuda", "CUDA error at %s:%d: %s (%s)", __FILE__, __LINE__,           \
                           cudaGetErrorString(e_), #call);                                                        \
    } while (0)

struct cuda_world {
    size_t cap, ncell;
    unsigned nblocks_cap;
    cudaStream_t stream;
    ad_state *state[2];
    unsigned *id[2];
    int cur; /* state parity: a step flips it twice (scatter, interact), so it is the same after every step */
    int idp; /* id parity: the scatter alone moves ids, so it flips once a step */
    unsigned *cell_of, *rank, *start;
    unsigned *count;   /* the cell counters, 32 >> count_lg bits a cell (counts.cuh) */
    unsigned count_lg;
    unsigned *scan_state; /* the scan's sum a tile (counts.cuh) */
    unsigned *perm, *iota, *keys_out; /* deterministic mode */
    /* open sides and the reservoir (open.cuh): the disc count lives on the device (ad_ctrl.n) and
     * per-disc kernels are launched for the capacity */
    int open;
    ad_entry *waiting, *waiting_next; /* entering discs waiting for room (AD_WAITING_MAX) */
    ad_state *spots;                  /* a step's new spots, judged for room (AD_ROOM_MAX) */
    unsigned *spot_next;              /* per spot the next of its bucket (room.h; the heads are k_enter's) */
    unsigned *vmax2_new;              /* the largest speed squared of a step's new discs (float bits) */
    double *res_state;                /* per reservoir box: the controller's debt and integral */
    unsigned *res_add, *res_add_start;
    void *res_scan_temp;
    size_t res_scan_bytes;
    unsigned char *doomed;            /* per slot: the reservoir's plan removes it in this step's pass */
    void *temp;
    size_t temp_bytes;
    float *pressure, *virial;
    ad_accel *acc[2]; /* accelerations of the last evaluation; [cur] pairs with state[cur] */
    ad_state *rk[3];
    ad_dev_sums *blocks, *blocks2;
    ad_ctrl *ctrl;      /* device */
    ad_ctrl *ctrl_host; /* pinned mirror */
    unsigned *vmax_bits;
    /* segments on the device */
    ad_seg *segs;
    unsigned *seg_start, *seg_index;
    ad_seg_grid gdev;
    /* fields */
    double *field_sums;
    size_t field_cells;
    int primed;
    int dt_stale;
    int key_bits;
    /* the step as a graph (one per id parity), rebuilt when the world changes */
    cudaEvent_t batch[2];
    cudaEvent_t phase[5]; /* recorded inside the step graph between phases */
    unsigned long long phase_steps; /* steps the timed step stands for, not yet folded */
    cudaGraphExec_t graph[2][2]; /* [id parity][observing] */
    int graph_ok[2][2];
    int aggregate; /* bin with warp-aggregated atomics (piled-up discs) */
    int binned;    /* the last step's pass binned its results (cell_of, rank, count are the current state's) */
    size_t graph_n;
    /* BVH broad phase (broad_phase = bvh): replaces bin, scan and scatter */
    int bvh;
    unsigned *code, *code_sorted, *bindex, *bperm; /* Morton codes and the sort's values */
    unsigned *child, *rightmost, *parent, *visits;
    ad_bvh_box *box;
    float *forces;   /* reflexive: 6 arrays of cap floats (ad_bvh_forces) */
    ad_bvh tree;     /* device pointers; leaves are state[cur] after the build */
    /* the segment tree on the device */
    unsigned *st_child, *st_rightmost, *st_item;
    ad_bvh_box *st_box, *st_leaf_box;
    ad_seg_tree stree;
};

static cuda_world *CW(const ad_world *w) { return (cuda_world *)w->impl; }

extern "C" int ad_cuda_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return n;
}

static size_t per_particle(const ad_world_def *d)
{
    size_t b = 2 * sizeof(ad_state) + 2 * 4 /* id */ + 2 * 4 /* p, virial */ + 2 * sizeof(ad_accel);
    if (d->reservoir > 0.0) b += 1; /* doomed */
    if (d->broad_phase == AD_BROAD_PHASE_BVH) {
        /* codes x2, sort values x2, children x2, rightmost, parents x2, visits, box */
        b += 10 * 4 + sizeof(ad_bvh_box);
        if (d->bvh_traversal == AD_BVH_REFLEXIVE) b += 6 * 4; /* the pair sums */
        if (d->integrator == AD_INTEGRATOR_RK4) b += 3 * sizeof(ad_state);
        return b;
    }
    b += 4 /* rank */;
    if (d->deterministic) b += 3 * 4; /* cell_of (the fast path computes the cell again), perm, members */
#ifdef AD_CUDA_DET_SORT
    if (d->deterministic) b += 4; /* the sort's keys */
#endif
    if (d->integrator == AD_INTEGRATOR_RK4) b += 3 * sizeof(ad_state);
    return b;
}

static size_t sort_temp_bytes(size_t n, int bits)
{
    size_t t = 0;
    cub::DeviceRadixSort::SortPairs(nullptr, t, (const unsigned *)nullptr, (unsigned *)nullptr,
                                    (const unsigned *)nullptr, (unsigned *)nullptr, (int)n, 0, bits);
    return t;
}

/* The scratch of the scan of the reservoir boxes' additions. */
static size_t res_scan_bytes(int boxes)
{
    size_t t = 0;
    if (boxes > 0) cub::DeviceScan::ExclusiveSum(nullptr, t, (const unsigned *)nullptr, (unsigned *)nullptr, boxes);
    return t;
}

/* The width of the world's cell counters (counts.cuh). */
static unsigned count_lg(const ad_world_def *d, const ad_params *p)
{
    return ad_count_lg(ad_cell_packing(p->cell_x, p->cell_y, d->radius), d->capacity);
}

static int bits_for(size_t ncell)
{
    int b = 1;
    while (b < 32 && ((size_t)1 << b) < ncell) b++;
    return b;
}

/* Cells of the grid the backend allocates: none with the BVH. */
static size_t grid_cells(const ad_world_def *d, const ad_params *p)
{
    return d->broad_phase == AD_BROAD_PHASE_BVH ? 0 : (size_t)p->nx * (size_t)p->ny;
}

static size_t cuda_bytes_needed(const ad_world_def *d, const ad_params *p)
{
    size_t ncell = grid_cells(d, p);
    size_t blocks = (d->capacity + AD_CUDA_BLOCK - 1) / AD_CUDA_BLOCK;
    size_t temp = 0;
    if (d->broad_phase == AD_BROAD_PHASE_BVH) temp = sort_temp_bytes(d->capacity, 32);
#ifdef AD_CUDA_DET_SORT
    if (d->broad_phase != AD_BROAD_PHASE_BVH && d->deterministic) {
        size_t t2 = sort_temp_bytes(d->capacity, bits_for(ncell));
        temp = temp > t2 ? temp : t2;
    }
#endif
    unsigned lg = count_lg(d, p);
    size_t cells = ad_count_bytes(ncell, lg) + ad_start_slots(ncell, lg) * 4 + ad_scan_state_bytes(ncell, lg);
    size_t open = 0;
    if (p->open_x || p->open_y)
        open = 2 * AD_WAITING_MAX * sizeof(ad_entry) + AD_ROOM_MAX * (sizeof(ad_state) + 4) + 16 +
               (size_t)p->res_boxes * (2 * sizeof(double) + 2 * 4) + res_scan_bytes(p->res_boxes);
    return d->capacity * per_particle(d) + cells + blocks * sizeof(ad_dev_sums) + temp + sizeof(ad_ctrl) + open;
}

static void cuda_destroy(ad_world *w)
{
    cuda_world *c = CW(w);
    if (!c) return;
    for (int k = 0; k < 4; k++)
        if (c->graph_ok[k / 2][k % 2]) cudaGraphExecDestroy(c->graph[k / 2][k % 2]);
    void *ptrs[] = {c->state[0], c->state[1], c->id[0],   c->id[1],   c->cell_of, c->rank,      c->count,
                    c->scan_state, c->start,    c->perm,     c->iota,    c->keys_out, c->temp,   c->pressure,  c->virial,
                    c->acc[0],   c->acc[1],   c->rk[0],   c->rk[1],   c->rk[2],   c->blocks,    c->blocks2,  c->ctrl,
                    c->vmax_bits, c->segs,    c->seg_start, c->seg_index, c->field_sums, c->waiting,
                    c->waiting_next, c->spots, c->spot_next, c->vmax2_new, c->res_state, c->res_add, c->res_add_start,
                    c->res_scan_temp, c->doomed,
                    c->code,     c->code_sorted, c->bindex, c->bperm, c->child, c->rightmost, c->parent,
                    c->visits,   c->box,      c->forces,  c->st_child, c->st_rightmost, c->st_item, c->st_box,
                    c->st_leaf_box};
    for (void *p : ptrs)
        if (p) cudaFree(p);
    if (c->ctrl_host) cudaFreeHost(c->ctrl_host);
    for (int k = 0; k < 2; k++)
        if (c->batch[k]) cudaEventDestroy(c->batch[k]);
    for (int k = 0; k < 5; k++)
        if (c->phase[k]) cudaEventDestroy(c->phase[k]);
    if (c->stream) cudaStreamDestroy(c->stream);
    free(c);
    w->impl = NULL;
}

/* The statistics the device keeps, as (ad_ctrl field, ad_stats field): one list for
 * both directions. */
#define AD_CTRL_STATS(X)                                                                                          \
    X(dt, dt)                                                                                                     \
    X(time, time)                                                                                                 \
    X(step, step)                                                                                                 \
    X(ke, kinetic_energy)                                                                                         \
    X(pe, potential_energy)                                                                                       \
    X(px, momentum_x)                                                                                             \
    X(py, momentum_y)                                                                                             \
    X(virial, contact_virial)                                                                                     \
    X(body_fx, body_force_x)                                                                                      \
    X(body_fy, body_force_y)                                                                                      \
    X(body_impulse_x, body_impulse_x)                                                                             \
    X(body_impulse_y, body_impulse_y)                                                                             \
    X(wall_impulse[0], wall_impulse[0])                                                                           \
    X(wall_impulse[1], wall_impulse[1])                                                                           \
    X(wall_impulse[2], wall_impulse[2])                                                                           \
    X(wall_impulse[3], wall_impulse[3])                                                                           \
    X(ke_integral, kinetic_energy_integral)                                                                       \
    X(virial_integral, contact_virial_integral)                                                                   \
    X(max_overlap, max_overlap)                                                                                   \
    X(skin_violations, skin_violations)                                                                           \
    X(entered, entered)                                                                                           \
    X(left, left)                                                                                                 \
    X(res_added, reservoir_added)                                                                                 \
    X(res_removed, reservoir_removed)                                                                             \
    X(entries_lost, entries_lost)                                                                                 \
    X(nwaiting, entries_waiting)

static ad_status push_ctrl(ad_world *w)
{
    cuda_world *c = CW(w);
    ad_ctrl h = *c->ctrl_host; /* the device's own fields (the count, the open sides) as last pulled or set */
    const ad_stats &s = w->stats;
#define TO_CTRL(cf, sf) h.cf = (decltype(h.cf))s.sf;
    AD_CTRL_STATS(TO_CTRL)
#undef TO_CTRL
    *c->ctrl_host = h;
    CU(cudaMemcpyAsync(c->ctrl, c->ctrl_host, sizeof h, cudaMemcpyHostToDevice, c->stream));
    CU(cudaStreamSynchronize(c->stream));
    return ad_ok();
}

static cudaError_t allow_shared_stack(void);

static cudaError_t dev_alloc(void **p, size_t bytes) { return cudaMalloc(p, bytes > 0 ? bytes : 16); }

static ad_status cuda_create(ad_world *w)
{
    const ad_world_def *d = &w->def;
    int dev = 0;
    CU(cudaGetDevice(&dev));
    size_t freeb = 0, total = 0;
    CU(cudaMemGetInfo(&freeb, &total));
    size_t need = cuda_bytes_needed(d, &w->params);
    char nb[64], fb[64];
    ad_format_bytes((double)need, nb, sizeof nb);
    ad_format_bytes((double)freeb, fb, sizeof fb);
    if (need > freeb)
        return ad_fail(AD_ERR_NO_MEMORY, "capacity",
                       "capacity: the world needs %s of GPU memory (%zu particles x %zu bytes + %zu cells x %u bytes) "
                       "but only %s is free",
                       nb, d->capacity, per_particle(d), (size_t)w->params.nx * w->params.ny,
                       4u + (4u >> count_lg(d, &w->params)), fb);
    if (d->broad_phase == AD_BROAD_PHASE_BVH && ad_world_open(w))
        return ad_fail(AD_ERR_INVALID, "broad_phase",
                       "broad_phase = bvh with open sides (a wind tunnel's far field) runs on the CPU backend only; "
                       "on the GPU use the grid (broad_phase = grid), or backend = cpu");
    cuda_world *c = (cuda_world *)calloc(1, sizeof *c);
    if (!c) return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory");
    w->impl = c;
    c->cap = d->capacity;
    c->bvh = d->broad_phase == AD_BROAD_PHASE_BVH;
    c->ncell = grid_cells(d, &w->params);
    c->nblocks_cap = (unsigned)((c->cap + AD_CUDA_BLOCK - 1) / AD_CUDA_BLOCK);
    c->key_bits = bits_for(c->ncell);
    c->count_lg = count_lg(d, &w->params);
    cudaError_t e = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking);
    size_t n = c->cap;
#define ALLOC(ptr, bytes)                                                                                         \
    if (e == cudaSuccess) e = dev_alloc((void **)&(ptr), (bytes))
    for (int k = 0; k < 2; k++) {
        ALLOC(c->state[k], n * sizeof(ad_state));
        ALLOC(c->id[k], n * 4);
        ALLOC(c->acc[k], n * sizeof(ad_accel));
    }
    if (!c->bvh) ALLOC(c->rank, n * 4);
    c->open = ad_world_open(w);
    if (c->open) {
        ALLOC(c->waiting, AD_WAITING_MAX * sizeof(ad_entry));
        ALLOC(c->waiting_next, AD_WAITING_MAX * sizeof(ad_entry));
        ALLOC(c->spots, AD_ROOM_MAX * sizeof(ad_state));
        ALLOC(c->spot_next, AD_ROOM_MAX * sizeof(unsigned));
        ALLOC(c->vmax2_new, 4);
        int nb = w->params.res_boxes;
        if (nb) {
            ALLOC(c->res_state, (size_t)nb * 2 * sizeof(double));
            ALLOC(c->res_add, (size_t)nb * 4);
            ALLOC(c->res_add_start, (size_t)nb * 4);
            c->res_scan_bytes = res_scan_bytes(nb);
            ALLOC(c->res_scan_temp, c->res_scan_bytes);
            ALLOC(c->doomed, n);
        }
    }
    ALLOC(c->pressure, n * 4);
    ALLOC(c->virial, n * 4);
    ALLOC(c->count, ad_count_bytes(c->ncell, c->count_lg));
    ALLOC(c->start, ad_start_slots(c->ncell, c->count_lg) * 4);
    ALLOC(c->scan_state, ad_scan_state_bytes(c->ncell, c->count_lg));
    if (c->bvh) {
        ALLOC(c->code, n * 4);
        ALLOC(c->code_sorted, n * 4);
        ALLOC(c->bindex, n * 4);
        ALLOC(c->bperm, n * 4);
        ALLOC(c->child, 2 * n * 4);
        ALLOC(c->rightmost, n * 4);
        ALLOC(c->parent, 2 * n * 4);
        ALLOC(c->visits, n * 4);
        ALLOC(c->box, n * sizeof(ad_bvh_box));
        if (d->bvh_traversal == AD_BVH_REFLEXIVE) ALLOC(c->forces, 6 * n * 4);
        size_t t2 = sort_temp_bytes(n, 32);
        if (t2 > c->temp_bytes) c->temp_bytes = t2;
    } else if (d->deterministic) {
        ALLOC(c->cell_of, n * 4);
        ALLOC(c->perm, n * 4);
        ALLOC(c->iota, n * 4);
#ifdef AD_CUDA_DET_SORT
        ALLOC(c->keys_out, n * 4);
        size_t t2 = sort_temp_bytes(n, c->key_bits);
        if (t2 > c->temp_bytes) c->temp_bytes = t2;
#endif
    }
    ALLOC(c->temp, c->temp_bytes);
    if (d->integrator == AD_INTEGRATOR_RK4)
        for (int k = 0; k < 3; k++) ALLOC(c->rk[k], n * sizeof(ad_state));
    ALLOC(c->blocks, (size_t)c->nblocks_cap * sizeof(ad_dev_sums));
    ALLOC(c->blocks2, (size_t)AD_REDUCE_BLOCKS * sizeof(ad_dev_sums));
    ALLOC(c->ctrl, sizeof(ad_ctrl));
    ALLOC(c->vmax_bits, 4);
#undef ALLOC
    /* the diagnostics fields stay zero when the bin kernel does not write them */
    if (e == cudaSuccess) e = cudaMemset(c->blocks, 0, (size_t)c->nblocks_cap * sizeof(ad_dev_sums));
    /* the counters start cleared (after that the scan clears them) */
    if (e == cudaSuccess) e = cudaMemset(c->count, 0, ad_count_bytes(c->ncell, c->count_lg));
    /* the reservoir's controllers start at rest, no disc marked */
    if (e == cudaSuccess && c->res_state) e = cudaMemset(c->res_state, 0, (size_t)w->params.res_boxes * 2 * sizeof(double));
    if (e == cudaSuccess && c->doomed) e = cudaMemset(c->doomed, 0, n);
    if (e == cudaSuccess) e = cudaMallocHost((void **)&c->ctrl_host, sizeof(ad_ctrl));
    if (e == cudaSuccess) memset(c->ctrl_host, 0, sizeof(ad_ctrl));
    for (int k = 0; k < 2 && e == cudaSuccess; k++) e = cudaEventCreateWithFlags(&c->batch[k], cudaEventDisableTiming);
    for (int k = 0; k < 2 && e == cudaSuccess; k++) e = cudaEventRecord(c->batch[k], c->stream);
    for (int k = 0; k < 5 && e == cudaSuccess; k++) e = cudaEventCreate(&c->phase[k]);
    if (e == cudaSuccess && c->bvh) e = allow_shared_stack();
    if (e != cudaSuccess) {
        cudaGetLastError();
        cuda_destroy(w);
        return ad_fail(AD_ERR_NO_MEMORY, "capacity", "capacity: allocating %s on the GPU failed: %s", nb,
                       cudaGetErrorString(e));
    }
    c->gdev.count = 0;
    c->gdev.start = NULL;
    c->gdev.index = NULL;
    c->gdev.segs = NULL;
    c->gdev.nx = c->gdev.ny = 1;
    w->stats.threads = 0;
    w->stats.cell_counter_bits = 32u >> c->count_lg;
    return push_ctrl(w);
}

static void invalidate_graphs(cuda_world *c)
{
    for (int k = 0; k < 4; k++)
        if (c->graph_ok[k / 2][k % 2]) {
            cudaGraphExecDestroy(c->graph[k / 2][k % 2]);
            c->graph_ok[k / 2][k % 2] = 0;
        }
}

/* The discs changed on the host: the last pass's bin no longer describes them, and the next
 * step bins them all (k_bin). Its counters are cleared here, where they were left counted;
 * everywhere else the scan leaves them cleared. */
static cudaError_t forget_bin(cuda_world *c)
{
    cudaError_t e = c->binned ? cudaMemsetAsync(c->count, 0, ad_count_bytes(c->ncell, c->count_lg), c->stream)
                              : cudaSuccess;
    /* and the removed discs' counter, which the next bin counts again */
    if (e == cudaSuccess && c->binned) e = cudaMemsetAsync(&c->ctrl->dead, 0, sizeof(unsigned), c->stream);
    c->binned = 0;
    return e;
}

/* The device's count fields (slots, next id) from the host's mirror. */
static cudaError_t push_count(cuda_world *c)
{
    cudaError_t e = cudaMemcpyAsync(&c->ctrl->n, &c->ctrl_host->n, sizeof(unsigned), cudaMemcpyHostToDevice, c->stream);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(&c->ctrl->next_id, &c->ctrl_host->next_id, sizeof(unsigned), cudaMemcpyHostToDevice,
                            c->stream);
    return e == cudaSuccess ? cudaStreamSynchronize(c->stream) : e;
}

/* The host's mirror of the device's count fields. */
static cudaError_t pull_count(cuda_world *c)
{
    cudaError_t e = cudaMemcpyAsync(c->ctrl_host, c->ctrl, sizeof(ad_ctrl), cudaMemcpyDeviceToHost, c->stream);
    return e == cudaSuccess ? cudaStreamSynchronize(c->stream) : e;
}

static ad_status cuda_add_particles(ad_world *w, const ad_particle *p, size_t n)
{
    cuda_world *c = CW(w);
    ad_state *tmp = (ad_state *)malloc(n * sizeof(ad_state));
    unsigned *ids = (unsigned *)malloc(n * 4);
    if (!tmp || !ids) {
        free(tmp);
        free(ids);
        return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory");
    }
    /* at the device's count of slots (removed discs hold theirs until the next sort) */
    cudaError_t e = pull_count(c);
    size_t at = c->ctrl_host->n;
    unsigned id0 = c->ctrl_host->next_id;
    if (e == cudaSuccess && at + n > c->cap) {
        free(tmp);
        free(ids);
        return ad_fail(AD_ERR_CAPACITY, "capacity", "capacity: adding %zu particles to %zu slots in use exceeds %zu", n,
                       at, c->cap);
    }
    for (size_t i = 0; i < n; i++) {
        ad_state s = {p[i].x, p[i].y, p[i].vx, p[i].vy};
        tmp[i] = ad_wrap_state(&w->params, s);
        ids[i] = id0 + (unsigned)i;
    }
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(c->state[c->cur] + at, tmp, n * sizeof(ad_state), cudaMemcpyHostToDevice, c->stream);
    if (e == cudaSuccess) e = cudaMemcpyAsync(c->id[c->idp] + at, ids, n * 4, cudaMemcpyHostToDevice, c->stream);
    if (e == cudaSuccess) e = cudaMemsetAsync(c->acc[c->cur] + at, 0, n * sizeof(ad_accel), c->stream);
    if (e == cudaSuccess) e = cudaMemsetAsync(c->pressure + at, 0, n * 4, c->stream);
    if (e == cudaSuccess) e = cudaMemsetAsync(c->virial + at, 0, n * 4, c->stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(c->stream);
    c->ctrl_host->n = (unsigned)(at + n);
    c->ctrl_host->next_id = id0 + (unsigned)n;
    if (e == cudaSuccess) e = push_count(c);
    free(tmp);
    free(ids);
    if (e == cudaSuccess) e = forget_bin(c);
    if (e != cudaSuccess) return ad_fail(AD_ERR_BACKEND, "cuda", "copying particles to the GPU: %s", cudaGetErrorString(e));
    c->primed = 0;
    c->dt_stale = 1;
    invalidate_graphs(c);
    return ad_ok();
}

/* The segment tree, built on the host with the segments (src/core/world.c), copied as it is. */
static ad_status upload_segment_tree(ad_world *w, cuda_world *c)
{
    const ad_segments *s = &w->seg;
    void *old[] = {c->st_child, c->st_rightmost, c->st_item, c->st_box, c->st_leaf_box};
    for (void *p : old)
        if (p) cudaFree(p);
    c->st_child = c->st_rightmost = c->st_item = NULL;
    c->st_box = c->st_leaf_box = NULL;
    memset(&c->stree, 0, sizeof c->stree);
    size_t n = s->tree.t.n, m = n > 1 ? n - 1 : 1;
    if (n == 0) return ad_ok();
    CU(cudaMalloc((void **)&c->st_child, 2 * m * 4));
    CU(cudaMalloc((void **)&c->st_rightmost, m * 4));
    CU(cudaMalloc((void **)&c->st_box, m * sizeof(ad_bvh_box)));
    CU(cudaMalloc((void **)&c->st_leaf_box, n * sizeof(ad_bvh_box)));
    CU(cudaMalloc((void **)&c->st_item, n * 4));
    if (n > 1) {
        CU(cudaMemcpy(c->st_child, s->tree.t.child, 2 * (n - 1) * 4, cudaMemcpyHostToDevice));
        CU(cudaMemcpy(c->st_rightmost, s->tree.t.rightmost, (n - 1) * 4, cudaMemcpyHostToDevice));
        CU(cudaMemcpy(c->st_box, s->tree.t.box, (n - 1) * sizeof(ad_bvh_box), cudaMemcpyHostToDevice));
    }
    CU(cudaMemcpy(c->st_leaf_box, s->tree.t.leaf_box, n * sizeof(ad_bvh_box), cudaMemcpyHostToDevice));
    CU(cudaMemcpy(c->st_item, s->tree.item, n * 4, cudaMemcpyHostToDevice));
    c->stree.t.n = (uint32_t)n;
    c->stree.t.child = c->st_child;
    c->stree.t.rightmost = c->st_rightmost;
    c->stree.t.box = c->st_box;
    c->stree.t.leaf_box = c->st_leaf_box;
    c->stree.item = c->st_item;
    c->stree.segs = c->segs;
    return ad_ok();
}

static ad_status cuda_set_segments(ad_world *w)
{
    cuda_world *c = CW(w);
    const ad_segments *s = &w->seg;
    size_t ncell = (size_t)s->grid.nx * s->grid.ny;
    if (c->segs) cudaFree(c->segs);
    if (c->seg_start) cudaFree(c->seg_start);
    if (c->seg_index) cudaFree(c->seg_index);
    c->segs = NULL;
    c->seg_start = c->seg_index = NULL;
    CU(cudaMalloc((void **)&c->segs, s->count * sizeof(ad_seg)));
    CU(cudaMalloc((void **)&c->seg_start, (ncell + 1) * 4));
    CU(cudaMalloc((void **)&c->seg_index, (s->start[ncell] ? s->start[ncell] : 1) * 4));
    CU(cudaMemcpy(c->segs, s->segs, s->count * sizeof(ad_seg), cudaMemcpyHostToDevice));
    CU(cudaMemcpy(c->seg_start, s->start, (ncell + 1) * 4, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(c->seg_index, s->index, s->start[ncell] * 4, cudaMemcpyHostToDevice));
    c->gdev = s->grid;
    c->gdev.segs = c->segs;
    c->gdev.start = c->seg_start;
    c->gdev.index = c->seg_index;
    if (c->bvh) {
        ad_status st = upload_segment_tree(w, c);
        if (st.code) return st;
    }
    c->primed = 0;
    invalidate_graphs(c);
    return ad_ok();
}

static unsigned grid_of(size_t n) { return (unsigned)((n + AD_CUDA_BLOCK - 1) / AD_CUDA_BLOCK); }

/* The size per-disc kernels are launched for: the count, or with open sides the capacity (the count
 * changes on the device). */
static unsigned launch_n(const ad_world *w, const cuda_world *c) { return c->open ? (unsigned)c->cap : (unsigned)w->count; }

/* The count as the kernels take it: with open sides, read on the device. */
static ad_n count_of(const cuda_world *c, unsigned n) { return ad_n{n, c->open ? &c->ctrl->n : NULL}; }

/* Steps 1-5 with the BVH: Morton keys, CUB's stable radix sort, reorder along the
 * curve, Karras nodes, boxes bottom-up. The phase events stand as on the grid:
 * keys = bin, sort = scan, reorder and tree = scatter. */
static cudaError_t enqueue_bvh(ad_world *w, cuda_world *c, unsigned n, int timed)
{
    cudaStream_t st = c->stream;
    unsigned gb = grid_of(n);
    cudaError_t e = timed ? cudaEventRecord(c->phase[0], st) : cudaSuccess;
    if (e) return e;
    if (w->def.diagnostics)
        k_morton<true><<<gb, AD_CUDA_BLOCK, 0, st>>>(w->params, c->state[c->cur], n, c->code, c->bindex, c->blocks);
    else
        k_morton<false><<<gb, AD_CUDA_BLOCK, 0, st>>>(w->params, c->state[c->cur], n, c->code, c->bindex, c->blocks);
    e = timed ? cudaEventRecord(c->phase[1], st) : cudaSuccess;
    size_t tb = c->temp_bytes;
    if (!e)
        e = cub::DeviceRadixSort::SortPairs(c->temp, tb, c->code, c->code_sorted, c->bindex, c->bperm, (int)n, 0, 32,
                                            st);
    if (!e && timed) e = cudaEventRecord(c->phase[2], st);
    if (e) return e;
    int nx = !c->cur;
    int carry = w->def.integrator == AD_INTEGRATOR_VERLET;
    k_gather<<<gb, AD_CUDA_BLOCK, 0, st>>>(ad_n{n, NULL}, c->bperm, c->state[c->cur], c->id[c->idp],
                                            carry ? c->acc[c->cur] : NULL, c->state[nx], c->id[!c->idp],
                                            carry ? c->acc[nx] : NULL);
    c->cur = nx;
    c->idp = !c->idp;
    memset(&c->tree, 0, sizeof c->tree);
    c->tree.n = n;
    c->tree.child = c->child;
    c->tree.rightmost = c->rightmost;
    c->tree.box = c->box;
    c->tree.point = c->state[c->cur];
    if (n > 1) {
        k_bvh_nodes<<<grid_of(n - 1), AD_CUDA_BLOCK, 0, st>>>(c->code_sorted, n, c->child, c->rightmost, c->parent);
        e = cudaMemsetAsync(c->visits, 0, (size_t)(n - 1) * 4, st);
        if (e) return e;
        k_bvh_boxes<<<gb, AD_CUDA_BLOCK, 0, st>>>(c->tree, n, c->box, c->parent, c->visits);
    }
    e = cudaGetLastError();
    return e || !timed ? e : cudaEventRecord(c->phase[3], st);
}

/* How this step's pass bins its results for the next step (ad_bin_next): the grid's
 * symplectic and explicit Euler steps, unless discs pile up (the aggregated bin kernel
 * then pays more than the pass would save). Verlet's drift and RK4's stages move the
 * discs after or outside the pass, and the BVH has no cells. The grid diagnostics are
 * taken on the steps somebody reads (obs), like the other statistics: the other steps
 * run the variant without them. */
static int bin_mode(const ad_world *w, const cuda_world *c, int obs)
{
    int integ = w->def.integrator;
    if (c->bvh || c->aggregate || (integ != AD_INTEGRATOR_SYMPLECTIC_EULER && integ != AD_INTEGRATOR_EULER))
        return AD_BIN_NONE;
    return w->def.diagnostics && obs ? AD_BIN_DIAG : AD_BIN_FAST;
}

/* Where the bins keep each disc's cell: only the deterministic path reads it back. */
static unsigned *keep_cells(const ad_world *w, const cuda_world *c)
{
    return w->def.deterministic ? c->cell_of : NULL;
}

static ad_bin_next bin_next(const ad_world *w, const cuda_world *c)
{
    return ad_bin_next{keep_cells(w, c), c->rank, ad_counts{c->count, c->count_lg, &c->ctrl->count_overflow},
                       w->stats.cell_capacity, &c->ctrl->dead};
}

/* Steps 1-3 on the stream: the state (and accelerations) end in cell order. Step 1
 * (bin) is skipped where the last step's pass did it (c->binned); where it runs, it takes
 * the grid diagnostics on observed steps (obs). */
static cudaError_t enqueue_grid(ad_world *w, cuda_world *c, unsigned n, int timed, int obs)
{
    if (c->bvh) return enqueue_bvh(w, c, n, timed);
    cudaStream_t st = c->stream;
    unsigned gb = grid_of(n);
    cudaError_t e = timed ? cudaEventRecord(c->phase[0], st) : cudaSuccess;
    if (!e && !c->binned) { /* the counters are clear: left so by the last scan, or forget_bin */
        /* warp-aggregated atomics pay where discs pile up (dev/cuda/bin.cu): chosen from
         * the last known largest occupancy */
        int diag = w->def.diagnostics && obs, agg = c->aggregate;
        const ad_state *q = c->state[c->cur];
        ad_bin_next b = bin_next(w, c);
        ad_n nn = count_of(c, n);
        if (diag && agg) k_bin_aggregated<true><<<gb, AD_CUDA_BLOCK, 0, st>>>(w->params, q, nn, b, c->blocks);
        else if (diag) k_bin<true><<<gb, AD_CUDA_BLOCK, 0, st>>>(w->params, q, nn, b, c->blocks);
        else if (agg) k_bin_aggregated<false><<<gb, AD_CUDA_BLOCK, 0, st>>>(w->params, q, nn, b, c->blocks);
        else k_bin<false><<<gb, AD_CUDA_BLOCK, 0, st>>>(w->params, q, nn, b, c->blocks);
    }
    if (e) return e;
    e = timed ? cudaEventRecord(c->phase[1], st) : cudaSuccess;
    /* the scan leaves the counters cleared, for this step's pass to bin into */
    if (!e) e = ad_scan_counts(c->count, c->count_lg, c->start, c->scan_state, c->ncell, st);
    if (!e && timed) e = cudaEventRecord(c->phase[2], st);
    if (e) return e;
    int nx = !c->cur;
    /* only Verlet carries accelerations from step to step; the others recompute them */
    int carry = w->def.integrator == AD_INTEGRATOR_VERLET;
    const ad_accel *acc_in = carry ? c->acc[c->cur] : NULL;
    ad_accel *acc_out = carry ? c->acc[nx] : NULL;
    ad_n nn = count_of(c, n);
    unsigned dead_cell = (unsigned)w->params.nx * (unsigned)w->params.ny;
    if (w->def.deterministic) {
#ifdef AD_CUDA_DET_SORT /* measurement switch: the stable radix sort of (cell, previous slot) pairs (closed worlds) */
        k_iota<<<gb, AD_CUDA_BLOCK, 0, st>>>(nn, c->iota);
        size_t tb = c->temp_bytes;
        e = cub::DeviceRadixSort::SortPairs(c->temp, tb, c->cell_of, c->keys_out, c->iota, c->perm, (int)n, 0,
                                            c->key_bits, st);
        if (e) return e;
#else
        /* the same stable order without a sort: the atomic ranks put each cell's discs in its
         * slot range in any order (k_cell_members), then each disc's rank in its cell is the
         * number of its cell's discs with a lower previous slot (k_stable_rank) */
        k_cell_members<<<gb, AD_CUDA_BLOCK, 0, st>>>(nn, c->cell_of, c->rank, c->start, c->iota);
        k_stable_rank<<<gb, AD_CUDA_BLOCK, 0, st>>>(nn, dead_cell, &c->ctrl->dead, c->cell_of, c->start, c->iota,
                                                     c->perm);
#endif
        k_gather<<<gb, AD_CUDA_BLOCK, 0, st>>>(nn, c->perm, c->state[c->cur], c->id[c->idp], acc_in, c->state[nx],
                                                c->id[!c->idp], acc_out);
    } else {
        k_scatter<<<gb, AD_CUDA_BLOCK, 0, st>>>(w->params, nn, c->rank, c->start, c->state[c->cur], c->id[c->idp],
                                                 acc_in, c->state[nx], c->id[!c->idp], acc_out);
    }
    /* the removed discs went after the others: the world ends there */
    if (c->open) k_after_sort<<<1, 1, 0, st>>>(c->start, dead_cell, c->ctrl);
    c->cur = nx;
    c->idp = !c->idp;
    e = cudaGetLastError();
    return e || !timed ? e : cudaEventRecord(c->phase[3], st);
}

/* Step 5's entries after the pass that ends a step (open.cuh): the free stream's and the reservoir's
 * new discs, appended to the pass's output `nx` and binned where the pass binned (bin). */
static void enqueue_enter(ad_world *w, cuda_world *c, int nx, int bin)
{
    if (!c->open) return;
    cudaStream_t st = c->stream;
    int nb = w->params.res_boxes;
    if (nb) {
        size_t bytes = c->res_scan_bytes;
        cub::DeviceScan::ExclusiveSum(c->res_scan_temp, bytes, c->res_add, c->res_add_start, nb, st);
    }
    k_enter<<<1, AD_ENTER_THREADS, 0, st>>>(w->params, c->ctrl, c->waiting, c->waiting_next, c->res_add,
                                             c->res_add_start, c->res_state, c->start, c->state[nx], c->id[c->idp],
                                             c->pressure, c->virial, c->acc[nx], bin, bin_next(w, c), c->spots,
                                             c->spot_next, c->vmax2_new, (unsigned)c->cap);
}

/* Before the pass: the reservoir's plan on the step's grid (open.cuh). */
static void enqueue_reservoir_plan(ad_world *w, cuda_world *c)
{
    int nb = w->params.res_boxes;
    if (!nb) return;
    k_reservoir_plan<<<grid_of((size_t)nb), AD_CUDA_BLOCK, 0, c->stream>>>(w->params, c->start, c->id[c->idp], c->ctrl,
                                                                           c->res_state, c->res_add, c->doomed);
}

static ad_bvh_forces bvh_forces(const cuda_world *c)
{
    float *f = c->forces;
    size_t m = c->cap;
    return ad_bvh_forces{f, f + m, f + 2 * m, f + 3 * m, f + 4 * m, f + 5 * m};
}

/* Reflexive: the disc pairs' sums at state `in`, searched around the tree's state. */
static void enqueue_pairs(ad_world *w, cuda_world *c, unsigned n, const ad_state *in)
{
    cudaMemsetAsync(c->forces, 0, 6 * c->cap * sizeof(float), c->stream);
    if (!w->params.disc_contacts) return;
    if (w->bvh_shared_stack)
        k_bvh_pairs<true><<<grid_of(n), AD_CUDA_BLOCK, AD_BVH_SHARED_STACK_BYTES, c->stream>>>(w->params, c->tree, n,
                                                                                            in, bvh_forces(c));
    else
        k_bvh_pairs<false><<<grid_of(n), AD_CUDA_BLOCK, 0, c->stream>>>(w->params, c->tree, n, in, bvh_forces(c));
}

template <int INTEG, int PASS, bool OBS, int BIN = AD_BIN_NONE, class G>
static void launch_interact_with(ad_world *w, cuda_world *c, unsigned n, const G &gather, size_t smem)
{
    int nx = !c->cur;
    k_interact<INTEG, PASS, OBS, G, BIN><<<grid_of(n), AD_CUDA_BLOCK, smem, c->stream>>>(
        w->params, gather, count_of(c, n), c->state[c->cur], c->state[nx], c->id[c->idp], c->acc[c->cur], c->acc[nx],
        c->pressure, c->virial, c->ctrl, c->blocks, c->doomed, bin_next(w, c));
    if (PASS == AD_PASS_STEP) enqueue_enter(w, c, nx, BIN);
    c->cur = nx;
    c->binned = BIN != AD_BIN_NONE;
}

/* Step 4 through the world's broad phase. */
template <int INTEG, int PASS, bool OBS>
static void launch_interact(ad_world *w, cuda_world *c, unsigned n)
{
    if (!c->bvh) {
        ad_grid_gather g{c->gdev, c->start};
        /* only the steps that move discs in the pass itself bin there (bin_mode) */
        constexpr bool can_bin = PASS == AD_PASS_STEP && INTEG != AD_INTEGRATOR_VERLET;
        int mode = can_bin ? bin_mode(w, c, OBS) : AD_BIN_NONE;
        if (can_bin && OBS && mode == AD_BIN_DIAG)
            launch_interact_with<INTEG, PASS, OBS, can_bin && OBS ? AD_BIN_DIAG : AD_BIN_NONE>(w, c, n, g, 0);
        else if (can_bin && mode == AD_BIN_FAST)
            launch_interact_with<INTEG, PASS, OBS, can_bin ? AD_BIN_FAST : AD_BIN_NONE>(w, c, n, g, 0);
        else
            launch_interact_with<INTEG, PASS, OBS>(w, c, n, g, 0);
    } else if (w->def.bvh_traversal == AD_BVH_REFLEXIVE) {
        enqueue_pairs(w, c, n, c->state[c->cur]);
        launch_interact_with<INTEG, PASS, OBS>(w, c, n, ad_bvh_reflexive_gather{c->stree, bvh_forces(c)}, 0);
    } else if (w->bvh_shared_stack) {
        launch_interact_with<INTEG, PASS, OBS>(w, c, n, ad_bvh_gather<true>{c->tree, c->stree},
                                               AD_BVH_SHARED_STACK_BYTES);
    } else {
        launch_interact_with<INTEG, PASS, OBS>(w, c, n, ad_bvh_gather<false>{c->tree, c->stree}, 0);
    }
}

/* RK4 stage K through the world's broad phase (searched around the step's start). */
template <int K, class G>
static void launch_rk4_with(ad_world *w, cuda_world *c, unsigned n, const G &gather, size_t smem,
                            const ad_state *base, const ad_state *in, ad_state *out, float skin)
{
    int nx = !c->cur;
    k_rk4_stage<K, G><<<grid_of(n), AD_CUDA_BLOCK, smem, c->stream>>>(w->params, gather, count_of(c, n), base, in, out,
                                                                        c->rk[2], c->id[c->idp], c->acc[nx],
                                                                        c->pressure, c->virial, c->ctrl, skin, c->blocks,
                                                                        K == 3 ? c->doomed : NULL);
}

template <int K>
static void launch_rk4(ad_world *w, cuda_world *c, unsigned n, const ad_state *base, const ad_state *in,
                       ad_state *out, float skin)
{
    if (!c->bvh) {
        launch_rk4_with<K>(w, c, n, ad_grid_gather{c->gdev, c->start}, 0, base, in, out, skin);
    } else if (w->def.bvh_traversal == AD_BVH_REFLEXIVE) {
        enqueue_pairs(w, c, n, in);
        launch_rk4_with<K>(w, c, n, ad_bvh_reflexive_gather{c->stree, bvh_forces(c)}, 0, base, in, out, skin);
    } else if (w->bvh_shared_stack) {
        launch_rk4_with<K>(w, c, n, ad_bvh_gather<true>{c->tree, c->stree}, AD_BVH_SHARED_STACK_BYTES, base, in, out,
                           skin);
    } else {
        launch_rk4_with<K>(w, c, n, ad_bvh_gather<false>{c->tree, c->stree}, 0, base, in, out, skin);
    }
}

/* The shared-memory stack takes 64 KiB of dynamic shared memory a block: above the
 * default 48 KiB, so every kernel that may use it is allowed it once, at creation
 * (not while a graph is being captured). */
static cudaError_t allow_shared_stack(void)
{
    const int bytes = (int)AD_BVH_SHARED_STACK_BYTES;
    const cudaFuncAttribute a = cudaFuncAttributeMaxDynamicSharedMemorySize;
    typedef ad_bvh_gather<true> G;
    cudaError_t e = cudaFuncSetAttribute(k_bvh_pairs<true>, a, bytes);
    if (!e) e = cudaFuncSetAttribute(k_interact<AD_INTEGRATOR_EULER, AD_PASS_STEP, true, G>, a, bytes);
    if (!e) e = cudaFuncSetAttribute(k_interact<AD_INTEGRATOR_EULER, AD_PASS_STEP, false, G>, a, bytes);
    if (!e) e = cudaFuncSetAttribute(k_interact<AD_INTEGRATOR_VERLET, AD_PASS_STEP, true, G>, a, bytes);
    if (!e) e = cudaFuncSetAttribute(k_interact<AD_INTEGRATOR_VERLET, AD_PASS_STEP, false, G>, a, bytes);
    if (!e) e = cudaFuncSetAttribute(k_interact<AD_INTEGRATOR_VERLET, AD_PASS_PRIME, true, G>, a, bytes);
    if (!e) e = cudaFuncSetAttribute(k_interact<AD_INTEGRATOR_SYMPLECTIC_EULER, AD_PASS_STEP, true, G>, a, bytes);
    if (!e) e = cudaFuncSetAttribute(k_interact<AD_INTEGRATOR_SYMPLECTIC_EULER, AD_PASS_STEP, false, G>, a, bytes);
    if (!e) e = cudaFuncSetAttribute(k_rk4_stage<0, G>, a, bytes);
    if (!e) e = cudaFuncSetAttribute(k_rk4_stage<1, G>, a, bytes);
    if (!e) e = cudaFuncSetAttribute(k_rk4_stage<2, G>, a, bytes);
    if (!e) e = cudaFuncSetAttribute(k_rk4_stage<3, G>, a, bytes);
    return e;
}

static ad_dt_rule dt_rule(const ad_world *w)
{
    ad_dt_rule r;
    r.adaptive = w->def.adaptive_dt;
    r.dt_max = w->dt_max;
    r.dt_contact = w->dt_contact;
    r.move = w->def.max_move * w->def.radius;
    return r;
}

/* One whole step on the stream. */
static cudaError_t enqueue_step(ad_world *w, cuda_world *c, unsigned n, int timed, int obs)
{
    cudaStream_t st = c->stream;
    int integ = w->def.integrator;
    if (integ == AD_INTEGRATOR_VERLET)
        k_verlet_drift<<<grid_of(n), AD_CUDA_BLOCK, 0, st>>>(w->params, count_of(c, n), c->state[c->cur],
                                                              c->acc[c->cur], c->id[c->idp], c->ctrl);
    cudaError_t e = enqueue_grid(w, c, n, timed, obs);
    if (e) return e;
    enqueue_reservoir_plan(w, c);
    if (integ == AD_INTEGRATOR_RK4) {
        const ad_state *base = c->state[c->cur];
        ad_state *in = c->rk[0], *out = c->rk[1];
        float skin = (float)(w->def.max_move * w->def.radius);
        int nx = !c->cur;
        launch_rk4<0>(w, c, n, base, base, out, skin);
        launch_rk4<1>(w, c, n, base, out, in, skin);
        launch_rk4<2>(w, c, n, base, in, out, skin);
        launch_rk4<3>(w, c, n, base, out, c->state[nx], skin);
        enqueue_enter(w, c, nx, AD_BIN_NONE);
        c->cur = nx;
    } else {
        if (obs) {
            if (integ == AD_INTEGRATOR_EULER) launch_interact<AD_INTEGRATOR_EULER, AD_PASS_STEP, true>(w, c, n);
            else if (integ == AD_INTEGRATOR_VERLET) launch_interact<AD_INTEGRATOR_VERLET, AD_PASS_STEP, true>(w, c, n);
            else launch_interact<AD_INTEGRATOR_SYMPLECTIC_EULER, AD_PASS_STEP, true>(w, c, n);
        } else {
            if (integ == AD_INTEGRATOR_EULER) launch_interact<AD_INTEGRATOR_EULER, AD_PASS_STEP, false>(w, c, n);
            else if (integ == AD_INTEGRATOR_VERLET) launch_interact<AD_INTEGRATOR_VERLET, AD_PASS_STEP, false>(w, c, n);
            else launch_interact<AD_INTEGRATOR_SYMPLECTIC_EULER, AD_PASS_STEP, false>(w, c, n);
        }
    }
    unsigned nb = grid_of(n), nr = (nb + AD_FOLD_SHARE - 1) / AD_FOLD_SHARE;
    if (nr > AD_REDUCE_BLOCKS) nr = AD_REDUCE_BLOCKS;
    k_fold_step<<<nr, AD_CUDA_BLOCK, 0, st>>>(c->blocks, nb, c->blocks2, c->ctrl, dt_rule(w),
                                              (float)(1.0 / w->def.radius), c->open ? c->vmax2_new : NULL);
    e = cudaGetLastError();
    return e || !timed ? e : cudaEventRecord(c->phase[4], st);
}

static ad_status pull_ctrl(ad_world *w)
{
    cuda_world *c = CW(w);
    CU(cudaMemcpyAsync(c->ctrl_host, c->ctrl, sizeof(ad_ctrl), cudaMemcpyDeviceToHost, c->stream));
    CU(cudaStreamSynchronize(c->stream));
    const ad_ctrl &h = *c->ctrl_host;
    ad_stats &s = w->stats;
#define TO_STATS(cf, sf) s.sf = (decltype(s.sf))h.cf;
    AD_CTRL_STATS(TO_STATS)
#undef TO_STATS
    s.max_cell_occupancy = h.max_occupancy;
    s.cell_overflow = h.overflow;
    s.outside_grid = h.outside;
    if (c->open) w->count = h.n - h.removed; /* the slots less the discs the last pass removed */
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
                       (unsigned long long)h.step, ~0u >> (32 - (32 >> c->count_lg)), 32u >> c->count_lg,
                       (unsigned long long)h.nonfinite);
    if (h.nonfinite)
        return ad_fail(AD_ERR_UNSTABLE, "dt",
                       "by step %llu, %llu disc states became non-finite on the GPU (the step is too large for the "
                       "stiffness, or discs were placed overlapping)",
                       (unsigned long long)h.step, (unsigned long long)h.nonfinite);
    if (h.capacity_exceeded)
        return ad_fail(AD_ERR_CAPACITY, "capacity",
                       "capacity: by step %llu the free stream brought the world to %u discs, past its capacity of %zu "
                       "(a denser or faster stream than the capacity was sized for, or gas piling up ahead of the body); "
                       "the new discs past it were not placed",
                       (unsigned long long)h.step, h.capacity_exceeded, c->cap);
    return ad_ok();
}

static ad_status cuda_pull_stats(ad_world *w) { return pull_ctrl(w); }

static ad_status sample_fields(ad_world *w, cuda_world *c, unsigned n)
{
    k_fields<<<grid_of(n), AD_CUDA_BLOCK, 0, c->stream>>>(w->fields.grid, count_of(c, n), c->state[c->cur], c->virial,
                                                          c->pressure, c->acc[c->cur], c->field_sums);
    CU(cudaGetLastError());
    w->fields.samples++;
    if (w->fields.grid.probe) w->fields.probe_samples++;
    return ad_ok();
}

/* The step of the current id parity, observing or not, as a CUDA graph: one launch per step. */
static ad_status step_graph(ad_world *w, cuda_world *c, unsigned n, int obs, cudaGraphExec_t *out)
{
    int parity = c->idp, cur = c->cur;
    if (c->graph_n != n) invalidate_graphs(c);
    if (c->graph_ok[parity][obs]) {
        *out = c->graph[parity][obs];
        return ad_ok();
    }
    cudaGraph_t g;
    CU(cudaStreamBeginCapture(c->stream, cudaStreamCaptureModeThreadLocal));
    cudaError_t e = enqueue_step(w, c, n, 0, obs);
    cudaError_t e2 = cudaStreamEndCapture(c->stream, &g);
    c->cur = cur; /* capture only recorded the launches */
    c->idp = parity;
    if (e) return ad_fail(AD_ERR_BACKEND, "cuda", "capturing the step: %s", cudaGetErrorString(e));
    if (e2) return ad_fail(AD_ERR_BACKEND, "cuda", "capturing the step: %s", cudaGetErrorString(e2));
    e = cudaGraphInstantiate(&c->graph[parity][obs], g, 0);
    cudaGraphDestroy(g);
    if (e) return ad_fail(AD_ERR_BACKEND, "cuda", "instantiating the step graph: %s", cudaGetErrorString(e));
    c->graph_ok[parity][obs] = 1;
    c->graph_n = n;
    *out = c->graph[parity][obs];
    return ad_ok();
}

static ad_status cuda_step(ad_world *w, uint64_t nsteps)
{
    cuda_world *c = CW(w);
    unsigned n = launch_n(w, c);
    if (c->dt_stale) {
        CU(cudaMemsetAsync(c->vmax_bits, 0, 4, c->stream));
        k_vmax2<<<grid_of(n), AD_CUDA_BLOCK, 0, c->stream>>>(count_of(c, n), c->state[c->cur], c->vmax_bits);
        unsigned bits = 0;
        CU(cudaMemcpyAsync(&bits, c->vmax_bits, 4, cudaMemcpyDeviceToHost, c->stream));
        CU(cudaStreamSynchronize(c->stream));
        float v2;
        memcpy(&v2, &bits, 4);
        ad_status st = pull_ctrl(w);
        if (st.code) return st;
        w->stats.dt = ad_next_dt(w, sqrt((double)v2));
        st = push_ctrl(w);
        if (st.code) return st;
        c->dt_stale = 0;
    }
    if (w->def.integrator == AD_INTEGRATOR_VERLET && !c->primed) {
        if (enqueue_grid(w, c, n, 0, 1) != cudaSuccess) return ad_fail(AD_ERR_BACKEND, "cuda", "grid launch failed");
        launch_interact<AD_INTEGRATOR_VERLET, AD_PASS_PRIME, true>(w, c, n);
        CU(cudaGetLastError());
        c->primed = 1;
    }
    /* the host knows the step count, so it knows when to sample fields, without asking the device */
    uint64_t step0 = w->stats.step;
    int agg = w->stats.max_cell_occupancy > 16;
    if (agg != c->aggregate) {
        c->aggregate = agg;
        invalidate_graphs(c);
    }
    for (uint64_t k = 0; k < nsteps; k++) {
        uint64_t done = step0 + k + 1;
        /* the per-disc observables are written on the steps somebody reads: before a
         * field sample and at the end of the call */
        int obs = k + 1 == nsteps || (w->fields.enabled && done % w->fields.def.interval == 0);
        if (k == 0) {
            /* the first step of a call runs outside the graph with events between the
             * phases: its phase times stand for the call's steps (the same kernels) */
            cudaError_t e = enqueue_step(w, c, n, 1, obs);
            if (e) return ad_fail(AD_ERR_BACKEND, "cuda", "launching a step: %s", cudaGetErrorString(e));
            c->phase_steps = nsteps;
        } else {
            cudaGraphExec_t g = NULL;
            ad_status st = step_graph(w, c, n, obs, &g);
            if (st.code) return st;
            CU(cudaGraphLaunch(g, c->stream));
            c->idp = !c->idp;
        }
        if (w->fields.enabled && done % w->fields.def.interval == 0) {
            ad_status st = sample_fields(w, c, n);
            if (st.code) return st;
        }
        /* a bounded queue: at most two batches of 32 steps in flight, so Ctrl-C stops soon
         * and the GPU never idles waiting for the host */
        if ((k & 31) == 31) {
            int b = (int)((k >> 5) & 1);
            CU(cudaEventRecord(c->batch[b], c->stream));
            CU(cudaEventSynchronize(c->batch[!b]));
            if (w->interrupt && *w->interrupt) {
                if (k + 1 < nsteps) {
                    /* the last step did not observe: one more, observing, ends the call */
                    cudaError_t e = enqueue_step(w, c, n, 0, 1);
                    if (e) return ad_fail(AD_ERR_BACKEND, "cuda", "launching a step: %s", cudaGetErrorString(e));
                    if (w->fields.enabled && (done + 1) % w->fields.def.interval == 0) {
                        ad_status st = sample_fields(w, c, n);
                        if (st.code) return st;
                    }
                }
                break;
            }
        }
    }
    return pull_ctrl(w);
}

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
    free(h->s);
    free(h->ids);
    free(h->pr);
    free(h->vi);
    free(h->ac);
}

static ad_status copy_to_host(const ad_world *w, cuda_world *c, host_copy *h)
{
    memset(h, 0, sizeof *h);
    cudaError_t e = pull_count(c);
    if (e) return ad_fail(AD_ERR_BACKEND, "cuda", "reading the GPU's count: %s", cudaGetErrorString(e));
    size_t n = c->open ? c->ctrl_host->n : w->count;
    h->slots = n;
    h->s = (ad_state *)malloc(n * sizeof(ad_state) + 1);
    h->ids = (unsigned *)malloc(n * 4 + 1);
    h->pr = (float *)malloc(n * 4 + 1);
    h->vi = (float *)malloc(n * 4 + 1);
    h->ac = (ad_accel *)malloc(n * sizeof(ad_accel) + 1);
    if (!h->s || !h->ids || !h->pr || !h->vi || !h->ac) {
        host_copy_free(h);
        return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory reading %zu particles", n);
    }
    e = cudaMemcpyAsync(h->s, c->state[c->cur], n * sizeof(ad_state), cudaMemcpyDeviceToHost, c->stream);
    if (!e) e = cudaMemcpyAsync(h->ids, c->id[c->idp], n * 4, cudaMemcpyDeviceToHost, c->stream);
    if (!e) e = cudaMemcpyAsync(h->pr, c->pressure, n * 4, cudaMemcpyDeviceToHost, c->stream);
    if (!e) e = cudaMemcpyAsync(h->vi, c->virial, n * 4, cudaMemcpyDeviceToHost, c->stream);
    if (!e) e = cudaMemcpyAsync(h->ac, c->acc[c->cur], n * sizeof(ad_accel), cudaMemcpyDeviceToHost, c->stream);
    if (!e) e = cudaStreamSynchronize(c->stream);
    if (e) {
        host_copy_free(h);
        return ad_fail(AD_ERR_BACKEND, "cuda", "reading particles from the GPU: %s", cudaGetErrorString(e));
    }
    return ad_ok();
}

static ad_status cuda_read(const ad_world *w, int flags, size_t max, const ad_particle_out *out, size_t *count)
{
    cuda_world *c = CW(w);
    host_copy h;
    ad_status st = copy_to_host(w, c, &h);
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
static ad_status cuda_export(const ad_world *w, ad_snapshot *s)
{
    memset(s, 0, sizeof *s);
    cuda_world *c = CW(w);
    host_copy h;
    ad_status st = copy_to_host(w, c, &h);
    if (st.code) return st;
    size_t m = 0;
    for (size_t k = 0; k < h.slots; k++) {
        if (ad_is_dead(h.s[k])) continue;
        h.s[m] = h.s[k];
        h.ids[m] = h.ids[k];
        h.pr[m] = h.pr[k];
        h.vi[m] = h.vi[k];
        h.ac[m] = h.ac[k];
        m++;
    }
    s->n = m;
    s->owned = 1;
    s->state = h.s;
    s->id = h.ids;
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
        st = ad_open_state_alloc(&s->open_alloc, (uint32_t)nb);
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

static ad_status cuda_import(ad_world *w, const ad_snapshot *s)
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
    c->primed = s->primed;
    c->dt_stale = 0;
    CU(forget_bin(c));
    invalidate_graphs(c);
    ad_ctrl &k = *c->ctrl_host;
    k.n = (unsigned)n;
    k.next_id = s->open.next_id;
    k.nwaiting = s->open.nwaiting;
    k.dead = k.removed = 0;
    memcpy(k.owed, s->open.owed, sizeof k.owed);
    return push_ctrl(w);
}

static ad_status cuda_fields_to_device(ad_world *w)
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
    return ad_ok();
}

static ad_status cuda_fields_to_host(ad_world *w)
{
    cuda_world *c = CW(w);
    size_t cells = (size_t)w->fields.def.nx * w->fields.def.ny + 1; /* the cells, then the probe */
    CU(cudaMemcpyAsync(w->fields.sums, c->field_sums, cells * AD_FS_COUNT * sizeof(double), cudaMemcpyDeviceToHost,
                       c->stream));
    CU(cudaStreamSynchronize(c->stream));
    return ad_ok();
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

/* One line per GPU: name, memory, multiprocessors, compute capability. */
extern "C" int ad_cuda_describe(char *buf, size_t n)
{
    int count = ad_cuda_device_count();
    size_t used = 0;
    buf[0] = 0;
    for (int d = 0; d < count && used < n; d++) {
        cudaDeviceProp p;
        if (cudaGetDeviceProperties(&p, d) != cudaSuccess) {
            cudaGetLastError();
            continue;
        }
        int k = snprintf(buf + used, n - used, "GPU %d: %s, %.1f GiB, %d multiprocessors, compute capability %d.%d\n",
                         d, p.name, p.totalGlobalMem / 1073741824.0, p.multiProcessorCount, p.major, p.minor);
        if (k < 0) break;
        used += (size_t)k;
    }
    return count;
}

/* A plain device-to-device copy of `bytes`, the bandwidth yardstick of the benchmark:
 * bytes read plus bytes written per second, median of `reps` timed copies. */
extern "C" double ad_cuda_copy_rate(size_t bytes, int reps)
{
    void *a = NULL, *b = NULL;
    if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess) {
        cudaGetLastError();
        if (a) cudaFree(a);
        return 0.0;
    }
    cudaMemset(a, 1, bytes);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    float best[64];
    if (reps > 64) reps = 64;
    cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice); /* warm-up */
    for (int k = 0; k < reps; k++) {
        cudaEventRecord(e0);
        cudaMemcpy(k & 1 ? a : b, k & 1 ? b : a, bytes, cudaMemcpyDeviceToDevice);
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        cudaEventElapsedTime(&best[k], e0, e1);
    }
    for (int i = 1; i < reps; i++) /* insertion sort for the median */
        for (int j = i; j > 0 && best[j] < best[j - 1]; j--) {
            float t = best[j];
            best[j] = best[j - 1];
            best[j - 1] = t;
        }
    double ms = best[reps / 2];
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaFree(a);
    cudaFree(b);
    return ms > 0 ? 2.0 * (double)bytes / (ms * 1e-3) : 0.0;
}

extern "C" const ad_backend_ops ad_cuda_backend = {
    "cuda",
    cuda_create,
    cuda_destroy,
    cuda_add_particles,
    cuda_set_segments,
    cuda_step,
    cuda_read,
    cuda_export,
    cuda_import,
    cuda_fields_to_host,
    cuda_fields_to_device,
    cuda_pull_stats,
    cuda_bytes_needed,
};
