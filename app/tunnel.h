/* The wind-tunnel run: stepping a scene's world, measuring, writing outputs and checkpoints. */
#ifndef AD_APP_TUNNEL_H
#define AD_APP_TUNNEL_H

#include "core/scene.h"

typedef struct ad_run_options {
    const char *out_dir;          /* NULL: the scene's [output] dir */
    unsigned long long steps;     /* 0: the scene's [run] steps (total, counted from step 0) */
    int quiet;
} ad_run_options;

/* Exit codes of the program. */
enum { AD_EXIT_OK = 0, AD_EXIT_ERROR = 1, AD_EXIT_USAGE = 2, AD_EXIT_INTERRUPTED = 130 };

/* Runs a finished scene from its start. */
int ad_tunnel_run(ad_scene *scene, const ad_run_options *opt);

/* Continues a run from a checkpoint. */
int ad_tunnel_resume(const char *checkpoint, ad_backend backend, int threads, const ad_run_options *opt);

#endif
