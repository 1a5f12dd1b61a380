/* The CUDA backend: its ops table, the world's creation and device buffers, the discs and segments the
 * host sets, the GPUs' descriptions. The step is cuda_step.cu's, read-back cuda_readback.cu's; what
 * the three share: cuda_world.cuh. */
#include <cuda_runtime.h>

#include <cub/device/device_radix_sort.cuh>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cub/device/device_scan.cuh>

#include "../physics/integrate.h"
#include "counts.cuh"
#include "cuda_world.cuh"

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
    if (ad_surfaces_nonspecular(d)) b += 2 * 4; /* the contact states (panels.cuh) */
    if (d->broad_phase == AD_BROAD_PHASE_BVH) {
        /* codes x2, sort values x2, children x2, rightmost, parents x2, visits, box */
        b += 10 * 4 + sizeof(ad_bvh_box);
        if (d->bvh_traversal == AD_BVH_REFLEXIVE) b += 6 * 4; /* the pair sums */
        if (d->integrator == AD_INTEGRATOR_RK4) b += 3 * sizeof(ad_state);
        return b;
    }
    b += 4 /* rank */;
    if (d->deterministic) b += 3 * 4; /* cell_of (the fast path computes the cell again), perm, members */
    if (d->integrator == AD_INTEGRATOR_RK4) b += 3 * sizeof(ad_state);
    return b;
}

/* The scratch CUB's radix sort of n (key, value) pairs of 32 bits over `bits` key bits needs. */
size_t ad_cuda_sort_bytes(size_t n, int bits)
{
    size_t t = 0;
    cub::DeviceRadixSort::SortPairs(nullptr, t, (const unsigned *)nullptr, (unsigned *)nullptr,
                                    (const unsigned *)nullptr, (unsigned *)nullptr, (int)n, 0, bits);
    return t;
}

/* The scratch of the scan of the reservoir boxes' additions. */
size_t ad_cuda_reservoir_scan_bytes(int boxes)
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
    if (d->broad_phase == AD_BROAD_PHASE_BVH) temp = ad_cuda_sort_bytes(d->capacity, 32);
    unsigned lg = count_lg(d, p);
    size_t cells = ad_count_bytes(ncell, lg) + ad_start_slots(ncell, lg) * 4 + ad_scan_state_bytes(ncell, lg);
    size_t open = 0;
    if (p->open_x || p->open_y)
        open = 2 * AD_WAITING_MAX * sizeof(ad_entry) + AD_ROOM_MAX * (sizeof(ad_state) + 4) + 16 +
               (size_t)p->res_boxes * (2 * sizeof(double) + 2 * 4) + ad_cuda_reservoir_scan_bytes(p->res_boxes);
    return d->capacity * per_particle(d) + cells + blocks * sizeof(ad_step_sums) + temp + sizeof(ad_ctrl) + open;
}

static void cuda_destroy(ad_world *w)
{
    cuda_world *c = CW(w);
    if (!c) return;
    for (int k = 0; k < 4; k++)
        if (c->graph_ok[k / 2][k % 2]) cudaGraphExecDestroy(c->graph[k / 2][k % 2]);
    void *ptrs[] = {c->state[0], c->state[1], c->id[0],   c->id[1],   c->cell_of, c->rank,      c->count,
                    c->scan_state, c->start,    c->perm,     c->iota,    c->temp,   c->pressure,  c->virial,
                    c->acc[0],   c->acc[1],   c->rk[0],   c->rk[1],   c->rk[2],   c->blocks,    c->blocks2,  c->ctrl,
                    c->vmax_bits, c->segs,    c->seg_start, c->seg_index, c->field_sums, c->waiting,
                    c->waiting_next, c->spots, c->spot_next, c->vmax2_new, c->res_state, c->res_add, c->res_add_start,
                    c->res_scan_temp, c->doomed,
                    c->code,     c->code_sorted, c->bindex, c->bperm, c->child, c->rightmost, c->parent,
                    c->visits,   c->box,      c->forces};
    for (void *p : ptrs)
        if (p) cudaFree(p);
    ad_dev_tree_free(&c->st);
    ad_dev_panels_free(&c->panels);
    if (c->ctrl_host) cudaFreeHost(c->ctrl_host);
    for (int k = 0; k < 2; k++)
        if (c->batch[k]) cudaEventDestroy(c->batch[k]);
    for (int k = 0; k < 5; k++)
        if (c->phase[k]) cudaEventDestroy(c->phase[k]);
    if (c->stream) cudaStreamDestroy(c->stream);
    free(c);
    w->impl = NULL;
}

static cudaError_t dev_alloc(void **p, size_t bytes) { return cudaMalloc(p, bytes > 0 ? bytes : 16); }

/* Allocates ptr (bytes) while e holds no error: a group's allocations in a row, the first failure kept. */
#define ALLOC(ptr, bytes)                                                                                         \
    if (e == cudaSuccess) e = dev_alloc((void **)&(ptr), (bytes))

/* The arrays of n slots: states, ids and accelerations (double-buffered), the per-disc observables,
 * the deterministic rank, RK4's stages. */
static cudaError_t alloc_slots(cuda_world *c, const ad_world_def *d, size_t n)
{
    cudaError_t e = cudaSuccess;
    for (int k = 0; k < 2; k++) {
        ALLOC(c->state[k], n * sizeof(ad_state));
        ALLOC(c->id[k], n * 4);
        ALLOC(c->acc[k], n * sizeof(ad_accel));
    }
    if (!c->bvh) ALLOC(c->rank, n * 4);
    ALLOC(c->pressure, n * 4);
    ALLOC(c->virial, n * 4);
    if (d->integrator == AD_INTEGRATOR_RK4)
        for (int k = 0; k < 3; k++) ALLOC(c->rk[k], n * sizeof(ad_state));
    return e;
}

/* The open sides' buffers (open.cuh): the waiting list, the judged spots, the reservoir's boxes. */
static cudaError_t alloc_open(cuda_world *c, const ad_params *p, size_t n)
{
    cudaError_t e = cudaSuccess;
    ALLOC(c->waiting, AD_WAITING_MAX * sizeof(ad_entry));
    ALLOC(c->waiting_next, AD_WAITING_MAX * sizeof(ad_entry));
    ALLOC(c->spots, AD_ROOM_MAX * sizeof(ad_state));
    ALLOC(c->spot_next, AD_ROOM_MAX * sizeof(unsigned));
    ALLOC(c->vmax2_new, 4);
    int nb = p->res_boxes;
    if (nb) {
        ALLOC(c->res_state, (size_t)nb * 2 * sizeof(double));
        ALLOC(c->res_add, (size_t)nb * 4);
        ALLOC(c->res_add_start, (size_t)nb * 4);
        c->res_scan_bytes = ad_cuda_reservoir_scan_bytes(nb);
        ALLOC(c->res_scan_temp, c->res_scan_bytes);
        ALLOC(c->doomed, n);
    }
    return e;
}

/* The broad phase: the grid's counters, starts and scan state; the BVH's keys and tree, or the
 * deterministic sort's arrays; the sorts' scratch. */
static cudaError_t alloc_broad_phase(cuda_world *c, const ad_world_def *d, size_t n)
{
    cudaError_t e = cudaSuccess;
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
        size_t t2 = ad_cuda_sort_bytes(n, 32);
        if (t2 > c->temp_bytes) c->temp_bytes = t2;
    } else if (d->deterministic) {
        ALLOC(c->cell_of, n * 4);
        ALLOC(c->perm, n * 4);
        ALLOC(c->iota, n * 4);
    }
    ALLOC(c->temp, c->temp_bytes);
    return e;
}

/* The step's records (the blocks' sums, the control record and its pinned mirror) and the
 * buffers that start cleared; the stream's events. */
static cudaError_t alloc_step(cuda_world *c, const ad_params *p, size_t n)
{
    cudaError_t e = cudaSuccess;
    ALLOC(c->blocks, (size_t)c->nblocks_cap * sizeof(ad_step_sums));
    ALLOC(c->blocks2, (size_t)AD_REDUCE_BLOCKS * sizeof(ad_step_sums));
    ALLOC(c->ctrl, sizeof(ad_ctrl));
    ALLOC(c->vmax_bits, 4);
    /* the diagnostics fields stay zero when the bin kernel does not write them */
    if (e == cudaSuccess) e = cudaMemset(c->blocks, 0, (size_t)c->nblocks_cap * sizeof(ad_step_sums));
    /* the counters start cleared (after that the scan clears them) */
    if (e == cudaSuccess) e = cudaMemset(c->count, 0, ad_count_bytes(c->ncell, c->count_lg));
    /* the reservoir's controllers start at rest, no disc marked */
    if (e == cudaSuccess && c->res_state) e = cudaMemset(c->res_state, 0, (size_t)p->res_boxes * 2 * sizeof(double));
    if (e == cudaSuccess && c->doomed) e = cudaMemset(c->doomed, 0, n);
    if (e == cudaSuccess) e = cudaMallocHost((void **)&c->ctrl_host, sizeof(ad_ctrl));
    if (e == cudaSuccess) memset(c->ctrl_host, 0, sizeof(ad_ctrl));
    for (int k = 0; k < 2 && e == cudaSuccess; k++) e = cudaEventCreateWithFlags(&c->batch[k], cudaEventDisableTiming);
    for (int k = 0; k < 2 && e == cudaSuccess; k++) e = cudaEventRecord(c->batch[k], c->stream);
    for (int k = 0; k < 5 && e == cudaSuccess; k++) e = cudaEventCreate(&c->phase[k]);
    return e;
}
#undef ALLOC

/* Why a world cannot be created on this GPU: too large for its free memory, or the BVH with open
 * sides. ad_ok() where it can. */
static ad_status check_create(const ad_world *w)
{
    const ad_world_def *d = &w->def;
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
    return ad_ok();
}

static ad_status cuda_create(ad_world *w)
{
    const ad_world_def *d = &w->def;
    int dev = 0;
    CU(cudaGetDevice(&dev));
    ad_status st = check_create(w);
    if (st.code) return st;
    cuda_world *c = (cuda_world *)calloc(1, sizeof *c);
    if (!c) return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory");
    w->impl = c;
    c->cap = d->capacity;
    c->bvh = d->broad_phase == AD_BROAD_PHASE_BVH;
    c->ncell = grid_cells(d, &w->params);
    c->nblocks_cap = (unsigned)((c->cap + AD_CUDA_BLOCK - 1) / AD_CUDA_BLOCK);
    c->count_lg = count_lg(d, &w->params);
    c->open = ad_world_open(w);
    c->dev_count = c->open || d->backend == AD_BACKEND_MPI; /* GPU ranks: discs come and go each step */
    size_t n = c->cap;
    cudaError_t e = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking);
    if (e == cudaSuccess) e = alloc_slots(c, d, n);
    if (e == cudaSuccess && c->open) e = alloc_open(c, &w->params, n);
    if (e == cudaSuccess) e = alloc_broad_phase(c, d, n);
    if (e == cudaSuccess) e = alloc_step(c, &w->params, n);
    if (e == cudaSuccess && c->bvh) e = ad_cuda_allow_shared_stack();
    if (e != cudaSuccess) {
        cudaGetLastError();
        cuda_destroy(w);
        char nb[64];
        ad_format_bytes((double)cuda_bytes_needed(d, &w->params), nb, sizeof nb);
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
    return ad_cuda_push_ctrl(w);
}

/* The discs changed on the host: the last pass's bin no longer describes them, and the next
 * step bins them all (k_bin). Its counters are cleared here, where they were left counted;
 * everywhere else the scan leaves them cleared. */
cudaError_t ad_cuda_forget_bin(cuda_world *c)
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
cudaError_t ad_cuda_pull_count(cuda_world *c)
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
    cudaError_t e = ad_cuda_pull_count(c);
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
    if (e == cudaSuccess) e = ad_dev_panels_clear(&c->panels, c->idp, at, n, c->stream); /* no contact yet */
    if (e == cudaSuccess) e = cudaStreamSynchronize(c->stream);
    c->ctrl_host->n = (unsigned)(at + n);
    c->ctrl_host->next_id = id0 + (unsigned)n;
    if (e == cudaSuccess) e = push_count(c);
    free(tmp);
    free(ids);
    if (e == cudaSuccess) e = ad_cuda_forget_bin(c);
    if (e != cudaSuccess) return ad_fail(AD_ERR_BACKEND, "cuda", "copying particles to the GPU: %s", cudaGetErrorString(e));
    c->primed = 0;
    c->dt_stale = 1;
    ad_cuda_invalidate_graphs(c);
    return ad_ok();
}

/* The segment tree, built on the host with the segments (src/core/world.c), copied as it is. */
static ad_status upload_segment_tree(ad_world *w, cuda_world *c)
{
    const ad_segments *s = &w->seg;
    CU(ad_dev_tree_upload(&c->st, s->tree.t, s->tree.item));
    c->stree.t = c->st.t;
    c->stree.item = c->st.item;
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
    ad_cuda_invalidate_graphs(c);
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
    nullptr, /* add_particles3: 3D runs on the CPU for now */
    cuda_set_segments,
    ad_cuda_step,
    ad_cuda_read,
    ad_cuda_export,
    ad_cuda_import,
    ad_cuda_fields_to_host,
    ad_cuda_fields_to_device,
    ad_cuda_pull_stats,
    cuda_bytes_needed,
    ad_cuda_panels_to_host,
    ad_cuda_panels_reset,
    NULL, /* writer: one process */
    NULL, /* agree */
};
