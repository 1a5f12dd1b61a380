/* The GPU's cell counters and their scan (src/cuda/counts.cuh) against the host: for each
 * width (8, 16, 32 bits), grids from one cell to 2^25 (thousands of tiles), around a tile's
 * end, random counts, three scans in a row: start is the exclusive scan with the total in the extra slot, and the counters are left
 * cleared. Then counting with atomics: every disc's rank is unique in its cell and the counts
 * match; a counter pushed past its width raises the overflow flag, one that stays within it
 * does not. Exits 77 (skipped) where no GPU is found. */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "cuda/counts.cuh"
#include "cuda/scan.cuh"

static int failures = 0;

#define CHECK(cond, ...)                                                                                          \
    do {                                                                                                          \
        if (!(cond)) {                                                                                            \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                           \
            printf(__VA_ARGS__);                                                                                  \
            printf("\n");                                                                                         \
            failures++;                                                                                           \
        }                                                                                                         \
    } while (0)

#define CU(call)                                                                                                  \
    do {                                                                                                          \
        cudaError_t e_ = (call);                                                                                  \
        if (e_ != cudaSuccess) {                                                                                  \
            printf("FAIL %s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));                    \
            exit(1);                                                                                              \
        }                                                                                                         \
    } while (0)

static unsigned long long rng = 88172645463325252ull;
static unsigned next_u32(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng >> 32);
}

/* Counters of ncell cells at width lg, packed on the host as the device packs them. */
static void pack(const std::vector<unsigned> &v, unsigned lg, std::vector<unsigned> &words)
{
    unsigned per = 1u << lg, bits = 32u >> lg;
    std::fill(words.begin(), words.end(), 0u);
    for (size_t c = 0; c < v.size(); c++) words[c / per] |= v[c] << (bits * (unsigned)(c % per));
}

static void scan_case(size_t ncell, unsigned lg, cudaStream_t st)
{
    unsigned bits = 32u >> lg, most = bits == 32 ? 1000u : (1u << bits) - 1u;
    size_t nwords = ad_count_bytes(ncell, lg) / 4, nslots = ad_start_slots(ncell, lg);
    unsigned *count, *start, *state;
    CU(cudaMalloc(&count, nwords * 4));
    CU(cudaMalloc(&start, nslots * 4));
    CU(cudaMalloc(&state, ad_scan_state_bytes(ncell, lg)));
    std::vector<unsigned> v(ncell + 1, 0), words(nwords), got(nslots), left(nwords);
    int bad_start = 0, bad_clear = 0;
    for (int round = 0; round < 3; round++) {
        /* mostly the gas's 0..3, now and then a counter near its width's top */
        for (size_t c = 0; c < ncell; c++) {
            unsigned r = next_u32();
            v[c] = (r & 1023u) == 0 ? most - (r >> 20) % 8u : (r >> 10) % 4u;
        }
        pack(v, lg, words);
        CU(cudaMemcpy(count, words.data(), nwords * 4, cudaMemcpyHostToDevice));
        CU(ad_scan_counts(count, lg, start, state, ncell, st));
        CU(cudaStreamSynchronize(st));
        CU(cudaMemcpy(got.data(), start, nslots * 4, cudaMemcpyDeviceToHost));
        CU(cudaMemcpy(left.data(), count, nwords * 4, cudaMemcpyDeviceToHost));
        unsigned run = 0;
        for (size_t c = 0; c <= ncell; c++) {
            if (got[c] != run && bad_start++ < 3)
                printf("  %zu cells, %u bits, round %d: start[%zu] = %u, expected %u\n", ncell, bits, round, c, got[c],
                       run);
            run += v[c];
        }
        for (size_t k = 0; k < nwords; k++) bad_clear += left[k] != 0;
    }
    CHECK(bad_start == 0, "%zu cells, %u-bit counters: %d wrong starts", ncell, bits, bad_start);
    CHECK(bad_clear == 0, "%zu cells, %u-bit counters: %d counter words not cleared", ncell, bits, bad_clear);
    printf("  scan of %9zu cells, %2u-bit counters, %6zu tiles, 3 rounds: %s\n", ncell, bits, ad_scan_tiles(ncell, lg),
           bad_start || bad_clear ? "WRONG" : "as the host");
    CU(cudaFree(count));
    CU(cudaFree(start));
    CU(cudaFree(state));
}

__global__ void k_count(ad_counts k, const unsigned *cell, unsigned n, unsigned *rank)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) rank[i] = ad_count_add(k, cell[i], 1u);
}

/* n discs into ncell cells (cell[i] given) at width lg: ranks and counts against the host,
 * and whether the overflow flag went up. */
static int count_case(const std::vector<unsigned> &cell, size_t ncell, unsigned lg, const char *what)
{
    unsigned n = (unsigned)cell.size(), bits = 32u >> lg;
    size_t nwords = ad_count_bytes(ncell, lg) / 4;
    unsigned *dcell, *drank, *dcount, *dover;
    CU(cudaMalloc(&dcell, n * 4));
    CU(cudaMalloc(&drank, n * 4));
    CU(cudaMalloc(&dcount, nwords * 4));
    CU(cudaMalloc(&dover, 4));
    CU(cudaMemset(dcount, 0, nwords * 4));
    CU(cudaMemset(dover, 0, 4));
    CU(cudaMemcpy(dcell, cell.data(), n * 4, cudaMemcpyHostToDevice));
    k_count<<<(n + 255) / 256, 256>>>(ad_counts{dcount, lg, dover}, dcell, n, drank);
    CU(cudaGetLastError());
    std::vector<unsigned> rank(n), words(nwords);
    unsigned over = 0;
    CU(cudaMemcpy(rank.data(), drank, n * 4, cudaMemcpyDeviceToHost));
    CU(cudaMemcpy(words.data(), dcount, nwords * 4, cudaMemcpyDeviceToHost));
    CU(cudaMemcpy(&over, dover, 4, cudaMemcpyDeviceToHost));
    if (!over) { /* within the width: each cell's ranks are 0..count-1 once each, the counts exact */
        std::vector<unsigned> cnt(ncell, 0);
        for (unsigned c : cell) cnt[c]++;
        std::vector<unsigned> seen(ncell, 0);
        std::vector<std::vector<char>> used(ncell);
        int bad = 0;
        for (size_t c = 0; c < ncell; c++) used[c].assign(cnt[c], 0);
        for (unsigned i = 0; i < n; i++) {
            unsigned c = cell[i];
            if (rank[i] >= cnt[c] || used[c][rank[i]]++) bad++;
        }
        std::vector<unsigned> packed(nwords);
        pack(cnt, lg, packed);
        CHECK(bad == 0, "%s: %d ranks repeated or out of range", what, bad);
        CHECK(packed == words, "%s: the counters differ from the host's counts", what);
    }
    printf("  %-52s %2u-bit counters: overflow flag %s\n", what, bits, over ? "raised" : "down");
    CU(cudaFree(dcell));
    CU(cudaFree(drank));
    CU(cudaFree(dcount));
    CU(cudaFree(dover));
    return (int)over;
}

int main(void)
{
    int dev = 0;
    if (cudaGetDeviceCount(&dev) != cudaSuccess || dev == 0) {
        printf("SKIP: no CUDA GPU\n");
        return 77;
    }
    cudaStream_t st;
    CU(cudaStreamCreate(&st));
    printf("scan of the cell counters against the host:\n");
    for (unsigned lg = 0; lg < 3; lg++) {
        size_t tile = ad_scan_tile_cells(lg); /* a tile's cells, the extra slot the last one's */
        const size_t sizes[] = {1, tile - 2, tile - 1, tile, 300000, (size_t)1 << 25};
        for (size_t s : sizes) scan_case(s, lg, st);
    }
    printf("counting:\n");
    for (unsigned lg = 0; lg < 3; lg++) {
        unsigned bits = 32u >> lg, top = bits == 32 ? 5000u : (1u << bits) - 1u;
        /* a gas: 200000 discs over 500000 cells, neighbours sharing words */
        std::vector<unsigned> cell(200000);
        for (auto &c : cell) c = next_u32() % 500000u;
        CHECK(!count_case(cell, 500000, lg, "200000 discs at random in 500000 cells"), "overflow flag raised");
        /* a counter filled to its width's top, its neighbours in the same word busy too */
        cell.assign(top, 6);
        for (unsigned k = 0; k < 100; k++) cell.push_back(k % 2 ? 5 : 7);
        char what[96];
        snprintf(what, sizeof what, "%u discs in one cell, 100 beside it", top);
        CHECK(!count_case(cell, 16, lg, what), "overflow flag raised at the width's top");
        if (bits < 32) { /* one more passes it */
            cell.push_back(6);
            snprintf(what, sizeof what, "%u discs in one cell (past the width)", top + 1);
            CHECK(count_case(cell, 16, lg, what), "the overflow flag stayed down");
        }
    }
    CU(cudaStreamDestroy(st));
    if (failures) printf("test_scan_gpu: %d checks FAILED\n", failures);
    else printf("test_scan_gpu: all checks passed\n");
    return failures ? 1 : 0;
}
