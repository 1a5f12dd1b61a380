/* The 3D gather pass's body and its whole: a sphere's contacts with the body's triangles, found through
 * the triangle tree (bvh.h's Morton-code tree over the triangles' boxes, 3D), and all its contacts
 * (spheres, triangles, walls). The sphere-sphere search and the walls are gather_dim.h's and
 * contact_dim.h's, written once for both dimensions; the triangles are 3D's counterpart of segment.h,
 * the tree 3D's counterpart of the 2D segment tree (ad_seg_tree). */
#ifndef AD_PHYSICS_GATHER3_H
#define AD_PHYSICS_GATHER3_H

#include "bvh.h"
#include "gather.h"
#include "triangle.h"

/* The body's triangles as a tree (built on the host: core/world3.c): leaf k is triangle item[k] of
 * tris, its box grown by a radius and a little more (AD_TRI_TREE_MARGIN), so a sphere's centre lies in
 * the leaf box of every triangle it touches and the walk is a point query. */
typedef struct ad_tri_tree {
    ad_bvh3 t;
    const uint32_t *item;
    const ad_tri *tris;
} ad_tri_tree;

/* The leaf boxes' growth over the radius: the tree must find every triangle within the radius of a
 * centre, its closest point computed in float. */
#define AD_TRI_TREE_MARGIN 1.001f

/* The contact of a sphere at c with the body point q: the force on the sphere, its reaction on the
 * body and the reaction's torque about the origin, q x (-F). */
AD_HD static inline void ad_contact_body_point3(const ad_params *p, ad_vec3 c, ad_vec3 v, ad_vec3 q, ad_accum3 *a)
{
    float fx, fy, fz;
    if (!ad_contact_point3(p, c.x, c.y, c.z, v.x, v.y, v.z, q.x, q.y, q.z, &fx, &fy, &fz, a)) return;
    a->body_fx -= fx;
    a->body_fy -= fy;
    a->body_fz -= fz;
    ad_vec3 t = ad_v3_cross(q, ad_v3(-fx, -fy, -fz));
    a->body_tx += t.x;
    a->body_ty += t.y;
    a->body_tz += t.z;
}

/* The contacts of a table of touches, in the order of their triangles' indices (ad_tri_touch). */
AD_HD static inline void ad_tri_touches_apply(const ad_params *p, const ad_tri_touches *tt, ad_vec3 c, ad_vec3 v,
                                              ad_accum3 *a)
{
    int order[AD_TRI_TOUCH_MAX];
    ad_tri_touches_order(tt, order);
    for (int k = 0; k < tt->n; k++) ad_contact_body_point3(p, c, v, tt->q[order[k]], a);
}

/* A sphere's contacts with the triangles: the nearest point of each connected surface it touches
 * (triangle.h), one contact each; the touching triangles found by a walk of the tree (a point query:
 * the centre against the grown leaf boxes; the root's box stops most spheres, far from the body). The
 * force is a function of the set of touching triangles alone (ad_tri_touch), so it is the brute
 * force's below to the bit (tests/test_tritree.c). */
AD_HD static inline void ad_contact_triangles(const ad_params *p, const ad_tri_tree *g, ad_vec3 c, ad_vec3 v,
                                              ad_accum3 *a)
{
    if (g->t.n == 0) return;
    uint32_t stack[AD_BVH_STACK];
    ad_bvh_box3 box = {c.x, c.y, c.z, c.x, c.y, c.z};
    ad_bvh_walk3 w;
    ad_bvh_walk_begin3(&g->t, &w, box, 0, stack, 1);
    ad_tri_touches tt;
    tt.n = 0;
    for (uint32_t k = ad_bvh_walk_next3(&g->t, &w); k != AD_BVH_NONE; k = ad_bvh_walk_next3(&g->t, &w)) {
        ad_vec3 q;
        uint32_t i = g->item[k];
        if (ad_tri_touch(&g->tris[i], i, c, p->radius, &tt, &q)) ad_contact_body_point3(p, c, v, q, a);
    }
    ad_tri_touches_apply(p, &tt, c, v, a);
}

/* A sphere's hits on the triangles (panel.h): the contacts of ad_contact_triangles, each with its triangle. */
AD_HD static inline void ad_tri_hits(const ad_params *p, const ad_tri_tree *g, ad_vec3 c, ad_vec3 v, ad_panel_hits *h)
{
    h->n = 0;
    if (g->t.n == 0) return;
    uint32_t stack[AD_BVH_STACK];
    ad_bvh_box3 box = {c.x, c.y, c.z, c.x, c.y, c.z};
    ad_bvh_walk3 w;
    ad_bvh_walk_begin3(&g->t, &w, box, 0, stack, 1);
    const float ctr[3] = {c.x, c.y, c.z}, vel[3] = {v.x, v.y, v.z};
    ad_tri_touches tt;
    tt.n = 0;
    for (uint32_t k = ad_bvh_walk_next3(&g->t, &w); k != AD_BVH_NONE; k = ad_bvh_walk_next3(&g->t, &w)) {
        ad_vec3 q;
        uint32_t i = g->item[k];
        if (ad_tri_touch(&g->tris[i], i, c, p->radius, &tt, &q)) {
            const float qq[3] = {q.x, q.y, q.z};
            ad_panel_hit_add(p, 3, ctr, vel, i, g->tris[i].flags >> AD_TRI_COMP_SHIFT, qq, h);
        }
    }
    for (int k = 0; k < tt.n; k++) {
        const float qq[3] = {tt.q[k].x, tt.q[k].y, tt.q[k].z};
        ad_panel_hit_add(p, 3, ctr, vel, tt.tri[k], tt.comp[k], qq, h);
    }
}

/* The plain reference of ad_contact_triangles: every one of the n triangles, in order, with the same
 * rule (tests and benchmarks compare the tree with it). */
AD_HD static inline void ad_contact_triangles_all(const ad_params *p, const ad_tri *tris, uint32_t n, ad_vec3 c,
                                                  ad_vec3 v, ad_accum3 *a)
{
    ad_tri_touches tt;
    tt.n = 0;
    for (uint32_t i = 0; i < n; i++) {
        ad_vec3 q;
        if (ad_tri_touch(&tris[i], i, c, p->radius, &tt, &q)) ad_contact_body_point3(p, c, v, q, a);
    }
    ad_tri_touches_apply(p, &tt, c, v, a);
}

/* All contacts of one sphere, binned in cell (cx, cy, cz): other spheres, triangles and walls. */
AD_HD static inline void ad_gather_all3(const ad_params *p, const ad_tri_tree *g, const uint32_t *start,
                                        const ad_state3 *s, uint32_t i, ad_state3 me, int cx, int cy, int cz,
                                        ad_accum3 *a)
{
    ad_accum_zero3(a);
    if (p->disc_contacts) ad_gather_discs3(p, start, s, i, me, cx, cy, cz, a);
    ad_contact_triangles(p, g, ad_v3(me.x, me.y, me.z), ad_v3(me.vx, me.vy, me.vz), a);
    ad_contact_walls3(p, me.x, me.y, me.z, me.vx, me.vy, me.vz, a);
}

#endif
