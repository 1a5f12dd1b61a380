/* The host tree over static items in one dimension (included by leaf_tree.h with AD_DIM 2, then 3;
 * see physics/dim.h). leaf_tree.c defines AD_LEAF_TREE_IMPL to compile the functions once a dimension.
 *
 * The build: the items sorted stably by code (by code, then by item: the order of the discs' stable
 * radix sort), Karras's nodes from the sorted codes (ad_bvh_build_node, one node at a time), then the
 * boxes bottom-up (ad_bvh_climb on one thread). Leaf k is item[k] with box leaf_box[k]. A few thousand
 * segments or a million triangles: built once when the body changes, and again on a checkpoint's load
 * (the checkpoint holds the items, not the tree). No include guard: included once a dimension. */
#include "../physics/dim.h"

#define AD_BOX AD_D(ad_bvh_box)
#define AD_LT AD_D(ad_leaf_tree)

typedef struct AD_LT {
    uint32_t *child, *rightmost; /* n - 1 internal nodes (one slot when n = 1) */
    AD_BOX *box, *leaf_box;
    uint32_t *item;              /* leaf k is item[k] */
    AD_D(ad_bvh) t;              /* what the walks read: the arrays above, n leaves (0: no tree) */
} AD_LT;

/* Frees the arrays and zeroes the tree; safe on a zeroed one. */
void AD_D(ad_leaf_tree_free)(AD_LT *t);

/* The tree over n items (n < 2^31), item i with Morton code code[i] and box box[i] (grown by what the
 * walk must find: a radius). Replaces what *t held; on failure *t is empty (AD_ERR_NO_MEMORY). */
ad_status AD_D(ad_leaf_tree_build)(AD_LT *t, const uint32_t *code, const AD_BOX *box, size_t n);

#ifdef AD_LEAF_TREE_IMPL
void AD_D(ad_leaf_tree_free)(AD_LT *t)
{
    AD_FREE_EACH(t->child, t->rightmost, t->box, t->leaf_box, t->item);
    memset(t, 0, sizeof *t);
}

ad_status AD_D(ad_leaf_tree_build)(AD_LT *t, const uint32_t *code, const AD_BOX *box, size_t n)
{
    AD_D(ad_leaf_tree_free)(t);
    if (n == 0) return ad_ok();
    size_t inner = n > 1 ? n - 1 : 1;
    ad_leaf_key *key = malloc(n * sizeof *key);
    uint32_t *sorted = malloc(n * sizeof *sorted), *parent = malloc((2 * n - 1) * sizeof *parent);
    uint32_t *visits = calloc(inner, sizeof *visits);
    t->child = malloc(2 * inner * sizeof *t->child);
    t->rightmost = malloc(inner * sizeof *t->rightmost);
    t->box = malloc(inner * sizeof *t->box);
    t->leaf_box = malloc(n * sizeof *t->leaf_box);
    t->item = malloc(n * sizeof *t->item);
    ad_status st = ad_ok();
    if (!key || !sorted || !parent || !visits || !t->child || !t->rightmost || !t->box || !t->leaf_box || !t->item)
        st = ad_fail(AD_ERR_NO_MEMORY, "", "out of memory building a tree over %zu items", n);
    if (!st.code) {
        ad_leaf_keys_sort(key, code, n);
        for (size_t k = 0; k < n; k++) {
            sorted[k] = key[k].code;
            t->item[k] = key[k].item;
            t->leaf_box[k] = box[key[k].item];
        }
        AD_D(ad_bvh) tree = {(uint32_t)n, t->child, t->rightmost, t->box, NULL, t->leaf_box};
        for (uint32_t k = 0; k + 1 < (uint32_t)n; k++)
            ad_bvh_build_node(sorted, (uint32_t)n, k, t->child, t->rightmost, parent);
        for (size_t i = 0; n > 1 && i < n; i++)
            AD_D(ad_bvh_climb)(&tree, t->box, parent, visits, (uint32_t)n, (uint32_t)i, 0);
        t->t = tree;
    }
    AD_FREE_EACH(key, sorted, parent, visits);
    if (st.code) AD_D(ad_leaf_tree_free)(t);
    return st;
}
#endif

#undef AD_BOX
#undef AD_LT
#include "../physics/dim_end.h"
