/* The contact law of contact.h in one dimension (included by contact.h with AD_DIM 2, then 3; see
 * dim.h): what a disc or sphere accumulates, the pair law, the law against a static surface point and
 * against the solid walls of the box. No include guard: it is meant to be included once a dimension. */
#include "dim.h"

/* What one disc (sphere) accumulates over its contacts in a force evaluation. */
typedef struct AD_ACCUM {
#define AD_M(c) float f##c; /* total contact force [N] */
    AD_EACH(AD_M)
#undef AD_M
    float pressure;    /* sum |F| [N] */
    float virial;      /* 1/2 sum r_ij . F_ij [N m] */
    float energy;      /* elastic energy share [J] */
    float max_overlap; /* largest overlap [m] */
#define AD_M(c) float body_f##c; /* reaction on the body [N] */
    AD_EACH(AD_M)
#undef AD_M
#if AD_DIM == 3
    float body_tx, body_ty, body_tz; /* the reaction's torque about the origin [N m] */
#endif
    float wall[AD_WALLS]; /* normal force on each wall, outward positive [N] */
} AD_ACCUM;

AD_HD static inline void AD_D(ad_accum_zero)(AD_ACCUM *a)
{
#define AD_M(c) a->f##c = a->body_f##c = 0.0f;
    AD_EACH(AD_M)
#undef AD_M
    a->pressure = a->virial = a->energy = a->max_overlap = 0.0f;
#if AD_DIM == 3
    a->body_tx = a->body_ty = a->body_tz = 0.0f;
#endif
    for (int k = 0; k < AD_WALLS; k++) a->wall[k] = 0.0f;
}

/* The pair law once the distance is known: dist = |d|, touch = 1 and inv = 1 / dist where the two
 * touch, touch = inv = 0 where they do not (a no-op then, in exact zeros). */
AD_HD static inline void AD_D(ad_contact_disc_at)(const ad_params *p, AD_ARGS(d), AD_ARGS(dv), float dist, float inv,
                                                  float touch, AD_ACCUM *a)
{
#define AD_M(c) float n##c = d##c * inv;
    AD_EACH(AD_M)
#undef AD_M
    float delta = (p->diameter - dist) * touch;
#define AD_M(c) dv##c * n##c
    float vn = AD_SUM(AD_M);
#undef AD_M
    float f = ad_normal_force(p->k, p->gamma_pp, delta, vn);
#define AD_M(c) a->f##c -= f * n##c;
    AD_EACH(AD_M)
#undef AD_M
    a->pressure += fabsf(f);
    a->virial += 0.5f * dist * f;
    a->energy += 0.25f * p->k * delta * delta;
    a->max_overlap = a->max_overlap > delta ? a->max_overlap : delta;
}

/* Disc (sphere) i meets j. d: x_j - x_i (minimum image); dv: v_j - v_i. Accumulates into *a if they
 * touch. Branch-free: whether a candidate touches is a coin toss in a gas, so a mask costs less than
 * the mispredicted branch. */
AD_HD static inline void AD_D(ad_contact_disc)(const ad_params *p, AD_ARGS(d), AD_ARGS(dv), AD_ACCUM *a)
{
#define AD_M(c) d##c * d##c
    float d2 = AD_SUM(AD_M);
#undef AD_M
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
    AD_D(ad_contact_disc_at)(p, AD_PASS(d), AD_PASS(dv), dist, inv, touch, a);
}

/* Disc with velocity v pressed by delta > 0 onto a static body whose outward unit normal at the
 * contact is n. Returns the force magnitude on the disc (along +n) and accumulates it. */
AD_HD static inline float AD_D(ad_contact_static)(const ad_params *p, float delta, AD_ARGS(n), AD_ARGS(v), AD_ACCUM *a)
{
#define AD_M(c) v##c * n##c
    float vn = AD_SUM(AD_M);
#undef AD_M
    float f = ad_normal_force(p->k, p->gamma_wall, delta, vn);
#define AD_M(c) a->f##c += f * n##c;
    AD_EACH(AD_M)
#undef AD_M
    a->pressure += fabsf(f);
    a->energy += 0.5f * p->k * delta * delta;
    a->max_overlap = a->max_overlap > delta ? a->max_overlap : delta;
    return f;
}

/* Disc centred at (x, y[, z]) against a body's point q closer than a radius: the force on the disc
 * in *f, 1 where they touch. */
AD_HD static inline int AD_D(ad_contact_point)(const ad_params *p, AD_ARGS(), AD_ARGS(v), AD_ARGS(q), AD_PARGS(f),
                                               AD_ACCUM *a)
{
#define AD_M(c) float d##c = c - q##c; /* from the body to the centre */
    AD_EACH(AD_M)
#undef AD_M
#define AD_M(c) d##c * d##c
    float d2 = AD_SUM(AD_M);
#undef AD_M
    if (d2 >= p->radius * p->radius || d2 <= 0.0f) return 0;
    float dist = sqrtf(d2);
    float inv = 1.0f / dist;
#define AD_M(c) float n##c = d##c * inv;
    AD_EACH(AD_M)
#undef AD_M
    float fn = AD_D(ad_contact_static)(p, p->radius - dist, AD_PASS(n), AD_PASS(v), a);
#define AD_M(c) *f##c = fn * n##c;
    AD_EACH(AD_M)
#undef AD_M
    return 1;
}

/* Disc against the solid walls of the box (params.wall, per side). Walls push along their inward
 * normal even when a centre has crossed them; the wall force, outward positive, goes into a->wall. */
AD_HD static inline void AD_D(ad_contact_walls)(const ad_params *p, AD_ARGS(), AD_ARGS(v), AD_ACCUM *a)
{
    float lo, hi;
#define AD_M(c)                                                                                                       \
    lo = c - p->c##_min;                                                                                              \
    hi = p->c##_max - c;                                                                                              \
    if (p->wall[2 * AD_AXIS(c)] && lo < p->radius)                                                                    \
        a->wall[2 * AD_AXIS(c)] += AD_D(ad_contact_static)(p, p->radius - lo, AD_UNIT(c, 1.0f), AD_PASS(v), a);      \
    if (p->wall[2 * AD_AXIS(c) + 1] && hi < p->radius)                                                                \
        a->wall[2 * AD_AXIS(c) + 1] += AD_D(ad_contact_static)(p, p->radius - hi, AD_UNIT(c, -1.0f), AD_PASS(v), a);
    AD_EACH(AD_M)
#undef AD_M
}

#include "dim_end.h"
