/* `aerodem sweep`: one scene run over a range of one key (an angle of attack, a Mach number), written as a polar. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/image.h"
#include "io/vtk.h"
#include "live.h"
#include "tunnel.h"

static const char *USAGE_SWEEP =
    "usage: aerodem sweep SCENE.ini --set section.key=FROM:TO:STEP [--set section.key=value ...]\n"
    "                     [--out DIR] [--steps N] [--backend auto|cpu|cuda|reference]\n"
    "                     [--threads N] [--quiet] [--live [PORT]]\n"
    "\n"
    "Runs the scene once for each value FROM, FROM+STEP, ... up to TO of one key (for example\n"
    "--set body.aoa=-4:16:2), each into DIR/KEY_VALUE/, and writes DIR/polar.csv (the value, CL\n"
    "and CD with their standard errors) and DIR/polar.png. DIR defaults to the scene's\n"
    "[output] dir followed by /sweep. Each run shows its progress line (not with --quiet).\n"
    "Ctrl-C stops the run in progress with a checkpoint and writes the polar of the runs so far\n"
    "(exit code 130). --live shows each run in a browser as it goes (one page for the whole sweep):\n"
    LIVE_USAGE;

static int usage_error(const char *msg, const char *arg)
{
    fprintf(stderr, "aerodem: ");
    fprintf(stderr, msg, arg);
    fprintf(stderr, "\n\n%s", USAGE_SWEEP);
    return AD_EXIT_USAGE;
}

typedef struct row {
    double v;
    ad_run_result r;
} row;

/* polar.csv under a temporary name, renamed when whole (a kill leaves the old one or the new one) */
static int write_polar(const char *dir, const char *key, const row *rows, int n)
{
    char path[AD_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/polar.csv", dir);
    ad_io_file io;
    ad_status st = ad_io_open(&io, path);
    if (st.code) {
        fprintf(stderr, "aerodem: error: %s\n", st.message);
        return AD_EXIT_ERROR;
    }
    fprintf(io.f, "%s,cl,cl_se,cd,cd_se,steps,intervals\n", key);
    for (int k = 0; k < n; k++)
        fprintf(io.f, "%.9g,%.9g,%.9g,%.9g,%.9g,%llu,%llu\n", rows[k].v, rows[k].r.cl, rows[k].r.cl_se, rows[k].r.cd,
                rows[k].r.cd_se, rows[k].r.steps, rows[k].r.intervals);
    st = ad_io_commit(&io);
    if (st.code) {
        fprintf(stderr, "aerodem: error: %s\n", st.message);
        return AD_EXIT_ERROR;
    }
    if (n < 1) return AD_EXIT_OK;
    double *x = malloc(n * sizeof *x), *cl = malloc(n * sizeof *cl), *cle = malloc(n * sizeof *cle);
    double *cd = malloc(n * sizeof *cd), *cde = malloc(n * sizeof *cde);
    if (!x || !cl || !cle || !cd || !cde) {
        free(x), free(cl), free(cle), free(cd), free(cde);
        return AD_EXIT_ERROR;
    }
    for (int k = 0; k < n; k++) {
        x[k] = rows[k].v;
        cl[k] = rows[k].r.cl, cle[k] = rows[k].r.cl_se;
        cd[k] = rows[k].r.cd, cde[k] = rows[k].r.cd_se;
    }
    ad_plot_series s[2] = {{"CL", (size_t)n, x, cl, cle, {40, 90, 200}}, {"CD", (size_t)n, x, cd, cde, {210, 60, 40}}};
    char title[128];
    snprintf(title, sizeof title, "lift and drag coefficients (mean +- standard error)");
    ad_line_plot p = {title, key, "CL, CD", s, 2, 0, 0};
    snprintf(path, sizeof path, "%s/polar.png", dir);
    st = ad_write_line_plot_png(path, &p);
    free(x), free(cl), free(cle), free(cd), free(cde);
    if (st.code) {
        fprintf(stderr, "aerodem: error: %s\n", st.message);
        return AD_EXIT_ERROR;
    }
    return AD_EXIT_OK;
}

/* What the command line of a sweep gives. */
typedef struct sweep_args {
    const char *scene_path, *range, *out, *backend, *threads;
    ad_run_options o;
    live_request live;
    char key[128];
    double from, to, step;
    int nval;
} sweep_args;

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
    for (int k = 0; k < a->nval && !st.code; k++) { /* every value must pass the key's checks */
        ad_scene t = *base;
        snprintf(buf, sizeof buf, "%s=%.10g", a->key, a->from + k * a->step);
        st = ad_scene_set(&t, buf);
        if (!st.code) st = ad_scene_finish(&t);
    }
    return st;
}

/* The runs, one folder each under dir; *done counts the finished ones. Returns the exit code. */
static int run_values(const sweep_args *a, const ad_scene *base, const char *dir, row *rows, int *done)
{
    int rc = AD_EXIT_OK;
    char buf[256];
    for (int k = 0; k < a->nval; k++) {
        double v = a->from + k * a->step;
        ad_scene t = *base;
        snprintf(buf, sizeof buf, "%s=%.10g", a->key, v);
        ad_scene_set(&t, buf);
        ad_scene_finish(&t);
        char sub[AD_PATH_MAX + 160];
        int sl = snprintf(sub, sizeof sub, "%s/%s_%g", dir, strchr(a->key, '.') ? strchr(a->key, '.') + 1 : a->key, v);
        if (sl < 0 || (size_t)sl >= AD_PATH_MAX) {
            fprintf(stderr, "aerodem: error: the run folder %.200s... is %d characters long, above %d\n", sub, sl,
                    AD_PATH_MAX - 1);
            return AD_EXIT_USAGE;
        }
        ad_run_options ro = a->o;
        ro.out_dir = sub;
        ro.quiet = a->o.quiet ? 1 : 2; /* each point shows its progress line */
        char label[320];
        snprintf(label, sizeof label, "sweep: %s = %g (%d of %d)", a->key, v, k + 1, a->nval);
        ro.label = label;
        if (!a->o.quiet) printf("aerodem sweep: %s = %g (%d of %d) -> %s/\n", a->key, v, k + 1, a->nval, sub);
        rc = ad_tunnel_run(&t, &ro, &rows[k].r);
        rows[k].v = v;
        if (rc != AD_EXIT_OK) break;
        (*done)++;
        if (!a->o.quiet)
            printf("  CL = %.4g +- %.2g, CD = %.4g +- %.2g\n", rows[k].r.cl, rows[k].r.cl_se, rows[k].r.cd,
                   rows[k].r.cd_se);
    }
    return rc;
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
    /* every folder of the sweep whole or refused: a path cut short would write somewhere else */
    char dir[AD_PATH_MAX];
    int len = a.out ? snprintf(dir, sizeof dir, "%s", a.out) : snprintf(dir, sizeof dir, "%s/sweep", base.dir);
    if (!dir[0]) return usage_error("%s", "--out '': the folder is empty; give a folder, '.' for the working directory");
    if (len < 0 || (size_t)len >= sizeof dir - 32) {
        fprintf(stderr, "aerodem: error: the sweep's folder %.200s... is %d characters long, above %zu\n",
                a.out ? a.out : base.dir, len, sizeof dir - 33);
        return AD_EXIT_USAGE;
    }
    row *rows = calloc((size_t)a.nval, sizeof *rows);
    if (!rows) return AD_EXIT_ERROR;
    int done = 0;
    live_view *lv = NULL;
    st = live_open(&a.live, &lv);
    if (st.code) {
        free(rows);
        fprintf(stderr, "aerodem: error: %s\n", st.message);
        return st.code == AD_ERR_INVALID ? AD_EXIT_USAGE : AD_EXIT_ERROR;
    }
    a.o.live = lv;
    rc = run_values(&a, &base, dir, rows, &done);
    live_stop(lv);
    if (done > 0 || rc == AD_EXIT_OK) {
        int w = write_polar(dir, a.key, rows, done);
        if (w != AD_EXIT_OK && rc == AD_EXIT_OK) rc = w;
        else if (!a.o.quiet) printf("aerodem sweep: %d runs; polar in %s/polar.csv and %s/polar.png\n", done, dir, dir);
    }
    free(rows);
    return rc;
}
