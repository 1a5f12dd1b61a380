/* The host trees over static items (leaf_tree.h), compiled once a dimension from leaf_tree_dim.h. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "free_each.h"

/* A leaf before the sort: its Morton code and its item. */
typedef struct ad_leaf_key {
    uint32_t code, item;
} ad_leaf_key;

/* By code, then by item: the order of the stable radix sort the discs' tree uses. */
static int leaf_key_cmp(const void *a, const void *b)
{
    const ad_leaf_key *x = a, *y = b;
    if (x->code != y->code) return x->code < y->code ? -1 : 1;
    return x->item < y->item ? -1 : x->item > y->item;
}

static void ad_leaf_keys_sort(ad_leaf_key *key, const uint32_t *code, size_t n)
{
    for (size_t i = 0; i < n; i++) key[i] = (ad_leaf_key){code[i], (uint32_t)i};
    qsort(key, n, sizeof *key, leaf_key_cmp);
}

#define AD_LEAF_TREE_IMPL
#include "leaf_tree.h"
