/* The pass's disc contacts (DESIGN.md step 4) three ways: the production gather (interact.cuh's one list over the
 * three neighbour rows, contact.h's reciprocal square root) against gather.h's row-by-row loops and against a
 * correctly rounded square root and division (the CPU's arithmetic), on a gas at the default tunnel's density in
 * cell order; each checked against the CPU's gather (gather.h on the host), timed with CUDA events.
 * Build: nvcc -O3 -std=c++17 -arch=sm_90 -Xcompiler=-Wall,-Wextra -Iinclude -Isrc dev/cuda/gather.cu -o gather
 * Run:   ./gather [N]   (N discs, default 1.6e7; exits 1 when a variant disagrees with the CPU)
 *
 * These were the measurement switches AD_CUDA_ROW_GATHER and AD_CUDA_IEEE_CONTACT of the main tree (last in commit
 * 923d1c8). Only the contacts are timed here: the kernel reads a disc, gathers, and writes its force, pressure and
 * virial (the sums of a step nobody reads); docs/PERFORMANCE.md has what each did to the whole pass. The IEEE
 * variant is interact.cuh's list loop itself with another law (its template parameter): no copy of the loops. */
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "../../bench/bench_cuda_util.cuh"
#include "../../src/cuda/interact.cuh"

/* ------------------------------------------------------ the contact laws -- */

/* contact.h's host branch compiled for the device: sqrtf and '/' correctly rounded, then the same law
 * (ad_contact_disc_at). */
struct contact_ieee {
    __device__ __forceinline__ void operator()(const ad_params *p, float dx, float dy, float dvx, float dvy,
                                               ad_accum *a) const
    {
        float d2 = dx * dx + dy * dy;
        float touch = (d2 < p->diameter_sq && d2 > 0.0f) ? 1.0f : 0.0f;
        float dist = sqrtf(d2);
        float inv = touch / (dist + (1.0f - touch));
        ad_contact_disc_at(p, dx, dy, dvx, dvy, dist, inv, touch, a);
    }
};

/* ------------------------------------------------------------ the kernels -- */

enum { V_PRODUCTION, V_ROWS, V_LIST_IEEE, V_COUNT };
static const char *names[V_COUNT] = {"list, rsqrt (production)", "rows, rsqrt (gather.h)", "list, IEEE"};

/* One thread a disc, compiled for the blocks a multiprocessor of the production pass (its register cap). */
template <int V>
__global__ void __launch_bounds__(AD_CUDA_BLOCK, ad_interact_min_blocks<ad_grid_gather>::value)
    k_contacts(ad_params p, const unsigned *__restrict__ start, const ad_state *__restrict__ s, unsigned n,
               float4 *__restrict__ out)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    ad_state me = s[i];
    int cx = ad_cell_coord(me.x, p.origin_x, p.inv_cell_x, p.nx);
    int cy = ad_cell_coord(me.y, p.origin_y, p.inv_cell_y, p.ny);
    ad_accum a;
    ad_accum_zero(&a);
    if (V == V_PRODUCTION) { /* as ad_grid_gather calls them */
        if (!ad_gather_discs_list(p, start, s, me, cx, cy, &a)) ad_gather_discs(&p, start, s, i, me, cx, cy, &a);
    } else if (V == V_ROWS) {
        ad_gather_discs(&p, start, s, i, me, cx, cy, &a);
    } else { /* the production list with the IEEE law (at a periodic seam's columns, gather.h's rows with the
              * production law: the list does not apply there) */
        if (!ad_gather_discs_list<contact_ieee>(p, start, s, me, cx, cy, &a))
            ad_gather_discs(&p, start, s, i, me, cx, cy, &a);
    }
    out[i] = make_float4(a.fx, a.fy, a.pressure, a.virial);
}

static void launch(int v, const ad_params &p, const unsigned *start, const ad_state *s, unsigned n, float4 *out)
{
    unsigned gb = (n + AD_CUDA_BLOCK - 1) / AD_CUDA_BLOCK;
    if (v == V_PRODUCTION) k_contacts<V_PRODUCTION><<<gb, AD_CUDA_BLOCK>>>(p, start, s, n, out);
    if (v == V_ROWS) k_contacts<V_ROWS><<<gb, AD_CUDA_BLOCK>>>(p, start, s, n, out);
    if (v == V_LIST_IEEE) k_contacts<V_LIST_IEEE><<<gb, AD_CUDA_BLOCK>>>(p, start, s, n, out);
}

/* ------------------------------------------------------------------ main -- */

int main(int argc, char **argv)
{
    if (!bench_have_gpu()) return 2;
    unsigned n = argc > 1 ? (unsigned)atof(argv[1]) : 16000000u;
    const int reps = 11;
    int failed = 0;
    printf("n = %u discs; radius 0.5 m, k 1e4 N/m, restitution 0.9, area fraction 0.3, cells one diameter; "
           "median of %d launches\n",
           n, reps);
    printf("tolerance against the CPU (gather.h on the host): |gpu - cpu| <= 1e-5 k d + 1e-5 |cpu| per component\n");
    printf("%-8s %-26s %10s %11s %9s %16s %13s\n", "case", "variant", "us", "discs/s", "vs prod.", "worst err / tol",
           "= production");
    /* tunnel: the default scene's far field (no axis wraps); box: bench_core's periodic box */
    for (int periodic = 0; periodic < 2; periodic++) {
        int W, H;
        ad_params p = bench_gas_params(n, periodic, &W, &H);
        size_t ncell = (size_t)W * H;
        /* a uniform gas (Poisson in each cell, as dev/cuda/bin.cu), Maxwellian-like velocities, in cell order */
        std::vector<ad_state> raw(n), s(n);
        std::vector<unsigned> start(ncell + 1, 0);
        for (unsigned i = 0; i < n; i++) {
            float x = (float)(urand() * W), y = (float)(urand() * H);
            raw[i] = ad_state{std::min(x, W - 1e-3f), std::min(y, H - 1e-3f), (float)(2 * urand() - 1),
                              (float)(2 * urand() - 1)};
            start[ad_cell_index(&p, raw[i].x, raw[i].y) + 1]++;
        }
        for (size_t c = 0; c < ncell; c++) start[c + 1] += start[c];
        {
            std::vector<unsigned> at(start.begin(), start.end() - 1);
            for (unsigned i = 0; i < n; i++) s[at[ad_cell_index(&p, raw[i].x, raw[i].y)]++] = raw[i];
        }
        /* the CPU reference: gather.h's loops with the CPU's arithmetic */
        std::vector<float4> ref(n);
        for (unsigned i = 0; i < n; i++) {
            ad_state me = s[i];
            int cx = ad_cell_coord(me.x, p.origin_x, p.inv_cell_x, p.nx);
            int cy = ad_cell_coord(me.y, p.origin_y, p.inv_cell_y, p.ny);
            ad_accum a;
            ad_accum_zero(&a);
            ad_gather_discs(&p, start.data(), s.data(), i, me, cx, cy, &a);
            ref[i] = make_float4(a.fx, a.fy, a.pressure, a.virial);
        }
        ad_state *ds;
        unsigned *dstart;
        float4 *dout;
        CK(cudaMalloc(&ds, n * sizeof(ad_state)));
        CK(cudaMalloc(&dstart, (ncell + 1) * 4));
        CK(cudaMalloc(&dout, n * sizeof(float4)));
        CK(cudaMemcpy(ds, s.data(), n * sizeof(ad_state), cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dstart, start.data(), (ncell + 1) * 4, cudaMemcpyHostToDevice));
        cudaEvent_t e0, e1;
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
        std::vector<float4> prod(n), got(n);
        float prod_us = 0;
        for (int v = 0; v < V_COUNT; v++) {
            launch(v, p, dstart, ds, n, dout); /* warm-up */
            CK(cudaGetLastError());
            std::vector<float> t(reps);
            for (int r = 0; r < reps; r++) {
                CK(cudaEventRecord(e0));
                launch(v, p, dstart, ds, n, dout);
                CK(cudaEventRecord(e1));
                CK(cudaEventSynchronize(e1));
                CK(cudaEventElapsedTime(&t[r], e0, e1));
            }
            std::sort(t.begin(), t.end());
            float us = t[reps / 2] * 1e3f;
            CK(cudaMemcpy(got.data(), dout, n * sizeof(float4), cudaMemcpyDeviceToHost));
            if (v == V_PRODUCTION) {
                prod = got;
                prod_us = us;
            }
            double worst = 0, abs_tol = 1e-5 * p.k * p.diameter;
            bool same = true;
            for (unsigned i = 0; i < n; i++) {
                const float g[4] = {got[i].x, got[i].y, got[i].z, got[i].w},
                            c[4] = {ref[i].x, ref[i].y, ref[i].z, ref[i].w},
                            q[4] = {prod[i].x, prod[i].y, prod[i].z, prod[i].w};
                for (int k = 0; k < 4; k++) {
                    double e = fabs((double)g[k] - c[k]) / (abs_tol + 1e-5 * fabs((double)c[k]));
                    worst = e > worst || e != e ? e : worst; /* a NaN stays */
                    same = same && g[k] == q[k];
                }
            }
            bool ok = worst <= 1.0;
            failed += !ok;
            char err[32];
            snprintf(err, sizeof err, "%.4f%s", worst, ok ? "" : " WRONG");
            const char *vs = v == V_PRODUCTION ? "-" : same ? "bit for bit" : "differs";
            printf("%-8s %-26s %10.1f %11.3e %9.3f %16s %13s\n", periodic ? "box" : "tunnel", names[v], us,
                   n / (us * 1e-6), us / prod_us, err, vs);
        }
        CK(cudaFree(ds));
        CK(cudaFree(dstart));
        CK(cudaFree(dout));
        CK(cudaEventDestroy(e0));
        CK(cudaEventDestroy(e1));
    }
    return bench_verdict(failed, "variant(s) disagree with the CPU beyond the tolerance",
                         "all variants agree with the CPU within the tolerance");
}
