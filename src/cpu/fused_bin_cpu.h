/* The fused bin: the interact pass bins each disc for the next step as it writes it, and lists the leavers.
 *
 * Contract. After a pass that binned (cpu_world.bin_current: symplectic or explicit Euler on
 * the grid), cell_of and count hold exactly what ad_cpu_bin (step 1) would give for the states
 * the pass wrote: each disc's cell is ad_bin_cell of its new state, the function ad_cpu_bin
 * calls (ad_cpu_integrate8_avx2 computes the same cells eight at a time), and the counters
 * are integer counts, whose totals do not depend on the order of the additions. So the next
 * step skips its bin (build_grid, step_cpu.c) and only adds up the blocks' counts of discs
 * outside the domain.
 *
 * Without atomics: block b counts directly into its own cells [lo, lo + width), from the cell
 * of its first slot to the cell of the next block's first slot, both before the step. The
 * slots are in cell order (the reorder sorted them by these cells), so the blocks' own cells
 * are disjoint ranges and no two threads count into one counter. A disc bound for another
 * block's cells is a leaver: it is listed by its slot in the block's list (`leavers`, room for
 * every disc of the block) and counted after the pass, serially (interact, step_cpu.c). On one
 * thread every cell is the block's own (width = UINT32_MAX) and nothing is listed.
 *
 * The leavers for the next reorder (ad_cpu_leavers, valid where cpu_world.leavers_valid).
 * On several threads the reorder (ad_cpu_sort, grid_cpu.c) gives each thread the cells from
 * its window's first block's first cell (blk_first_cell) to the next window's, so each
 * block's own cells belong to the thread whose window holds the block. A disc that is not
 * listed stayed in its block's own cells, so in its own thread's cells, and the strays of a
 * thread's window (its discs bound for other threads' cells) are exactly its listed discs whose
 * cells are not the thread's: the same set in the same index order as reading every cell_of
 * of the window (list_strays), so the same reorder. leavers_valid is cleared wherever the bin
 * is not the pass's alone: after ad_cpu_bin (build_grid), and when a disc is appended after
 * the pass (open_cpu.c: entering discs are binned but not listed). */
#ifndef AD_CPU_FUSED_BIN_CPU_H
#define AD_CPU_FUSED_BIN_CPU_H

#include <stddef.h>
#include <stdint.h>

/* Where the interact pass counts a block's discs into the next step's cells (above; the
 * block's own cells are set in interact_block, interact_cpu.h). */
typedef struct ad_cpu_fused_bin {
    uint8_t *count;
    uint32_t lo, width; /* the block's own cells [lo, lo + width); width = UINT32_MAX: every cell */
    uint32_t *leavers;  /* the block's discs bound for other blocks' cells, by slot (room for every disc) */
    uint32_t nleavers;
    uint32_t slot; /* the first slot of the eight the eight-disc integrate bins (integrate8_cpu.h) */
} ad_cpu_fused_bin;

/* Slot `slot`, bound for `cell`: counted where the cell is the block's own, else listed. */
static inline void ad_cpu_fused_bin_count(ad_cpu_fused_bin *b, uint32_t cell, uint32_t slot)
{
    if (cell - b->lo < b->width) b->count[cell]++;
    else b->leavers[b->nleavers++] = slot;
}

/* What the pass knows of its leavers, for the reorder on several threads (ad_cpu_sort): per
 * block of AD_BLOCK slots, its first cell before the step (first_cell[b]) and the slots it
 * listed, list[b * AD_BLOCK ..] (count[b] of them). Every disc whose cell is outside its
 * block's own cells is listed. */
typedef struct ad_cpu_leavers {
    const uint32_t *first_cell, *list, *count;
} ad_cpu_leavers;

#endif
