/* 3D bodies made from shapes (sphere, cylinder, a wing extruded from a 2D section), their placement and their
 * frontal area, as triangle meshes the world takes (ad_world_add_triangles). */
#ifndef AD_CORE_BODY3_H
#define AD_CORE_BODY3_H

#include <stddef.h>

#include "airfoil.h"
#include "mesh.h"
#include "status.h"

/* What every generator makes: a closed (or, for a wing without tips, open only at its two tips) surface whose
 * triangles share their vertices with bit-equal float coordinates (each point is computed once, in double, and
 * rounded once; every triangle copies it), wound counter-clockwise seen from outside (outward normals), none
 * degenerate by the world's test (twice its area at most 2e-6 of its longest edge squared). On success *out is
 * overwritten with a new malloc'ed mesh (the caller frees it; an earlier mesh in *out is not freed); on failure
 * *out is zeroed. Errors are AD_ERR_INVALID naming the argument at fault, or AD_ERR_NO_MEMORY. */

/* Most triangles a generator makes: the world takes at most 2^30. */
#define AD_BODY3_MAX_TRIANGLES ((size_t)1 << 30)

/* An icosphere of `radius` [m] centred at the origin: the icosahedron's 20 faces split in four `subdivisions`
 * times (0 to 7: 20 * 4^s triangles, 10 * 4^s + 2 vertices), every vertex on the sphere. Inscribed, so its volume
 * and area fall short of the sphere's: at s = 4 (5120 triangles) by 0.22% and 0.12%. Radius 1e-30 to 1e30. */
ad_status ad_mesh_sphere(double radius, int subdivisions, ad_mesh *out);

/* A closed circular cylinder of `radius` [m], its axis along z from -length/2 to +length/2 [m] (a cylinder across
 * the span when x is the stream), `segments` (8 to 100000) around: a ring of vertices at each end (the first at
 * +x, running towards +y), the side in 2 * segments triangles, each end cap a fan of `segments` triangles around
 * its centre vertex; 4 * segments triangles in all. The cross-section is the inscribed regular polygon. */
ad_status ad_mesh_cylinder(double radius, double length, int segments, ad_mesh *out);

/* Most strips ad_mesh_wing takes. */
#define AD_BODY3_MAX_SPAN_PANELS 10000

/* A wing: the closed `section` (chord units, leading edge (0,0); x downstream, y up; checked by
 * ad_outline_check; a clockwise one is walked backwards) scaled by `chord` [m] and extruded along z from
 * -span/2 to +span/2 [m] in `span_panels` strips (1 to AD_BODY3_MAX_SPAN_PANELS) of equal width, each strip two
 * triangles per section edge. Sweep shears the wing: the section at span position z is moved downstream by
 * (z + span/2) tan(sweep_deg), so the root (z = -span/2) has its leading edge at x = 0 and the tip (z = +span/2)
 * at x = span tan(sweep_deg); |sweep_deg| < 80. The shear keeps every section's shape and the volume
 * (span * chord^2 * the section's area). closed_tips = 1: both tips closed by the same triangulation of the
 * section (ear clipping, the best-shaped ear first: n - 2 triangles for n points), so the wing is a closed
 * surface. closed_tips = 0: the tips stay open, the open edges exactly on z = +-span/2 (as floats), for a wing
 * spanning a periodic tunnel whose periodic faces lie there. An open section (a plate of thickness 0, a polyline)
 * is refused (field "section"): use ad_shape_plate with a thickness. */
ad_status ad_mesh_wing(const ad_outline *section, double chord, double span, double sweep_deg, int span_panels,
                       int closed_tips, ad_mesh *out);

/* Places a mesh: each vertex p becomes offset + Rz(rz) Ry(ry) Rx(rx) (scale p): scaled about the origin, then
 * rotated about the x axis by rot_deg[0], then about y by rot_deg[1], then about z by rot_deg[2] [deg], each
 * right-handed (a positive angle turns counter-clockwise seen from the axis' positive end towards the origin),
 * about the origin, then moved by offset [m]. NULL rot_deg or offset means zeros. Angles that are multiples of 90
 * degrees use exact cosines and sines.
 * Angle of attack: for a wing with x downstream, y up and z along the span, rot_deg = {0, 0, -alpha} gives the
 * angle of attack alpha nose up (the trailing edge, downstream, goes down); the pivot is the origin, the root
 * leading edge of ad_mesh_wing's output; to pivot about the quarter chord, place first with offset
 * {-chord/4, 0, 0} and no rotation. rot_deg[1] yaws the wing (sideslip), rot_deg[0] rolls it.
 * Each vertex copy goes through the same computation (in double from its float input, rounded once to float), so
 * vertices that were equal stay equal and a closed mesh stays closed. scale is 1e-30 to 1e30 (no mirror: it would
 * turn the normals inward). The mesh is changed only on success: a result in which float precision collapses a
 * triangle that was not degenerate (a far offset) is refused (AD_ERR_INVALID, field "offset", or "scale" where
 * the scale alone collapses it). */
ad_status ad_mesh_place(ad_mesh *m, double scale, const double rot_deg[3], const double offset[3]);

/* Area [m^2] of the body's projection on the plane normal to `axis` (0 = x, the stream; 1 = y; 2 = z): the
 * union of the projected triangles, rasterised on square cells of edge resolution_fraction times the
 * projection's larger extent (1e-4 to 0.5; 1e-3 is a good default), counting the cells whose centre lies in any
 * projected triangle (edges included), each triangle scanned row by row over its bounding box: O(n + covered
 * cells). The error is below the area of the cells the projection's outline crosses (about perimeter x cell
 * edge) and mostly cancels along smooth outlines. Measured at 1e-3 (tests/test_body3.c): an icosphere of s = 4
 * within 0.005% of its own value at 1e-4 (which is 0.127% below pi r^2: the inscribed polygon's deficit), a
 * cylinder's 2 r x L rectangle 0.05% over, a thin wing's span x height (2 x 0.29) 0.2% under.
 * Returns -1 on bad arguments (NULL, no triangles, axis not 0..2, fraction out of range, non-finite vertices) or
 * when the bitmap's memory cannot be had; 0 for a projection without extent. */
double ad_mesh_frontal_area(const ad_mesh *m, int axis, double resolution_fraction);

#endif
