/* GPU ranks: a rank's CUDA world's side of the halo (cuda_ranks.h says what each step does): the halo
 * packed on the GPU by destination, the discs that came put after the slots, the step's pass with its sums
 * kept, and all ranks' sums applied. No MPI here: src/mpi/mpi_gpu.c moves the bytes. */
#include <cstdlib>
#include <cstring>

#include "cuda_ranks.h"
#include "cuda_world.cuh"
#include "fold.cuh"

struct cuda_ranks {
    ad_rank_cut cut;
    unsigned char *dest;      /* device: nx columns' AD_HALO_* */
    ad_halo_disc *out;        /* device: two sides of side_cap records (left, then right) */
    ad_halo_disc *host_out;   /* pinned: the same */
    size_t side_cap;
    unsigned *out_n;          /* device: the two sides' counts (they may pass side_cap: packed again) */
    unsigned *host_n;         /* pinned: two counts, then the new slot count */
    ad_halo_disc *in;         /* device: the discs that came, before they are put in the slots */
    size_t in_cap;
    ad_step_sums *sums;       /* device: [0] the rank's step sums (the fold's keep), [1] all ranks' */
    ad_step_sums *host_sums;  /* pinned: the same two */
};

static unsigned blocks_of(size_t n) { return (unsigned)((n + AD_CUDA_BLOCK - 1) / AD_CUDA_BLOCK); }

/* Step 1 on the GPU: each disc of the rank that a neighbour needs, into that side's buffer (in any order:
 * the receiver sorts them by id). A disc outside the own columns crossed in the last step: it goes to its
 * new rank (dest). An own disc of the ghost layer goes, as a ghost, to the neighbour beside it. */
__global__ void k_halo_pack(ad_params p, ad_n nn, const ad_state *__restrict__ st, const unsigned *__restrict__ ids,
                            const unsigned *__restrict__ touch, ad_rank_cut cut, const unsigned char *__restrict__ dest,
                            ad_halo_disc *__restrict__ out, unsigned side_cap, unsigned *__restrict__ out_n)
{
    unsigned s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= ad_n_get(nn)) return;
    ad_state q = st[s];
    if (ad_is_dead(q)) return;
    int c = ad_cell_coord(q.x, p.origin_x, p.inv_cell_x, p.nx);
    ad_halo_disc d = {q, ids[s], touch ? touch[s] : 0u};
    int side[2] = {-1, -1};
    if (c < cut.col_lo || c >= cut.col_hi) {
        side[0] = dest[c] == AD_HALO_LEFT ? 0 : 1;
    } else {
        if (cut.has_left && c < cut.col_lo + cut.reach) side[0] = 0;
        if (cut.has_right && c >= cut.col_hi - cut.reach) side[1] = 1;
    }
    for (int k = 0; k < 2; k++) {
        if (side[k] < 0) continue;
        unsigned at = atomicAdd(&out_n[side[k]], 1u);
        if (at < side_cap) out[(size_t)side[k] * side_cap + at] = d;
    }
}

/* Step 2 on the GPU: the discs that came, put in the slots from `at` on (their observables recomputed by the
 * pass; acceleration zero, as for discs the host adds). */
__global__ void k_halo_unpack(const ad_halo_disc *__restrict__ in, unsigned n, unsigned at, ad_state *__restrict__ st,
                              unsigned *__restrict__ ids, unsigned *__restrict__ touch, ad_accel *__restrict__ acc,
                              float *__restrict__ pressure, float *__restrict__ virial)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    ad_halo_disc d = in[i];
    st[at + i] = d.state;
    ids[at + i] = d.id;
    if (touch) touch[at + i] = d.touch;
    acc[at + i] = ad_accel{0.0f, 0.0f};
    pressure[at + i] = virial[at + i] = 0.0f;
}

static void free_buffers(cuda_ranks *r)
{
    cudaFree(r->dest);
    cudaFree(r->out);
    cudaFree(r->out_n);
    cudaFree(r->in);
    cudaFree(r->sums);
    cudaFreeHost(r->host_out);
    cudaFreeHost(r->host_n);
    cudaFreeHost(r->host_sums);
    r->dest = NULL;
    r->out = r->host_out = r->in = NULL;
    r->out_n = r->host_n = NULL;
    r->sums = r->host_sums = NULL;
}

/* The pack's buffers for `side_cap` discs a side. */
static cudaError_t size_sides(cuda_ranks *r, size_t side_cap)
{
    cudaFree(r->out);
    cudaFreeHost(r->host_out);
    r->out = r->host_out = NULL;
    r->side_cap = 0;
    cudaError_t e = cudaMalloc((void **)&r->out, 2 * side_cap * sizeof(ad_halo_disc));
    if (!e) e = cudaMallocHost((void **)&r->host_out, 2 * side_cap * sizeof(ad_halo_disc));
    if (!e) r->side_cap = side_cap;
    return e;
}

extern "C" int ad_cuda_ranks_device_count(void) { return ad_cuda_device_count(); }

extern "C" ad_status ad_cuda_ranks_use_device(int device)
{
    CU(cudaSetDevice(device));
    return ad_ok();
}

extern "C" ad_status ad_cuda_ranks_attach(ad_world *w, const ad_rank_cut *cut)
{
    cuda_world *c = CW(w);
    const ad_params &P = w->params;
    if (!c->ranks) {
        c->ranks = (cuda_ranks *)calloc(1, sizeof(cuda_ranks));
        if (!c->ranks) return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory");
        cuda_ranks *r = c->ranks;
        cudaError_t e = cudaMalloc((void **)&r->dest, (size_t)P.nx);
        if (!e) e = cudaMalloc((void **)&r->out_n, 2 * sizeof(unsigned));
        if (!e) e = cudaMalloc((void **)&r->sums, 2 * sizeof(ad_step_sums));
        if (!e) e = cudaMallocHost((void **)&r->host_n, 3 * sizeof(unsigned));
        if (!e) e = cudaMallocHost((void **)&r->host_sums, 2 * sizeof(ad_step_sums));
        /* a first guess of a side's discs: two ghost layers' worth at the mean density, at least 4096; the
         * pack grows it when a side holds more */
        size_t guess = c->cap / (size_t)P.nx * (size_t)(2 * cut->reach + 2) + 4096;
        if (!e) e = size_sides(r, guess < c->cap ? guess : c->cap);
        if (e) {
            cudaGetLastError();
            ad_cuda_ranks_detach(w);
            return ad_fail(AD_ERR_NO_MEMORY, "capacity", "GPU ranks: allocating the halo's buffers failed: %s",
                           cudaGetErrorString(e));
        }
    }
    cuda_ranks *r = c->ranks;
    r->cut = *cut;
    r->cut.dest = NULL;
    CU(cudaMemcpy(r->dest, cut->dest, (size_t)P.nx, cudaMemcpyHostToDevice));
    /* a rank that owns every column (a job of one) leaves the pass's test off (ad_not_own: own_hi 0) */
    int all = cut->col_lo == 0 && cut->col_hi == P.nx;
    w->params.own_lo = all ? 0 : cut->col_lo;
    w->params.own_hi = all ? 0 : cut->col_hi;
    c->sums_keep = &r->sums[0];
    ad_cuda_invalidate_graphs(c);
    return ad_ok();
}

extern "C" void ad_cuda_ranks_detach(ad_world *w)
{
    cuda_world *c = CW(w);
    if (!c || !c->ranks) return;
    free_buffers(c->ranks);
    free(c->ranks);
    c->ranks = NULL;
    c->sums_keep = NULL;
    w->params.own_lo = w->params.own_hi = 0;
}

/* The pack into buffers of side_cap discs a side; the sides' counts into host_n. */
static cudaError_t pack_once(ad_world *w, cuda_world *c, cuda_ranks *r)
{
    unsigned n = ad_cuda_launch_n(w);
    cudaError_t e = cudaMemsetAsync(r->out_n, 0, 2 * sizeof(unsigned), c->stream);
    if (!e && n)
        k_halo_pack<<<blocks_of(n), AD_CUDA_BLOCK, 0, c->stream>>>(
            w->params, ad_n{n, &c->ctrl->n}, c->state[c->cur], c->id[c->idp], c->panels.on ? c->panels.touch[c->idp] : NULL,
            r->cut, r->dest, r->out, (unsigned)r->side_cap, r->out_n);
    if (!e) e = cudaGetLastError();
    if (!e) e = cudaMemcpyAsync(r->host_n, r->out_n, 2 * sizeof(unsigned), cudaMemcpyDeviceToHost, c->stream);
    if (!e) e = cudaStreamSynchronize(c->stream);
    return e;
}

extern "C" ad_status ad_cuda_ranks_pack(ad_world *w, const ad_halo_disc **left, size_t *nl, const ad_halo_disc **right,
                                        size_t *nr)
{
    cuda_world *c = CW(w);
    cuda_ranks *r = c->ranks;
    CU(pack_once(w, c, r));
    size_t most = r->host_n[0] > r->host_n[1] ? r->host_n[0] : r->host_n[1];
    if (most > r->side_cap) { /* a side held more than the buffers: larger ones, and the pack again */
        CU(size_sides(r, most + most / 2));
        CU(pack_once(w, c, r));
    }
    *nl = r->host_n[0];
    *nr = r->host_n[1];
    const size_t rec = sizeof(ad_halo_disc);
    for (int k = 0; k < 2; k++) {
        size_t m = k ? *nr : *nl;
        if (m) CU(cudaMemcpyAsync(r->host_out + k * r->side_cap, r->out + k * r->side_cap, m * rec,
                                  cudaMemcpyDeviceToHost, c->stream));
    }
    CU(cudaStreamSynchronize(c->stream));
    *left = r->host_out;
    *right = r->host_out + r->side_cap;
    return ad_ok();
}

extern "C" ad_status ad_cuda_ranks_append(ad_world *w, const ad_halo_disc *d, size_t n)
{
    cuda_world *c = CW(w);
    cuda_ranks *r = c->ranks;
    if (n == 0) return ad_ok();
    CU(ad_cuda_pull_count(c));
    size_t at = c->ctrl_host->n;
    if (at + n > c->cap)
        return ad_fail(AD_ERR_CAPACITY, "capacity",
                       "capacity: a GPU rank holds %zu slots and was given %zu discs more (its own, the ghosts and the "
                       "discs that crossed), past its capacity of %zu: give a larger capacity",
                       at, n, c->cap);
    if (n > r->in_cap) {
        cudaFree(r->in);
        r->in = NULL;
        r->in_cap = 0;
        CU(cudaMalloc((void **)&r->in, (n + n / 2) * sizeof(ad_halo_disc)));
        r->in_cap = n + n / 2;
    }
    CU(cudaMemcpyAsync(r->in, d, n * sizeof(ad_halo_disc), cudaMemcpyHostToDevice, c->stream));
    int cur = c->cur;
    k_halo_unpack<<<blocks_of(n), AD_CUDA_BLOCK, 0, c->stream>>>(r->in, (unsigned)n, (unsigned)at, c->state[cur],
                                                                c->id[c->idp],
                                                                c->panels.on ? c->panels.touch[c->idp] : NULL,
                                                                c->acc[cur], c->pressure, c->virial);
    CU(cudaGetLastError());
    r->host_n[2] = (unsigned)(at + n);
    CU(cudaMemcpyAsync(&c->ctrl->n, &r->host_n[2], sizeof(unsigned), cudaMemcpyHostToDevice, c->stream));
    CU(cudaStreamSynchronize(c->stream));
    c->ctrl_host->n = (unsigned)(at + n);
    CU(ad_cuda_forget_bin(c));
    return ad_ok();
}

extern "C" ad_status ad_cuda_ranks_pass(ad_world *w, int obs, uint64_t stand_for, ad_step_sums *mine)
{
    cuda_world *c = CW(w);
    cuda_ranks *r = c->ranks;
    c->sums_on_host = 0; /* the step samples the fields on the device */
    cudaError_t e = ad_cuda_enqueue_step(w, ad_cuda_launch_n(w), stand_for > 0, obs);
    if (e) return ad_fail(AD_ERR_BACKEND, "cuda", "launching a step: %s", cudaGetErrorString(e));
    if (stand_for) c->phase_steps = stand_for;
    CU(cudaMemcpyAsync(&r->host_sums[0], &r->sums[0], sizeof(ad_step_sums), cudaMemcpyDeviceToHost, c->stream));
    CU(cudaStreamSynchronize(c->stream));
    *mine = r->host_sums[0];
    return ad_ok();
}

extern "C" ad_status ad_cuda_ranks_apply(ad_world *w, const ad_step_sums *all, int sample_fields)
{
    cuda_world *c = CW(w);
    cuda_ranks *r = c->ranks;
    r->host_sums[1] = *all;
    CU(cudaMemcpyAsync(&r->sums[1], &r->host_sums[1], sizeof(ad_step_sums), cudaMemcpyHostToDevice, c->stream));
    k_fold_apply<<<1, 32, 0, c->stream>>>(&r->sums[1], c->ctrl, w->dt_rule, (float)(1.0 / w->def.radius));
    CU(cudaGetLastError());
    if (sample_fields) AD_TRY(ad_cuda_sample_fields(w));
    return ad_ok();
}

extern "C" ad_status ad_cuda_ranks_pull_stats(ad_world *w) { return ad_cuda_pull_ctrl(w); }

extern "C" ad_status ad_cuda_ranks_vmax2(ad_world *w, float *v2)
{
    cuda_world *c = CW(w);
    CU(ad_cuda_vmax2(c, ad_cuda_launch_n(w), v2));
    return ad_ok();
}

extern "C" ad_status ad_cuda_ranks_set_clock(ad_world *w, double dt, uint32_t next_id)
{
    cuda_world *c = CW(w);
    AD_TRY(ad_cuda_pull_ctrl(w));
    w->stats.dt = dt;
    c->ctrl_host->next_id = next_id;
    c->dt_stale = 0;
    c->primed = 0;
    return ad_cuda_push_ctrl(w);
}
