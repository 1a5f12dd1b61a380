/* The body's panels and the gas-surface models on the GPU, both dimensions (src/physics/panel.h,
 * surface.h): each disc's contact state (its touch word, moved with it by the sort, two arrays), a step's
 * per-panel sums in 64-bit fixed point (atomic integer adds in the pass: the same sums in any order) and
 * their totals, folded on the device after the pass (k_panels_fold, cuda_panels.cu, before the step's
 * fold chooses the next dt) as ad_panels_fold does on the host. Everything here exists only where the
 * world samples its surfaces (ad_params.surfaces): a world that does not keeps the fast path, with no
 * array, no kernel and no template variant of it (the pass's SURF = false).
 *
 * Where the sums live: the host's (w->panels.sums, w->stats.panel_time) until sampling starts on the
 * device (ad_dev_panels_sync, at a step's start), which uploads them; the device's after that, copied back
 * by panels_to_host. The time sampled is kept in the control record (ad_ctrl.stats.panel_time), which the
 * statistics' pull and push carry both ways. */
#ifndef AD_CUDA_PANELS_CUH
#define AD_CUDA_PANELS_CUH

#include <cuda_runtime.h>

#include "../core/world_internal.h"
#include "../physics/surface.h"
#include "ctrl.cuh"

struct ad_dev_panels {
    int on;              /* sampling on the device: its arrays hold the sums (the graphs were built with it) */
    size_t count;        /* panels the arrays hold (the body's, at the last sync) */
    int64_t *fix;        /* a step's sums, AD_PANEL_WORDS a panel (panel.h); zero between steps */
    ad_panel_sums *sums; /* since the last reset */
    unsigned
        *touch[2]; /* contact states (panel.h), a slot each: 2D by id parity, 3D [0] the world's order, [1] sorted */
};

/* Host side (cuda_panels.cu). Sync: where the world samples, the arrays made (cap slots, touch zero, the
 * host's sums uploaded) or grown to the body's panels; *changed set where pointers changed (the step's
 * graphs must be captured again). */
ad_status ad_dev_panels_sync(ad_dev_panels *d, const ad_world *w, size_t cap, cudaStream_t st, int *changed);
/* The device's sums into w->panels.sums (nothing where the device does not sample yet), and the time
 * sampled (the control record's panel_time, where not NULL) into w->stats, after the stream's work. */
ad_status ad_dev_panels_to_host(const ad_dev_panels *d, ad_world *w, const double *panel_time, cudaStream_t st);
/* The sums and the time sampled cleared (the control record's on the device and its host mirror's), sampling
 * started. */
ad_status ad_dev_panels_reset(ad_dev_panels *d, const ad_world *w, size_t cap, ad_ctrl *ctrl, ad_ctrl *ctrl_host,
                              cudaStream_t st, int *changed);
/* A checkpoint's side: the contact states of n slots into touch[k] (NULL: zero), the host's sums uploaded
 * (the loader put them there); and the other way, a host copy of touch[k]'s n slots (malloc'ed; zeros where
 * the device does not sample yet). Both only where the world samples. */
ad_status ad_dev_panels_import(ad_dev_panels *d, const ad_world *w, size_t cap, int k, const uint32_t *touch, size_t n,
                               cudaStream_t st, int *changed);
ad_status ad_dev_panels_export(const ad_dev_panels *d, ad_world *w, int k, size_t n, uint32_t **touch, cudaStream_t st);
/* New discs at slots [at, at + n) of touch[k]: no contact yet. */
cudaError_t ad_dev_panels_clear(const ad_dev_panels *d, int k, size_t at, size_t n, cudaStream_t st);
/* After a step's pass: its sums into the totals over the step's dt (read in ctrl before the fold). */
cudaError_t ad_dev_panels_fold(const ad_dev_panels *d, const ad_params *p, ad_ctrl *ctrl, cudaStream_t st);
void ad_dev_panels_free(ad_dev_panels *d);

/* The velocity a re-emission gives and the contact state, on the device: the shared evaluation (surface.h)
 * with the forces it adds for the step's sums, the body's and the walls', as one record. */
struct ad_surf_sums {
    float body[6]; /* force x, y, z and torque x, y, z on the body */
    float wall[6];
};

/* Slot sums' share of a surface evaluation (ad_thread_sums_n, block_sums.cuh): dims 2 or 3. */
template <class T> __device__ __forceinline__ void ad_add_surface_sums(T &t, const ad_surf_sums &o, int dims)
{
    t.v[AD_SUM_BODY_FX] += o.body[0];
    t.v[AD_SUM_BODY_FY] += o.body[1];
    if (dims == 3) {
        t.v[AD_SUM_BODY_FZ] += o.body[2];
        t.v[AD_SUM_BODY_TX] += o.body[3];
        t.v[AD_SUM_BODY_TY] += o.body[4];
        t.v[AD_SUM_BODY_TZ] += o.body[5];
    }
    for (int k = 0; k < 2 * dims; k++)
        t.v[AD_SUM_WALL0 + k] += o.wall[k];
}

/* The record from the step sums that surface.h's ad_surface_sums added to (they started at zero). */
__device__ __forceinline__ ad_surf_sums ad_surf_sums_of(const ad_step_sums &b, int dims)
{
    ad_surf_sums o = {};
    o.body[0] = (float)b.v[AD_SUM_BODY_FX];
    o.body[1] = (float)b.v[AD_SUM_BODY_FY];
    if (dims == 3) {
        o.body[2] = (float)b.v[AD_SUM_BODY_FZ];
        o.body[3] = (float)b.v[AD_SUM_BODY_TX];
        o.body[4] = (float)b.v[AD_SUM_BODY_TY];
        o.body[5] = (float)b.v[AD_SUM_BODY_TZ];
    }
    for (int k = 0; k < 2 * dims; k++)
        o.wall[k] = (float)b.v[AD_SUM_WALL0 + k];
    return o;
}

/* A 2D disc's evaluation (ad_surface_disc2) with the hits h its broad phase found: its contact state *touch,
 * a re-emission into *out's velocity, the panels' sums in fix. Out of line: taken only where surfaces are
 * sampled, its tables (the hits, the step sums) stay out of the pass's registers. */
static __device__ __noinline__ ad_surf_sums ad_cuda_surface2(const ad_params &p, const ad_seg *segs,
                                                             const ad_panel_hits &h, unsigned *touch, unsigned id,
                                                             uint64_t step, ad_state at, float ax, float ay, float dt,
                                                             ad_state *out, int64_t *fix)
{
    ad_step_sums b = {};
    uint32_t t = *touch;
    ad_surface_disc2(&p, segs, &h, &t, id, step, at, ax, ay, dt, out, fix, &b);
    *touch = t;
    return ad_surf_sums_of(b, 2);
}

/* The same for a 3D sphere, its hits found through the triangle tree (ad_tri_hits). */
static __device__ __noinline__ ad_surf_sums ad_cuda_surface3(const ad_params &p, const ad_tri_tree &g, unsigned *touch,
                                                             unsigned id, uint64_t step, ad_state3 at, float ax,
                                                             float ay, float az, float dt, ad_state3 *out, int64_t *fix)
{
    ad_panel_hits h;
    ad_tri_hits(&p, &g, ad_v3(at.x, at.y, at.z), ad_v3(at.vx, at.vy, at.vz), &h);
    ad_step_sums b = {};
    uint32_t t = *touch;
    ad_surface_disc3(&p, g.tris, &h, &t, id, step, at, ax, ay, az, dt, out, fix, &b);
    *touch = t;
    return ad_surf_sums_of(b, 3);
}

#endif
