/* Pieces both benchmark programs use: the clock, the options they share, the CSV file, and a scene scaled to
 * N discs. */
#ifndef AERODEM_BENCH_UTIL_H
#define AERODEM_BENCH_UTIL_H

#include <math.h>
#include <stdio.h>
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

/* The options both benchmarks take: --sizes N,N,... --steps S --warmup W --threads T --scene FILE --csv FILE. */
typedef struct bench_args {
    double sizes[16];
    int nsizes, threads;
    long steps, warmup; /* steps 0: the program's own budget */
    const char *scene, *csv;
} bench_args;

/* Takes argv[*i] and its value where it is one of bench_args' options (*i then indexes the value); returns 0
 * where it is not, or has no value after it. */
static int bench_arg(int argc, char **argv, int *i, bench_args *a)
{
    if (*i + 1 >= argc) return 0;
    const char *opt = argv[*i];
    char *v = argv[*i + 1];
    if (!strcmp(opt, "--sizes")) a->nsizes = parse_sizes(v, a->sizes, 16);
    else if (!strcmp(opt, "--steps")) a->steps = atol(v);
    else if (!strcmp(opt, "--warmup")) a->warmup = atol(v);
    else if (!strcmp(opt, "--threads")) a->threads = atoi(v);
    else if (!strcmp(opt, "--scene")) a->scene = v;
    else if (!strcmp(opt, "--csv")) a->csv = v;
    else return 0;
    ++*i;
    return 1;
}

/* *out: the CSV file at `path` with its header line written, or NULL where path is NULL. Returns 0 where it
 * cannot be written (said on stderr, after the program's name). */
static int bench_csv(const char *prog, const char *path, const char *header, FILE **out)
{
    *out = NULL;
    if (!path) return 1;
    *out = fopen(path, "w");
    if (!*out) {
        fprintf(stderr, "%s: cannot write %s\n", prog, path);
        return 0;
    }
    fputs(header, *out);
    return 1;
}

/* The scene at `path`, its tunnel, chord and body position scaled so that it holds about n discs. */
static inline ad_status scaled_scene(const char *path, double n, ad_scene *sc)
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
