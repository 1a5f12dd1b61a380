/* GPU ranks: a rank's CUDA world's side of the halo (cuda_ranks.h says what each step does): the halo
 * packed on the GPU by destination, the discs that came put after the slots, the step's pass with its sums
 * kept, and all ranks' sums applied. No MPI here: src/mpi/mpi_gpu.c moves the bytes. */
#include <cstdlib>
#include <cstring>

#include "cuda_ranks.h"
#include "cuda_world.cuh"
#include "fold.cuh"
#include "open.cuh"

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
    ad_rank_links links;      /* the other ranks (open sides) */
    ad_status fail;           /* the first failure inside the step's open-sides parts */
    /* open sides: the entries' room (AD_ROOM_MAX), the reservoir's counts, removals and candidates (res_boxes
     * each; candidates AD_RES_PICK_MAX a box), device and pinned host; mine, chosen, rm, kbox: the host's
     * lists of the boxes that remove */
    unsigned char *room, *host_room;
    unsigned *res_cnt, *host_res_cnt, *res_rm, *host_res_rm, *res_n, *host_res_n;
    ad_res_pick *res_picks, *host_res_picks, *mine, *chosen;
    uint32_t *rm;
    int *kbox;
    int64_t *host_fix; /* the panels' step sums (fix_cap words), pinned where fix_pinned */
    size_t fix_cap;
    int fix_pinned;
    unsigned *col_n;   /* device: nx, the rank's discs by column (the load balance's measure) */
};

/* A failure inside the step's open-sides parts, kept (the first); the collectives go on, so that no rank
 * waits for one that left. */
static void note(cuda_ranks *r, cudaError_t e, const char *what)
{
    if (e && !r->fail.code)
        r->fail = ad_fail(AD_ERR_BACKEND, "cuda", "GPU ranks, %s: %s", what, cudaGetErrorString(e));
}

/* ------------------------------------------------ open sides over the ranks -- */

/* The reservoir's plan (k_reservoir_plan's, enter.cuh) in three kernels with the ranks between them: each
 * box's count of the rank's own columns [c0, c1); with the world's counts, the controller's decision (the
 * same on every rank) and the rank's candidates for removal; with the chosen ones, the rank's marks. */
__global__ void k_rank_res_count(ad_params p, const unsigned *__restrict__ start, int c0, int c1,
                                 unsigned *__restrict__ cnt)
{
    int b = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (b < p.res_boxes) cnt[b] = ad_reservoir_box_count_in(&p, start, b, c0, c1);
}

__global__ void k_rank_res_decide(ad_params p, const unsigned *__restrict__ start, const unsigned *__restrict__ ids,
                                  const ad_ctrl *__restrict__ ctrl, double *__restrict__ state,
                                  const unsigned *__restrict__ total, unsigned *__restrict__ add,
                                  unsigned *__restrict__ rm_out, ad_res_pick *__restrict__ picks, int c0, int c1)
{
    int b = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (b >= p.res_boxes) return;
    uint32_t a, rm = ad_reservoir_decide_box<2>(p, ctrl, state, b, total[b], &a);
    add[b] = a;
    rm_out[b] = rm;
    ad_reservoir_picks_in(&p, start, ids, b, ctrl->stats.step, rm, c0, c1, picks + (size_t)b * AD_RES_PICK_MAX);
}

__global__ void k_rank_res_doom(ad_params p, const unsigned *__restrict__ start, const unsigned *__restrict__ ids,
                                int c0, int c1, const ad_res_pick *__restrict__ chosen, const unsigned *__restrict__ n,
                                const unsigned *__restrict__ rm, double *__restrict__ state,
                                unsigned char *__restrict__ doomed)
{
    int b = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (b >= p.res_boxes || !rm[b]) return;
    ad_reservoir_doom_in(&p, start, ids, b, c0, c1, chosen + (size_t)b * AD_RES_PICK_MAX, n[b], doomed);
    state[2 * b] -= (double)(rm[b] - n[b]); /* the ones not marked stay owed */
}

static unsigned blocks_of(size_t n) { return (unsigned)((n + AD_CUDA_BLOCK - 1) / AD_CUDA_BLOCK); }

/* The rank's own columns, as the plan counts them (a rank of every column: all). */
static void own_cols(const ad_world *w, const cuda_ranks *r, int *c0, int *c1)
{
    *c0 = w->params.own_hi > 0 ? r->cut.col_lo : 0;
    *c1 = w->params.own_hi > 0 ? r->cut.col_hi : w->params.nx;
}

void ad_cuda_ranks_plan(ad_world *w)
{
    cuda_world *c = CW(w);
    cuda_ranks *r = c->ranks;
    const ad_params &P = w->params;
    const int nb = P.res_boxes;
    const size_t picks = (size_t)nb * AD_RES_PICK_MAX * sizeof(ad_res_pick);
    cudaStream_t st = c->stream;
    int c0, c1;
    own_cols(w, r, &c0, &c1);
    k_rank_res_count<<<blocks_of((size_t)nb), AD_CUDA_BLOCK, 0, st>>>(P, c->start, c0, c1, r->res_cnt);
    cudaError_t e = cudaGetLastError();
    if (!e) e = cudaMemcpyAsync(r->host_res_cnt, r->res_cnt, nb * sizeof(unsigned), cudaMemcpyDeviceToHost, st);
    if (!e) e = cudaStreamSynchronize(st);
    if (e) memset(r->host_res_cnt, 0, nb * sizeof(unsigned)); /* this rank's step is lost: zeros */
    note(r, e, "the reservoir's counts");
    r->links.sum_u32(r->links.ctx, r->host_res_cnt, nb);
    e = cudaMemcpyAsync(r->res_cnt, r->host_res_cnt, nb * sizeof(unsigned), cudaMemcpyHostToDevice, st);
    if (!e)
        k_rank_res_decide<<<blocks_of((size_t)nb), AD_CUDA_BLOCK, 0, st>>>(P, c->start, c->id[c->idp], c->ctrl,
                                                                         c->res_state, r->res_cnt, c->res_add,
                                                                         r->res_rm, r->res_picks, c0, c1);
    if (!e) e = cudaGetLastError();
    if (!e) e = cudaMemcpyAsync(r->host_res_rm, r->res_rm, nb * sizeof(unsigned), cudaMemcpyDeviceToHost, st);
    if (!e) e = cudaMemcpyAsync(r->host_res_picks, r->res_picks, picks, cudaMemcpyDeviceToHost, st);
    if (!e) e = cudaStreamSynchronize(st);
    note(r, e, "the reservoir's decisions");
    int K = 0; /* the boxes that remove: the same on every rank (the same decisions), checked below */
    for (int b = 0; b < nb && !e; b++) {
        if (!r->host_res_rm[b]) continue;
        r->kbox[K] = b;
        r->rm[K] = r->host_res_rm[b];
        memcpy(r->mine + (size_t)K * AD_RES_PICK_MAX, r->host_res_picks + (size_t)b * AD_RES_PICK_MAX,
               AD_RES_PICK_MAX * sizeof(ad_res_pick));
        K++;
    }
    memset(r->host_res_n, 0, nb * sizeof(unsigned));
    /* the same boxes removing, as many from each, on every rank, and no failure: else no rank chooses (no
     * collective left waiting). The bytes of K and of a hash of the (box, count) pairs, their complements and
     * the success, each the ranks' minimum: a byte's minimum and its complement's give its least and greatest */
    uint32_t v[2] = {(uint32_t)K, 2166136261u};
    for (int k = 0; k < K; k++) v[1] = (v[1] ^ (uint32_t)r->kbox[k]) * 16777619u, v[1] = (v[1] ^ r->rm[k]) * 16777619u;
    unsigned char chk[17];
    memcpy(chk, v, 8);
    for (int k = 0; k < 8; k++) chk[8 + k] = (unsigned char)(255 - chk[k]);
    chk[16] = !e;
    r->links.min_u8(r->links.ctx, chk, 17);
    int same = 1;
    for (int k = 0; k < 8; k++) same &= chk[k] == 255 - chk[8 + k];
    if (chk[16] && !same && !r->fail.code)
        r->fail = ad_fail(AD_ERR_BACKEND, "ranks", "GPU ranks: the reservoir's controllers decided otherwise on another "
                          "rank (step %llu)", (unsigned long long)w->stats.step);
    if (!chk[16] || !same) K = 0;
    if (K) {
        r->links.choose(r->links.ctx, K, r->mine, r->rm, r->chosen, r->host_res_n + nb);
        for (int k = 0; k < K; k++) {
            int b = r->kbox[k];
            r->host_res_n[b] = r->host_res_n[nb + k];
            memcpy(r->host_res_picks + (size_t)b * AD_RES_PICK_MAX, r->chosen + (size_t)k * AD_RES_PICK_MAX,
                   AD_RES_PICK_MAX * sizeof(ad_res_pick));
        }
    }
    e = cudaMemcpyAsync(r->res_n, r->host_res_n, nb * sizeof(unsigned), cudaMemcpyHostToDevice, st);
    if (!e) e = cudaMemcpyAsync(r->res_picks, r->host_res_picks, picks, cudaMemcpyHostToDevice, st);
    if (!e)
        k_rank_res_doom<<<blocks_of((size_t)nb), AD_CUDA_BLOCK, 0, st>>>(P, c->start, c->id[c->idp], c0, c1,
                                                                       r->res_picks, r->res_n, r->res_rm,
                                                                       c->res_state, c->doomed);
    if (!e) e = cudaGetLastError();
    note(r, e, "the reservoir's removals");
}

const unsigned char *ad_cuda_ranks_gas_room(ad_world *w, const ad_enter_discs &d)
{
    cuda_world *c = CW(w);
    cuda_ranks *r = c->ranks;
    cudaStream_t st = c->stream;
    k_enter_gas_room<ad_enter_discs><<<1, AD_ENTER_THREADS, 0, st>>>(w->params, c->ctrl, c->start, d, r->room);
    cudaError_t e = cudaGetLastError();
    if (!e) e = cudaMemcpyAsync(r->host_room, r->room, AD_ROOM_MAX + 1, cudaMemcpyDeviceToHost, st);
    if (!e) e = cudaStreamSynchronize(st);
    if (e) memset(r->host_room, 0, AD_ROOM_MAX + 1); /* no room, and no entries on any rank this step */
    note(r, e, "the entries' room");
    r->links.min_u8(r->links.ctx, r->host_room, AD_ROOM_MAX + 1);
    note(r, cudaMemcpyAsync(r->room, r->host_room, AD_ROOM_MAX + 1, cudaMemcpyHostToDevice, st), "the entries' room");
    return r->room;
}

void ad_cuda_ranks_panel_sums(ad_world *w)
{
    cuda_world *c = CW(w);
    cuda_ranks *r = c->ranks;
    cudaStream_t st = c->stream;
    size_t words = w->panels.count * AD_PANEL_WORDS; /* the body's: the same on every rank */
    if (!words) return;
    if (words > r->fix_cap) { /* pinned, else pageable (a few kB: MPI takes either) */
        if (r->fix_pinned) cudaFreeHost(r->host_fix);
        else free(r->host_fix);
        r->fix_pinned = cudaMallocHost((void **)&r->host_fix, words * sizeof(int64_t)) == cudaSuccess;
        if (!r->fix_pinned) {
            cudaGetLastError(); /* the failed allocation is not the step's error */
            r->host_fix = (int64_t *)malloc(words * sizeof(int64_t)); /* NULL too: the collective below fails,
                                                                         the rank ends and mpirun ends the job */
        }
        r->fix_cap = r->host_fix ? words : 0;
    }
    int64_t *v = r->host_fix;
    cudaError_t e = v ? cudaSuccess : cudaErrorMemoryAllocation;
    if (!e && (!c->panels.on || c->panels.count != w->panels.count)) e = cudaErrorInvalidValue;
    if (!e) e = cudaMemcpyAsync(v, c->panels.fix, words * sizeof(int64_t), cudaMemcpyDeviceToHost, st);
    if (!e) e = cudaStreamSynchronize(st);
    note(r, e, "the panels' sums");
    if (e && v) memset(v, 0, words * sizeof(int64_t)); /* this rank's run is lost: zeros, the collective all the same */
    r->links.sum_i64(r->links.ctx, v, (int)words);
    if (!e)
        note(r, cudaMemcpyAsync(c->panels.fix, v, words * sizeof(int64_t), cudaMemcpyHostToDevice, st), "the panels' sums");
}

/* ------------------------------------------------------------------ the halo -- */


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

/* The load balance's measure: the live discs of the rank's slots by column (where they are now: a disc that
 * crossed in the last step counts in its new column). */
__global__ void k_column_count(ad_params p, ad_n nn, const ad_state *__restrict__ st, unsigned *__restrict__ col_n)
{
    unsigned s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= ad_n_get(nn)) return;
    ad_state q = st[s];
    if (ad_is_dead(q)) return;
    atomicAdd(&col_n[ad_cell_coord(q.x, p.origin_x, p.inv_cell_x, p.nx)], 1u);
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
    cudaFree(r->col_n);
    r->col_n = NULL;
    cudaFree(r->out);
    cudaFree(r->out_n);
    cudaFree(r->in);
    cudaFree(r->sums);
    cudaFreeHost(r->host_out);
    cudaFreeHost(r->host_n);
    cudaFreeHost(r->host_sums);
    cudaFree(r->room);
    cudaFree(r->res_cnt);
    cudaFree(r->res_rm);
    cudaFree(r->res_n);
    cudaFree(r->res_picks);
    cudaFreeHost(r->host_room);
    cudaFreeHost(r->host_res_cnt);
    cudaFreeHost(r->host_res_rm);
    cudaFreeHost(r->host_res_n);
    cudaFreeHost(r->host_res_picks);
    free(r->mine);
    free(r->chosen);
    free(r->rm);
    free(r->kbox);
    if (r->fix_pinned) cudaFreeHost(r->host_fix);
    else free(r->host_fix);
    r->host_fix = NULL;
    r->fix_cap = 0;
    r->room = r->host_room = NULL;
    r->res_cnt = r->host_res_cnt = r->res_rm = r->host_res_rm = r->res_n = r->host_res_n = NULL;
    r->res_picks = r->host_res_picks = r->mine = r->chosen = NULL;
    r->rm = NULL;
    r->kbox = NULL;
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

/* The open sides' buffers (res_boxes boxes). */
static cudaError_t open_buffers(cuda_ranks *r, int boxes)
{
    size_t nb = (size_t)boxes + 1, picks = nb * AD_RES_PICK_MAX;
    cudaError_t e = cudaMalloc((void **)&r->room, AD_ROOM_MAX + 1); /* + the plans' overflow (enter.cuh) */
    if (!e) e = cudaMallocHost((void **)&r->host_room, AD_ROOM_MAX + 1);
    if (!e) e = cudaMalloc((void **)&r->res_cnt, nb * sizeof(unsigned));
    if (!e) e = cudaMalloc((void **)&r->res_rm, nb * sizeof(unsigned));
    if (!e) e = cudaMalloc((void **)&r->res_n, nb * sizeof(unsigned));
    if (!e) e = cudaMalloc((void **)&r->res_picks, picks * sizeof(ad_res_pick));
    if (!e) e = cudaMallocHost((void **)&r->host_res_cnt, nb * sizeof(unsigned));
    if (!e) e = cudaMallocHost((void **)&r->host_res_rm, nb * sizeof(unsigned));
    if (!e) e = cudaMallocHost((void **)&r->host_res_n, 2 * nb * sizeof(unsigned));
    if (!e) e = cudaMallocHost((void **)&r->host_res_picks, picks * sizeof(ad_res_pick));
    r->mine = (ad_res_pick *)malloc(picks * sizeof(ad_res_pick));
    r->chosen = (ad_res_pick *)malloc(picks * sizeof(ad_res_pick));
    r->rm = (uint32_t *)malloc(nb * sizeof(uint32_t));
    r->kbox = (int *)malloc(nb * sizeof(int));
    if (!e && (!r->mine || !r->chosen || !r->rm || !r->kbox)) e = cudaErrorMemoryAllocation;
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
        if (!e && c->open) e = open_buffers(r, P.res_boxes);
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
    r->cut.links = NULL;
    if (cut->links) r->links = *cut->links;
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
    int changed = 0; /* sampling starts, or the body grew (no graphs here) */
    r->fail = ad_dev_panels_sync(&c->panels, w, c->cap, c->stream, &changed); /* kept: the step's collectives
                                                                                 still run */
    cudaError_t e = ad_cuda_enqueue_step(w, ad_cuda_launch_n(w), stand_for > 0, obs);
    if (r->fail.code) return r->fail;
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

extern "C" ad_status ad_cuda_ranks_pull_stats(ad_world *w, uint32_t *next_id)
{
    ad_status st = ad_cuda_pull_ctrl(w);
    if (next_id) *next_id = CW(w)->ctrl_host->next_id;
    return st;
}

extern "C" ad_status ad_cuda_ranks_column_counts(ad_world *w, uint32_t *counts)
{
    cuda_world *c = CW(w);
    cuda_ranks *r = c->ranks;
    size_t bytes = (size_t)w->params.nx * sizeof(unsigned);
    if (!r->col_n) CU(cudaMalloc((void **)&r->col_n, bytes));
    unsigned n = ad_cuda_launch_n(w);
    CU(cudaMemsetAsync(r->col_n, 0, bytes, c->stream));
    if (n)
        k_column_count<<<blocks_of(n), AD_CUDA_BLOCK, 0, c->stream>>>(w->params, ad_n{n, &c->ctrl->n},
                                                                      c->state[c->cur], r->col_n);
    CU(cudaGetLastError());
    CU(cudaMemcpyAsync(counts, r->col_n, bytes, cudaMemcpyDeviceToHost, c->stream));
    CU(cudaStreamSynchronize(c->stream));
    return ad_ok();
}

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
