/* The CUDA backend's step: the kernels of one step on the world's stream (the grid's or the BVH's broad
 * phase, the pass, the open sides' entries, the fold), its CUDA graphs, the field samples. */
#include <cub/device/device_radix_sort.cuh>

#include <cmath>
#include <cstring>

#include <cub/device/device_scan.cuh>

#include "bvh.cuh"
#include "cuda_world.cuh"
#include "kernels.cuh"
#include "open.cuh"

void ad_cuda_invalidate_graphs(cuda_world *c)
{
    for (int k = 0; k < 4; k++)
        if (c->graph_ok[k / 2][k % 2]) {
            cudaGraphExecDestroy(c->graph[k / 2][k % 2]);
            c->graph_ok[k / 2][k % 2] = 0;
        }
}

static unsigned grid_of(size_t n) { return (unsigned)((n + AD_CUDA_BLOCK - 1) / AD_CUDA_BLOCK); }

/* The size per-disc kernels are launched for: the count, or with open sides the capacity (the count
 * changes on the device). */
static unsigned launch_n(const ad_world *w, const cuda_world *c) { return c->dev_count ? (unsigned)c->cap : (unsigned)w->count; }

/* The count as the kernels take it: with open sides, read on the device. */
static ad_n count_of(const cuda_world *c, unsigned n) { return ad_n{n, c->dev_count ? &c->ctrl->n : NULL}; }

/* The contact states of id parity k where surfaces are sampled (the scatter moves them), else NULL. */
static unsigned *touch_of(const cuda_world *c, int k)
{
    return c->panels.on ? c->panels.touch[k] : NULL;
}

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
                                           carry ? c->acc[nx] : NULL, touch_of(c, c->idp), touch_of(c, !c->idp));
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
 * run the variant without them. The pass that samples surfaces (SURF) leaves the bin to its kernel. */
static int bin_mode(const ad_world *w, const cuda_world *c, int obs)
{
    int integ = w->def.integrator;
    /* GPU ranks: the discs that came from the neighbours are binned with the others by the bin kernel */
    if (c->bvh || c->aggregate || c->panels.on || c->ranks ||
        (integ != AD_INTEGRATOR_SYMPLECTIC_EULER && integ != AD_INTEGRATOR_EULER))
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
    if (!e && !c->binned) { /* the counters are clear: left so by the last scan, or ad_cuda_forget_bin */
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
        /* the order of a stable sort by cell without a sort: the atomic ranks put each cell's
         * discs in its slot range in any order (k_cell_members), then each disc's rank in its
         * cell is the number of its cell's discs with a lower previous slot (k_stable_rank);
         * dev/cuda/stable_order.cu times it against CUB's radix sort of (cell, previous slot) */
        k_cell_members<<<gb, AD_CUDA_BLOCK, 0, st>>>(nn, c->cell_of, c->rank, c->start, c->iota);
        k_stable_rank<<<gb, AD_CUDA_BLOCK, 0, st>>>(nn, dead_cell, &c->ctrl->dead, c->cell_of, c->start, c->iota,
                                                     c->perm);
        k_gather<<<gb, AD_CUDA_BLOCK, 0, st>>>(nn, c->perm, c->state[c->cur], c->id[c->idp], acc_in, c->state[nx],
                                               c->id[!c->idp], acc_out, touch_of(c, c->idp), touch_of(c, !c->idp));
    } else {
        k_scatter<<<gb, AD_CUDA_BLOCK, 0, st>>>(w->params, nn, c->rank, c->start, c->state[c->cur], c->id[c->idp],
                                                acc_in, c->state[nx], c->id[!c->idp], acc_out, touch_of(c, c->idp),
                                                touch_of(c, !c->idp));
    }
    /* the removed discs went after the others: the world ends there */
    if (c->dev_count) k_after_sort<<<1, 1, 0, st>>>(c->start, dead_cell, c->ctrl);
    c->cur = nx;
    c->idp = !c->idp;
    e = cudaGetLastError();
    return e || !timed ? e : cudaEventRecord(c->phase[3], st);
}

cudaError_t ad_cuda_scan(unsigned *counts, unsigned lg, unsigned *start, unsigned *tile_sum, size_t ncell,
                         cudaStream_t st)
{
    return ad_scan_counts(counts, lg, start, tile_sum, ncell, st);
}

cudaError_t ad_cuda_stable_order(ad_n nn, unsigned dead_cell, const unsigned *dead, const unsigned *cell_of,
                                 const unsigned *rank, const unsigned *start, unsigned *members, unsigned *perm,
                                 cudaStream_t st)
{
    unsigned gb = (nn.bound + AD_CUDA_BLOCK - 1) / AD_CUDA_BLOCK;
    k_cell_members<<<gb, AD_CUDA_BLOCK, 0, st>>>(nn, cell_of, rank, start, members);
    /* without removals no cell is the dead cell (~0u), so its counter is never read */
    k_stable_rank<<<gb, AD_CUDA_BLOCK, 0, st>>>(nn, dead ? dead_cell : ~0u, dead, cell_of, start, members, perm);
    return cudaGetLastError();
}

cudaError_t ad_cuda_after_sort(const unsigned *start, unsigned dead_cell, ad_ctrl *ctrl, cudaStream_t st)
{
    k_after_sort<<<1, 1, 0, st>>>(start, dead_cell, ctrl);
    return cudaGetLastError();
}

cudaError_t ad_cuda_reservoir_scan(void *temp, size_t bytes, const unsigned *add, unsigned *add_start, int boxes,
                                   cudaStream_t st)
{
    return cub::DeviceScan::ExclusiveSum(temp, bytes, add, add_start, boxes, st);
}

/* Step 5's entries after the pass that ends a step (open.cuh, enter.cuh): the free stream's and the reservoir's
 * new discs, appended to the pass's output `nx` and binned where the pass binned (bin). */
static void enqueue_enter(ad_world *w, cuda_world *c, int nx, int bin)
{
    if (!c->open) return;
    cudaStream_t st = c->stream;
    int nb = w->params.res_boxes;
    if (nb) ad_cuda_reservoir_scan(c->res_scan_temp, c->res_scan_bytes, c->res_add, c->res_add_start, nb, st);
    const ad_enter_lists<ad_entry> l{c->waiting, c->waiting_next, c->res_add, c->res_add_start, c->res_state,
                                     c->vmax2_new, (unsigned)c->cap, NULL};
    const ad_enter_slots slots{c->state[nx], c->id[c->idp], c->pressure, c->virial, c->acc[nx], touch_of(c, c->idp)};
    ad_enter_discs d{l, slots, c->spots, c->spot_next, bin, bin_next(w, c)};
    /* GPU ranks: the room in the gas, judged by every rank over its own discs and combined (a host round trip) */
    if (c->ranks) d.l.gas_room = ad_cuda_ranks_gas_room(w, d);
    k_enter_new<<<1, AD_ENTER_THREADS, 0, st>>>(w->params, c->ctrl, c->start, d);
}

/* Before the pass: the reservoir's plan on the step's grid (enter.cuh); GPU ranks plan over the ranks. */
static void enqueue_reservoir_plan(ad_world *w, cuda_world *c)
{
    int nb = w->params.res_boxes;
    if (!nb) return;
    if (c->ranks) return ad_cuda_ranks_plan(w);
    k_reservoir_plan<2><<<grid_of((size_t)nb), AD_CUDA_BLOCK, 0, c->stream>>>(w->params, c->start, c->id[c->idp], c->ctrl,
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

/* The pass kernels' shared argument (interact.cuh); doomed: the reservoir's plan applies. */
static ad_pass_io pass_io(const cuda_world *c, bool doomed)
{
    return ad_pass_io{c->id[c->idp],       c->pressure,  c->virial, c->ctrl, c->blocks, doomed ? c->doomed : NULL,
                      touch_of(c, c->idp), c->panels.fix};
}

template <int INTEG, int PASS, bool OBS, int BIN = AD_BIN_NONE, bool SURF = false, class G>
static void launch_interact_with(ad_world *w, cuda_world *c, unsigned n, const G &gather, size_t smem)
{
    int nx = !c->cur;
    k_interact<INTEG, PASS, OBS, G, BIN, SURF><<<grid_of(n), AD_CUDA_BLOCK, smem, c->stream>>>(
        w->params, gather, count_of(c, n), c->state[c->cur], c->state[nx], c->acc[c->cur], c->acc[nx], pass_io(c, true),
        bin_next(w, c));
    if (PASS == AD_PASS_STEP) enqueue_enter(w, c, nx, BIN);
    c->cur = nx;
    c->binned = BIN != AD_BIN_NONE;
}

/* Step 4 through the world's broad phase, sampling the surfaces or not (SURF). */
template <int INTEG, int PASS, bool OBS, bool SURF>
static void launch_interact_surf(ad_world *w, cuda_world *c, unsigned n)
{
    if (SURF) { /* binned by the bin kernel (bin_mode) */
        if (!c->bvh)
            launch_interact_with<INTEG, PASS, OBS, AD_BIN_NONE, SURF>(w, c, n, ad_grid_gather{c->gdev, c->start}, 0);
        else if (w->def.bvh_traversal == AD_BVH_REFLEXIVE) {
            enqueue_pairs(w, c, n, c->state[c->cur]);
            launch_interact_with<INTEG, PASS, OBS, AD_BIN_NONE, SURF>(
                w, c, n, ad_bvh_reflexive_gather{c->stree, bvh_forces(c)}, 0);
        } else if (w->bvh_shared_stack)
            launch_interact_with<INTEG, PASS, OBS, AD_BIN_NONE, SURF>(w, c, n, ad_bvh_gather<true>{c->tree, c->stree},
                                                                      AD_BVH_SHARED_STACK_BYTES);
        else
            launch_interact_with<INTEG, PASS, OBS, AD_BIN_NONE, SURF>(w, c, n, ad_bvh_gather<false>{c->tree, c->stree},
                                                                      0);
    } else if (!c->bvh) {
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

/* Step 4: the pass that samples the surfaces where the world does (a step's pass, not Verlet's priming). */
template <int INTEG, int PASS, bool OBS> static void launch_interact(ad_world *w, cuda_world *c, unsigned n)
{
    if (PASS == AD_PASS_STEP && c->panels.on)
        launch_interact_surf<INTEG, PASS, OBS, PASS == AD_PASS_STEP>(w, c, n);
    else
        launch_interact_surf<INTEG, PASS, OBS, false>(w, c, n);
}

/* RK4 stage K through the world's broad phase (searched around the step's start). */
template <int K, class G>
static void launch_rk4_with(ad_world *w, cuda_world *c, unsigned n, const G &gather, size_t smem,
                            const ad_state *base, const ad_state *in, ad_state *out, float skin)
{
    int nx = !c->cur;
    const ad_pass_io io = pass_io(c, K == 3);
    if (K == 3 && c->panels.on) /* the step's surfaces, sampled at its last stage */
        k_rk4_stage<K, G, K == 3><<<grid_of(n), AD_CUDA_BLOCK, smem, c->stream>>>(
            w->params, gather, count_of(c, n), base, in, out, c->rk[2], c->acc[nx], skin, io);
    else
        k_rk4_stage<K, G><<<grid_of(n), AD_CUDA_BLOCK, smem, c->stream>>>(w->params, gather, count_of(c, n), base, in,
                                                                          out, c->rk[2], c->acc[nx], skin, io);
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
/* The step's pass kernels with the shared stack, sampling the surfaces or not (SURF). */
template <bool SURF> static cudaError_t allow_shared_stack_pass(void)
{
    const int bytes = (int)AD_BVH_SHARED_STACK_BYTES;
    const cudaFuncAttribute a = cudaFuncAttributeMaxDynamicSharedMemorySize;
    typedef ad_bvh_gather<true> G;
    const int N = AD_BIN_NONE;
    cudaError_t e = cudaFuncSetAttribute(k_interact<AD_INTEGRATOR_EULER, AD_PASS_STEP, true, G, N, SURF>, a, bytes);
    if (!e) e = cudaFuncSetAttribute(k_interact<AD_INTEGRATOR_EULER, AD_PASS_STEP, false, G, N, SURF>, a, bytes);
    if (!e) e = cudaFuncSetAttribute(k_interact<AD_INTEGRATOR_VERLET, AD_PASS_STEP, true, G, N, SURF>, a, bytes);
    if (!e) e = cudaFuncSetAttribute(k_interact<AD_INTEGRATOR_VERLET, AD_PASS_STEP, false, G, N, SURF>, a, bytes);
    if (!e)
        e = cudaFuncSetAttribute(k_interact<AD_INTEGRATOR_SYMPLECTIC_EULER, AD_PASS_STEP, true, G, N, SURF>, a, bytes);
    if (!e)
        e = cudaFuncSetAttribute(k_interact<AD_INTEGRATOR_SYMPLECTIC_EULER, AD_PASS_STEP, false, G, N, SURF>, a, bytes);
    if (!e) e = cudaFuncSetAttribute(k_rk4_stage<3, G, SURF>, a, bytes);
    return e;
}

cudaError_t ad_cuda_allow_shared_stack(void)
{
    const int bytes = (int)AD_BVH_SHARED_STACK_BYTES;
    const cudaFuncAttribute a = cudaFuncAttributeMaxDynamicSharedMemorySize;
    typedef ad_bvh_gather<true> G;
    cudaError_t e = cudaFuncSetAttribute(k_bvh_pairs<true>, a, bytes);
    if (!e) e = allow_shared_stack_pass<false>();
    if (!e) e = allow_shared_stack_pass<true>();
    if (!e) e = cudaFuncSetAttribute(k_interact<AD_INTEGRATOR_VERLET, AD_PASS_PRIME, true, G>, a, bytes);
    if (!e) e = cudaFuncSetAttribute(k_rk4_stage<0, G>, a, bytes);
    if (!e) e = cudaFuncSetAttribute(k_rk4_stage<1, G>, a, bytes);
    if (!e) e = cudaFuncSetAttribute(k_rk4_stage<2, G>, a, bytes);
    return e;
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
    if (e && !c->ranks) return e;
    cudaError_t grid_e = e; /* GPU ranks go on to the step's collectives, which every rank must reach */
    enqueue_reservoir_plan(w, c);
    if (integ == AD_INTEGRATOR_RK4) {
        const ad_state *base = c->state[c->cur];
        ad_state *in = c->rk[0], *out = c->rk[1];
        float skin = (float)w->dt_rule.move;
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
    /* the panels' sums over this step's dt, before the fold chooses the next */
    if (c->ranks && w->params.surfaces) ad_cuda_ranks_panel_sums(w); /* GPU ranks: the world's step sums */
    if (c->panels.on && (e = ad_dev_panels_fold(&c->panels, &w->params, c->ctrl, st)) != cudaSuccess) return e;
    k_fold_step<<<nr, AD_CUDA_BLOCK, 0, st>>>(c->blocks, nb, c->blocks2, c->ctrl, w->dt_rule,
                                              (float)(1.0 / w->def.radius), c->open ? c->vmax2_new : NULL, c->sums_keep);
    e = grid_e ? grid_e : cudaGetLastError();
    return e || !timed ? e : cudaEventRecord(c->phase[4], st);
}

unsigned ad_cuda_launch_n(const ad_world *w) { return launch_n(w, CW(w)); }

cudaError_t ad_cuda_enqueue_step(ad_world *w, unsigned n, int timed, int obs)
{
    return enqueue_step(w, CW(w), n, timed, obs);
}

static ad_status sample_fields(ad_world *w, cuda_world *c, unsigned n)
{
    k_fields<<<grid_of(n), AD_CUDA_BLOCK, 0, c->stream>>>(w->fields.grid, count_of(c, n), c->state[c->cur], c->virial,
                                                          c->pressure, c->acc[c->cur], c->field_sums);
    CU(cudaGetLastError());
    w->fields.samples++;
    if (w->fields.grid.probe) w->fields.probe_samples++;
    return ad_ok();
}

ad_status ad_cuda_sample_fields(ad_world *w)
{
    cuda_world *c = CW(w);
    return sample_fields(w, c, launch_n(w, c));
}

cudaError_t ad_cuda_vmax2(cuda_world *c, unsigned n, float *v2)
{
    cudaError_t e = cudaMemsetAsync(c->vmax_bits, 0, 4, c->stream);
    if (!e) k_vmax2<<<grid_of(n), AD_CUDA_BLOCK, 0, c->stream>>>(count_of(c, n), c->state[c->cur], c->vmax_bits);
    unsigned bits = 0;
    if (!e) e = cudaGetLastError();
    if (!e) e = cudaMemcpyAsync(&bits, c->vmax_bits, 4, cudaMemcpyDeviceToHost, c->stream);
    if (!e) e = cudaStreamSynchronize(c->stream);
    memcpy(v2, &bits, 4);
    return e;
}

/* The step of the current id parity, observing or not, as a CUDA graph: one launch per step. */
static ad_status step_graph(ad_world *w, cuda_world *c, unsigned n, int obs, cudaGraphExec_t *out)
{
    int parity = c->idp, cur = c->cur;
    if (c->graph_n != n) ad_cuda_invalidate_graphs(c);
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

ad_status ad_cuda_step(ad_world *w, uint64_t nsteps)
{
    cuda_world *c = CW(w);
    c->sums_on_host = 0; /* the steps sample the fields on the device */
    unsigned n = launch_n(w, c);
    int changed = 0; /* sampling starts, or the body grew: new arrays, new graphs */
    AD_TRY(ad_dev_panels_sync(&c->panels, w, c->cap, c->stream, &changed));
    if (changed) ad_cuda_invalidate_graphs(c);
    if (c->dt_stale) {
        float v2;
        CU(ad_cuda_vmax2(c, n, &v2));
        ad_status st = ad_cuda_pull_ctrl(w);
        if (st.code) return st;
        w->stats.dt = ad_dt_next(&w->dt_rule, sqrt((double)v2));
        st = ad_cuda_push_ctrl(w);
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
        ad_cuda_invalidate_graphs(c);
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
    return ad_cuda_pull_ctrl(w);
}
