/* The body's panels on the GPU, the host's side for both dimensions (panels.cuh): the arrays made where
 * sampling starts, their sums to the host and back, reset, checkpoints' contact states; and the fold of a
 * step's fixed-point sums into the totals (k_panels_fold), on the step's stream. */
#include <cstdlib>
#include <cstring>

#include "cuda_world.cuh"
#include "panels.cuh"

/* Step 6 for the panels (ad_panels_fold's arithmetic): each panel's step sums over the step's dt (the
 * control record's, before the step's fold chooses the next) into its totals, cleared for the next step;
 * and the time sampled. */
__global__ void k_panels_fold(int64_t *__restrict__ fix, ad_panel_sums *__restrict__ sums, unsigned count, double qf,
                              double qe, ad_ctrl *ctrl)
{
    unsigned k = blockIdx.x * blockDim.x + threadIdx.x;
    double dt = ctrl->stats.dt;
    if (k == 0) ctrl->stats.panel_time += dt;
    if (k >= count) return;
    int64_t *f = fix + (size_t)k * AD_PANEL_WORDS;
    ad_panel_sums s = sums[k];
    for (int j = 0; j < 3; j++)
        s.impulse[j] += (double)f[j] * qf * dt;
    s.energy += (double)f[AD_PANEL_E] * qe;
    s.contacts += (uint64_t)f[AD_PANEL_N];
    sums[k] = s;
    for (int j = 0; j < AD_PANEL_WORDS; j++)
        f[j] = 0;
}

cudaError_t ad_dev_panels_fold(const ad_dev_panels *d, const ad_params *p, ad_ctrl *ctrl, cudaStream_t st)
{
    unsigned n = (unsigned)d->count, g = (n + AD_CUDA_BLOCK - 1) / AD_CUDA_BLOCK;
    k_panels_fold<<<g ? g : 1, AD_CUDA_BLOCK, 0, st>>>(d->fix, d->sums, n, 1.0 / p->panel_inv_qf, 1.0 / p->panel_inv_qe,
                                                       ctrl);
    return cudaGetLastError();
}

/* Sums and step sums for `count` panels: the first `keep` sums from `old` (device), the rest the host's. */
static cudaError_t make_sums(ad_dev_panels *d, const ad_world *w, size_t count, const ad_panel_sums *old, size_t keep,
                             cudaStream_t st)
{
    size_t m = count ? count : 1;
    int64_t *fix = NULL;
    ad_panel_sums *sums = NULL;
    cudaError_t e = cudaMalloc((void **)&fix, m * AD_PANEL_WORDS * sizeof(int64_t));
    if (!e) e = cudaMalloc((void **)&sums, m * sizeof(ad_panel_sums));
    if (!e) e = cudaMemsetAsync(fix, 0, m * AD_PANEL_WORDS * sizeof(int64_t), st);
    if (!e && count)
        e = cudaMemcpyAsync(sums, w->panels.sums, count * sizeof(ad_panel_sums), cudaMemcpyHostToDevice, st);
    if (!e && keep) e = cudaMemcpyAsync(sums, old, keep * sizeof(ad_panel_sums), cudaMemcpyDeviceToDevice, st);
    if (!e) e = cudaStreamSynchronize(st);
    if (e) {
        cudaFree(fix);
        cudaFree(sums);
        return e;
    }
    cudaFree(d->fix);
    cudaFree(d->sums);
    d->fix = fix;
    d->sums = sums;
    d->count = count;
    return cudaSuccess;
}

ad_status ad_dev_panels_sync(ad_dev_panels *d, const ad_world *w, size_t cap, cudaStream_t st, int *changed)
{
    if (!w->params.surfaces) return ad_ok();
    size_t count = w->panels.count;
    if (!d->on) {
        for (int k = 0; k < 2; k++) {
            CU(cudaMalloc((void **)&d->touch[k], (cap ? cap : 1) * 4));
            CU(cudaMemsetAsync(d->touch[k], 0, (cap ? cap : 1) * 4, st));
        }
        CU(make_sums(d, w, count, NULL, 0, st));
        d->on = 1;
        *changed = 1;
    } else if (count != d->count) { /* the body grew: its new panels start at zero (ad_panels_resize) */
        CU(make_sums(d, w, count, d->sums, count < d->count ? count : d->count, st));
        *changed = 1;
    }
    return ad_ok();
}

ad_status ad_dev_panels_to_host(const ad_dev_panels *d, ad_world *w, const double *panel_time, cudaStream_t st)
{
    if (panel_time) CU(cudaMemcpyAsync(&w->stats.panel_time, panel_time, sizeof(double), cudaMemcpyDeviceToHost, st));
    size_t n = d->count < w->panels.count ? d->count : w->panels.count;
    if (d->on) /* else the host's sums are the world's */
        CU(cudaMemcpyAsync(w->panels.sums, d->sums, n * sizeof(ad_panel_sums), cudaMemcpyDeviceToHost, st));
    CU(cudaStreamSynchronize(st));
    return ad_ok();
}

ad_status ad_dev_panels_reset(ad_dev_panels *d, const ad_world *w, size_t cap, ad_ctrl *ctrl, ad_ctrl *ctrl_host,
                              cudaStream_t st, int *changed)
{
    AD_TRY(ad_dev_panels_sync(d, w, cap, st, changed));
    if (d->on) CU(cudaMemsetAsync(d->sums, 0, (d->count ? d->count : 1) * sizeof(ad_panel_sums), st));
    CU(cudaMemsetAsync(&ctrl->stats.panel_time, 0, sizeof(double), st));
    CU(cudaStreamSynchronize(st));
    ctrl_host->stats.panel_time = 0.0;
    return ad_ok();
}

ad_status ad_dev_panels_import(ad_dev_panels *d, const ad_world *w, size_t cap, int k, const uint32_t *touch, size_t n,
                               cudaStream_t st, int *changed)
{
    if (!w->params.surfaces) return ad_ok();
    int was = d->on;
    AD_TRY(ad_dev_panels_sync(d, w, cap, st, changed));
    if (was) CU(make_sums(d, w, w->panels.count, NULL, 0, st)); /* the loader's sums are the world's */
    if (touch && n)
        CU(cudaMemcpyAsync(d->touch[k], touch, n * 4, cudaMemcpyHostToDevice, st));
    else if (n)
        CU(cudaMemsetAsync(d->touch[k], 0, n * 4, st));
    CU(cudaStreamSynchronize(st));
    *changed = 1;
    return ad_ok();
}

ad_status ad_dev_panels_export(const ad_dev_panels *d, ad_world *w, int k, size_t n, uint32_t **touch, cudaStream_t st)
{
    *touch = NULL;
    if (!w->params.surfaces) return ad_ok();
    AD_TRY(ad_dev_panels_to_host(d, w, NULL, st));
    *touch = (uint32_t *)calloc(n + 1, 4);
    if (!*touch) return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory for the contact states of %zu discs", n);
    cudaError_t e = d->on && n ? cudaMemcpyAsync(*touch, d->touch[k], n * 4, cudaMemcpyDeviceToHost, st) : cudaSuccess;
    if (!e) e = cudaStreamSynchronize(st);
    if (e) {
        free(*touch);
        *touch = NULL;
    }
    CU(e);
    return ad_ok();
}

cudaError_t ad_dev_panels_clear(const ad_dev_panels *d, int k, size_t at, size_t n, cudaStream_t st)
{
    return d->on && n ? cudaMemsetAsync(d->touch[k] + at, 0, n * 4, st) : cudaSuccess;
}

void ad_dev_panels_free(ad_dev_panels *d)
{
    void *const arrays[] = {d->fix, d->sums, d->touch[0], d->touch[1]};
    for (void *a : arrays)
        if (a) cudaFree(a);
    memset(d, 0, sizeof *d);
}
