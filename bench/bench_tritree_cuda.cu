/* bench_tritree's GPU half: the triangle tree (src/cuda/leaf_tree.cuh's copy of the host tree) and the brute
 * force, one thread a query, timed with CUDA events over repeats of at least 0.2 s. The device's forces are
 * compared with the device brute force's and with the CPU tree's (nvcc contracts multiply-adds into FMAs:
 * the CPU and the GPU agree to float rounding, not to the bit). */
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "bench_tritree.h"
#include "cuda/leaf_tree.cuh"

#define BCU(call)                                                                                                 \
    do {                                                                                                          \
        cudaError_t e_ = (call);                                                                                  \
        if (e_ != cudaSuccess) {                                                                                  \
            fprintf(stderr, "bench_tritree: CUDA error at %s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
            return;                                                                                               \
        }                                                                                                         \
    } while (0)

__global__ void k_tree(ad_params p, ad_tri_tree g, const float *q, unsigned n, ad_accum3 *out)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float *s = q + 6 * (size_t)i;
    ad_accum3 a;
    ad_accum_zero3(&a);
    ad_contact_triangles(&p, &g, ad_v3(s[0], s[1], s[2]), ad_v3(s[3], s[4], s[5]), &a);
    out[i] = a;
}

__global__ void k_brute(ad_params p, const ad_tri *t, unsigned nt, const float *q, unsigned n, ad_accum3 *out)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float *s = q + 6 * (size_t)i;
    ad_accum3 a;
    ad_accum_zero3(&a);
    ad_contact_triangles_all(&p, t, nt, ad_v3(s[0], s[1], s[2]), ad_v3(s[3], s[4], s[5]), &a);
    out[i] = a;
}

/* Launches kernel `brute` (0: the tree) over n queries until 0.2 s pass; returns queries per second. */
static double timed(int brute, const ad_world *w, const ad_tri_tree &g, const float *q, unsigned n, ad_accum3 *out)
{
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    unsigned blocks = (n + 255) / 256;
    double total = 0;
    long reps = 0;
    while (total < 0.2 && reps < 1000) {
        cudaEventRecord(e0);
        if (brute) k_brute<<<blocks, 256>>>(w->params, g.tris, g.t.n, q, n, out);
        else k_tree<<<blocks, 256>>>(w->params, g, q, n, out);
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        float ms = 0;
        cudaEventElapsedTime(&ms, e0, e1);
        if (reps++ > 0) total += ms * 1e-3; /* the first launch warms up */
        else if (ms * 1e-3 > 0.2) total = ms * 1e-3, reps = 2;
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return (double)n * (double)(reps - 1) / total;
}

static size_t differ(const ad_accum3 *a, const ad_accum3 *b, size_t n)
{
    size_t d = 0;
    for (size_t k = 0; k < n; k++) d += memcmp(&a[k], &b[k], sizeof *a) != 0;
    return d;
}

extern "C" void bench_tritree_cuda(const ad_world *w, const float *q, size_t nq, const char *set,
                                   const ad_accum3 *host_tree, size_t host_done, FILE *csv)
{
    const ad_triangles *t = &w->tri;
    ad_dev_tree<ad_bvh_box3, ad_bvh3> dt = {};
    ad_tri *tris = NULL;
    float *dq = NULL;
    ad_accum3 *out = NULL;
    /* the brute force over at most 2e10 query-triangle pairs */
    size_t nb = (size_t)(2e10 / (double)t->count);
    nb = nb < nq ? (nb < 256 ? 256 : nb) : nq;
    BCU(cudaMalloc((void **)&tris, t->count * sizeof(ad_tri)));
    BCU(cudaMemcpy(tris, t->tris, t->count * sizeof(ad_tri), cudaMemcpyHostToDevice));
    BCU(ad_dev_tree_upload(&dt, t->tree.t, t->tree.item));
    BCU(cudaMalloc((void **)&dq, nq * 6 * sizeof(float)));
    BCU(cudaMemcpy(dq, q, nq * 6 * sizeof(float), cudaMemcpyHostToDevice));
    BCU(cudaMalloc((void **)&out, 2 * nq * sizeof(ad_accum3)));
    ad_tri_tree g = {dt.t, dt.item, tris};
    double qps_tree = timed(0, w, g, dq, (unsigned)nq, out);
    double qps_brute = timed(1, w, g, dq, (unsigned)nb, out + nq);
    BCU(cudaGetLastError());
    std::vector<ad_accum3> h(2 * nq);
    BCU(cudaMemcpy(h.data(), out, 2 * nq * sizeof(ad_accum3), cudaMemcpyDeviceToHost));
    size_t touching = 0;
    for (size_t k = 0; k < nq; k++) touching += h[k].pressure > 0;
    size_t d_brute = differ(h.data() + nq, h.data(), nb), d_host = differ(h.data(), host_tree, host_done < nq ? host_done : nq);
    printf("%10zu %5s %6s %5s %14.4g %10zu %9zu %7zu   (differ from the CPU tree: %zu of %zu)\n", t->count, set, "tree",
           "cuda", qps_tree, nq, touching, (size_t)0, d_host, host_done);
    printf("%10zu %5s %6s %5s %14.4g %10zu %9s %7zu\n", t->count, set, "brute", "cuda", qps_brute, nb, "", d_brute);
    if (csv) {
        fprintf(csv, "%zu,%s,tree,cuda,%.6g,%zu,%zu,0,0\n", t->count, set, qps_tree, nq, touching);
        fprintf(csv, "%zu,%s,brute,cuda,%.6g,%zu,%zu,%zu,0\n", t->count, set, qps_brute, nb, touching, d_brute);
    }
    ad_dev_tree_free(&dt);
    cudaFree(tris);
    cudaFree(dq);
    cudaFree(out);
}
