/* Step 2, the scan of the cell counters (DESIGN.md): its three kernels and their launcher,
 * ad_scan_counts (the tiles, the measurements and the arrays' sizes: counts.cuh). */
#ifndef AD_CUDA_SCAN_CUH
#define AD_CUDA_SCAN_CUH

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "counts.cuh"

template <unsigned LG> __device__ __forceinline__ unsigned ad_word_sum(unsigned w)
{
    if (LG == 2) return __dp4a(w, 0x01010101u, 0u);
    if (LG == 1) return (w & 0xffffu) + (w >> 16);
    return w;
}

/* The inclusive sum of x over the lanes up to this one (a warp, all lanes present). */
__device__ __forceinline__ unsigned ad_warp_inclusive_sum(unsigned x, unsigned lane)
{
    for (int o = 1; o < 32; o <<= 1) {
        unsigned u = __shfl_up_sync(~0u, x, o);
        if (lane >= (unsigned)o) x += u;
    }
    return x;
}

/* 1 of 3: each tile's sum of counts. */
template <unsigned LG>
__global__ void __launch_bounds__(AD_SCAN_THREADS)
    k_tile_sums(const unsigned *__restrict__ counts, unsigned *__restrict__ tile_sum)
{
    typedef cub::BlockReduce<unsigned, AD_SCAN_THREADS> reduce_t;
    __shared__ typename reduce_t::TempStorage tmp;
    const unsigned *cw = counts + (size_t)blockIdx.x * AD_SCAN_TILE_WORDS + threadIdx.x;
    unsigned x = 0;
#pragma unroll
    for (int k = 0; k < AD_SCAN_WORDS; k++) x += ad_word_sum<LG>(cw[k * AD_SCAN_THREADS]);
    x = reduce_t(tmp).Sum(x);
    if (threadIdx.x == 0) tile_sum[blockIdx.x] = x;
}

/* 2 of 3: the tiles' sums scanned in place (exclusive), in one block. */
#define AD_SCAN_SUMS_THREADS 1024
__global__ void __launch_bounds__(AD_SCAN_SUMS_THREADS) k_scan_tile_sums(unsigned *__restrict__ tile_sum, unsigned ntiles)
{
    typedef cub::BlockScan<unsigned, AD_SCAN_SUMS_THREADS> scan_t;
    __shared__ typename scan_t::TempStorage tmp;
    unsigned carry = 0;
    for (unsigned base = 0; base < ntiles; base += AD_SCAN_SUMS_THREADS) {
        unsigned k = base + threadIdx.x, x = k < ntiles ? tile_sum[k] : 0u, y, total;
        scan_t(tmp).ExclusiveSum(x, y, total);
        if (k < ntiles) tile_sum[k] = carry + y;
        carry += total;
        __syncthreads(); /* tmp is used again */
    }
}

/* 3 of 3: each tile's starts from its prefix; its counters cleared. */
template <unsigned LG>
__global__ void __launch_bounds__(AD_SCAN_THREADS)
    k_scan_counts(unsigned *__restrict__ counts, unsigned *__restrict__ start, const unsigned *__restrict__ tile_before)
{
    constexpr unsigned per = 1u << LG, bits = 32u >> LG, mask = ~0u >> (32u - bits), warps = AD_SCAN_THREADS / 32;
    constexpr int lane_parts = AD_SCAN_WORDS * warps / 32; /* warp sums a lane of warp 0 scans */
    static_assert(AD_SCAN_WORDS * warps % 32 == 0, "warp 0 scans the tile's warp sums");
    __shared__ unsigned part[AD_SCAN_WORDS * warps]; /* chunk-major: the order of the cells */
    unsigned t = blockIdx.x, lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    unsigned *cw = counts + (size_t)t * AD_SCAN_TILE_WORDS + threadIdx.x;
    unsigned w[AD_SCAN_WORDS], below[AD_SCAN_WORDS];
#pragma unroll
    for (int k = 0; k < AD_SCAN_WORDS; k++) w[k] = cw[k * AD_SCAN_THREADS];
#pragma unroll
    for (int k = 0; k < AD_SCAN_WORDS; k++) { /* each chunk's inclusive sums across the warp */
        unsigned x = ad_word_sum<LG>(w[k]), y = ad_warp_inclusive_sum(x, lane);
        below[k] = y - x;
        if (lane == 31) part[k * warps + warp] = y;
        cw[k * AD_SCAN_THREADS] = 0; /* cleared for the next bin */
    }
    __syncthreads();
    if (warp == 0) { /* the warps' sums, chunk by chunk, scanned after the tiles before */
        unsigned p[lane_parts], x = 0;
        for (int k = 0; k < lane_parts; k++) x += p[k] = part[lane_parts * lane + k];
        unsigned y = ad_warp_inclusive_sum(x, lane);
        unsigned run = tile_before[t] + y - x;
        for (int k = 0; k < lane_parts; k++) {
            part[lane_parts * lane + k] = run;
            run += p[k];
        }
    }
    __syncthreads();
    size_t cell = ((size_t)t * AD_SCAN_TILE_WORDS + threadIdx.x) * per;
#pragma unroll
    for (int k = 0; k < AD_SCAN_WORDS; k++) {
        unsigned run = part[k * warps + warp] + below[k], v[per];
        for (unsigned j = 0; j < per; j++) {
            v[j] = run;
            run += (w[k] >> (j * bits)) & mask;
        }
        unsigned *out = start + cell + (size_t)k * AD_SCAN_THREADS * per;
        if (per == 4) *(uint4 *)out = make_uint4(v[0], v[1 % per], v[2 % per], v[3 % per]);
        else if (per == 2) *(uint2 *)out = make_uint2(v[0], v[1 % per]);
        else *out = v[0];
    }
}

template <unsigned LG>
static inline void ad_scan_counts_lg(unsigned *counts, unsigned *start, unsigned *tile_sum, unsigned nt, cudaStream_t st)
{
    k_tile_sums<LG><<<nt, AD_SCAN_THREADS, 0, st>>>(counts, tile_sum);
    k_scan_tile_sums<<<1, AD_SCAN_SUMS_THREADS, 0, st>>>(tile_sum, nt);
    k_scan_counts<LG><<<nt, AD_SCAN_THREADS, 0, st>>>(counts, start, tile_sum);
}

/* Step 2 on stream st: start from the counters (ncell cells, 32 >> lg bits each), which are
 * left cleared; tile_sum: ad_scan_state_bytes of scratch. */
static inline cudaError_t ad_scan_counts(unsigned *counts, unsigned lg, unsigned *start, unsigned *tile_sum,
                                         size_t ncell, cudaStream_t st)
{
    unsigned nt = (unsigned)ad_scan_tiles(ncell, lg);
    if (lg == 2) ad_scan_counts_lg<2>(counts, start, tile_sum, nt, st);
    else if (lg == 1) ad_scan_counts_lg<1>(counts, start, tile_sum, nt, st);
    else ad_scan_counts_lg<0>(counts, start, tile_sum, nt, st);
    return cudaGetLastError();
}

#endif
