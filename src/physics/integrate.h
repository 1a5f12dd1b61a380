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
 * axes and removes discs that left through an open side (open.h). */
/* Two dimensions: every integrator moves x and y component by component; 3D adds z with the same
 * formulas. */
#ifndef AD_PHYSICS_INTEGRATE_H
#define AD_PHYSICS_INTEGRATE_H

#include "grid.h"
#include "open.h"
#include "rng.h"
#include "state.h"

AD_HD static inline ad_state ad_wrap_state(const ad_params *p, ad_state s)
{
    if (p->periodic_x) s.x = ad_wrap(s.x, p->x_min, p->len_x);
    if (p->periodic_y) s.y = ad_wrap(s.y, p->y_min, p->len_y);
    return s;
}

/* Step 5 for one disc after it moved: the periodic wraps, then the open sides and the reservoir
 * (open.h; `doomed`: the reservoir's plan removes the disc in this step). *fate receives AD_KEPT,
 * or why the disc was removed (it then gets ad_dead_state()). Velocity Verlet's drift only wraps
 * (ad_wrap_state): a disc past an open side is removed at the end of its step, by the kick. The disc's
 * id is ids[slot], read only where the reservoir's thermostat needs it (the pass reads no ids else). */
AD_HD static inline ad_state ad_apply_boundaries(const ad_params *p, ad_state s, const uint32_t *ids, size_t slot,
                                                 uint64_t step, float dt, int doomed, int *fate)
{
    s = ad_wrap_state(p, s);
    *fate = (p->open_x || p->open_y) ? ad_open_motion(p, &s, ids, slot, step, dt, doomed) : AD_KEPT;
    return *fate == AD_KEPT ? s : ad_dead_state();
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

/* RK4 stage k of one disc, after the gather at its stage state: both backends' stage. */
typedef struct ad_rk4_disc {
    ad_state base;  /* at the step's start: the grid's, and the stages' origin */
    ad_state stage; /* at this stage */
    float ax, ay;   /* the acceleration at the stage (contacts and gravity) */
    float dt;
    int k;          /* 0..3 */
    /* the last stage's step 5 (ad_apply_boundaries): */
    const uint32_t *ids;
    size_t slot;
    uint64_t step;
    int doomed;     /* the reservoir's plan removes the disc in this step */
} ad_rk4_disc;

/* The next stage's state (the step's end at k = 3, its boundaries applied: *fate, as
 * ad_apply_boundaries). *past_skin: a kept disc moved further than `skin` in the step, so the
 * grid of the step's start may have missed contacts (counted in the statistics). acc: the
 * weighted sum across the stages (ad_rk4_stage). */
AD_HD static inline ad_state ad_rk4_disc_stage(const ad_params *p, const ad_rk4_disc *d, float skin, ad_state *acc,
                                               int *fate, int *past_skin)
{
    ad_state nx = ad_rk4_stage(d->base, d->stage, d->ax, d->ay, d->dt, d->k, acc);
    *fate = AD_KEPT;
    *past_skin = 0;
    if (d->k == 3) {
        nx = ad_apply_boundaries(p, nx, d->ids, d->slot, d->step, d->dt, d->doomed, fate);
        if (*fate == AD_KEPT) {
            float dx = ad_min_image(nx.x - d->base.x, p->periodic_x, p->len_x, p->half_x);
            float dy = ad_min_image(nx.y - d->base.y, p->periodic_y, p->len_y, p->half_y);
            *past_skin = dx * dx + dy * dy > skin * skin;
        }
    }
    return nx;
}

#endif
