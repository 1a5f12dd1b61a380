/* The 3D gather pass's body and its whole: a sphere's contacts with the body's triangles, found on a
 * coarse grid, and all its contacts (spheres, triangles, walls). The sphere-sphere search and the
 * walls are gather_dim.h's and contact_dim.h's, written once for both dimensions; the triangles are
 * 3D's counterpart of segment.h. */
#ifndef AD_PHYSICS_GATHER3_H
#define AD_PHYSICS_GATHER3_H

#include "gather.h"
#include "triangle.h"

/* Triangles binned on a coarse grid (compressed rows: the triangles of cell c are
 * index[start[c] .. start[c + 1])). Each triangle sits in every cell its box, grown by a radius,
 * touches, so a sphere looks in its own cell only. */
typedef struct ad_tri_grid {
    float origin[3], inv_cell[3];
    int n[3];
    float box_lo[3], box_hi[3]; /* all triangles, grown by a radius: most spheres stop here */
    uint32_t count;             /* triangles */
    const uint32_t *start;      /* n[0] n[1] n[2] + 1 */
    const uint32_t *index;
    const ad_tri *tris;
} ad_tri_grid;

/* The cell of the triangles' grid that holds (x, y, z) (inside its box). */
AD_HD static inline uint32_t ad_tri_grid_cell(const ad_tri_grid *g, float x, float y, float z)
{
    int cx = ad_cell_coord(x, g->origin[0], g->inv_cell[0], g->n[0]);
    int cy = ad_cell_coord(y, g->origin[1], g->inv_cell[1], g->n[1]);
    int cz = ad_cell_coord(z, g->origin[2], g->inv_cell[2], g->n[2]);
    return ((uint32_t)cz * (uint32_t)g->n[1] + (uint32_t)cy) * (uint32_t)g->n[0] + (uint32_t)cx;
}

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

/* A sphere's contacts with the triangles: the nearest point of each connected surface it touches
 * (triangle.h), one contact each. */
AD_HD static inline void ad_contact_triangles(const ad_params *p, const ad_tri_grid *g, ad_vec3 c, ad_vec3 v,
                                              ad_accum3 *a)
{
    if (!g->count || c.x < g->box_lo[0] || c.x > g->box_hi[0] || c.y < g->box_lo[1] || c.y > g->box_hi[1] ||
        c.z < g->box_lo[2] || c.z > g->box_hi[2])
        return;
    uint32_t cell = ad_tri_grid_cell(g, c.x, c.y, c.z);
    ad_tri_touches tt;
    tt.n = 0;
    for (uint32_t k = g->start[cell]; k < g->start[cell + 1]; k++) {
        ad_vec3 q;
        if (ad_tri_touch(&g->tris[g->index[k]], c, p->radius, &tt, &q)) ad_contact_body_point3(p, c, v, q, a);
    }
    for (int k = 0; k < tt.n; k++) ad_contact_body_point3(p, c, v, tt.q[k], a);
}

/* All contacts of one sphere, binned in cell (cx, cy, cz): other spheres, triangles and walls. */
AD_HD static inline void ad_gather_all3(const ad_params *p, const ad_tri_grid *g, const uint32_t *start,
                                        const ad_state3 *s, uint32_t i, ad_state3 me, int cx, int cy, int cz,
                                        ad_accum3 *a)
{
    ad_accum_zero3(a);
    if (p->disc_contacts) ad_gather_discs3(p, start, s, i, me, cx, cy, cz, a);
    ad_contact_triangles(p, g, ad_v3(me.x, me.y, me.z), ad_v3(me.vx, me.vy, me.vz), a);
    ad_contact_walls3(p, me.x, me.y, me.z, me.vx, me.vy, me.vz, a);
}

#endif
