/* The contact law, once for both backends: linear spring-dashpot, normal only (frictionless, no rotation).
 *
 * Two bodies whose surfaces overlap by delta > 0 push each other apart along the
 * contact normal n with
 *
 *     F = k_n * delta - gamma * v_n            (v_n: normal relative velocity, < 0 approaching)
 *
 * For an effective mass m_eff (m/2 disc-disc, m for a disc against a static wall or
 * segment) this is a damped oscillator with
 *
 *     omega_0 = sqrt(k_n / m_eff),   eta = gamma / (2 m_eff),   omega_d = sqrt(omega_0^2 - eta^2)
 *     contact time   t_c = pi / omega_d
 *     restitution    e   = exp(-eta * t_c)
 *
 * so for a requested e the damping is gamma = 2 beta sqrt(m_eff k_n) with
 * beta = -ln(e) / sqrt(pi^2 + ln(e)^2). The force is not clipped at zero: near the
 * end of a damped contact it can pull slightly, which keeps both closed forms exact
 * (the same choice as LAMMPS gran/hooke without limit_damping).
 *
 * Per-disc observables gathered from each contact:
 *   pressure = sum of |F| over the disc's contacts (the reference simulator's measure);
 *   virial   = 1/2 sum_j r_ij . F_ij over disc-disc contacts, r_ij = x_i - x_j, so that
 *              summed over discs it is sum over pairs of r_ij . F_ij, and the 2D pressure is
 *              P = (sum m v^2 + sum_i virial_i) / (2 A);
 *   energy   = elastic energy k delta^2 / 2, half to each disc of a pair.
 */
/* Two dimensions: ad_accum holds (fx, fy) and four walls; the disc-disc law itself (normal only, along
 * the centre line) is the same in 3D with a third component. */
#ifndef AD_PHYSICS_CONTACT_H
#define AD_PHYSICS_CONTACT_H

#include "params.h"

/* What one disc accumulates over its contacts in a force evaluation. */
typedef struct ad_accum {
    float fx, fy;       /* total contact force [N] */
    float pressure;     /* sum |F| [N] */
    float virial;       /* 1/2 sum r_ij . F_ij [N m] */
    float energy;       /* elastic energy share [J] */
    float max_overlap;  /* largest overlap [m] */
    float body_fx, body_fy; /* reaction on segments [N] */
    float wall[4];      /* normal force on each wall, outward positive [N] */
} ad_accum;

AD_HD static inline void ad_accum_zero(ad_accum *a)
{
    a->fx = a->fy = a->pressure = a->virial = a->energy = a->max_overlap = 0.0f;
    a->body_fx = a->body_fy = 0.0f;
    a->wall[0] = a->wall[1] = a->wall[2] = a->wall[3] = 0.0f;
}

/* Damping coefficient gamma for restitution e and effective mass m_eff. */
static inline double ad_damping_for_restitution(double e, double m_eff, double k)
{
    double le = log(e);
    double beta = -le / sqrt(AD_PI * AD_PI + le * le);
    return 2.0 * beta * sqrt(m_eff * k);
}

/* Duration of one damped contact. */
static inline double ad_contact_duration(double m_eff, double k, double gamma)
{
    double w0sq = k / m_eff, eta = gamma / (2.0 * m_eff);
    return AD_PI / sqrt(w0sq - eta * eta);
}

/* The law itself, the same for every pair and every dimension: the normal force for an overlap delta
 * and a normal relative velocity vn (< 0 approaching), pushing apart where positive. */
AD_HD static inline float ad_normal_force(float k, float gamma, float delta, float vn) { return k * delta - gamma * vn; }

/* The disc-disc law once the distance is known: dist = |(dx, dy)|, touch = 1 and inv = 1 / dist where
 * the discs touch, touch = inv = 0 where they do not (a no-op then, in exact zeros). */
AD_HD static inline void ad_contact_disc_at(const ad_params *p, float dx, float dy, float dvx, float dvy, float dist,
                                            float inv, float touch, ad_accum *a)
{
    float nx = dx * inv, ny = dy * inv;
    float delta = (p->diameter - dist) * touch;
    float vn = dvx * nx + dvy * ny;
    float f = ad_normal_force(p->k, p->gamma_pp, delta, vn);
    a->fx -= f * nx;
    a->fy -= f * ny;
    a->pressure += fabsf(f);
    a->virial += 0.5f * dist * f;
    a->energy += 0.25f * p->k * delta * delta;
    a->max_overlap = a->max_overlap > delta ? a->max_overlap : delta;
}

/* Disc i meets disc j. dx, dy: x_j - x_i (minimum image); dvx, dvy: v_j - v_i.
 * Accumulates into *a if they touch. Branch-free: whether a candidate touches is a
 * coin toss in a gas, so a mask costs less than the mispredicted branch. */
AD_HD static inline void ad_contact_disc(const ad_params *p, float dx, float dy, float dvx, float dvy, ad_accum *a)
{
    float d2 = dx * dx + dy * dy;
#ifdef __CUDA_ARCH__
    /* the GPU's reciprocal square root (one instruction, within 2 ulp) in place of a
     * correctly rounded square root and division (about 16 instructions and two slow-path
     * branches): distances agree with the CPU's to about 1e-7 relative. Its input is kept
     * normal (a centre distance below 1e-19 counts as coincident, where the CPU's test is
     * d2 > 0), so the flush-to-zero form needs no subnormal fix-up (3 instructions less).
     * dev/cuda/gather.cu times both forms and checks them against the CPU. */
    int normal = d2 >= 1.17549435e-38f; /* FLT_MIN */
    float touch = (d2 < p->diameter_sq && normal) ? 1.0f : 0.0f;
    float rinv;
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(rinv) : "f"(normal ? d2 : 1.0f));
    float dist = d2 * rinv;
    float inv = touch * rinv; /* 0 when apart, 1/dist when touching */
#else
    /* apart, or coincident (no normal): no force */
    float touch = (d2 < p->diameter_sq && d2 > 0.0f) ? 1.0f : 0.0f;
    float dist = sqrtf(d2);
    float inv = touch / (dist + (1.0f - touch)); /* 0 when apart, 1/dist when touching */
#endif
    ad_contact_disc_at(p, dx, dy, dvx, dvy, dist, inv, touch, a);
}

/* Disc with velocity (vx, vy) pressed by delta > 0 onto a static body whose outward
 * unit normal at the contact is (nx, ny). Returns the force magnitude on the disc
 * (along +n) and accumulates it. */
AD_HD static inline float ad_contact_static(const ad_params *p, float delta, float nx, float ny, float vx,
                                            float vy, ad_accum *a)
{
    float vn = vx * nx + vy * ny;
    float f = ad_normal_force(p->k, p->gamma_wall, delta, vn);
    a->fx += f * nx;
    a->fy += f * ny;
    a->pressure += fabsf(f);
    a->energy += 0.5f * p->k * delta * delta;
    a->max_overlap = a->max_overlap > delta ? a->max_overlap : delta;
    return f;
}

/* Disc centred at (x, y) against a segment point (qx, qy) closer than a radius. */
AD_HD static inline int ad_contact_point(const ad_params *p, float x, float y, float vx, float vy, float qx,
                                         float qy, float *fx, float *fy, ad_accum *a)
{
    float dx = x - qx, dy = y - qy; /* from the body to the centre */
    float d2 = dx * dx + dy * dy;
    if (d2 >= p->radius * p->radius || d2 <= 0.0f) return 0;
    float dist = sqrtf(d2);
    float inv = 1.0f / dist;
    float nx = dx * inv, ny = dy * inv;
    float f = ad_contact_static(p, p->radius - dist, nx, ny, vx, vy, a);
    *fx = f * nx;
    *fy = f * ny;
    return 1;
}

/* Closest point to (x, y) on the segment from (x0, y0) along (ex, ey), with
 * inv_len2 = 1/|e|^2. *t receives the clamped parameter in [0, 1]. */
AD_HD static inline void ad_closest_on_segment(float x, float y, float x0, float y0, float ex, float ey,
                                               float inv_len2, float *qx, float *qy, float *t)
{
    float s = ((x - x0) * ex + (y - y0) * ey) * inv_len2;
    s = s > 0.0f ? (s < 1.0f ? s : 1.0f) : 0.0f;
    *t = s;
    *qx = x0 + s * ex;
    *qy = y0 + s * ey;
}

/* Disc against the solid walls (params.wall, per side). Walls push along their inward normal even
 * when a centre has crossed them; wall force, outward positive, goes into a->wall. */
AD_HD static inline void ad_contact_walls(const ad_params *p, float x, float y, float vx, float vy, ad_accum *a)
{
    float lo = x - p->x_min, hi = p->x_max - x;
    if (p->wall[0] && lo < p->radius) a->wall[0] += ad_contact_static(p, p->radius - lo, 1.0f, 0.0f, vx, vy, a);
    if (p->wall[1] && hi < p->radius) a->wall[1] += ad_contact_static(p, p->radius - hi, -1.0f, 0.0f, vx, vy, a);
    lo = y - p->y_min;
    hi = p->y_max - y;
    if (p->wall[2] && lo < p->radius) a->wall[2] += ad_contact_static(p, p->radius - lo, 0.0f, 1.0f, vx, vy, a);
    if (p->wall[3] && hi < p->radius) a->wall[3] += ad_contact_static(p, p->radius - hi, 0.0f, -1.0f, vx, vy, a);
}

#endif
