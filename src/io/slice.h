/* Slices of 3D cell fields as 2D pictures, and a 3D body's section in the same picture coordinates. */
#ifndef AD_IO_SLICE_H
#define AD_IO_SLICE_H

#include <stddef.h>

#include "aerodem/aerodem.h"
#include "core/mesh.h"

/* The picture of a slice normal to `axis` (0 x, 1 y, 2 z), x downstream, y up and z along the span. Each is a
 * true (unmirrored) view: horizontal x vertical points at the viewer.
 *
 *   axis  horizontal  vertical  seen from                                 picture's bottom-left corner
 *   2 z   x           y         +z, looking along -z (the 2D tunnel's view) (x0, y0)
 *   1 y   x           z         -y (below), looking along +y                (x0, z0)
 *   0 x   z           y         -x (upstream), looking downstream (+x)      (z0, y0)
 *
 * Pictures are row-major with row 0 at the bottom (as ad_heatmap takes them): value (h, v), column h of row v,
 * is out[v * out_nx + h]; the flow runs left to right in the z and y slices. ad_write_heatmap_png_overlay (image.h)
 * draws one, with its frame's extent and axis names and a body's section over it. */
enum { AD_SLICE_X = 0, AD_SLICE_Y = 1, AD_SLICE_Z = 2 };

/* The horizontal and vertical physical axes of the picture of a slice normal to axis (0..2; else -1, -1). */
void ad_slice_axes(int axis, int *h_axis, int *v_axis);

/* The plane of cells with the slice's values out of a 3D field `data` of nx*ny*nz cells (x fastest, then y, then
 * z), `components` floats a cell, of which `component` is taken: the cells normal to axis whose layer contains
 * the fraction where_fraction (0..1) of the extent along it (layer k holds [k/n, (k+1)/n); 1 is the last).
 * out (out_nx * out_ny floats: nx*ny for axis 2, nx*nz for axis 1, nz*ny for axis 0) gets the picture as above;
 * out NULL gives the sides only. Refused by name: no data, components below 1, a component outside
 * 0..components-1, sizes below 1 or whose product overflows, an axis outside 0..2, a fraction outside 0..1. */
ad_status ad_field_slice(const float *data, int components, int component, int nx, int ny, int nz, int axis,
                         double where_fraction, float *out, int *out_nx, int *out_ny);

/* Where a slice lies and what its picture covers: for ad_heatmap (x0, y0, x1, y1), ad_heatmap_overlay (x_name,
 * y_name; image.h) and ad_mesh_slice_segments (axis, coordinate). */
typedef struct ad_slice_frame {
    int axis, h_axis, v_axis;    /* the normal and the picture's horizontal and vertical axes (0 x, 1 y, 2 z) */
    int layer;                   /* the layer of cells shown, 0..n-1 along the normal */
    double coordinate;           /* that layer's centre along the normal [m] */
    double x0, y0, x1, y1;       /* the picture's extent [m]: horizontal x0..x1, vertical y0..y1 */
    const char *x_name, *y_name; /* "x", "y" or "z": the physical axes along the picture */
} ad_slice_frame;

/* The frame of the slice ad_field_slice takes from a grid of nx*ny*nz cells of dx*dy*dz [m] from (x0, y0, z0)
 * [m]; refused as ad_field_slice and ad_write_vti3 refuse its arguments. */
ad_status ad_field_slice_frame(int nx, int ny, int nz, double x0, double y0, double z0, double dx, double dy, double dz,
                               int axis, double where_fraction, ad_slice_frame *out);

/* The section of a triangle mesh by the plane {axis = coordinate [m]}, as line segments in the picture
 * coordinates of a slice normal to axis: *x0y0x1y1 (malloc'd, the caller frees; NULL when none) holds *nseg
 * segments of 4 floats (h0, v0, h1, v1). Each triangle crossing the plane gives one segment (zero-length ones
 * left out); a vertex on the plane counts as lying on its + side, so a closed mesh gives closed loops whose
 * shared ends are equal floats (each edge is cut once, from its endpoints in a fixed order). For a mesh wound
 * counter-clockwise seen from outside (outward normals, a positive ad_mesh_volume), every segment has the inside
 * on its left in the picture: counter-clockwise around a solid, clockwise around a hole. Refused by name: no mesh,
 * an axis outside 0..2, a non-finite coordinate, non-finite vertices (by triangle), no outputs. */
ad_status ad_mesh_slice_segments(const ad_mesh *m, int axis, double coordinate, float **x0y0x1y1, size_t *nseg);

#endif
