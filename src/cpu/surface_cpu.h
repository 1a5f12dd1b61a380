/* The CPU pass's surfaces: one disc against the body's panels and the walls (physics/surface.h), found
 * through the world's broad phase (the coarse segment grid, or the segment tree with the BVH). */
#ifndef AD_CPU_SURFACE_CPU_H
#define AD_CPU_SURFACE_CPU_H

#include "../physics/bvh.h"
#include "../physics/surface.h"
#include "cpu_world.h"

/* Slot s evaluated at `at` with acceleration (ax, ay): its panels' sums, its contact state, a re-emission's
 * velocity into *out and its forces into the block's sums. Out of line: the pass inlines its fast paths, and
 * this one, taken only where surfaces are sampled, must not weigh on their code. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static void ad_cpu_surface_disc(const ad_world *w, cpu_world *c, const ad_params *P, size_t s, ad_state at,
                                       float ax, float ay, float dt, uint64_t step, ad_state *out, ad_step_sums *b)
{
    ad_panel_hits h;
    if (c->use_bvh) {
        uint32_t stack[AD_BVH_STACK];
        ad_bvh_seg_hits(P, &w->seg.tree, at.x, at.y, at.vx, at.vy, stack, 1, &h);
    } else {
        ad_seg_hits(P, &w->seg.grid, at.x, at.y, at.vx, at.vy, &h);
    }
    ad_surface_disc2(P, w->seg.segs, &h, &c->touch[s], c->id[s], step, at, ax, ay, dt, out, w->panels.fix, b);
}

#endif
