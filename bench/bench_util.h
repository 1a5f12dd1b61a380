/* Pieces both benchmark programs use: the clock, the size list, and a scene scaled to N discs. */
#ifndef AERODEM_BENCH_UTIL_H
#define AERODEM_BENCH_UTIL_H

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/scene.h"

static double wall(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* "1e5,1e6,..." into sizes[0..max-1]; returns the count. */
static int parse_sizes(char *list, double *sizes, int max)
{
    int n = 0;
    for (char *t = strtok(list, ","); t && n < max; t = strtok(NULL, ",")) sizes[n++] = atof(t);
    return n;
}

/* The scene at `path`, its tunnel, chord and body position scaled so that it holds about n discs. */
static ad_status scaled_scene(const char *path, double n, ad_scene *sc)
{
    ad_scene_defaults(sc);
    ad_status st = ad_scene_load(sc, path);
    if (!st.code) st = ad_scene_finish(sc);
    if (st.code) return st;
    double n0 = sc->area_fraction * sc->width * sc->height / (M_PI * sc->radius * sc->radius);
    double f = sqrt(n / n0);
    sc->width *= f;
    sc->height *= f;
    sc->chord *= f;
    sc->x *= f;
    sc->y *= f;
    return st;
}

#endif
