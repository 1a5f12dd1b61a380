/* Pieces the CUDA measurement programs share (bench/bench_grid_cuda.cu, the programs of dev/cuda): a check that
 * ends the program on a CUDA error, a fixed-seed uniform random number, the test for a GPU, a list
 * of sizes from the command line, and the parameters of the default tunnel's gas. */
#ifndef AERODEM_BENCH_CUDA_UTIL_CUH
#define AERODEM_BENCH_CUDA_UTIL_CUH

#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "../src/physics/contact.h"
#include "../src/physics/stencil.h"
#include "bench_gas.h"

#define CK(x)                                                                                                     \
    do {                                                                                                          \
        cudaError_t e_ = (x);                                                                                     \
        if (e_ != cudaSuccess) {                                                                                  \
            fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__);            \
            exit(1);                                                                                              \
        }                                                                                                         \
    } while (0)

/* xorshift64, the same sequence on every run: uniform in [0, 1) */
static unsigned long long bench_rng_state = 88172645463325252ull;
static double urand()
{
    bench_rng_state ^= bench_rng_state << 13;
    bench_rng_state ^= bench_rng_state >> 7;
    bench_rng_state ^= bench_rng_state << 17;
    return (double)(bench_rng_state >> 11) * (1.0 / 9007199254740992.0);
}

/* 1 where the machine has a CUDA GPU; else says so. */
static inline int bench_have_gpu()
{
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) == cudaSuccess && ndev > 0) return 1;
    printf("no CUDA GPU\n");
    return 0;
}

/* The sizes "N,N,..." of argv[k], or of `dflt` where there is no such argument. */
static inline std::vector<double> bench_sizes(int argc, char **argv, int k, const char *dflt)
{
    std::vector<double> sizes;
    char list[256];
    snprintf(list, sizeof list, "%s", argc > k ? argv[k] : dflt);
    for (char *t = strtok(list, ","); t; t = strtok(NULL, ",")) sizes.push_back(atof(t));
    return sizes;
}

/* The default tunnel's gas for n discs: radius 0.5 m, mass 1 kg, k 1e4 N/m, restitution 0.9, area
 * fraction 0.3 in a box twice as wide as high (*W by *H cells of one diameter), periodic or not. */
static inline ad_params bench_gas_params(unsigned n, int periodic, int *W_out, int *H_out)
{
    double area = n * 3.14159265358979 * 0.25 / 0.3;
    int H = (int)ceil(sqrt(area / 2)), W = 2 * H;
    ad_params p = {};
    bench_disc_law(&p, (float)ad_damping_for_restitution(0.9, 0.5, 1e4));
    p.x_max = p.len_x = (float)W;
    p.y_max = p.len_y = (float)H;
    p.half_x = 0.5f * W;
    p.half_y = 0.5f * H;
    p.periodic_x = p.periodic_y = periodic;
    p.cell_x = p.cell_y = 1.0f;
    p.inv_cell_x = p.inv_cell_y = 1.0f;
    p.nx = W;
    p.ny = H;
    p.reach_x = p.reach_y = 1;
    ad_stencil_make(1, 0, &p.stencil);
    *W_out = W;
    *H_out = H;
    return p;
}

/* The end of a checking program: the verdict, and its exit code. */
static inline int bench_verdict(int failed, const char *failures, const char *success)
{
    if (failed) printf("FAILED: %d %s\n", failed, failures);
    else printf("%s\n", success);
    return failed ? 1 : 0;
}

#endif
