/* The flow tunnel the GPU tests compare the backends on: a gas around a small closed square
 * and a plate, with gravity and inelastic discs, so that every kind of contact, the open inlet
 * and outlet and the free-stream reservoir take part. */
#ifndef AERODEM_TEST_GPU_TUNNEL_H
#define AERODEM_TEST_GPU_TUNNEL_H

#include "test_util.h"

static inline ad_world_def gt_def(ad_backend b, ad_integrator integ)
{
    /* the stream at the fill's area fraction 0.35 */
    ad_world_def d = tu_channel(ad_default_world_def(), 20000, 80, 50, 3.0, 0.35 / (TU_PI * 0.25));
    d.backend = b;
    d.integrator = integ;
    d.reservoir = 4.0;
    d.gravity_y = -0.5;
    d.restitution = 0.8;
    d.wall_restitution = 0.9;
    d.deterministic = 1;
    d.threads = 2;
    return d;
}

/* Creates the world; exits 77 (skipped) when the CUDA backend is not there. */
static inline ad_world *gt_create(const ad_world_def *d)
{
    ad_world *w;
    ad_status st = ad_world_create(d, &w);
    if (st.code == AD_ERR_BACKEND && d->backend == AD_BACKEND_CUDA) {
        printf("SKIP: %s\n", st.message);
        exit(77);
    }
    REQUIRE_OK(st);
    return w;
}

/* The body (a closed square and a plate) and the gas. */
static inline void gt_fill(ad_world *w)
{
    ad_segment sq[] = {{30, 20, 36, 20}, {36, 20, 36, 26}, {36, 26, 30, 26}, {30, 26, 30, 20}, {50, 35, 60, 32}};
    REQUIRE_OK(ad_world_add_segments(w, sq, 5));
    ad_fill_def f = {0, 0, 80, 50, 0.35, 3.0, 0.0, 1.0, 11, 0, 0, 0};
    REQUIRE_OK(ad_world_fill(w, &f, NULL));
}

#endif
