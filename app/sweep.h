/* What a sweep (sweep.c) and its resume (sweep_resume.c) share: the command line, the points, their
 * scenes and their records. Internal to the program. */
#ifndef AD_APP_SWEEP_H
#define AD_APP_SWEEP_H

#include "live.h"
#include "tunnel.h"

/* What the command line of a sweep gives. */
typedef struct sweep_args {
    const char *scene_path, *range, *out, *backend, *threads;
    ad_run_options o;
    live_request live; /* --live, --live-address */
    char key[128];
    double from, to, step;
    int nval;
    int resume; /* --resume: continue the sweep that DIR holds */
} sweep_args;

/* What a point's folder holds, as --resume finds it. */
typedef enum point_state {
    POINT_NEW = 0, /* nothing of this point: it runs from the start */
    POINT_RESUME,  /* its run's checkpoint, no record: it continues from the checkpoint */
    POINT_DONE,    /* its record (POINT_RECORD): its numbers are taken from there */
} point_state;

/* A point of the sweep: its value, its folder, what it measured. */
typedef struct point {
    double v;
    char dir[AD_PATH_MAX];
    int state;       /* point_state */
    int done;        /* r is measured: the point is in the polar */
    ad_run_result r;
} point;

/* The record of a finished point, in its folder (sweep_resume.c says why it is there). */
#define POINT_RECORD "sweep_point.txt"

/* ---- sweep.c ---- */
/* Point k's scene: the base with the key at its value, finished, its settling fitted to the run's
 * steps; *noted (NULL: no note) is set once a note about the settling was printed, and stops the
 * next. */
ad_status point_scene(const sweep_args *a, const ad_scene *base, int k, ad_scene *t, int *noted);
/* The steps point k's run goes to. */
unsigned long long point_total(const sweep_args *a, const ad_scene *t);

/* ---- sweep_resume.c ---- */
/* The text of DIR/sweep.ini: the key, the range, --steps and the first point's resolved scene
 * (malloc'ed; NULL: out of memory). */
char *sweep_record(const sweep_args *a, const ad_scene *first);
/* DIR/sweep.ini made `record`, whole (a temporary name renamed), DIR made first. Exit code. */
int sweep_write_record(const char *dir, const char *record);
/* --resume: DIR/sweep.ini, where there is one, must be `record`, and every point's folder must hold
 * nothing or a run of that point's scene; sets each point's state (and the numbers of the done ones).
 * Returns -1 to go on, else the exit code (the message printed names the folder and the difference). */
int sweep_inspect(const sweep_args *a, const ad_scene *base, const char *dir, const char *record, point *pts);
/* The point's record written whole once its run and every output of it are; 0 or the exit code. */
int point_write(const point *p);
/* The point's record removed before it runs again (a stale one must not outlive the run it named). */
int point_forget(const point *p);
/* The sweep's command line with --resume (once), quoted for a POSIX shell (malloc'ed). */
char *sweep_resume_command(int argc, char **argv);

#endif
