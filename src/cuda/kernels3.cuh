/* The kernels of a 3D step on the GPU (included by cuda3.cu only): the bin (each sphere's cell and its
 * rank from the cell counters), the reorder into the order of a stable sort by cell, and the
 * pass (each sphere gathers its own contacts with ad_gather_all3 and integrates itself: the shared
 * physics headers, as on the CPU, then step 5: the wraps, removal past open faces, the reservoir), Verlet's drift
 * and priming, the RK4 stages. Kernels take the count as ad_n: with open faces it lives on the
 * device (ad_ctrl.n) and they are launched for the capacity. A pass's sums are
 * reduced per block in a fixed order (block_sums.cuh) and folded by k_fold_step<AD_SUMS3>
 * (fold.cuh): deterministic. */
#ifndef AD_CUDA_KERNELS3_CUH
#define AD_CUDA_KERNELS3_CUH

#include "../physics/gather3.h"
#include "../physics/integrate.h"
#include "block_sums.cuh"
#include "counts.cuh"
#include "enter.cuh"
#include "gather_list.cuh"
#include "panels.cuh"

typedef ad_thread_sums_n<AD_SUMS3> ad_thread_sums3;

/* Blocks per multiprocessor the 3D pass is compiled for: 6 caps it at 40 registers (75 % occupancy,
 * 380 bytes of spills to L1). Measured on the H200 at 1.68e7 spheres (docs/PERFORMANCE.md): 1 (64
 * registers, the compiler's choice) 3.07e9 / 3.71e9 sphere-steps/s for the gas / the lattice, 5
 * 4.84e9 / 5.74e9, 6 5.04e9 / 5.92e9. */
#ifndef AD3_PASS_BLOCKS /* a -D for measuring others */
#define AD3_PASS_BLOCKS 6
#endif

__device__ __forceinline__ unsigned ad3_thread() { return blockIdx.x * blockDim.x + threadIdx.x; }

/* Step 1: the sphere's cell (one clamp: a centre outside the domain counts in its border cell) and its
 * rank among the cell's spheres, the old value of the cell's counter (8, 16 or 32 bits: counts.cuh;
 * an add past the width sets the overflow flag, and the host fails the call). With open faces (dead:
 * ad_ctrl.dead, else NULL) a removed sphere (open.h) takes the dead cell after the grid's, its rank
 * from that counter. */
__global__ void k3_count(ad_params p, const ad_state3 *__restrict__ s, ad_n n, ad_counts count,
                         unsigned *__restrict__ cell_of, unsigned *__restrict__ rank, unsigned *dead)
{
    unsigned i = ad3_thread();
    if (i >= ad_n_get(n)) return;
    float4 q = *reinterpret_cast<const float4 *>(&s[i]); /* the position half of the record */
    if (dead && q.x != q.x) {
        cell_of[i] = (unsigned)p.nx * (unsigned)p.ny * (unsigned)p.nz;
        rank[i] = atomicAdd(dead, 1u);
        return;
    }
    unsigned c = ad_cell_index3(&p, q.x, q.y, q.z);
    cell_of[i] = c;
    rank[i] = ad_count_add(count, c, 1u);
}

/* Step 3: the spheres in the stable order of their cells (perm[i]: the previous slot of slot i's); the
 * accelerations only where the step reads them (acc NULL otherwise: Verlet alone carries them), the
 * contact states where surfaces are sampled (touch NULL otherwise, panels.cuh). */
__global__ void k3_reorder(const unsigned *__restrict__ perm, const ad_state3 *__restrict__ s,
                           const unsigned *__restrict__ id, const ad_accel3 *__restrict__ acc, ad_n nn,
                           ad_state3 *s_out, unsigned *id_out, ad_accel3 *acc_out, const unsigned *__restrict__ touch,
                           unsigned *touch_out)
{
    unsigned i = ad3_thread(), n = ad_n_get(nn);
    if (i >= n) return;
    unsigned j = perm[i];
    if (j >= n) return; /* only after a counter overflowed (counts.cuh) */
    s_out[i] = s[j];
    id_out[i] = id[j];
    if (acc) acc_out[i] = acc[j];
    if (touch) touch_out[i] = touch[j];
}

/* What the pass reads and writes besides the parameters. */
struct ad3_pass {
    const unsigned *start;
    const ad_state3 *sorted; /* the step's state in cell order */
    const unsigned *id_sorted;
    const ad_accel3 *acc_sorted;
    ad_state3 *out; /* the new state, in the same order */
    unsigned *id_out;
    ad_accel3 *acc_out;
    float *pressure, *virial;
    ad_step_sums *blocks;
    ad_state3 *rk_in, *rk_out, *rk_sum; /* RK4's stages */
    unsigned char *doomed;              /* the reservoir's plan for this step (in the sorted order), or NULL */
    const unsigned *touch_sorted;       /* sampled surfaces: the contact states in the sorted order, or NULL */
    unsigned *touch_out;                /* and in the new state's */
    int64_t *panel_fix;                 /* the step's per-panel sums */
};

/* The pass's surfaces (SURF, where they are sampled): sphere i evaluated at `at` with acceleration ac against
 * the body's triangles and the walls (panels.cuh); a re-emission's velocity into *out, its forces into
 * the sphere's sums, its contact state into the new state's order. */
template <class T>
__device__ __forceinline__ void ad3_surface(const ad_params &p, const ad_tri_tree &g, const ad3_pass &io, unsigned i,
                                            uint64_t step, ad_state3 at, ad_accel3 ac, float dt, ad_state3 *out, T &t)
{
    unsigned touch = io.touch_sorted[i];
    ad_surf_sums o =
        ad_cuda_surface3(p, g, &touch, io.id_sorted[i], step, at, ac.ax, ac.ay, ac.az, dt, out, io.panel_fix);
    io.touch_out[i] = touch;
    ad_add_surface_sums(t, o, 3);
}

/* The body's triangles for a sphere at `me` (gather3.h's ad_contact_triangles), out of line: the tree's
 * walk (its stack, the touch table) is the pass's largest demand for registers, and few spheres come
 * near the body; those outside the tree's root box (most) do not call it. The accumulator goes in and
 * comes back by value (no address taken: it stays in registers), its terms in gather3.h's order. */
__device__ __noinline__ ad_accum3 ad3_triangles(const ad_params &p, const ad_tri_tree &g, ad_state3 me, ad_accum3 a)
{
    ad_contact_triangles(&p, &g, ad_v3(me.x, me.y, me.z), ad_v3(me.vx, me.vy, me.vz), &a);
    return a;
}

__device__ __forceinline__ void ad3_contact_body(const ad_params &p, const ad_tri_tree &g, ad_state3 me, ad_accum3 *a)
{
    if (g.t.n == 0) return;
    ad_bvh_box3 root = ad_bvh_root_box3(&g.t), at = {me.x, me.y, me.z, me.x, me.y, me.z};
    if (ad_bvh_overlap3(root, at)) *a = ad3_triangles(p, g, me, *a);
}

/* Slot i's contacts at `me`, binned in the cell of `cell_at` (the grid's). */
__device__ __forceinline__ ad_accum3 ad3_gather(const ad_params &p, const ad_tri_tree &g, const unsigned *start,
                                                 const ad_state3 *in, unsigned i, ad_state3 cell_at, ad_state3 me)
{
    int cx = ad_cell_coord(cell_at.x, p.origin_x, p.inv_cell_x, p.nx);
    int cy = ad_cell_coord(cell_at.y, p.origin_y, p.inv_cell_y, p.ny);
    int cz = ad_cell_coord(cell_at.z, p.origin_z, p.inv_cell_z, p.nz);
    ad_accum3 a;
    ad_accum_zero3(&a);
    /* gather3.h's ad_gather_all3, with the list's loop (gather_list.cuh) for the spheres where it applies */
    if (p.disc_contacts && !ad_gather_discs_list3(p, start, in, me, cx, cy, cz, &a))
        ad_gather_discs3(&p, start, in, i, me, cx, cy, cz, &a);
    ad3_contact_body(p, g, me, &a);
    ad_contact_walls3(&p, me.x, me.y, me.z, me.vx, me.vy, me.vz, &a);
    return a;
}

__device__ __forceinline__ ad_accel3 ad3_accel(const ad_params &p, const ad_accum3 &a)
{
    ad_accel3 r = {a.fx * p.inv_mass + p.gx, a.fy * p.inv_mass + p.gy, a.fz * p.inv_mass + p.gz};
    return r;
}

/* A force evaluation's share of the sums, and the sphere's observables: on steps somebody reads (OBS;
 * the others skip the per-sphere writes and the snapshot sums, as 2D's pass: block_sums.cuh). */
template <bool OBS = true>
__device__ __forceinline__ void ad3_observe(ad_thread_sums3 &t, const ad_accum3 &a, const ad3_pass &io, unsigned i)
{
    if (OBS) {
        io.pressure[i] = a.pressure;
        io.virial[i] = a.virial;
        t.v[AD_SUM_PE] += a.energy;
        t.max_overlap = fmaxf(t.max_overlap, a.max_overlap);
    }
    t.v[AD_SUM_VIRIAL] += a.virial;
    t.v[AD_SUM_BODY_FX] += a.body_fx;
    t.v[AD_SUM_BODY_FY] += a.body_fy;
    t.v[AD_SUM_BODY_FZ] += a.body_fz;
    t.v[AD_SUM_BODY_TX] += a.body_tx;
    t.v[AD_SUM_BODY_TY] += a.body_ty;
    t.v[AD_SUM_BODY_TZ] += a.body_tz;
    for (int k = 0; k < 6; k++) t.v[AD_SUM_WALL0 + k] += a.wall[k];
}

/* Step 5 of sphere i that moved (the wraps, removal past an open face, the reservoir's removals and
 * thermostat: ad_apply_boundaries3, the reservoir's marks taken: ad_take_doomed), the removals counted
 * on the device (ad_count_fate); *kept: it stays. */
__device__ __forceinline__ ad_state3 ad3_boundaries(const ad_params &p, const ad3_pass &io, unsigned i, ad_state3 s,
                                                    float dt, ad_ctrl *ctrl, int *kept)
{
    int fate;
    s = ad_apply_boundaries3(&p, s, io.id_sorted, i, ctrl->stats.step, dt, ad_take_doomed(io.doomed, i), &fate);
    ad_count_fate(ctrl, fate);
    *kept = fate == AD_KEPT;
    return s;
}

/* The new state's share: kinetic energy, momentum (OBS), largest speed, non-finite. */
template <bool OBS = true>
__device__ __forceinline__ void ad3_motion(ad_thread_sums3 &t, const ad_params &p, ad_state3 s)
{
    float v2 = s.vx * s.vx + s.vy * s.vy + s.vz * s.vz;
    t.v[AD_SUM_KE] += 0.5f * p.mass * v2;
    if (OBS) {
        t.v[AD_SUM_PX] += p.mass * s.vx;
        t.v[AD_SUM_PY] += p.mass * s.vy;
        t.v[AD_SUM_PZ] += p.mass * s.vz;
    }
    t.vmax2 = fmaxf(t.vmax2, v2);
    t.nonfinite += !(isfinite(s.x) && isfinite(s.y) && isfinite(s.z) && isfinite(v2));
}

/* Step 4 of the one-evaluation integrators: gather, integrate, wrap, sum; the observables on steps
 * somebody reads (OBS), the accelerations there and for Verlet's next kick. */
template <int INTEG, bool OBS, bool SURF = false>
__global__ void __launch_bounds__(AD_CUDA_BLOCK, AD3_PASS_BLOCKS)
    k3_interact(const __grid_constant__ ad_params p, const __grid_constant__ ad_tri_tree g, ad3_pass io, ad_n n,
                ad_ctrl *ctrl)
{
    unsigned i = ad3_thread();
    ad_thread_sums3 t = {};
    if (i < ad_n_get(n)) {
        const float dt = (float)ctrl->stats.dt;
        ad_state3 me = io.sorted[i];
        ad_accum3 a = ad3_gather(p, g, io.start, io.sorted, i, me, me);
        ad3_observe<OBS>(t, a, io, i);
        ad_accel3 ac = ad3_accel(p, a), old = INTEG == AD_INTEGRATOR_VERLET ? io.acc_sorted[i] : ac;
        if (SURF) ad3_surface(p, g, io, i, ctrl->stats.step, me, ac, dt, &me, t); /* a re-emission changes me.v */
        ad_state3 nw = INTEG == AD_INTEGRATOR_EULER    ? ad_step_euler3(me, ac.ax, ac.ay, ac.az, dt)
                       : INTEG == AD_INTEGRATOR_VERLET ? ad_verlet_kick3(me, old.ax, old.ay, old.az, ac.ax, ac.ay, ac.az, dt)
                                                       : ad_step_symplectic3(me, ac.ax, ac.ay, ac.az, dt);
        int kept;
        nw = ad3_boundaries(p, io, i, nw, dt, ctrl, &kept);
        io.out[i] = nw;
        io.id_out[i] = io.id_sorted[i];
        if (OBS || INTEG == AD_INTEGRATOR_VERLET) io.acc_out[i] = ac;
        if (kept) ad3_motion<OBS>(t, p, nw);
    }
    ad_block_reduce<OBS, AD_SUMS3>(t, &io.blocks[blockIdx.x]);
}

/* Velocity Verlet's drift (before the bin) with the acceleration of the last evaluation. */
__global__ void k3_drift(ad_params p, ad_state3 *s, const ad_accel3 *__restrict__ acc, ad_n n,
                         const ad_ctrl *__restrict__ ctrl)
{
    unsigned i = ad3_thread();
    if (i >= ad_n_get(n)) return;
    ad_accel3 a = acc[i];
    s[i] = ad_wrap_state3(&p, ad_verlet_drift3(s[i], a.ax, a.ay, a.az, (float)ctrl->stats.dt));
}

/* Verlet's first evaluation: the accelerations of the sorted state, which becomes the world's. */
__global__ void k3_prime(const __grid_constant__ ad_params p, const __grid_constant__ ad_tri_tree g, ad3_pass io, ad_n n)
{
    unsigned i = ad3_thread();
    if (i >= ad_n_get(n)) return;
    ad_state3 me = io.sorted[i];
    ad_accum3 a = ad3_gather(p, g, io.start, io.sorted, i, me, me);
    io.out[i] = me;
    io.id_out[i] = io.id_sorted[i];
    if (io.touch_out) io.touch_out[i] = io.touch_sorted[i];
    io.acc_out[i] = ad3_accel(p, a);
    io.pressure[i] = a.pressure;
    io.virial[i] = a.virial;
}

/* RK4 stage K: gathers on the grid of the step's start (cells from the sorted base state), the other
 * spheres at the stage. Stage 0's forces are the observed ones (its sums in blocks[0, nb)), stage 3
 * writes the step (its motion sums in blocks[nb, 2 nb)). */
template <int K, bool SURF = false>
__global__ void __launch_bounds__(AD_CUDA_BLOCK, AD3_PASS_BLOCKS)
    k3_rk4(const __grid_constant__ ad_params p, const __grid_constant__ ad_tri_tree g, ad3_pass io, ad_n n,
           ad_ctrl *ctrl, float skin)
{
    unsigned i = ad3_thread();
    ad_thread_sums3 t = {};
    if (i < ad_n_get(n)) {
        const float dt = (float)ctrl->stats.dt;
        const ad_state3 *in = K == 0 ? io.sorted : io.rk_in;
        ad_state3 base = io.sorted[i], stage = in[i];
        ad_accum3 a = ad3_gather(p, g, io.start, in, i, base, stage);
        ad_accel3 ac = ad3_accel(p, a);
        if (K == 0) {
            ad3_observe(t, a, io, i);
            io.acc_out[i] = ac;
        }
        ad_state3 nx = ad_rk4_stage3(base, stage, ac.ax, ac.ay, ac.az, dt, K, &io.rk_sum[i]);
        if (K < 3) {
            io.rk_out[i] = nx;
        } else {
            int kept;
            nx = ad3_boundaries(p, io, i, nx, dt, ctrl, &kept);
            /* sampled surfaces: at the step's start with stage 0's acceleration; a re-emission replaces the
             * velocity the step ends with */
            if (SURF) ad3_surface(p, g, io, i, ctrl->stats.step, base, io.acc_out[i], dt, &nx, t);
            io.out[i] = nx;
            io.id_out[i] = io.id_sorted[i];
            if (kept) {
                t.skin_violations += ad_moved_sq3(&p, nx, base) > skin * skin;
                ad3_motion(t, p, nx);
            }
        }
    }
    if (K == 0 || K == 3) ad_block_reduce<true, AD_SUMS3>(t, &io.blocks[(K == 3 ? gridDim.x : 0) + blockIdx.x]);
}

#endif
