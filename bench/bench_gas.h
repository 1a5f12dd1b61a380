/* The discs of the measurement programs' gas (bench/, dev/), in C and C++: radius 0.5 m, mass 1 kg,
 * stiffness 1e4 N/m, contacts on; the damping, the box and the grid are each program's. */
#ifndef AERODEM_BENCH_GAS_H
#define AERODEM_BENCH_GAS_H

#include "../src/physics/params.h"

static inline void bench_disc_law(ad_params *p, float gamma_pp)
{
    p->radius = 0.5f;
    p->diameter = 1.0f;
    p->diameter_sq = 1.0f;
    p->mass = 1.0f;
    p->inv_mass = 1.0f;
    p->k = 1e4f;
    p->gamma_pp = gamma_pp;
    p->disc_contacts = 1;
}

#endif
