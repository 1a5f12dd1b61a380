/* The wind-tunnel run: stepping a scene's world, measuring, writing outputs and checkpoints. */
#ifndef AD_APP_TUNNEL_H
#define AD_APP_TUNNEL_H

#include "core/scene.h"

typedef struct ad_run_options {
    const char *out_dir;          /* NULL: the scene's [output] dir */
    unsigned long long steps;     /* 0: the scene's [run] steps (total, counted from step 0) */
    int quiet;                    /* 1: nothing on the terminal; 2: the progress line alone (a sweep's points) */
    struct live_view *live;       /* the live view that shows the run (live.h); NULL: none */
    const char *label;            /* what the live view calls the run; NULL: the scene file */
    const char *resume_command;   /* what continues the run once interrupted, for the message; NULL:
                                     aerodem resume DIR/checkpoint.ckpt (a sweep's point: the sweep's own
                                     command with --resume) */
} ad_run_options;

/* Exit codes of the program. */
enum { AD_EXIT_OK = 0, AD_EXIT_ERROR = 1, AD_EXIT_USAGE = 2, AD_EXIT_INTERRUPTED = 130 };

/* The measured coefficients of a run (means over interval means after settling). */
typedef struct ad_run_result {
    double cl, cl_se, cd, cd_se;
    unsigned long long steps, intervals;
    uint64_t run_id;              /* the run's identity, as its scene.ini gives it (; run_id) */
} ad_run_result;

/* Runs a finished scene from its start; *res (may be NULL) receives the coefficients. */
int ad_tunnel_run(ad_scene *scene, const ad_run_options *opt, ad_run_result *res);

/* The settling must end before a run of `total` steps does: a --steps (steps_given) shorter than the
 * scene's settling takes the scene's share of it, said in a note on stderr unless quiet_note; where the
 * scene itself settles for all of its steps, the error says what to set. */
ad_status ad_tunnel_fit_settling(ad_scene *sc, unsigned long long total, int steps_given, int quiet_note);

/* Makes the folder `path` and its parents; 0, or -1 with errno set. */
int ad_tunnel_make_dirs(const char *path);

/* `aerodem body-stl SCENE OUT.stl`: a 3D scene's body written as an STL file (body_stl.c). */
int ad_body_stl(int argc, char **argv);

/* `aerodem sweep`: runs a scene over a range of one key and writes the polar. */
int ad_tunnel_sweep(int argc, char **argv);

/* Continues a run from a checkpoint in opt->out_dir: the run's own folder (forces.csv and frames.csv
 * trimmed to the checkpoint's step), a folder with no run in it (fresh files holding the continuation),
 * never another run's (refused, naming both runs). A finished run's final checkpoint resumed with no
 * more steps writes its summary and last frame again (a kill may have come between them). *res (may be
 * NULL) receives the coefficients of the whole run, as ad_tunnel_run's. */
int ad_tunnel_resume(const char *checkpoint, ad_backend backend, int threads, const ad_run_options *opt,
                     ad_run_result *res);

#endif
