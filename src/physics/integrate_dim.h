/* The integrators of integrate.h in one dimension (included by integrate.h with AD_DIM 2, then 3; see
 * dim.h): each moves every axis by the same formula. a: the acceleration at the state the forces were
 * evaluated at. No include guard: it is meant to be included once a dimension. */
#include "dim.h"

/* The periodic axes' wraps. */
AD_HD static inline AD_STATE AD_D(ad_wrap_state)(const ad_params *p, AD_STATE s)
{
#define AD_M(c) if (p->periodic_##c) s.c = ad_wrap(s.c, p->c##_min, p->len_##c);
    AD_EACH(AD_M)
#undef AD_M
    return s;
}

AD_HD static inline AD_STATE AD_D(ad_step_symplectic)(AD_STATE s, AD_ARGS(a), float dt)
{
#define AD_M(c) s.v##c += a##c * dt;
    AD_EACH(AD_M)
#undef AD_M
#define AD_M(c) s.c += s.v##c * dt;
    AD_EACH(AD_M)
#undef AD_M
    return s;
}

AD_HD static inline AD_STATE AD_D(ad_step_euler)(AD_STATE s, AD_ARGS(a), float dt)
{
#define AD_M(c) s.c += s.v##c * dt;
    AD_EACH(AD_M)
#undef AD_M
#define AD_M(c) s.v##c += a##c * dt;
    AD_EACH(AD_M)
#undef AD_M
    return s;
}

/* Verlet drift with the previous acceleration a: new position, and the predicted velocity v + a dt
 * that the next force evaluation uses. */
AD_HD static inline AD_STATE AD_D(ad_verlet_drift)(AD_STATE s, AD_ARGS(a), float dt)
{
#define AD_M(c) s.c += (s.v##c + 0.5f * a##c * dt) * dt;
    AD_EACH(AD_M)
#undef AD_M
#define AD_M(c) s.v##c += a##c * dt;
    AD_EACH(AD_M)
#undef AD_M
    return s;
}

/* Verlet kick: from the predicted velocity back to the half step with the old acceleration, forward
 * with the new one. */
AD_HD static inline AD_STATE AD_D(ad_verlet_kick)(AD_STATE s, AD_ARGS(a_old), AD_ARGS(a), float dt)
{
#define AD_M(c) s.v##c += 0.5f * (a##c - a_old##c) * dt;
    AD_EACH(AD_M)
#undef AD_M
    return s;
}

/* RK4: stage k (0..3) derivative (v, a) at the stage state. Accumulates the weighted sum and returns
 * the next stage's state base + c dt * derivative. */
AD_HD static inline AD_STATE AD_D(ad_rk4_stage)(AD_STATE base, AD_STATE stage, AD_ARGS(a), float dt, int k,
                                                AD_STATE *acc)
{
    const float w = (k == 0 || k == 3) ? 1.0f / 6.0f : 1.0f / 3.0f;
    const float c = (k == 2) ? 1.0f : 0.5f;
    if (k == 0) {
#define AD_M(q) acc->q = acc->v##q = 0.0f;
        AD_EACH(AD_M)
#undef AD_M
    }
#define AD_M(q) acc->q += w * stage.v##q;
    AD_EACH(AD_M)
#undef AD_M
#define AD_M(q) acc->v##q += w * a##q;
    AD_EACH(AD_M)
#undef AD_M
    AD_STATE next = base; /* the spare words of a 3D state stay the base's */
    if (k < 3) {
#define AD_M(q) next.q = base.q + c * dt * stage.v##q;
        AD_EACH(AD_M)
#undef AD_M
#define AD_M(q) next.v##q = base.v##q + c * dt * a##q;
        AD_EACH(AD_M)
#undef AD_M
    } else {
#define AD_M(q) next.q = base.q + dt * acc->q;
        AD_EACH(AD_M)
#undef AD_M
#define AD_M(q) next.v##q = base.v##q + dt * acc->v##q;
        AD_EACH(AD_M)
#undef AD_M
    }
    return next;
}

/* The squared distance a state moved from `from`, with the minimum image on periodic axes (RK4's
 * skin test). */
AD_HD static inline float AD_D(ad_moved_sq)(const ad_params *p, AD_STATE to, AD_STATE from)
{
#define AD_M(c) float d##c = ad_min_image(to.c - from.c, p->periodic_##c, p->len_##c, p->half_##c);
    AD_EACH(AD_M)
#undef AD_M
#define AD_M(c) d##c * d##c
    return AD_SUM(AD_M);
#undef AD_M
}

#include "dim_end.h"
