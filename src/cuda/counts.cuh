/* The grid's cell counters on the device (DESIGN.md steps 1-2), packed four, two or one to a
 * 32-bit word: 8, 16 or 32 bits a cell.
 *
 * The counters are the one grid array that is cleared, counted into and scanned every step,
 * and a world has about 2.6 cells a disc (cells one diameter wide, area fraction 0.3): at 32
 * bits the clear and the scan's read moved 8 bytes a cell, 21 a disc a step. A cell one
 * diameter wide holds at most 4.6 discs that do not overlap, so 8 bits suffice with a 50x
 * margin. The width is chosen per world from that bound (ad_count_lg): 8
 * bits while 16 times the densest packing of a cell fits, 16 bits while 64 times it fits, 32
 * bits otherwise (cells many diameters wide), and always 8 or 16 bits when the capacity
 * itself fits (a counter can never pass it).
 *
 * Counting adds to the counter's word (one 32-bit atomic, as before), so a counter pushed past
 * its width would carry into its neighbour. That takes more discs in one cell than 16 (64)
 * times its densest packing: discs piled deep into each other or clamped into a border cell
 * by the thousands, a run already blown apart. It is caught, not prevented: the add that
 * carries sets ctrl.count_overflow, the host then fails the call (ad_cuda_pull_ctrl), and the kernels
 * that place discs by start + rank keep their writes and reads inside the arrays meanwhile. */
#ifndef AD_CUDA_COUNTS_CUH
#define AD_CUDA_COUNTS_CUH

#include <cstddef>
#include <cstdint>

struct ad_counts {
    unsigned *word;     /* the counters, cell c in word c >> lg */
    unsigned lg;        /* log2 of the counters a word holds: 2 (8 bits), 1 (16 bits) or 0 (32 bits) */
    unsigned *overflow; /* set to 1 by an add that passed a counter's width */
};

/* Adds `add` to cell c's counter and returns the counter's old value (the rank of the first
 * disc added). */
__device__ __forceinline__ unsigned ad_count_add(const ad_counts &k, unsigned c, unsigned add)
{
    unsigned bits = 32u >> k.lg, sh = (c & ((1u << k.lg) - 1u)) * bits, mask = ~0u >> (32u - bits);
    unsigned old = (atomicAdd(&k.word[c >> k.lg], add << sh) >> sh) & mask;
    if (mask - old < add) *k.overflow = 1u;
    return old;
}

/* The counters' width for a world of `capacity` discs whose cells hold at most `most` discs
 * that do not overlap (ad_cell_packing; see the top of this file). */
static inline unsigned ad_count_lg(double most, size_t capacity)
{
    if (capacity <= 255 || 16.0 * most <= 255.0) return 2;
    if (capacity <= 65535 || 64.0 * most <= 65535.0) return 1;
    return 0;
}

/* ------------------------------------------------------------------ scan -- */

/* Step 2, the exclusive scan of the counters into start (32 bits a cell, the total in the
 * extra slot), which also clears the counters for the next bin: no memset left in a step.
 * Three kernels (scan.cuh) over tiles of 4096 counter words (16384 cells at 8 bits): each tile's sum
 * (k_tile_sums), the scan of the sums in one block (k_scan_tile_sums: a few thousand), and
 * each tile's starts from its prefix (k_scan_counts), where the counters are cleared. A
 * thread reads a tile in 16 chunks of a word, so a warp's loads and stores are contiguous
 * (a word's four 8-bit counters give one 16-byte store of starts).
 *
 * Measured (1.6e7 discs, 3.2e7 cells, bench_grid_cuda): CUB's scan of 32-bit counters took
 * 107 us, plus the memset; a one-pass scan with decoupled look-back (as CUB's) over the 8-bit
 * counters took 96 us, and its time grew with the number of tiles, not the bytes (4 words a
 * thread: 155 us, 8: 134, 16: 96; at 32 bits 514, 324, 130): the prefixes reached the later
 * tiles 32 at a time. Reading the counters twice costs one byte a cell at 8 bits and waits
 * for nothing. dev/cuda/scan.cu times this scan against CUB's and a memset. Both arrays are
 * allocated in whole tiles; the cells past the grid stay zero and their starts hold the total. */
#define AD_SCAN_THREADS 256
#define AD_SCAN_WORDS 16 /* counter words a thread reads */
#define AD_SCAN_TILE_WORDS (AD_SCAN_THREADS * AD_SCAN_WORDS)

static inline size_t ad_scan_tile_cells(unsigned lg) { return (size_t)AD_SCAN_TILE_WORDS << lg; }

/* Tiles over the ncell counters and the extra slot. */
static inline size_t ad_scan_tiles(size_t ncell, unsigned lg)
{
    return (ncell + 1 + ad_scan_tile_cells(lg) - 1) / ad_scan_tile_cells(lg);
}

/* Bytes of the counters and slots of start, in whole tiles. */
static inline size_t ad_count_bytes(size_t ncell, unsigned lg) { return ad_scan_tiles(ncell, lg) * AD_SCAN_TILE_WORDS * 4; }
static inline size_t ad_start_slots(size_t ncell, unsigned lg) { return ad_scan_tiles(ncell, lg) * ad_scan_tile_cells(lg); }

/* The scan's scratch on the device: a sum a tile. */
static inline size_t ad_scan_state_bytes(size_t ncell, unsigned lg)
{
    return ad_scan_tiles(ncell, lg) * 4;
}

#endif
