/* A body's surface as a triangle mesh (3D): read from STL files (stl.c), made from shapes (body3.c), checked
 * (mesh_check.c) and placed (scale, rotation, position) before it becomes the world's triangles. */
#ifndef AD_CORE_MESH_H
#define AD_CORE_MESH_H

#include <stddef.h>

#include "aerodem/aerodem.h"

/* n triangles in t (owned; malloc'd). A zeroed mesh is empty. */
typedef struct ad_mesh {
    ad_triangle *t;
    size_t n;
} ad_mesh;

/* Frees the triangles and zeroes the mesh; safe on a zeroed or already freed mesh. */
void ad_mesh_free(ad_mesh *m);

#endif
