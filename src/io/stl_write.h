/* Triangle meshes written as binary STL files (stl_write.c); core/stl.h reads them back. */
#ifndef AD_IO_STL_WRITE_H
#define AD_IO_STL_WRITE_H

#include "core/mesh.h"

/* Writes m to path as a binary STL: an 80-byte header naming solid_name (may be NULL; the header never starts
 * with "solid", which readers that go by the first word would take for ASCII), the count, then each triangle
 * with its unit normal (b - a) x (c - a) / |...| (zero for a degenerate one) and its vertices, little endian.
 * Written as path.tmp and renamed: a failed write leaves no file. Refused (AD_ERR_INVALID, field "mesh"): no
 * triangles, more than AD_STL_MAX_TRIANGLES, a coordinate not finite or beyond AD_STL_MAX_COORD (what
 * ad_stl_load refuses), by triangle number. AD_ERR_IO (field "path") when the file cannot be written. */
ad_status ad_stl_write(const char *path, const ad_mesh *m, const char *solid_name);

#endif
