/* ParaView files: particles, outlines and 3D surfaces (.vtp), 2D and 3D gridded fields (.vti), time series (.pvd). */
#ifndef AD_IO_VTK_H
#define AD_IO_VTK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "aerodem/aerodem.h"
#include "core/mesh.h"

/* Particles as XML PolyData: one vertex per disc, appended raw binary, UInt64 headers,
 * little endian. Points are Float32 (x, y, 0); point data "id" (UInt32, omitted when id
 * is NULL), "velocity" (Float32 x3, z = 0) and "pressure" (Float32 [N], omitted when
 * pressure is NULL). n may be 0. */
ad_status ad_write_vtp_particles(const char *path, size_t n, const ad_particle *p, const uint32_t *id,
                                 const float *pressure);

/* Spheres as XML PolyData, the 3D counterpart of ad_write_vtp_particles (one writer for both): points (x, y, z),
 * point data "id" (UInt32, omitted when id is NULL), "velocity" (Float32 x3) and "pressure" (Float32, omitted when
 * pressure is NULL). n may be 0; n whose byte counts overflow is refused ("n"). */
ad_status ad_write_vtp_particles3(const char *path, size_t n, const ad_particle3 *p, const uint32_t *id,
                                  const float *pressure);

/* The body outline [m] as PolyData with one polyline of n >= 2 points (closed if `closed`). */
ad_status ad_write_vtp_outline(const char *path, const float *x, const float *y, size_t n, int closed);

/* A named Float32 array of one value per cell. */
typedef struct ad_vtp_cells {
    const char *name;
    const float *data;
} ad_vtp_cells;

/* The body outline [m] as its panels: one 2-point line cell per segment (n - 1, or n when closed: segment i joins
 * point i and point i + 1), in order, with ncells cell arrays of one value per segment (the first the active
 * scalars; ncells may be 0). */
ad_status ad_write_vtp_panels(const char *path, const float *x, const float *y, size_t n, int closed,
                              const ad_vtp_cells *cells, int ncells);

/* A 3D body's surface as XML PolyData: the mesh's vertices merged where their coordinates are equal floats
 * (as the world joins triangles; -0 and +0 are one point), numbered in the order they first appear, and one
 * triangle Poly per triangle, in order; Float32 points, Int32 indices (Int64 beyond 2^31). cell_field, when not
 * NULL, is one Float32 value per triangle written as the cell data array cell_field_name (the active scalars).
 * Non-finite vertices are refused; an empty mesh writes an empty file. Appended raw binary, written atomically. */
ad_status ad_write_vtp_mesh(const char *path, const ad_mesh *m, const char *cell_field_name, const float *cell_field);
/* The same with ncells named cell arrays of one value per triangle (the first the active scalars; ncells may be 0). */
ad_status ad_write_vtp_mesh_cells(const char *path, const ad_mesh *m, const ad_vtp_cells *cells, int ncells);

/* One field of a .vti: `components` is 1 (scalar) or 2 (a vector stored as x, y, 0). */
typedef struct ad_vti_field {
    const char *name;
    int components;
    const float *data; /* nx*ny*components, row-major, row 0 at y0 (the bottom) */
} ad_vti_field;

/* Cell-centred fields on a regular grid as XML ImageData: nx*ny cells of dx*dy [m] from
 * (x0, y0) [m]; WholeExtent 0..nx 0..ny 0..0 in points; appended raw Float32, UInt64 headers. */
ad_status ad_write_vti(const char *path, int nx, int ny, double x0, double y0, double dx, double dy,
                       const ad_vti_field *fields, int nfields);

/* One field of a 3D .vti: `components` is 1 (scalar) or 3 (vector). */
typedef struct ad_vti3_field {
    const char *name;
    int components;
    const float *data; /* nx*ny*nz*components: x fastest, then y, then z; cell (0, 0, 0) at (x0, y0, z0) */
} ad_vti3_field;

/* Cell-centred 3D fields as XML ImageData, the 3D counterpart of ad_write_vti (one writer for both): nx*ny*nz cells
 * of dx*dy*dz [m] from (x0, y0, z0) [m]; WholeExtent 0..nx 0..ny 0..nz in points, CellData; appended raw Float32,
 * UInt64 headers. The first scalar and the first vector field are the active ones. Refused by name: sizes below 1
 * or whose byte counts overflow ("nx", "ny", "nz"), a non-finite origin ("x0".."z0"), a cell size not positive
 * and finite or a far end not finite ("dx".."dz"), fields without a name, data or 1 or 3 components, or sharing
 * a name ("fields"). Written as path.tmp, then renamed. */
ad_status ad_write_vti3(const char *path, int nx, int ny, int nz, double x0, double y0, double z0, double dx,
                        double dy, double dz, const ad_vti3_field *fields, int nfields);

/* A .pvd collection indexing a time series; the whole file is rewritten on each call. */
typedef struct ad_pvd_entry {
    double time; /* [s] */
    const char *file; /* relative to the folder of the .pvd */
} ad_pvd_entry;

ad_status ad_write_pvd(const char *path, const ad_pvd_entry *e, size_t n);

/* ---- shared by the writers in src/io: a file written as path.tmp, renamed into place ---- */

typedef struct ad_io_file {
    FILE *f;
    const char *path; /* the final name */
    char *tmp;        /* path.tmp, owned */
} ad_io_file;

/* Opens path.tmp for writing. */
ad_status ad_io_open(ad_io_file *io, const char *path);
/* Flushes, syncs and closes path.tmp and renames it to path; on any failure removes it. */
ad_status ad_io_commit(ad_io_file *io);
/* Closes and removes path.tmp (after a failed write). */
void ad_io_discard(ad_io_file *io);
/* The AD_ERR_IO status for a failed write with the given errno (0: "write error"). */
ad_status ad_io_error(const ad_io_file *io, int err);

/* The first `dims` axes of a grid of n[d] cells from o[d] in steps of h[d] [m] checked by name: sizes below 1 or
 * too many for `bytes_per_cell` bytes a cell in a size_t and in 64 bits ("nx", "ny", "nz"), a non-finite origin
 * ("x0".."z0"), a cell size not positive and finite or a far end not finite ("dx".."dz"); o and h NULL: the sizes
 * only. *cells: the product of the sizes. */
ad_status ad_io_check_grid(const int n[3], const double *o, const double *h, int dims, uint64_t bytes_per_cell,
                           uint64_t *cells);

#endif
