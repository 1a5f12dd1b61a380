/* `aerodem sweep`: one scene run over a range of one key (an angle of attack, a Mach number), written as a
 * polar; --resume continues an interrupted sweep (sweep_resume.c). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/image.h"
#include "io/vtk.h"
#include "sweep.h"

static const char *USAGE_SWEEP =
    "usage: aerodem sweep SCENE.ini --set section.key=FROM:TO:STEP [--set section.key=value ...]\n"
    "                     [--out DIR] [--steps N] [--backend auto|cpu|cuda|reference]\n"
    "                     [--threads N] [--quiet] [--resume] [--live [PORT]]\n"
    "\n"
    "Runs the scene once for each value FROM, FROM+STEP, ... up to TO of one key (for example\n"
    "--set body.aoa=-4:16:2), each into DIR/KEY_VALUE/, and writes DIR/polar.csv (the value, CL\n"
    "and CD with their standard errors) and DIR/polar.png. DIR defaults to the scene's\n"
    "[output] dir followed by /sweep. Each run shows its progress line (not with --quiet).\n"
    "Ctrl-C stops the run in progress with a checkpoint, writes the polar of the runs so far\n"
    "and prints the command that continues the sweep (exit code 130).\n"
    "\n"
    "  --resume    continue the sweep DIR holds (the same command with --resume added): finished\n"
    "              points are not run again, the interrupted one continues from its checkpoint,\n"
    "              the rest run; the polar equals an uninterrupted sweep's. A DIR that holds another\n"
    "              sweep or scene is refused, naming the difference; an empty DIR just runs.\n"
    "              Without --resume every point starts afresh.\n"
    "--live shows each run in a browser as it goes (one page for the whole sweep):\n"
    LIVE_USAGE;

static int usage_error(const char *msg, const char *arg)
{
    fprintf(stderr, "aerodem: ");
    fprintf(stderr, msg, arg);
    fprintf(stderr, "\n\n%s", USAGE_SWEEP);
    return AD_EXIT_USAGE;
}

/* polar.png of the n points measured, in their order */
static int write_polar_png(const char *dir, const char *key, const point *const *pts, int n)
{
    double *x = malloc(n * sizeof *x), *cl = malloc(n * sizeof *cl), *cle = malloc(n * sizeof *cle);
    double *cd = malloc(n * sizeof *cd), *cde = malloc(n * sizeof *cde);
    if (!x || !cl || !cle || !cd || !cde) {
        free(x), free(cl), free(cle), free(cd), free(cde);
        fprintf(stderr, "aerodem: error: out of memory for the polar of %d points\n", n);
        return AD_EXIT_ERROR;
    }
    for (int k = 0; k < n; k++) {
        x[k] = pts[k]->v;
        cl[k] = pts[k]->r.cl, cle[k] = pts[k]->r.cl_se;
        cd[k] = pts[k]->r.cd, cde[k] = pts[k]->r.cd_se;
    }
    ad_plot_series s[2] = {{"CL", (size_t)n, x, cl, cle, {40, 90, 200}, 0}, {"CD", (size_t)n, x, cd, cde, {210, 60, 40}, 0}};
    char title[128], path[AD_PATH_MAX + 32];
    snprintf(title, sizeof title, "lift and drag coefficients (mean +- standard error)");
    ad_line_plot p = {title, key, "CL, CD", s, 2, 0, 0, 0, NULL};
    snprintf(path, sizeof path, "%s/polar.png", dir);
    ad_status st = ad_write_line_plot_png(path, &p);
    free(x), free(cl), free(cle), free(cd), free(cde);
    if (st.code) {
        fprintf(stderr, "aerodem: error: %s\n", st.message);
        return AD_EXIT_ERROR;
    }
    return AD_EXIT_OK;
}

/* polar.csv (under a temporary name, renamed when whole: a kill leaves the old one or the new one) and
 * polar.png of the points measured; *n receives their count. */
static int write_polar(const char *dir, const char *key, const point *pts, int nval, int *n)
{
    const point **done = malloc((size_t)nval * sizeof *done);
    if (!done) return AD_EXIT_ERROR;
    *n = 0;
    for (int k = 0; k < nval; k++)
        if (pts[k].done) done[(*n)++] = &pts[k];
    char path[AD_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/polar.csv", dir);
    ad_io_file io;
    ad_status st = ad_io_open(&io, path);
    if (!st.code) {
        fprintf(io.f, "%s,cl,cl_se,cd,cd_se,steps,intervals\n", key);
        for (int k = 0; k < *n; k++) {
            const ad_run_result *r = &done[k]->r;
            fprintf(io.f, "%.9g,%.9g,%.9g,%.9g,%.9g,%llu,%llu\n", done[k]->v, r->cl, r->cl_se, r->cd, r->cd_se,
                    r->steps, r->intervals);
        }
        st = ad_io_commit(&io);
    }
    int rc = AD_EXIT_OK;
    if (st.code) {
        fprintf(stderr, "aerodem: error: %s\n", st.message);
        rc = AD_EXIT_ERROR;
    } else if (*n > 0) rc = write_polar_png(dir, key, done, *n);
    free(done);
    return rc;
}

/* The options; returns -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, sweep_args *a)
{
    for (int i = 2; i < argc; i++) {
        const char *arg = argv[i];
        if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
            printf("%s", USAGE_SWEEP);
            return 0;
        }
        if (!strcmp(arg, "--quiet")) {
            a->o.quiet = 1;
            continue;
        }
        if (!strcmp(arg, "--resume")) {
            a->resume = 1;
            continue;
        }
        char msg[256];
        int lk = live_parse_option(argc, argv, &i, &a->live, msg, sizeof msg);
        if (lk < 0) return usage_error("%s", msg);
        if (lk) continue;
        if (!strcmp(arg, "--set") || !strcmp(arg, "--out") || !strcmp(arg, "--steps") || !strcmp(arg, "--backend") ||
            !strcmp(arg, "--threads")) {
            if (i + 1 >= argc) return usage_error("%s needs a value", arg);
            const char *v = argv[++i];
            if (!strcmp(arg, "--set")) {
                const char *eq = strchr(v, '=');
                if (eq && strchr(eq, ':')) {
                    if (a->range) return usage_error("one range at a time (also got --set %s)", v);
                    a->range = v;
                }
            } else if (!strcmp(arg, "--out")) {
                a->out = v;
            } else if (!strcmp(arg, "--steps")) {
                char *end;
                double d = strtod(v, &end);
                if (end == v || *end || !(d >= 1) || d != floor(d) || d > 1e15)
                    return usage_error("--steps %s: expected a whole number of steps >= 1", v);
                a->o.steps = (unsigned long long)d;
            } else if (!strcmp(arg, "--backend")) {
                a->backend = v;
            } else {
                a->threads = v;
            }
            continue;
        }
        if (arg[0] == '-') return usage_error("unknown option %s", arg);
        if (a->scene_path) return usage_error("one scene at a time (also got %s)", arg);
        a->scene_path = arg;
    }
    if (!a->scene_path) return usage_error("%s", "sweep needs a scene file");
    if (!a->range) return usage_error("%s", "sweep needs one --set section.key=FROM:TO:STEP");
    const char *eq = strchr(a->range, '=');
    snprintf(a->key, sizeof a->key, "%.*s", (int)(eq - a->range), a->range);
    char tail;
    if (sscanf(eq + 1, "%lf:%lf:%lf%c", &a->from, &a->to, &a->step, &tail) != 3 || !isfinite(a->from) ||
        !isfinite(a->to) || !(a->step > 0) || a->to < a->from || (a->to - a->from) / a->step > 1000)
        return usage_error("--set %s: expected FROM:TO:STEP with STEP > 0, FROM <= TO, at most 1000 values", a->range);
    a->nval = (int)floor((a->to - a->from) / a->step + 1e-9) + 1;
    return -1;
}

ad_status point_scene(const sweep_args *a, const ad_scene *base, int k, ad_scene *t, int *noted)
{
    char buf[256];
    *t = *base;
    snprintf(buf, sizeof buf, "%s=%.10g", a->key, a->from + k * a->step);
    ad_status st = ad_scene_set(t, buf);
    if (!st.code) st = ad_scene_finish(t);
    if (st.code) return st;
    unsigned long long was = t->settle_steps;
    st = ad_tunnel_fit_settling(t, point_total(a, t), a->o.steps != 0, !noted || *noted);
    if (noted && t->settle_steps != was) *noted = 1;
    return st;
}

unsigned long long point_total(const sweep_args *a, const ad_scene *t) { return a->o.steps ? a->o.steps : t->steps; }

/* The scene and every fixed --set, and every value of the range, checked once before anything runs. */
static ad_status check_scene(int argc, char **argv, const sweep_args *a, ad_scene *base)
{
    ad_scene_defaults(base);
    ad_status st = ad_scene_load(base, a->scene_path);
    for (int i = 2; i < argc && !st.code; i++)
        if (!strcmp(argv[i], "--set") && argv[i + 1] != a->range) st = ad_scene_set(base, argv[++i]);
    char buf[256];
    if (!st.code && a->backend) {
        snprintf(buf, sizeof buf, "run.backend=%s", a->backend);
        st = ad_scene_set(base, buf);
    }
    if (!st.code && a->threads) {
        snprintf(buf, sizeof buf, "run.threads=%s", a->threads);
        st = ad_scene_set(base, buf);
    }
    int noted = 0;
    for (int k = 0; k < a->nval && !st.code; k++) { /* every value must pass the key's checks */
        ad_scene t;
        st = point_scene(a, base, k, &t, &noted);
    }
    return st;
}

/* Every point's value and folder, DIR/KEY_VALUE; a path too long is refused, never cut short. */
static int name_points(const sweep_args *a, const char *dir, point *pts)
{
    const char *name = strchr(a->key, '.') ? strchr(a->key, '.') + 1 : a->key;
    for (int k = 0; k < a->nval; k++) {
        pts[k].v = a->from + k * a->step;
        char sub[AD_PATH_MAX + 160];
        int sl = snprintf(sub, sizeof sub, "%s/%s_%g", dir, name, pts[k].v);
        if (sl < 0 || (size_t)sl >= AD_PATH_MAX - 32) {
            fprintf(stderr, "aerodem: error: the run folder %.200s... is %d characters long, above %d\n", sub, sl,
                    AD_PATH_MAX - 33);
            return AD_EXIT_USAGE;
        }
        memcpy(pts[k].dir, sub, (size_t)sl + 1);
    }
    return -1;
}

/* Point k: taken from its record, continued from its checkpoint, or run. Returns the exit code. */
static int run_point(const sweep_args *a, const ad_scene *base, point *p, int k, const char *again)
{
    int quiet = a->o.quiet;
    if (p->state == POINT_DONE) {
        if (!quiet)
            printf("aerodem sweep: %s = %g (%d of %d): done before, in %s/\n  CL = %.4g +- %.2g, CD = %.4g +- %.2g\n",
                   a->key, p->v, k + 1, a->nval, p->dir, p->r.cl, p->r.cl_se, p->r.cd, p->r.cd_se);
        return AD_EXIT_OK;
    }
    ad_scene t;
    ad_status st = point_scene(a, base, k, &t, NULL);
    if (st.code) { /* checked before anything ran */
        fprintf(stderr, "aerodem: error: %s\n", st.message);
        return AD_EXIT_USAGE;
    }
    int rc = point_forget(p);
    if (rc != AD_EXIT_OK) return rc;
    ad_run_options ro = a->o;
    ro.out_dir = p->dir;
    ro.quiet = quiet ? 1 : 2; /* each point shows its progress line */
    ro.resume_command = again;
    char label[320];
    snprintf(label, sizeof label, "sweep: %s = %g (%d of %d)", a->key, p->v, k + 1, a->nval);
    ro.label = label;
    if (p->state == POINT_RESUME) {
        char ckpt[AD_PATH_MAX + 32];
        snprintf(ckpt, sizeof ckpt, "%s/checkpoint.ckpt", p->dir);
        if (!quiet)
            printf("aerodem sweep: %s = %g (%d of %d) -> %s/, continued from its checkpoint\n", a->key, p->v, k + 1,
                   a->nval, p->dir);
        fflush(stdout);
        ro.steps = point_total(a, &t);
        rc = ad_tunnel_resume(ckpt, AD_BACKEND_AUTO, -1, &ro, &p->r); /* on the backend and threads it ran on */
    } else {
        if (!quiet) printf("aerodem sweep: %s = %g (%d of %d) -> %s/\n", a->key, p->v, k + 1, a->nval, p->dir);
        fflush(stdout);
        rc = ad_tunnel_run(&t, &ro, &p->r);
    }
    if (rc == AD_EXIT_OK) rc = point_write(p);
    if (rc != AD_EXIT_OK) return rc;
    p->done = 1;
    if (!quiet) printf("  CL = %.4g +- %.2g, CD = %.4g +- %.2g\n", p->r.cl, p->r.cl_se, p->r.cd, p->r.cd_se);
    return AD_EXIT_OK;
}

/* The sweep's folder: --out, or the scene's [output] dir followed by /sweep; whole or refused. */
static int sweep_dir(const sweep_args *a, const ad_scene *base, char *dir, size_t n)
{
    int len = a->out ? snprintf(dir, n, "%s", a->out) : snprintf(dir, n, "%s/sweep", base->dir);
    if (!dir[0])
        return usage_error("%s", "--out '': the folder is empty; give a folder, '.' for the working directory");
    if (len < 0 || (size_t)len >= n - 32) {
        fprintf(stderr, "aerodem: error: the sweep's folder %.200s... is %d characters long, above %zu\n",
                a->out ? a->out : base->dir, len, n - 33);
        return AD_EXIT_USAGE;
    }
    return -1;
}

/* What DIR holds checked (--resume) and the sweep's record written, before the first point runs. */
static int claim_sweep(const sweep_args *a, const ad_scene *base, const char *dir, point *pts)
{
    ad_scene first;
    ad_status st = point_scene(a, base, 0, &first, NULL);
    if (st.code) {
        fprintf(stderr, "aerodem: error: %s\n", st.message);
        return AD_EXIT_USAGE;
    }
    char *record = sweep_record(a, &first);
    if (!record) {
        fprintf(stderr, "aerodem: error: out of memory\n");
        return AD_EXIT_ERROR;
    }
    int rc = a->resume ? sweep_inspect(a, base, dir, record, pts) : -1;
    if (rc < 0) rc = sweep_write_record(dir, record);
    free(record);
    return rc == AD_EXIT_OK ? -1 : rc;
}

int ad_tunnel_sweep(int argc, char **argv)
{
    sweep_args a;
    memset(&a, 0, sizeof a);
    a.live.port = -1;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0) return rc;
    ad_scene base;
    ad_status st = check_scene(argc, argv, &a, &base);
    if (st.code) {
        fprintf(stderr, "aerodem: error: %s\n", st.message);
        return st.code == AD_ERR_IO ? AD_EXIT_ERROR : AD_EXIT_USAGE;
    }
    char dir[AD_PATH_MAX];
    rc = sweep_dir(&a, &base, dir, sizeof dir);
    if (rc >= 0) return rc;
    point *pts = calloc((size_t)a.nval, sizeof *pts);
    char *again = sweep_resume_command(argc, argv);
    if (!pts || !again) {
        free(pts), free(again);
        fprintf(stderr, "aerodem: error: out of memory\n");
        return AD_EXIT_ERROR;
    }
    rc = name_points(&a, dir, pts);
    if (rc < 0) rc = claim_sweep(&a, &base, dir, pts);
    int started = rc < 0, done = 0, k = 0;
    live_view *lv = NULL;
    if (started) {
        st = live_open(&a.live, &lv);
        rc = AD_EXIT_OK;
        if (st.code) {
            fprintf(stderr, "aerodem: error: %s\n", st.message);
            rc = st.code == AD_ERR_INVALID ? AD_EXIT_USAGE : AD_EXIT_ERROR;
            started = 0;
        }
        a.o.live = lv;
    }
    while (started && k < a.nval && rc == AD_EXIT_OK) {
        rc = run_point(&a, &base, &pts[k], k, again);
        if (rc == AD_EXIT_OK) k++;
    }
    live_stop(lv);
    for (int j = 0; j < a.nval; j++) done += pts[j].done;
    if (started && (done > 0 || rc == AD_EXIT_OK)) {
        int n = 0, w = write_polar(dir, a.key, pts, a.nval, &n);
        if (w != AD_EXIT_OK && rc == AD_EXIT_OK) rc = w;
        else if (w == AD_EXIT_OK && !a.o.quiet)
            printf("aerodem sweep: %d of %d points; polar in %s/polar.csv and %s/polar.png\n", n, a.nval, dir, dir);
    }
    if (started && rc == AD_EXIT_INTERRUPTED) /* the run's message above gave the command that continues */
        fprintf(stderr, "aerodem sweep: stopped at point %d of %d (%s = %g), %d of them done\n", k + 1, a.nval,
                a.key, pts[k].v, done);
    free(pts);
    free(again);
    return rc;
}
