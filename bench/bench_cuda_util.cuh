/* Pieces the CUDA measurement programs share (bench/bench_grid_cuda.cu, dev/cuda/bin.cu): a
 * check that ends the program on a CUDA error, and a fixed-seed uniform random number. */
#ifndef AERODEM_BENCH_CUDA_UTIL_CUH
#define AERODEM_BENCH_CUDA_UTIL_CUH

#include <cstdio>
#include <cstdlib>

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

#endif
