/* A triangle mesh checked as a body's surface (the world's rules and the surface's), and measured
 * (mesh_check.c). */
#ifndef AD_CORE_MESH_CHECK_H
#define AD_CORE_MESH_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "mesh.h"
#include "status.h"

/* The most triangles a mesh may have: as many as a world takes (under 2^30). */
#define AD_MESH_MAX_TRIANGLES ((size_t)UINT32_MAX / 4)

/* How the triangles share their edges. Vertices are matched by exactly equal coordinates, as the world
 * connects triangles (-0 equals +0); an edge is a pair of distinct vertices, and its uses are the triangles
 * with it as a side. Edge j of a triangle runs from its vertex j to vertex (j + 1) mod 3. Of each kind of
 * fault the example kept is the one of the lowest triangle index (0-based), then the lowest edge. */
typedef struct ad_mesh_edges {
    size_t edges;       /* distinct edges */
    size_t open;        /* edges with one use: the surface has a hole or a border there */
    size_t nonmanifold; /* edges with more than two uses */
    size_t misoriented; /* edges with two uses that run them the same way (one of the two is flipped) */
    size_t open_tri;    /* the example open edge: edge open_edge of triangle open_tri */
    int open_edge;
    size_t nm_tri[4]; /* the example non-manifold edge: edge nm_edge of nm_tri[0], its first 4 uses, */
    int nm_edge;      /* by triangle, and nm_uses in all */
    size_t nm_uses;
    size_t mis_tri[2]; /* the example misoriented edge: edge mis_edge of mis_tri[0], also in mis_tri[1] */
    int mis_edge;
} ad_mesh_edges;

/* Finds the mesh's edges and their faults in O(n) expected time (a hash table of the vertices, then the
 * edges bucketed by their lower vertex and sorted within buckets). Any coordinates are taken (a NaN vertex
 * matches none); an edge whose ends are one vertex (a degenerate triangle's) is not an edge. AD_ERR_INVALID
 * beyond AD_MESH_MAX_TRIANGLES, AD_ERR_NO_MEMORY; zeroed *e for an empty mesh. */
ad_status ad_mesh_edges_find(const ad_mesh *m, ad_mesh_edges *e);

/* Checks a mesh as a body's surface; name (a file name) starts every message. Refused (AD_ERR_INVALID, field
 * "mesh"), by 1-based triangle number and what is wrong: no triangles, a coordinate not finite, a degenerate
 * triangle (the world's test, physics/triangle.h: coinciding or collinear vertices), an edge of more than two
 * triangles; and where require_closed: an open edge (the first, and how many) and two triangles that run
 * their shared edge the same way (inconsistent orientation). A mesh that passes is taken by
 * ad_world_add_triangles, and with require_closed the world sees it as closed surfaces. */
ad_status ad_mesh_check(const ad_mesh *m, const char *name, int require_closed);

/* The box around the vertices [m] (lo = hi = 0 for an empty mesh). */
void ad_mesh_bounds(const ad_mesh *m, double lo[3], double hi[3]);

/* The sum of the triangles' areas [m^2], in double precision. */
double ad_mesh_area(const ad_mesh *m);

/* The volume inside a closed surface [m^3], by the divergence theorem: the sum over triangles of
 * a . (b x c) / 6, taken about the first vertex (for precision; a closed surface's volume does not depend
 * on the point). Positive when the triangles run counter-clockwise seen from outside (normals
 * (b - a) x (c - a) outward), negative when they all face in; meaningless for an open surface. */
double ad_mesh_volume(const ad_mesh *m);

#endif
