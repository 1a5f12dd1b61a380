/* The CPU uniform grid as a counting sort: bin, scan, scatter with reorder (DESIGN.md, steps 1-3). */
#ifndef AD_CPU_GRID_H
#define AD_CPU_GRID_H

#include <stddef.h>
#include <stdint.h>

#include "../core/world_internal.h"
#include "../physics/params.h"
#include "../physics/state.h"
#include "fast_path_cpu.h"
#include "fused_bin_cpu.h"

/* The slots' positions as two arrays (structure of arrays), in cell order: written by
 * the reorder, read by the prefilters (candidate_screen_cpu.h, contact_free_cpu.h). */
typedef struct ad_cpu_xy {
    float *x, *y;
} ad_cpu_xy;

typedef struct ad_grid_diag {
    uint32_t max_occupancy;
    uint32_t max_run3; /* the most discs in three consecutive cells (a row of a disc's neighbour cells; rows_fit8) */
    uint64_t overflow; /* discs beyond `capacity` summed over cells */
    uint64_t outside;  /* centres outside the domain, clamped into border cells */
} ad_grid_diag;

/* The cell counters are 8 bits, as the GPU's (src/cuda/counts.cuh): a cell one diameter
 * wide holds at most 4.6 discs that do not overlap, and the counters are the grid array
 * that is counted into, scanned and cleared every step (2.6 cells a disc: 32-bit counters
 * moved 21 bytes a disc a step, and their megabyte per 1e5 discs did not stay in L2). A
 * counter that passed 255 (discs piled deep into each other, or clamped into a border cell
 * by the hundreds, or cells many diameters wide) wrapped: counting is modulo 256, so the
 * counters' total then falls short of the discs by a multiple of 256, which the scan sees;
 * it then counts the cells again from cell_of in 32 bits (ad_cpu_scan). Exact either way. */

/* Step 1. cell_of[i] = cell of disc i (ad_bin_cell: removed discs go to the cell after the grid's);
 * count[c] += 1 (modulo 256). `count` must be zeroed and hold that extra cell. */
void ad_cpu_bin(const ad_params *p, const ad_state *s, size_t n, uint32_t *cell_of, uint8_t *count, int threads,
                ad_grid_diag *diag);

/* Step 2. start[c] = the discs in cells 0..c-1, start[ncell] = n, and the counters cleared
 * for the next bin (DESIGN.md's memset, done here where the counts are read anyway). The
 * counts are the counters, or, where their total is not n (one wrapped), the cells of
 * cell_of[0..n) counted again in 32 bits. The occupancy diagnostics come from the counts:
 * the largest is the largest occupancy, and the discs beyond `capacity` in a cell, summed,
 * the overflow; and the most discs in any three consecutive cells, max_run3
 * (diag->outside is not touched). */
void ad_cpu_scan(uint8_t *count, uint32_t *start, size_t ncell, const uint32_t *cell_of, size_t n, uint32_t capacity,
                 ad_grid_diag *diag);

/* What the reorder moves: from each disc's cell (cell_of) and the cursor (below), the states
 * src -> dst, the ids isrc -> idst, the accelerations asrc -> adst and the contact-free expiries
 * free_until_src -> free_until_dst (contact_free_cpu.h; adst and the expiries may be NULL), the
 * contact states touch_src -> touch_dst (may be NULL) and the positions to xy (may be NULL). */
typedef struct ad_cpu_reorder_job {
    const uint32_t *cell_of;
    uint32_t *cursor;
    const ad_state *src;
    ad_state *dst;
    const uint32_t *isrc;
    uint32_t *idst;
    const ad_accel *asrc;
    ad_accel *adst;
    const float *free_until_src;
    float *free_until_dst;
    const ad_cpu_xy *xy;
    const uint32_t *touch_src; /* the contact states (panel.h), where surfaces are sampled; else NULL */
    uint32_t *touch_dst;
} ad_cpu_reorder_job;

/* Step 3, scatter and reorder in one pass: the k-th disc (in index order) of cell c goes
 * to slot start[c] + k of dst, idst, adst and free_until_dst (adst and the expiries may be
 * NULL), taking the slot from
 * `cursor`, the starts themselves, counted up: cursor[c] = start[c] on entry (ncell
 * entries; the scan's output), start[c + 1] on return. With the scan writing into
 * grid + 1 where grid[0] = 0 and the reorder counting grid + 1 up, grid itself is then the
 * start array of the reordered discs (grid[c] = start[c], grid[ncell] = total): no copy
 * of the starts, no cursor array (ad_cpu_grid_starts). A stable counting sort, the same
 * for any number of threads. Where xy is not NULL the positions also go to xy->x[slot]
 * and xy->y[slot] (the prefilters' positions). `strays` (strays_cap entries) is scratch for
 * the threads' lists of strays, the discs of their index windows bound for other threads'
 * cells; any size works (a small one costs speed, not results). */
void ad_cpu_reorder(const ad_cpu_reorder_job *job, size_t n, size_t ncell, int threads, uint32_t *strays,
                    size_t strays_cap);

/* Steps 2 and 3 at once: ad_cpu_scan into job->cursor (the starts), then ad_cpu_reorder with them as
 * the cursor (the same results, diagnostics included). On several threads each scans the
 * cells it then fills (one parallel region, one barrier, the scan divided among them).
 * `leavers` (may be NULL) is the interact pass's list of the discs that left their block's
 * cells since src was in cell order (fused_bin_cpu.h): the threads then split the cells at
 * their windows' first blocks' first cells and list their strays from it instead of reading
 * every cell_of. */
void ad_cpu_sort(uint8_t *count, const ad_cpu_reorder_job *job, size_t n, size_t ncell, int threads, uint32_t capacity,
                 const ad_cpu_leavers *leavers, uint32_t *strays, size_t strays_cap, ad_grid_diag *diag);

#endif
