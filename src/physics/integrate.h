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
/* Written once for both dimensions (integrate_dim.h, included here for 2D and 3D): every integrator
 * moves each axis by the same formula. */
#ifndef AD_PHYSICS_INTEGRATE_H
#define AD_PHYSICS_INTEGRATE_H

#include "grid.h"
#include "open.h"
#include "rng.h"
#include "state.h"

#define AD_DIM 2
#include "integrate_dim.h"
#undef AD_DIM
#define AD_DIM 3
#include "integrate_dim.h"
#undef AD_DIM

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

/* Step 5 for one sphere, as for a disc: the periodic wraps, then removal past an open face of x or y and
 * the reservoir (open.h, reservoir_dim.h). */
AD_HD static inline ad_state3 ad_apply_boundaries3(const ad_params *p, ad_state3 s, const uint32_t *ids, size_t slot,
                                                   uint64_t step, float dt, int doomed, int *fate)
{
    s = ad_wrap_state3(p, s);
    *fate = (p->open_x || p->open_y) ? ad_open_motion3(p, &s, ids, slot, step, dt, doomed) : AD_KEPT;
    return *fate == AD_KEPT ? s : ad_dead_state3();
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
        if (*fate == AD_KEPT) *past_skin = ad_moved_sq(p, nx, d->base) > skin * skin;
    }
    return nx;
}

#endif
