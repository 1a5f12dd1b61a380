/* The Morton-code tree of bvh.h in one dimension (included by bvh.h with AD_DIM 2, then 3; see dim.h):
 * its boxes, the tree as the kernels read it, the bottom-up boxes and the stack walk, written once for
 * the 2D trees (discs, segments) and the 3D one (the body's triangles). The node build (ad_bvh_build_node)
 * reads only the sorted codes and is the same in every dimension: bvh.h has it once. A 2D function made
 * here compiles to what its hand-written form did (the golden hashes hold). No include guard: it is
 * meant to be included once a dimension. */
#include "dim.h"

#define AD_BOX AD_D(ad_bvh_box)
#define AD_TREE AD_D(ad_bvh)
#define AD_WALK AD_D(ad_bvh_walk)

/* An axis-aligned box: x0, y0[, z0] its low corner, x1, y1[, z1] its high one. */
#define AD_M(c) float c##0;
#define AD_N(c) float c##1;
typedef struct AD_BOX {
    AD_EACH(AD_M)
    AD_EACH(AD_N)
} AD_BOX;
#undef AD_M
#undef AD_N

/* A tree as the kernels read it. Disc trees take their leaf boxes from `point`
 * (the discs' centres, in leaf order); trees of static items (segments, triangles) from `leaf_box`. */
typedef struct AD_TREE {
    uint32_t n;                 /* leaves */
    const uint32_t *child;      /* internal k: left child[2k], right child[2k + 1] */
    const uint32_t *rightmost;  /* internal k: the last leaf below it */
    const AD_BOX *box;          /* internal k: the box of every leaf below it */
    const AD_STATE *point;      /* disc tree: leaf i is the centre of point[i] */
    const AD_BOX *leaf_box;     /* tree of items (point is NULL): leaf i's box */
} AD_TREE;

AD_HD static inline uint32_t AD_D(ad_bvh_root)(const AD_TREE *t) { return t->n == 1 ? AD_BVH_LEAF : 0u; }

AD_HD static inline AD_BOX AD_D(ad_bvh_leaf_box)(const AD_TREE *t, uint32_t i)
{
    if (t->point) {
        AD_STATE s = t->point[i];
#define AD_M(c) s.c
        AD_BOX b = {AD_LIST(AD_M), AD_LIST(AD_M)};
#undef AD_M
        return b;
    }
    return t->leaf_box[i];
}

/* The box of the whole tree (of its root); the tree must have a leaf. */
AD_HD static inline AD_BOX AD_D(ad_bvh_root_box)(const AD_TREE *t)
{
    return t->n == 1 ? AD_D(ad_bvh_leaf_box)(t, 0) : t->box[0];
}

/* A node's box while building: internal boxes are read through a volatile pointer
 * so that the other child's write, fenced by the backend, is seen (not a stale copy). */
AD_HD static inline AD_BOX AD_D(ad_bvh_built_box)(const AD_TREE *t, const volatile AD_BOX *box, uint32_t node)
{
    if (node & AD_BVH_LEAF) return AD_D(ad_bvh_leaf_box)(t, node & ~AD_BVH_LEAF);
#define AD_M(c) box[node].c##0
#define AD_N(c) box[node].c##1
    AD_BOX b = {AD_LIST(AD_M), AD_LIST(AD_N)};
#undef AD_M
#undef AD_N
    return b;
}

/* The bottom-up step at internal node k, run by the second child to arrive:
 * box[k] = union of its children's boxes. fminf/fmaxf drop a NaN operand, so one
 * non-finite disc (which ends the step as unstable) cannot hide a whole subtree. */
AD_HD static inline void AD_D(ad_bvh_merge)(const AD_TREE *t, AD_BOX *box, uint32_t k)
{
    AD_BOX a = AD_D(ad_bvh_built_box)(t, box, t->child[2 * (size_t)k]);
    AD_BOX b = AD_D(ad_bvh_built_box)(t, box, t->child[2 * (size_t)k + 1]);
#define AD_M(c) fminf(a.c##0, b.c##0)
#define AD_N(c) fmaxf(a.c##1, b.c##1)
    AD_BOX u = {AD_LIST(AD_M), AD_LIST(AD_N)};
#undef AD_M
#undef AD_N
    box[k] = u;
}

/* The boxes bottom-up, after the node build: leaf i (of n) climbs; at each parent the first child
 * to arrive stops and the second merges both boxes, up to the root. visits (one per internal
 * node) starts at zero. On the GPU every leaf climbs at once: a fence before the counter makes
 * this thread's box write visible before its sibling can see the count, one after it orders the
 * sibling's read (the race of DESIGN.md's reference 004; ad_bvh_merge reads through a volatile
 * pointer). On the CPU's threads (concurrent) the counter is an acq_rel atomic; without them one
 * thread climbs the leaves in order with a plain count. */
AD_HD static inline void AD_D(ad_bvh_climb)(const AD_TREE *t, AD_BOX *box, const uint32_t *parent, uint32_t *visits,
                                            uint32_t n, uint32_t i, int concurrent)
{
    uint32_t node = n - 1 + i;
    do {
        uint32_t up = parent[node];
#ifdef __CUDA_ARCH__
        (void)concurrent;
        __threadfence();
        int first = atomicAdd(&visits[up], 1u) == 0;
        __threadfence();
#else
        int first = (concurrent ? __atomic_fetch_add(&visits[up], 1u, __ATOMIC_ACQ_REL) : visits[up]++) == 0;
#endif
        if (first) return;
        AD_D(ad_bvh_merge)(t, box, up);
        node = up;
    } while (node != 0);
}

/* ------------------------------------------------------------- traversal -- */

AD_HD static inline int AD_D(ad_bvh_overlap)(AD_BOX a, AD_BOX q)
{
#define AD_M(c) (a.c##0 <= q.c##1 && a.c##1 >= q.c##0)
    return AD_ALL(AD_M);
#undef AD_M
}

/* A walk over the leaves whose boxes overlap a query box. `lo` > 0 makes it
 * reflexive: only leaves >= lo, pruning every subtree whose rightmost leaf is
 * below lo, so a pair (i, j), i < j, is met once, from i. The stack of postponed
 * right children is AD_BVH_STACK entries at stack[k * stride]: a local array
 * (stride 1) or a thread's column of a shared-memory block (stride blockDim). */
typedef struct AD_WALK {
    uint32_t *stack;
    uint32_t stride;
    int top;
    uint32_t node; /* next node to examine, AD_BVH_NONE when done */
    uint32_t lo;
    AD_BOX q;
} AD_WALK;

AD_HD static inline int AD_D(ad_bvh_enter)(const AD_TREE *t, const AD_WALK *w, uint32_t node)
{
    uint32_t last = node & AD_BVH_LEAF ? node & ~AD_BVH_LEAF : t->rightmost[node];
    if (w->lo != 0 && last < w->lo) return 0;
    return AD_D(ad_bvh_overlap)(node & AD_BVH_LEAF ? AD_D(ad_bvh_leaf_box)(t, last) : t->box[node], w->q);
}

AD_HD static inline void AD_D(ad_bvh_walk_begin)(const AD_TREE *t, AD_WALK *w, AD_BOX q, uint32_t lo, uint32_t *stack,
                                                 uint32_t stride)
{
    w->stack = stack;
    w->stride = stride;
    w->top = 0;
    w->lo = lo;
    w->q = q;
    w->node = t->n > 0 && AD_D(ad_bvh_enter)(t, w, AD_D(ad_bvh_root)(t)) ? AD_D(ad_bvh_root)(t) : AD_BVH_NONE;
}

/* The next overlapping leaf, or AD_BVH_NONE. Leaves come in ascending order. */
AD_HD static inline uint32_t AD_D(ad_bvh_walk_next)(const AD_TREE *t, AD_WALK *w)
{
    uint32_t node = w->node;
    while (node != AD_BVH_NONE) {
        if (node & AD_BVH_LEAF) {
            w->node = w->top > 0 ? w->stack[(uint32_t)(--w->top) * w->stride] : AD_BVH_NONE;
            return node & ~AD_BVH_LEAF;
        }
        uint32_t l = t->child[2 * (size_t)node], r = t->child[2 * (size_t)node + 1];
        int ol = AD_D(ad_bvh_enter)(t, w, l), orr = AD_D(ad_bvh_enter)(t, w, r);
        if (ol && orr) w->stack[(uint32_t)(w->top++) * w->stride] = r;
        if (ol) node = l;
        else if (orr) node = r;
        else node = w->top > 0 ? w->stack[(uint32_t)(--w->top) * w->stride] : AD_BVH_NONE;
    }
    w->node = AD_BVH_NONE;
    return AD_BVH_NONE;
}

#undef AD_BOX
#undef AD_TREE
#undef AD_WALK
#include "dim_end.h"
