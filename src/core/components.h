/* Connected components of a body's elements, for segments (2D) and triangles (3D) alike. */
#ifndef AD_CORE_COMPONENTS_H
#define AD_CORE_COMPONENTS_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"

/* Elements that share a point (exactly equal floats) are one component: segments, `per` = 2 points of
 * `dim` = 2 coordinates each, or triangles, 3 points of 3. pts holds n * per * dim floats, element by
 * element. comp[i] receives element i's component, numbered 0, 1, ... in the order of each
 * component's first element; shared (NULL: not wanted; else n * per bytes) whether each point is
 * shared with another element's. dim and per are 1 to 3. */
ad_status ad_label_components(const float *pts, int dim, int per, size_t n, uint32_t *comp, unsigned char *shared);

#endif
