/* STL files read into triangle meshes (stl.c): ASCII and binary, told apart by the binary size rule. The
 * writer is src/io/stl_write.h (files are written through io's temporary name and rename). */
#ifndef AD_CORE_STL_H
#define AD_CORE_STL_H

#include "mesh.h"
#include "status.h"

/* The largest STL file read [bytes]: 1 GiB holds a binary mesh of 2e7 triangles. */
#define AD_STL_MAX_BYTES (1L << 30)
/* The most triangles an STL file may hold (the world takes at most 2^30; 2e7 is 720 MB of ad_triangle). */
#define AD_STL_MAX_TRIANGLES 20000000L
/* A coordinate beyond +-1e9 (in any unit) is a corrupt file, not a body. */
#define AD_STL_MAX_COORD 1e9

/* A binary STL: an 80-byte header, a little-endian uint32 triangle count, then 50 bytes a triangle (normal
 * and three vertices as little-endian float32, a uint16 attribute). */
#define AD_STL_HEADER_BYTES 80
#define AD_STL_RECORD_BYTES 50

/* Reads the STL file at path into *out (malloc'd; free with ad_mesh_free). A file is binary when its size is
 * exactly 84 + 50 x its header's count (whatever the header says: many binary files start with "solid"), else
 * ASCII: "solid name", then "facet normal n n n / outer loop / vertex x y z (three) / endloop / endfacet"
 * each, then "endsolid name"; keywords in any case, separated by any white space, several solids in a row.
 * Normals are ignored (the vertices' order is the orientation). Refused: anything but a regular file, more
 * than AD_STL_MAX_BYTES or AD_STL_MAX_TRIANGLES, no triangles, a coordinate not finite or beyond
 * AD_STL_MAX_COORD (by triangle number), an ASCII file that is not text or breaks the grammar (by line), a
 * binary file whose size does not match its count (truncated or the count wrong). AD_ERR_FORMAT (AD_ERR_IO:
 * cannot open or read, AD_ERR_NO_MEMORY), field "path", the message naming the file; *out zeroed. */
ad_status ad_stl_load(const char *path, ad_mesh *out);

#endif
