/* The CPU BVH broad phase: Morton keys, a stable radix sort, the Karras build and bottom-up boxes (OpenMP). */
#ifndef AD_CPU_BVH_H
#define AD_CPU_BVH_H

#include <stddef.h>
#include <stdint.h>

#include "../physics/bvh.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The arrays of a tree of up to `cap` leaves. */
typedef struct ad_cpu_bvh {
    size_t cap;
    uint32_t *code, *perm;         /* Morton codes; after the sort, ascending, and perm[slot] = old index */
    uint32_t *code_tmp, *perm_tmp; /* the sort's other buffers */
    uint32_t *child;               /* 2 (cap - 1): left and right of each internal node */
    uint32_t *rightmost;           /* cap - 1 */
    uint32_t *parent;              /* 2 cap - 1: of internal node k at k, of leaf i at n - 1 + i */
    uint32_t *visits;              /* cap - 1 arrival counters of the bottom-up pass */
    ad_bvh_box *box;               /* cap - 1 internal boxes */
} ad_cpu_bvh;

/* Bytes of the arrays for `cap` leaves. */
size_t ad_cpu_bvh_bytes(size_t cap);
/* 0 on success; on failure nothing stays allocated. */
int ad_cpu_bvh_alloc(ad_cpu_bvh *b, size_t cap);
void ad_cpu_bvh_free(ad_cpu_bvh *b);

/* Step 1: code[i] = ad_bvh_key of point i in its current order, perm[i] = i. Returns the number
 * of centres outside the domain (clamped to its border, as on the grid); *dead (may be NULL)
 * receives the number of removed discs (open.h), whose keys sort last. */
uint64_t ad_cpu_morton_keys(const ad_params *p, const ad_state *s, size_t n, ad_cpu_bvh *b, int threads,
                            size_t *dead);

/* Step 2: a stable LSD radix sort of (code, perm) by code, 8 bits a pass. Each thread
 * takes a fixed chunk and the chunks keep their order, so the result does not depend
 * on the thread count and equals CUB's stable sort on the GPU. */
void ad_cpu_radix_sort(ad_cpu_bvh *b, size_t n, int threads);

/* Step 4 (after the caller reordered its leaves by perm): internal nodes from the
 * sorted codes, then boxes bottom-up. Leaves are `points` (discs) or `leaf_boxes`
 * (segments), in sorted order. Returns the tree as the gather reads it. */
ad_bvh ad_cpu_bvh_build(ad_cpu_bvh *b, const ad_state *points, const ad_bvh_box *leaf_boxes, size_t n, int threads);

#ifdef __cplusplus
}
#endif
#endif
