/* Time integration of one disc, shared by both backends.
 *
 * With a = F/m + g the acceleration at the state the forces were evaluated at:
 *   forward Euler       x' = x + v dt,          v' = v + a dt
 *   symplectic Euler    v' = v + a dt,          x' = x + v' dt          (default; bounded energy error)
 *   velocity Verlet     x' = x + v dt + a dt^2/2, v' = v + (a + a') dt/2
 *       In the gather form the drift runs at the start of a step, before binning;
 *       the contact forces at x' then use the predicted velocity v + a dt for the
 *       dashpot (both discs' velocities at the same instant), and the kick
 *       completes v' once a' is known. Stored velocities are synchronous with x.
 *   RK4                 four force evaluations per step on the grid of the step's
 *       start; the grid's search reach includes a skin of 2 * max_move radii so
 *       that contacts at the stage positions are still found.
 * The step functions only move; ad_apply_boundaries (step 5) then wraps periodic
 * axes and re-injects discs that left through a tunnel's outlet. */
#ifndef AD_PHYSICS_INTEGRATE_H
#define AD_PHYSICS_INTEGRATE_H

#include "grid.h"
#include "rng.h"
#include "state.h"

/* Wraps the periodic axes only: velocity Verlet's drift, which leaves the inlet/outlet
 * crossings to the end of the step (a disc may sit just past the outlet while it is binned,
 * in the last column, and its forces are summed across the seam as for any other). */
AD_HD static inline ad_state ad_wrap_periodic(const ad_params *p, ad_state s)
{
    if (p->periodic_x && !p->flow_x) s.x = ad_wrap(s.x, p->x_min, p->len_x);
    if (p->periodic_y) s.y = ad_wrap(s.y, p->y_min, p->len_y);
    return s;
}

AD_HD static inline ad_state ad_wrap_state(const ad_params *p, ad_state s)
{
    if (p->periodic_x) s.x = ad_wrap(s.x, p->x_min, p->len_x);
    if (p->periodic_y) s.y = ad_wrap(s.y, p->y_min, p->len_y);
    return s;
}

/* The stream-wise velocity of a disc entering through the inlet, in units of the
 * thermal speed sigma: the inflow is flux-weighted, density x exp(-(x - a)^2 / 2) for
 * x > 0 with a = U/sigma, so that the gas just inside the inlet is Maxwellian around
 * U (drawing plain Maxwellian velocities would leave slow discs lingering and the
 * inlet region several percent slow and hot). Rejection from a normal distribution
 * centred on the target's mode b, where x exp(-(b - a) x) bounds the ratio. */
AD_HD static inline double ad_inflow_speed(uint64_t seed, uint64_t counter, double a)
{
    double b = 0.5 * (a + sqrt(a * a + 4.0)), c = b - a, xm = 1.0 / c;
    double norm = xm * exp(-c * xm);
    for (uint64_t k = 0; k < 64; k++) {
        double g1, g2;
        ad_rng_normal2(seed + k * 0x9E3779B97F4A7C15ull, counter, &g1, &g2);
        double x = b + g1;
        if (x > 0.0 && ad_rng_uniform(seed ^ 0xA24BAED4963EE407ull, counter * 64 + k) * norm <= x * exp(-c * x))
            return x;
    }
    return b; /* 64 rejections in a row: practically never (acceptance is above 1/2) */
}

/* The re-entry of a disc past the outlet: rare, so kept out of the hot loop's code
 * (the GPU runs it in a kernel of its own, k_reenter). */
#if defined(__CUDACC__)
__host__ __device__ static inline
#elif defined(__GNUC__)
__attribute__((noinline)) static
#else
static
#endif
ad_state ad_reenter(const ad_params *p, ad_state s, uint32_t id, uint64_t step)
{
    uint64_t seed = p->seed + step * 0xD1B54A32D192ED03ull;
    double g1, g2, sig = p->inflow_sigma;
    ad_rng_normal2(seed, id, &g1, &g2);
    double a = sig > 0.0 ? p->inflow_vx / sig : 0.0;
    s.vx = sig > 0.0 ? (float)(sig * ad_inflow_speed(seed ^ 0x94D049BB133111EBull, id, a)) : p->inflow_vx;
    s.vy = p->inflow_vy + (float)(sig * g2);
    return s;
}

/* Where a disc on a flow axis goes after it moved: past the outlet it comes back
 * through the inlet at the same height (the wrap); thrown back out through the inlet
 * it is absorbed by the free stream and returns at once, mirrored into the tunnel.
 * Either way it gets a velocity drawn from the free stream (ad_reenter). Returns 1
 * when the disc re-enters. */
AD_HD static inline int ad_flow_crossing(const ad_params *p, ad_state *s)
{
    if (!p->flow_x) return 0;
    if (s->x >= p->x_max) return 1;
    if (s->x < p->x_min) {
        s->x = p->x_min + (p->x_min - s->x);
        return 1;
    }
    return 0;
}

/* Step 5 for one disc after it moved: flow crossings, then the periodic wraps. The
 * velocity draw is counter-based on (seed, step, id), so reproducible anywhere. A
 * re-entering disc comes back at its height; *reentered (when given) is set to 1 so that
 * the caller can give it a fresh height (reentry.h). */
AD_HD static inline ad_state ad_apply_boundaries(const ad_params *p, ad_state s, const uint32_t *ids, size_t slot,
                                                 uint64_t step, int *reentered)
{
    if (ad_flow_crossing(p, &s)) {
        s = ad_reenter(p, s, ids[slot], step);
        if (reentered) *reentered = 1;
    }
    return ad_wrap_state(p, s);
}

AD_HD static inline ad_state ad_step_symplectic( ad_state s, float ax, float ay, float dt)
{
    s.vx += ax * dt;
    s.vy += ay * dt;
    s.x += s.vx * dt;
    s.y += s.vy * dt;
    return s;
}

AD_HD static inline ad_state ad_step_euler( ad_state s, float ax, float ay, float dt)
{
    s.x += s.vx * dt;
    s.y += s.vy * dt;
    s.vx += ax * dt;
    s.vy += ay * dt;
    return s;
}

/* Verlet drift with the previous acceleration (ax, ay): new position, and the
 * predicted velocity v + a dt that the next force evaluation uses. */
AD_HD static inline ad_state ad_verlet_drift( ad_state s, float ax, float ay, float dt)
{
    s.x += (s.vx + 0.5f * ax * dt) * dt;
    s.y += (s.vy + 0.5f * ay * dt) * dt;
    s.vx += ax * dt;
    s.vy += ay * dt;
    return s;
}

/* Verlet kick: from the predicted velocity back to the half step with the old
 * acceleration, forward with the new one. */
AD_HD static inline ad_state ad_verlet_kick(ad_state s, float ax_old, float ay_old, float ax, float ay, float dt)
{
    s.vx += 0.5f * (ax - ax_old) * dt;
    s.vy += 0.5f * (ay - ay_old) * dt;
    return s;
}

/* RK4: stage k (0..3) derivative (v, a) at the stage state. Accumulates the
 * weighted sum and returns the next stage's state base + c dt * derivative. */
AD_HD static inline ad_state ad_rk4_stage(ad_state base, ad_state stage, float ax, float ay,
                                          float dt, int k, ad_state *acc)
{
    const float w = (k == 0 || k == 3) ? 1.0f / 6.0f : 1.0f / 3.0f;
    const float c = (k == 2) ? 1.0f : 0.5f;
    if (k == 0) {
        acc->x = acc->y = acc->vx = acc->vy = 0.0f;
    }
    acc->x += w * stage.vx;
    acc->y += w * stage.vy;
    acc->vx += w * ax;
    acc->vy += w * ay;
    ad_state next;
    if (k < 3) {
        next.x = base.x + c * dt * stage.vx;
        next.y = base.y + c * dt * stage.vy;
        next.vx = base.vx + c * dt * ax;
        next.vy = base.vy + c * dt * ay;
    } else {
        next.x = base.x + dt * acc->x;
        next.y = base.y + dt * acc->y;
        next.vx = base.vx + dt * acc->vx;
        next.vy = base.vy + dt * acc->vy;
    }
    return next;
}

#endif
