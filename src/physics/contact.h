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
/* Written once for both dimensions: the law and what it accumulates are in contact_dim.h, included
 * here for 2D (ad_accum, ad_contact_disc, ...) and 3D (ad_accum3, ad_contact_disc3, ...). */
#ifndef AD_PHYSICS_CONTACT_H
#define AD_PHYSICS_CONTACT_H

#include "params.h"

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

#define AD_DIM 2
#include "contact_dim.h"
#undef AD_DIM
#define AD_DIM 3
#include "contact_dim.h"
#undef AD_DIM

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

#endif
