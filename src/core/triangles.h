/* A body's triangles (3D): checked, and made into what the kernels read (physics/triangle.h). */
#ifndef AD_CORE_TRIANGLES_H
#define AD_CORE_TRIANGLES_H

#include <stddef.h>

#include "aerodem/aerodem.h"
#include "../physics/triangle.h"
#include "status.h"


/* The kernels' triangles: every coordinate finite, no triangle degenerate (its area below 1e-6 of its
 * longest edge squared: repeated or collinear vertices), refused by the triangle's index and what is
 * wrong; then their connected components (components.c), in the flags. out holds n. */
ad_status ad_triangles_make(const ad_triangle *raw, size_t n, ad_tri *out);

#endif
