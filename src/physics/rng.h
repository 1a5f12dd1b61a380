/* Counter-based random numbers: the value depends only on (seed, counter), so any thread or GPU
 * lane can draw its own numbers and every run is reproducible from the seed. */
#ifndef AD_PHYSICS_RNG_H
#define AD_PHYSICS_RNG_H

#include "hd.h"

/* SplitMix64's finaliser over a Weyl sequence of the counter, then a second mix with
 * the seed folded in, so nearby seeds give unrelated streams. */
AD_HD static inline uint64_t ad_rng_u64(uint64_t seed, uint64_t counter)
{
    uint64_t z = seed + (counter + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    z += seed ^ 0xD6E8FEB86659FD93ull;
    z = (z ^ (z >> 32)) * 0xD6E8FEB86659FD93ull;
    z = (z ^ (z >> 32)) * 0xD6E8FEB86659FD93ull;
    return z ^ (z >> 32);
}

/* Uniform in (0, 1], never 0 (safe for log). */
AD_HD static inline double ad_rng_uniform(uint64_t seed, uint64_t counter)
{
    return ((double)(ad_rng_u64(seed, counter) >> 11) + 1.0) * (1.0 / 9007199254740992.0);
}

/* Two independent standard normal numbers (Box-Muller) from counters 2c and 2c+1. */
AD_HD static inline void ad_rng_normal2(uint64_t seed, uint64_t c, double *a, double *b)
{
    double u1 = ad_rng_uniform(seed, 2 * c), u2 = ad_rng_uniform(seed, 2 * c + 1);
    double r = sqrt(-2.0 * log(u1));
    *a = r * cos(2.0 * AD_PI * u2);
    *b = r * sin(2.0 * AD_PI * u2);
}

#endif
