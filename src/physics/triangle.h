/* Static triangles (the 3D body: an STL mesh, a wing's surface), the closest point on one, and the one
 * contact per touch of a sphere with a connected surface: the 3D counterpart of segment.h.
 *
 * One contact per touch, as in 2D. Triangles that share a vertex (exactly equal floats) form a
 * connected surface, a component (src/core/components.c labels them, for segments and triangles
 * alike). A sphere touching a component feels one force, from its closest point on the whole
 * component: overlap delta = r - |c - q| with q the point of the component nearest the centre c,
 * along (c - q) / |c - q|. A flat face of many triangles acts as one plane, an edge or a vertex
 * shared by several triangles is one edge or one point, and a sphere over the face of one
 * triangle is not also pushed by its neighbour's edge. The potential k (r - dist(c, surface))^2 / 2
 * is continuous, so a sphere sliding across an edge keeps its energy. Separate components (two
 * bodies) each give their own contact; ties go to the first triangle met. */
#ifndef AD_PHYSICS_TRIANGLE_H
#define AD_PHYSICS_TRIANGLE_H

#include "vec3.h"

/* Where on a triangle a point's nearest point lies: its face, an edge or a vertex. */
typedef enum ad_tri_feature {
    AD_TRI_FACE = 0,
    AD_TRI_EDGE_AB = 1,
    AD_TRI_EDGE_BC = 2,
    AD_TRI_EDGE_CA = 3,
    AD_TRI_VERTEX_A = 4,
    AD_TRI_VERTEX_B = 5,
    AD_TRI_VERTEX_C = 6,
} ad_tri_feature;

enum {
    AD_TRI_CLOSED = 1,     /* the triangle's component is a closed surface: each of its edges is shared by two
                              of its triangles (it has an inside) */
    AD_TRI_COMP_SHIFT = 8, /* flags >> AD_TRI_COMP_SHIFT: the triangle's component */
};

/* A triangle as the kernels read it: vertex a and the edges ab = b - a, ac = c - a. 40 bytes. */
typedef struct ad_tri {
    ad_vec3 a, ab, ac;
    uint32_t flags; /* the component in the bits from AD_TRI_COMP_SHIFT */
} ad_tri;

/* The point of triangle (a, a + ab, a + ac) nearest p, and which feature it lies on (Ericson, Real-Time
 * Collision Detection, 5.1.5: the Voronoi regions of the vertices, then of the edges, then the face;
 * barycentric coordinates from dot products, no square root). The triangle must not be degenerate
 * (src/core/triangles.c refuses those). */
AD_HD static inline ad_vec3 ad_closest_on_triangle(ad_vec3 p, ad_vec3 a, ad_vec3 ab, ad_vec3 ac, int *feature)
{
    ad_vec3 ap = ad_v3_sub(p, a);
    float d1 = ad_v3_dot(ab, ap), d2 = ad_v3_dot(ac, ap);
    if (d1 <= 0.0f && d2 <= 0.0f) {
        *feature = AD_TRI_VERTEX_A;
        return a;
    }
    ad_vec3 b = ad_v3_add(a, ab), bp = ad_v3_sub(p, b);
    float d3 = ad_v3_dot(ab, bp), d4 = ad_v3_dot(ac, bp);
    if (d3 >= 0.0f && d4 <= d3) {
        *feature = AD_TRI_VERTEX_B;
        return b;
    }
    float vc = d1 * d4 - d3 * d2;
    if (vc <= 0.0f && d1 >= 0.0f && d3 <= 0.0f) {
        *feature = AD_TRI_EDGE_AB;
        return ad_v3_axpy(a, d1 / (d1 - d3), ab);
    }
    ad_vec3 c = ad_v3_add(a, ac), cp = ad_v3_sub(p, c);
    float d5 = ad_v3_dot(ab, cp), d6 = ad_v3_dot(ac, cp);
    if (d6 >= 0.0f && d5 <= d6) {
        *feature = AD_TRI_VERTEX_C;
        return c;
    }
    float vb = d5 * d2 - d1 * d6;
    if (vb <= 0.0f && d2 >= 0.0f && d6 <= 0.0f) {
        *feature = AD_TRI_EDGE_CA;
        return ad_v3_axpy(a, d2 / (d2 - d6), ac);
    }
    float va = d3 * d6 - d5 * d4;
    if (va <= 0.0f && (d4 - d3) >= 0.0f && (d5 - d6) >= 0.0f) {
        *feature = AD_TRI_EDGE_BC;
        return ad_v3_axpy(b, (d4 - d3) / ((d4 - d3) + (d5 - d6)), ad_v3_sub(c, b));
    }
    float denom = 1.0f / (va + vb + vc);
    *feature = AD_TRI_FACE;
    return ad_v3_add(a, ad_v3_add(ad_v3_scale(ab, vb * denom), ad_v3_scale(ac, vc * denom)));
}

#define AD_TRI_TOUCH_MAX 4

/* The nearest touching point of each component met so far, for one sphere: for component comp[k], the
 * point q[k] (squared distance d2[k]) of triangle tri[k], and first[k], the lowest index of its
 * triangles that touch. */
typedef struct ad_tri_touches {
    int n;
    uint32_t comp[AD_TRI_TOUCH_MAX], tri[AD_TRI_TOUCH_MAX], first[AD_TRI_TOUCH_MAX];
    float d2[AD_TRI_TOUCH_MAX];
    ad_vec3 q[AD_TRI_TOUCH_MAX];
} ad_tri_touches;

/* One candidate triangle, number `index` of the body, for the sphere of radius r centred at c: its closest
 * point kept where it is the nearest of its component so far and within r, a tie going to the lower
 * index. The point kept for a component is so the nearest over its touching triangles, the lowest index
 * among equals, whatever order they come in (a tree's leaf order, the triangles' own), and first[] lets
 * the contacts be applied in the order of the triangles' indices (gather3.h): the same force, to the bit,
 * from any walk that meets the same triangles. Returns 0, or 1 when the table was full and the point (in
 * *q) must be applied on its own, as segment.h does (a sphere among more than AD_TRI_TOUCH_MAX
 * components: only then does the order met matter). */
AD_HD static inline int ad_tri_touch(const ad_tri *t, uint32_t index, ad_vec3 c, float r, ad_tri_touches *tt,
                                     ad_vec3 *q)
{
    int feature;
    ad_vec3 p = ad_closest_on_triangle(c, t->a, t->ab, t->ac, &feature);
    ad_vec3 d = ad_v3_sub(c, p);
    float d2 = ad_v3_dot(d, d);
    if (d2 >= r * r || d2 <= 0.0f) return 0;
    uint32_t comp = t->flags >> AD_TRI_COMP_SHIFT;
    for (int k = 0; k < tt->n; k++)
        if (tt->comp[k] == comp) {
            if (d2 < tt->d2[k] || (d2 == tt->d2[k] && index < tt->tri[k])) {
                tt->d2[k] = d2;
                tt->q[k] = p;
                tt->tri[k] = index;
            }
            if (index < tt->first[k]) tt->first[k] = index;
            return 0;
        }
    if (tt->n == AD_TRI_TOUCH_MAX) { /* a sphere among more components than the table holds */
        *q = p;
        return 1;
    }
    tt->comp[tt->n] = comp;
    tt->d2[tt->n] = d2;
    tt->q[tt->n] = p;
    tt->tri[tt->n] = index;
    tt->first[tt->n] = index;
    tt->n++;
    return 0;
}

/* The table's entries in the order of their first[] (the order a walk over the triangles by index
 * meets the components): order[0 .. n). */
AD_HD static inline void ad_tri_touches_order(const ad_tri_touches *tt, int order[AD_TRI_TOUCH_MAX])
{
    for (int k = 0; k < tt->n; k++) {
        int at = k;
        while (at > 0 && tt->first[order[at - 1]] > tt->first[k]) {
            order[at] = order[at - 1];
            at--;
        }
        order[at] = k;
    }
}

/* The one test of a degenerate triangle (repeated or collinear vertices), host code only: twice its area,
 * in double precision from the float vertices, is not above 2e-6 of its longest edge squared (the area is
 * below 1e-6 of it; a NaN counts as degenerate). The world refuses these (core/triangles.c) and the mesh
 * check reports them (core/mesh_check.c) with this same function, so a mesh that passes the check is never
 * refused by the world. *longest2 (may be NULL): the longest edge squared (0: the vertices are one point). */
static inline int ad_tri_degenerate(const float (*v)[3], double *longest2)
{
    double e[3][3], len2[3];
    for (int j = 0; j < 3; j++) {
        len2[j] = 0;
        for (int d = 0; d < 3; d++) {
            e[j][d] = (double)v[(j + 1) % 3][d] - v[j][d];
            len2[j] += e[j][d] * e[j][d];
        }
    }
    double cx = e[0][1] * e[2][2] - e[0][2] * e[2][1], cy = e[0][2] * e[2][0] - e[0][0] * e[2][2];
    double cz = e[0][0] * e[2][1] - e[0][1] * e[2][0];
    double twice_area = sqrt(cx * cx + cy * cy + cz * cz);
    double longest = fmax(len2[0], fmax(len2[1], len2[2]));
    if (longest2) *longest2 = longest;
    return !(twice_area > 2e-6 * longest);
}

#endif
