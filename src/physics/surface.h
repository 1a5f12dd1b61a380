/* Gas-surface models and what a contact adds to its panel, once for every backend and both dimensions.
 *
 * A contact with a surface (a body component, or a solid wall) begins at the first force evaluation at
 * which the disc overlaps it and ends at the first at which it no longer does. Each disc carries its
 * contact state (panel.h's touch word: the panel of its nearest body contact and the walls it touched,
 * at its previous evaluation). At an evaluation (ad_surface_disc):
 *   - contacts begun: the nearest body hit's component was not the remembered panel's: one contact
 *     begun on the nearest hit's panel;
 *   - each hit adds to its panel the force on the body f (the gather's, bit for bit) and the energy the
 *     panel receives in the step, the work of -f on the disc with sign flipped:
 *         E = dt f . (v + a dt / 2)          (v the evaluated velocity, a the disc's acceleration),
 *     the disc's kinetic energy change of the step under that force for the Euler integrators;
 *   - outgoing: a surface the disc touched at its previous evaluation and no longer touches ended
 *     its contact here. With probability `diffuse` (1 for diffuse, the accommodation for maxwell, 0 for
 *     specular), drawn from the counter-based key (seed, disc id, step, surface), its velocity v is
 *     replaced by v' from the half-range Maxwellian of the surface's temperature T about the outward
 *     normal n at its closest point on the panel it last touched (walls: the wall's inward normal):
 *         v'.n = sqrt(-2 T ln u1)  (the flux-weighted normal speed),   v'.t = sqrt(T) N(0, 1) per tangent.
 *     The change is the surface's impulse m (v' - v) on the disc in this step: the body's force sums get
 *     -m (v' - v) / dt (and its torque q x that), the panel too, with the energy m (|v|^2 - |v'|^2) / 2;
 *     a wall's normal force sum gets m (v' - v).n / dt (outward positive, as its spring force).
 * So the panels' impulses add up to the body's, and every unit of momentum and energy a re-emission
 * moves is booked on the surface it came from. The body is at rest. */
#ifndef AD_PHYSICS_SURFACE_H
#define AD_PHYSICS_SURFACE_H

#include "panel.h"
#include "rng.h"
#include "state.h"
#include "step_sums.h"
#include "triangle.h"

/* What a disc's evaluation adds besides its panels: the re-emissions' forces over the step on the body
 * (and the torque about the origin, 3D) and on each wall (outward positive), and the new contact state. */
typedef struct ad_surface_out {
    float body_f[3], body_t[3];
    float wall[6];
    uint32_t touch;
} ad_surface_out;

/* The walls a disc centred at c touches (bit k: wall k, AD_WALL_* order), as ad_contact_walls tests them. */
AD_HD static inline uint32_t ad_surface_walls(const ad_params *p, int dims, const float c[3])
{
    const float lo[3] = {p->x_min, p->y_min, p->z_min}, hi[3] = {p->x_max, p->y_max, p->z_max};
    uint32_t m = 0;
    for (int d = 0; d < dims; d++) {
        if (p->wall[2 * d] && c[d] - lo[d] < p->radius) m |= 1u << (2 * d);
        if (p->wall[2 * d + 1] && hi[d] - c[d] < p->radius) m |= 1u << (2 * d + 1);
    }
    return m;
}

/* The velocity a diffuse surface of thermal speed sigma re-emits a disc with, about the unit outward
 * normal n (dims 2 or 3), from the key's uniforms 1 (normal) and normals 1 (tangents). */
AD_HD static inline void ad_surface_draw(float sigma, int dims, const float n[3], uint64_t key, float v[3])
{
    double vn = (double)sigma * sqrt(-2.0 * log(ad_rng_uniform(key, 1)));
    double g1, g2;
    ad_rng_normal2(key, 1, &g1, &g2); /* counters 2 and 3 */
    float t1[3], t2[3] = {0.0f, 0.0f, 0.0f};
    if (dims == 2) {
        t1[0] = -n[1], t1[1] = n[0], t1[2] = 0.0f;
    } else { /* a tangent from the axis least along n, and n x t1 */
        float ax = fabsf(n[0]), ay = fabsf(n[1]), az = fabsf(n[2]);
        float e[3] = {ax <= ay && ax <= az ? 1.0f : 0.0f, ay < ax && ay <= az ? 1.0f : 0.0f, 0.0f};
        e[2] = e[0] == 0.0f && e[1] == 0.0f ? 1.0f : 0.0f;
        float d = e[0] * n[0] + e[1] * n[1] + e[2] * n[2];
        for (int j = 0; j < 3; j++) t1[j] = e[j] - d * n[j];
        float inv = 1.0f / sqrtf(t1[0] * t1[0] + t1[1] * t1[1] + t1[2] * t1[2]);
        for (int j = 0; j < 3; j++) t1[j] *= inv;
        t2[0] = n[1] * t1[2] - n[2] * t1[1];
        t2[1] = n[2] * t1[0] - n[0] * t1[2];
        t2[2] = n[0] * t1[1] - n[1] * t1[0];
    }
    for (int j = 0; j < 3; j++)
        v[j] = j < dims ? (float)(vn * n[j] + (double)sigma * (g1 * t1[j] + g2 * t2[j])) : 0.0f;
}

/* The key of a disc's re-emission draws: (seed, id, step, surface: 0 the body, 1 + k wall k). */
AD_HD static inline uint64_t ad_surface_key(const ad_params *p, uint32_t id, uint64_t step, int surface)
{
    return ad_rng_u64((p->seed ^ 0x3C6EF372FE94F82Bull) + step * 0xA54FF53A5F1D36F1ull, (uint64_t)id * 8u + (uint64_t)surface);
}

/* A re-emission of the disc (velocity v, replaced) by surface `surface` about normal n: 1 where it happened,
 * dv the change. */
AD_HD static inline int ad_surface_reemit(const ad_params *p, int dims, int surface, const float n[3], uint32_t id,
                                          uint64_t step, float v[3], float dv[3])
{
    float frac = p->surf_diffuse[surface];
    if (!(frac > 0.0f)) return 0;
    uint64_t key = ad_surface_key(p, id, step, surface);
    if (!(ad_rng_uniform(key, 0) <= (double)frac)) return 0;
    float nv[3];
    ad_surface_draw(p->surf_sigma[surface], dims, n, key, nv);
    for (int j = 0; j < 3; j++) {
        dv[j] = nv[j] - v[j];
        v[j] = nv[j];
    }
    return 1;
}

/* The closest point of a disc centred at c on panel k: a segment (2D) or a triangle (3D). */
AD_HD static inline void ad_surface_panel_point(int dims, const ad_seg *segs, const ad_tri *tris, uint32_t k,
                                                const float c[3], float q[3])
{
    if (dims == 2) {
        float u;
        const ad_seg s = segs[k];
        ad_closest_on_segment(c[0], c[1], s.x0, s.y0, s.ex, s.ey, s.inv_len2, &q[0], &q[1], &u);
        q[2] = 0.0f;
    } else {
        int feature;
        ad_vec3 r = ad_closest_on_triangle(ad_v3(c[0], c[1], c[2]), tris[k].a, tris[k].ab, tris[k].ac, &feature);
        q[0] = r.x, q[1] = r.y, q[2] = r.z;
    }
}

AD_HD static inline uint32_t ad_surface_panel_comp(int dims, const ad_seg *segs, const ad_tri *tris, uint32_t k)
{
    return dims == 2 ? segs[k].flags >> AD_SEG_COMP_SHIFT : tris[k].flags >> AD_TRI_COMP_SHIFT;
}

/* The panels' share of an evaluation: each hit's force and energy, the contact begun. */
AD_HD static inline void ad_surface_panels(const ad_params *p, int dims, const ad_panel_hits *h, int prev_comp,
                                           const float v[3], const float a[3], float dt, int64_t *fix)
{
    int near = ad_panel_hits_nearest(h);
    for (int k = 0; k < h->n; k++) {
        int64_t *f = fix + (size_t)h->panel[k] * AD_PANEL_WORDS;
        double e = 0.0;
        for (int j = 0; j < dims; j++) {
            ad_panel_add(&f[j], ad_panel_fix((double)h->f[k][j], p->panel_inv_qf));
            e += (double)h->f[k][j] * ((double)v[j] + 0.5 * (double)a[j] * dt);
        }
        ad_panel_add(&f[AD_PANEL_E], ad_panel_fix(e * dt, p->panel_inv_qe));
        if (k == near && (int)h->comp[k] != prev_comp) ad_panel_add(&f[AD_PANEL_N], 1);
    }
}

/* One disc's evaluation against the surfaces (see the top): centre c, evaluated velocity ve and
 * acceleration a, its hits h, its contact state `prev`; v, the velocity a re-emission replaces (ve's values,
 * or RK4's step result); the panels' step sums in fix (AD_PANEL_WORDS a panel), the rest in *o. */
AD_HD static inline void ad_surface_disc(const ad_params *p, int dims, const ad_seg *segs, const ad_tri *tris,
                                         const ad_panel_hits *h, uint32_t prev, uint32_t id, uint64_t step,
                                         const float c[3], const float ve[3], const float a[3], float dt, float v[3],
                                         int64_t *fix, ad_surface_out *o)
{
    for (int j = 0; j < 3; j++) o->body_f[j] = o->body_t[j] = 0.0f;
    for (int k = 0; k < 6; k++) o->wall[k] = 0.0f;
    int pp = ad_touch_panel(prev);
    int prev_comp = pp >= 0 ? (int)ad_surface_panel_comp(dims, segs, tris, (uint32_t)pp) : -1;
    ad_surface_panels(p, dims, h, prev_comp, ve, a, dt, fix);
    int near = ad_panel_hits_nearest(h);
    uint32_t walls = ad_surface_walls(p, dims, c);
    o->touch = ad_touch_pack(near >= 0 ? (int)h->panel[near] : -1, walls);
    float m_dt = p->mass / dt;
    int ended = pp >= 0;
    for (int k = 0; k < h->n && ended; k++) ended = (int)h->comp[k] != prev_comp;
    if (ended) {
        float q[3], n[3], dv[3];
        ad_surface_panel_point(dims, segs, tris, (uint32_t)pp, c, q);
        float d2 = 0.0f;
        for (int j = 0; j < 3; j++) {
            n[j] = j < dims ? c[j] - q[j] : 0.0f;
            d2 += n[j] * n[j];
        }
        float inv = d2 > 0.0f ? 1.0f / sqrtf(d2) : 0.0f;
        for (int j = 0; j < 3; j++) n[j] *= inv;
        float v0[3] = {v[0], v[1], v[2]};
        if (d2 > 0.0f && ad_surface_reemit(p, dims, 0, n, id, step, v, dv)) {
            int64_t *f = fix + (size_t)pp * AD_PANEL_WORDS;
            double e = 0.0;
            for (int j = 0; j < dims; j++) {
                o->body_f[j] = -m_dt * dv[j];
                ad_panel_add(&f[j], ad_panel_fix((double)o->body_f[j], p->panel_inv_qf));
                e += 0.5 * (double)p->mass * ((double)v0[j] * v0[j] - (double)v[j] * v[j]);
            }
            ad_panel_add(&f[AD_PANEL_E], ad_panel_fix(e, p->panel_inv_qe));
            if (dims == 3) {
                o->body_t[0] = q[1] * o->body_f[2] - q[2] * o->body_f[1];
                o->body_t[1] = q[2] * o->body_f[0] - q[0] * o->body_f[2];
                o->body_t[2] = q[0] * o->body_f[1] - q[1] * o->body_f[0];
            }
        }
    }
    uint32_t gone = ad_touch_walls(prev) & ~walls;
    for (int k = 0; k < 2 * dims; k++) {
        if (!(gone >> k & 1u)) continue;
        float n[3] = {0.0f, 0.0f, 0.0f}, dv[3];
        n[k / 2] = k & 1 ? -1.0f : 1.0f; /* the wall's inward normal */
        if (ad_surface_reemit(p, dims, 1 + k, n, id, step, v, dv)) o->wall[k] = m_dt * dv[k / 2] * n[k / 2];
    }
}

/* The re-emissions' forces into a step's sums: the body's force (and torque, 3D) and the walls'. */
AD_HD static inline void ad_surface_sums(const ad_surface_out *o, int dims, ad_step_sums *b)
{
    b->v[AD_SUM_BODY_FX] += o->body_f[0];
    b->v[AD_SUM_BODY_FY] += o->body_f[1];
    if (dims == 3) {
        b->v[AD_SUM_BODY_FZ] += o->body_f[2];
        b->v[AD_SUM_BODY_TX] += o->body_t[0];
        b->v[AD_SUM_BODY_TY] += o->body_t[1];
        b->v[AD_SUM_BODY_TZ] += o->body_t[2];
    }
    for (int k = 0; k < 2 * dims; k++) b->v[AD_SUM_WALL0 + k] += o->wall[k];
}

/* A 2D disc's evaluation (ad_surface_disc) in states: evaluated at `at` with acceleration (ax, ay), the
 * re-emission into *out's velocity, its contact state *touch updated, the forces into *b. */
AD_HD static inline void ad_surface_disc2(const ad_params *p, const ad_seg *segs, const ad_panel_hits *h,
                                          uint32_t *touch, uint32_t id, uint64_t step, ad_state at, float ax,
                                          float ay, float dt, ad_state *out, int64_t *fix, ad_step_sums *b)
{
    const float c[3] = {at.x, at.y, 0.0f}, ve[3] = {at.vx, at.vy, 0.0f}, a[3] = {ax, ay, 0.0f};
    float v[3] = {out->vx, out->vy, 0.0f};
    ad_surface_out o;
    ad_surface_disc(p, 2, segs, NULL, h, *touch, id, step, c, ve, a, dt, v, fix, &o);
    *touch = o.touch;
    out->vx = v[0];
    out->vy = v[1];
    ad_surface_sums(&o, 2, b);
}

/* The same for a 3D sphere. */
AD_HD static inline void ad_surface_disc3(const ad_params *p, const ad_tri *tris, const ad_panel_hits *h,
                                          uint32_t *touch, uint32_t id, uint64_t step, ad_state3 at, float ax,
                                          float ay, float az, float dt, ad_state3 *out, int64_t *fix, ad_step_sums *b)
{
    const float c[3] = {at.x, at.y, at.z}, ve[3] = {at.vx, at.vy, at.vz}, a[3] = {ax, ay, az};
    float v[3] = {out->vx, out->vy, out->vz};
    ad_surface_out o;
    ad_surface_disc(p, 3, NULL, tris, h, *touch, id, step, c, ve, a, dt, v, fix, &o);
    *touch = o.touch;
    out->vx = v[0];
    out->vy = v[1];
    out->vz = v[2];
    ad_surface_sums(&o, 3, b);
}

#endif
