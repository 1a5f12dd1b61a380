/* A Morton-code tree over static items (a 2D body's segments, a 3D body's triangles), built on the host
 * from each item's code and box: the arrays the kernels' walks read (physics/bvh.h), written once for
 * both dimensions (leaf_tree_dim.h: ad_leaf_tree over ad_bvh_box, ad_leaf_tree3 over ad_bvh_box3). */
#ifndef AD_CORE_LEAF_TREE_H
#define AD_CORE_LEAF_TREE_H

#include <stddef.h>

#include "status.h"
#include "../physics/bvh.h"

#ifdef __cplusplus
extern "C" {
#endif

#define AD_DIM 2
#include "leaf_tree_dim.h"
#undef AD_DIM
#define AD_DIM 3
#include "leaf_tree_dim.h"
#undef AD_DIM

#ifdef __cplusplus
}
#endif

#endif
