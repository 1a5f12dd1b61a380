/* The step's bookkeeping, written once for both backends (step 6 of DESIGN.md): the rule that
 * chooses the next step, the record of sums a step folds (kinetic and elastic energy, momentum,
 * the virial, the forces on the body and the walls, the largest speed and overlap, counts), the
 * fold of two records, and the update of the statistics from a step's folded record.
 *
 * Who fills a record, and how, is the backend's: the CPU sums a block's discs in double, per disc
 * (the motion sums by slot mod 8, integrate8_cpu.h); the GPU sums a thread's disc in float, a warp in
 * float and a block's warps in double (src/cuda/block_sums.cuh). Those orders round differently,
 * which is why the two backends' golden hashes differ (tests/data/golden.txt); the record, its
 * fold and what the statistics make of it are these, on both.
 *
 * A 2D record uses its first AD_SUMS sums; a 3D one all AD_SUMS3: z's momentum and force, the body's
 * torque and two more walls. */
#ifndef AD_PHYSICS_STEP_SUMS_H
#define AD_PHYSICS_STEP_SUMS_H

#include "aerodem/aerodem.h"
#include "hd.h"
#include "params.h"
#include "state.h"

/* ------------------------------------------------------- the step's size -- */

/* How the next step is chosen: the fixed step, or (adaptive) the largest step that resolves the
 * contact time and lets no disc move more than max_move radii. Derived once from the definition
 * (ad_world_create). */
typedef struct ad_dt_rule {
    int adaptive;
    double dt_max;     /* the fixed step, or the adaptive ceiling [s] */
    double dt_contact; /* contact time / contact_steps [s] */
    double move;       /* max_move x radius [m]: the most a disc moves in an adaptive step, and RK4's skin */
} ad_dt_rule;

/* The next step, for a fastest disc of speed vmax. */
AD_HD static inline double ad_dt_next(const ad_dt_rule *r, double vmax)
{
    if (!r->adaptive) return r->dt_max;
    double dt = fmin(r->dt_max, r->dt_contact);
    if (vmax > 0.0) dt = fmin(dt, r->move / vmax);
    return dt;
}

/* ------------------------------------------------------ the step's record -- */

/* The record's sums, in this order. */
enum {
    AD_SUM_KE,      /* kinetic energy [J] */
    AD_SUM_PE,      /* elastic energy of the contacts [J] (a step somebody reads) */
    AD_SUM_PX,      /* momentum (a step somebody reads) */
    AD_SUM_PY,
    AD_SUM_VIRIAL,  /* contact virial [N m] */
    AD_SUM_BODY_FX, /* force on the body [N] */
    AD_SUM_BODY_FY,
    AD_SUM_WALL0,   /* normal force on wall k at AD_SUM_WALL0 + k, AD_WALL_* order [N] (6 in 3D) */
    AD_SUMS = AD_SUM_WALL0 + 4, /* the sums of a 2D step */
    AD_SUM_PZ = AD_SUM_WALL0 + 6, /* 3D: momentum along z */
    AD_SUM_BODY_FZ, /* 3D: the body's force along z [N] */
    AD_SUM_BODY_TX, /* 3D: the torque of the discs on the body about the origin [N m] */
    AD_SUM_BODY_TY,
    AD_SUM_BODY_TZ,
    AD_SUMS3        /* the sums of a 3D step */
};

/* A step's sums over a block of discs, or over all of them once folded. 184 bytes. */
typedef struct ad_step_sums {
    double v[AD_SUMS3];       /* AD_SUM_*; a 2D step uses the first AD_SUMS */
    float vmax2;              /* largest speed squared [m^2/s^2] */
    float max_overlap;        /* largest overlap of a contact [m] */
    uint32_t nonfinite;       /* discs whose state is not finite */
    uint32_t skin_violations; /* RK4: discs that moved past the skin */
    uint32_t left;            /* discs removed past open sides (the CPU; the GPU counts these in its control record) */
    uint32_t res_removed;     /* discs the reservoir removed (likewise) */
    uint32_t occupancy;       /* the GPU's grid diagnostics (its DIAG bin kernel): largest cell, */
    uint32_t overflow;        /* discs past the cell capacity, */
    uint32_t outside;         /* discs outside the domain */
    uint32_t pad;
} ad_step_sums;

/* a += b over the first nsums sums (AD_SUMS for a 2D step, whose records leave the others unset;
 * AD_SUMS3 for a 3D one): sums add, largest values stay largest. */
AD_HD static inline void ad_step_sums_add(ad_step_sums *a, const ad_step_sums *b, int nsums)
{
    for (int k = 0; k < nsums; k++) a->v[k] += b->v[k];
    a->vmax2 = fmaxf(a->vmax2, b->vmax2);
    a->max_overlap = fmaxf(a->max_overlap, b->max_overlap);
    a->nonfinite += b->nonfinite;
    a->skin_violations += b->skin_violations;
    a->left += b->left;
    a->res_removed += b->res_removed;
    a->occupancy = a->occupancy > b->occupancy ? a->occupancy : b->occupancy;
    a->overflow += b->overflow;
    a->outside += b->outside;
}

/* A block's kinetic energy and momentum in eight partial sums by slot: lane l takes the block's
 * slots s0 + l, s0 + 8 + l, ..., and the lanes are folded at the block's end in a fixed tree
 * (ad_fold8): the CPU's order, whose AVX2 build adds eight discs at once with two vector adds a
 * quantity (src/cpu/integrate8_cpu.h) where the scalar code adds one lane, and the reference
 * backend's, so that the two agree bit for bit. */
typedef struct ad_motion8 {
    double ke[8], px[8], py[8], pz[8];
} ad_motion8;

#define AD_DIM 2
#include "step_sums_dim.h"
#undef AD_DIM
#define AD_DIM 3
#include "step_sums_dim.h"
#undef AD_DIM

AD_HD static inline double ad_fold8(const double *v)
{
    return ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
}

/* The block's kinetic energy and momentum from its lane sums. */
AD_HD static inline void ad_motion8_fold(const ad_motion8 *m, ad_step_sums *b)
{
    b->v[AD_SUM_KE] = ad_fold8(m->ke);
    b->v[AD_SUM_PX] = ad_fold8(m->px);
    b->v[AD_SUM_PY] = ad_fold8(m->py);
}

/* 3D: the lane sums of z's momentum too. */
AD_HD static inline void ad_motion8_fold3(const ad_motion8 *m, ad_step_sums *b)
{
    ad_motion8_fold(m, b);
    b->v[AD_SUM_PZ] = ad_fold8(m->pz);
}

/* ----------------------------------------------------- into the statistics -- */

/* The statistics after a step of length dt whose folded record is t (vmax2 including the discs
 * added after the pass, which the next step must resolve too): the instantaneous values, the
 * time integrals, the clock and the next step. Left to the caller: the largest overlap in radii
 * (the CPU divides by the radius in double, the GPU multiplies by its float inverse: golden.txt
 * holds both) and the counts of removed discs (the GPU counts them as they happen). */
AD_HD static inline void ad_stats_add_step(ad_stats *s, const ad_step_sums *t, double dt, const ad_dt_rule *rule,
                                          int dims)
{
    s->kinetic_energy = t->v[AD_SUM_KE];
    s->potential_energy = t->v[AD_SUM_PE];
    s->momentum_x = t->v[AD_SUM_PX];
    s->momentum_y = t->v[AD_SUM_PY];
    s->contact_virial = t->v[AD_SUM_VIRIAL];
    s->body_force_x = t->v[AD_SUM_BODY_FX];
    s->body_force_y = t->v[AD_SUM_BODY_FY];
    s->body_impulse_x += t->v[AD_SUM_BODY_FX] * dt;
    s->body_impulse_y += t->v[AD_SUM_BODY_FY] * dt;
    for (int k = 0; k < 4; k++) s->wall_impulse[k] += t->v[AD_SUM_WALL0 + k] * dt;
    if (dims == 3) {
        for (int k = 4; k < 6; k++) s->wall_impulse[k] += t->v[AD_SUM_WALL0 + k] * dt;
        s->momentum_z = t->v[AD_SUM_PZ];
        s->body_force_z = t->v[AD_SUM_BODY_FZ];
        s->body_impulse_z += t->v[AD_SUM_BODY_FZ] * dt;
        s->body_torque_x = t->v[AD_SUM_BODY_TX];
        s->body_torque_y = t->v[AD_SUM_BODY_TY];
        s->body_torque_z = t->v[AD_SUM_BODY_TZ];
        s->body_angular_impulse_x += t->v[AD_SUM_BODY_TX] * dt;
        s->body_angular_impulse_y += t->v[AD_SUM_BODY_TY] * dt;
        s->body_angular_impulse_z += t->v[AD_SUM_BODY_TZ] * dt;
    }
    s->kinetic_energy_integral += t->v[AD_SUM_KE] * dt;
    s->contact_virial_integral += t->v[AD_SUM_VIRIAL] * dt;
    s->skin_violations += t->skin_violations;
    s->time += dt;
    s->step++;
    s->dt = ad_dt_next(rule, sqrt((double)t->vmax2));
}

/* The statistics ad_stats_add_step writes, and the largest overlap (its caller's). */
#define AD_STEP_STATS(X)                                                                                          \
    X(kinetic_energy) X(potential_energy) X(momentum_x) X(momentum_y) X(contact_virial) X(max_overlap)           \
    X(body_force_x) X(body_force_y) X(body_impulse_x) X(body_impulse_y) X(wall_impulse[0]) X(wall_impulse[1])     \
    X(wall_impulse[2]) X(wall_impulse[3]) X(kinetic_energy_integral) X(contact_virial_integral)                  \
    X(skin_violations) X(time) X(step) X(dt) X(wall_impulse[4]) X(wall_impulse[5]) X(momentum_z) X(body_force_z)  \
    X(body_impulse_z) X(body_torque_x) X(body_torque_y) X(body_torque_z) X(body_angular_impulse_x)                 \
    X(body_angular_impulse_y) X(body_angular_impulse_z)

/* Those statistics copied (a backend that keeps them elsewhere, the GPU's control record, brings
 * them to the world's and back). */
AD_HD static inline void ad_stats_copy_step(ad_stats *to, const ad_stats *from)
{
#define AD_COPY_STAT(f) to->f = from->f;
    AD_STEP_STATS(AD_COPY_STAT)
#undef AD_COPY_STAT
}

#endif
