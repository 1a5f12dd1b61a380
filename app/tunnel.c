/* The wind-tunnel run: stepping in chunks between events (force rows, frames, checkpoints on steps
 * and on the wall clock), progress, the end of a run. The files are outputs.c's, resume is resume.c's. */
#include "run.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "io/vtk.h"
#include "core/free_each.h"
#include "machine_load.h"
#include "ranks.h"

/* ad_world_step stops after the step in progress when g_stop is set: by Ctrl-C (g_user) or by
 * the wall-clock checkpoint timer (g_due). */
static volatile int g_stop = 0;
static volatile sig_atomic_t g_user = 0, g_due = 0;

static void on_signal(int sig)
{
    (void)sig;
    g_user = 1;
    g_stop = 1;
}

static void on_alarm(int sig)
{
    (void)sig;
    g_due = 1;
    g_stop = 1;
}

/* One shot of the checkpoint timer in `seconds` (0: off). */
static void arm(double seconds)
{
    struct itimerval t;
    memset(&t, 0, sizeof t);
    if (seconds > 0) {
        t.it_value.tv_sec = (time_t)seconds;
        t.it_value.tv_usec = (suseconds_t)((seconds - floor(seconds)) * 1e6);
        if (t.it_value.tv_sec == 0 && t.it_value.tv_usec == 0) t.it_value.tv_usec = 1;
    }
    setitimer(ITIMER_REAL, &t, NULL);
}

static double wall(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

ad_status fail(ad_code code, const char *fmt, ...)
{
    ad_status s;
    memset(&s, 0, sizeof s);
    s.code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s.message, sizeof s.message, fmt, ap);
    va_end(ap);
    return s;
}

ad_status ok(void) { return fail(AD_OK, "%s", ""); }

void say(const run *r, const char *fmt, ...)
{
    if (r->quiet) return;
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fflush(stdout);
}

int report(ad_status st)
{
    fprintf(stderr, "aerodem: error: %s\n", st.message);
    return st.code == AD_ERR_INVALID || st.code == AD_ERR_FORMAT ? AD_EXIT_USAGE : AD_EXIT_ERROR;
}

ad_status path_in(const run *r, char *buf, size_t n, const char *fmt, ...)
{
    char name[256];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    int len = k < 0 || (size_t)k >= sizeof name ? -1 : snprintf(buf, n, "%s/%s", r->dir, name);
    if (len < 0 || (size_t)len >= n) {
        if (n) buf[0] = 0;
        return fail(AD_ERR_INVALID, "the output path %.300s/%.60s is longer than %zu characters", r->dir, name, n - 1);
    }
    return ok();
}

double mean_of(double s, double n) { return n > 0 ? s / n : NAN; }

double se_of(double s, double s2, double n)
{
    if (n < 2) return NAN;
    double m = s / n;
    return sqrt(fmax(s2 / n - m * m, 0.0) * n / (n - 1) / n);
}

/* ---------------------------------------------------------- checkpoint -- */

ad_status save_checkpoint(run *r)
{
    size_t n = 0;
    void *blk = ckpt_block(r, &n);
    if (!blk) return fail(AD_ERR_NO_MEMORY, "out of memory");
    char path[AD_PATH_MAX + 64];
    ad_status st = path_in(r, path, sizeof path, "checkpoint.ckpt");
    if (!st.code) st = ad_world_save(r->w, path, blk, n);
    free(blk);
    if (!st.code) {
        ad_stats s;
        ad_world_get_stats(r->w, &s);
        r->ckpt_step = (long long)s.step;
    }
    return st;
}

/* The command that continues the run from `checkpoint`, and a new line. */
static void print_continue(const run *r, const char *checkpoint)
{
    if (r->resume_cmd) fprintf(stderr, "%s\n", r->resume_cmd);
    else if (ranks_count() > 1) fprintf(stderr, "mpirun -np %d aerodem resume %s (on any number of ranks)\n", ranks_count(),
                                        checkpoint);
    else fprintf(stderr, "aerodem resume %s\n", checkpoint);
}

/* A failed run: the error, and where the work done so far is kept. */
static int report_lost(run *r, ad_status st)
{
    int rc = report(st);
    char ckpt[AD_PATH_MAX + 32];
    snprintf(ckpt, sizeof ckpt, "%s/checkpoint.ckpt", r->dir);
    if (r->ckpt_step >= 0) {
        fprintf(stderr, "  the last good checkpoint is %s (step %lld); once the cause is fixed, continue with: ", ckpt,
                r->ckpt_step);
        print_continue(r, ckpt);
    } else if (r->from) {
        fprintf(stderr, "  the checkpoint %s is unchanged; continue from it with: ", r->from);
        print_continue(r, r->from);
    } else fprintf(stderr, "  no checkpoint was written yet\n");
    return rc;
}

/* ------------------------------------------------------------------ loop -- */

static unsigned long long next_multiple(unsigned long long step, unsigned long long every)
{
    return every ? (step / every + 1) * every : ~0ull;
}

/* The progress line. Its ETA comes from the rate since the last line (halved into the earlier
 * ones), not from the start: the first steps carry the start-up (a GPU's graph capture, the first
 * pictures) and a tunnel's disc count grows as the stream fills it, so the first line has no ETA
 * yet. */
static void progress(run *r, double t_start, unsigned long long step0, int final)
{
    static double last = 0, rate = 0, run_start = -1;
    static unsigned long long last_step = 0;
    double now = wall();
    if (t_start != run_start) { /* a new run of this process (a sweep's next point) */
        run_start = t_start;
        last = t_start;
        last_step = step0;
        rate = 0;
    }
    if (r->quiet == 1 || (!final && now - last < (isatty(fileno(stderr)) ? 0.5 : 10.0))) return;
    ad_stats s;
    ad_world_get_stats(r->w, &s);
    double recent = now > last && s.step > last_step ? (double)(s.step - last_step) / (now - last) : 0;
    int first = last == t_start;
    if (!first && recent > 0) rate = rate > 0 ? 0.5 * (rate + recent) : recent;
    last = now;
    last_step = s.step;
    double el = now - t_start, mean = el > 0 ? (double)(s.step - step0) / el : 0, left = (double)(r->total - s.step);
    char eta[32] = "-:--:--";
    if (rate > 0 || final) {
        double e = rate > 0 ? left / rate : 0;
        snprintf(eta, sizeof eta, "%d:%02d:%02d", (int)(e / 3600), (int)(fmod(e, 3600) / 60), (int)fmod(e, 60));
    }
    fprintf(stderr, "%sstep %llu/%llu (%3.0f%%)  t = %.4g s  %.3g particle-steps/s  ETA %s%s",
            isatty(fileno(stderr)) ? "\r" : "", (unsigned long long)s.step, r->total,
            100.0 * (double)s.step / (double)r->total, s.time, (rate > 0 ? rate : mean) * (double)s.count, eta,
            isatty(fileno(stderr)) && !final ? "   " : "\n");
    fflush(stderr);
}

static void print_start(run *r)
{
    if (r->sc.dimensions == 3) {
        out3_print_start(r);
        return;
    }
    ad_stats s;
    ad_world_get_stats(r->w, &s);
    const ad_flow_numbers *f = &r->flow;
    say(r, "aerodem: %s\n", r->sc.source);
    char ranks[48] = "";
    if (s.ranks > 1) snprintf(ranks, sizeof ranks, "%d ranks x ", s.ranks);
    say(r, "  tunnel %g x %g m, %zu discs of radius %g m, area fraction %g, backend %s (%s%d threads)\n", r->sc.width,
        r->sc.height, s.count, r->sc.radius, r->sc.area_fraction, ad_backend_name(s.backend), ranks, s.threads);
    if (r->sc.kind == AD_TUNNEL_FLOW && r->sc.collisions)
        say(r, "  free stream U = %g m/s: speed ratio S = %.3g, Mach M = %.3g (dilute, gamma = 2) or %.3g (with the "
               "discs' excluded area, Z = %.3g), Knudsen Kn = %.3g (mean free path %.3g m over chord %g m)\n",
            r->sc.velocity, f->speed_ratio, f->mach, f->mach_dense, f->compressibility, f->knudsen, f->mean_free_path,
            r->sc.chord);
    else if (r->sc.kind == AD_TUNNEL_FLOW) /* no collisions: no sound speed, no mean free path */
        say(r, "  free stream U = %g m/s: speed ratio S = %.3g; free-molecular (the discs do not collide)\n",
            r->sc.velocity, f->speed_ratio);
    if (r->sc.kind == AD_TUNNEL_FLOW) {
        const ad_scene_layout *l = &r->layout;
        const char *walls = r->sc.walls == AD_BOUNDARY_OPEN ? "far field" : r->sc.walls == AD_BOUNDARY_SOLID ? "solid"
                                                                                                             : "periodic";
        if (l->reservoir > 0)
            say(r, "  open inlet and outlet, top and bottom %s; free-stream reservoir outside the open sides, %g m "
                   "wide (%g m upstream)\n",
                walls, l->band[1], l->band[0]);
        else
            say(r, "  open inlet and outlet, top and bottom %s; no reservoir\n", walls);
        if (r->probe)
            say(r, "  the free stream is measured in x [%g, %g] m, y [%g, %g] m\n", l->probe_x0, l->probe_x1,
                l->probe_y0, l->probe_y1);
    }
    char broad[64];
    if (r->sc.broad_phase == AD_BROAD_PHASE_BVH) snprintf(broad, sizeof broad, "a Morton-code BVH over the discs");
    else snprintf(broad, sizeof broad, "grid %u x %u cells", s.grid_nx, s.grid_ny);
    say(r, "  contact time %.4g s, step %.4g s, %s; output in %s/\n", s.contact_time, s.dt, broad, r->dir);
    /* the dashpot switches on and off inside a step: the restitution's error is first order in
     * the step, up to about 3 (-ln e) / contact_steps (docs/VALIDATION.md, contact mechanics) */
    double e = fmin(r->sc.restitution, r->sc.wall_restitution), err = 3.0 * -log(e) / r->sc.contact_steps;
    if (e < 1.0 && err > 0.01)
        say(r, "  note: restitution %g is resolved to about %.0f %% at run.contact_steps = %g; "
               "run.contact_steps = %.0f brings it to about 1 %%\n",
            e, 100.0 * err, r->sc.contact_steps, ceil(3.0 * -log(e) / 0.01));
}

/* The end of a run, in the order that keeps most of it should anything fail or a kill come: the
 * final checkpoint (marked finished, so that resuming it writes these outputs again) and the
 * summary first, then the last frame's files and the heat maps. */
static ad_status end_outputs(run *r)
{
    ad_status st = out_summary(r, 0);
    if (!st.code) st = out_surface(r);
    if (!st.code) st = out_frame_files(r, r->m.frames - 1, 1);
    return st;
}

/* Everything due at `step`, after the world reached it. */
static ad_status at_step(run *r, unsigned long long step, unsigned long long frame_every)
{
    const ad_scene *sc = &r->sc;
    int final = step == r->total;
    ad_status st = ok();
    if (step % sc->force_interval == 0 || final) {
        st = out_force_row(r);
        if (!st.code) st = surf_row(r);
        if (!st.code) live_row(r);
    }
    int frame = step % frame_every == 0 || final;
    if (!st.code && frame) st = out_frame_row(r);
    if (!st.code && frame && !final) st = out_frame_files(r, r->m.frames - 1, 0);
    if (!st.code && !r->m.settled && step >= sc->settle_steps) {
        /* averages start here: fields restart, force means count from the next row */
        st = ad_world_reset_fields(r->w);
        if (!st.code) st = surf_reset(r);
        if (!st.code) {
            r->m.settled = 1;
            memset(&r->m.probe_settled, 0, sizeof r->m.probe_settled);
            if (r->probe) ad_world_read_probe(r->w, &r->m.probe_settled);
        }
    }
    if (st.code) return st;
    if (final) {
        r->m.finished = 1;
        st = save_checkpoint(r);
        if (!st.code) st = end_outputs(r);
        return st;
    }
    if ((sc->checkpoint_interval && step % sc->checkpoint_interval == 0) || g_due) {
        g_due = 0;
        g_stop = g_user;
        st = save_checkpoint(r);
        arm(sc->checkpoint_seconds);
    }
    return st;
}

static void handle_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART; /* writes in progress go on */
    sigaction(SIGALRM, &sa, NULL);
    /* a file over the size limit (ulimit -f) fails its write with EFBIG, reported with its name */
    sa.sa_handler = SIG_IGN;
    sigaction(SIGXFSZ, &sa, NULL);
    /* a Ctrl-C that came between a sweep's points (the handler stays) stops the next one at its start,
     * with its checkpoint, rather than being forgotten */
    g_due = 0;
    g_stop = g_user;
}

/* What the signals ask of the run, the same on every rank of an MPI job (ranks.h): a Ctrl-C or a timer on
 * any rank stopped every rank's world at the same step (the world agrees on its interrupt), and now
 * every rank checkpoints, or stops, alike. */
static void agree_signals(void)
{
    if (ranks_count() < 2) return;
    int bits = ad_parallel_or((g_user ? 1 : 0) | (g_due ? 2 : 0));
    g_user = bits & 1;
    g_due = (bits & 2) != 0;
    g_stop = g_user || g_due;
}

#define AD_SLABS_SHOWN 16 /* the slab edges a run's last line lists */

/* Runs from the world's current step to r->total. */
int run_loop(run *r)
{
    handle_signals();
    ad_world_set_interrupt(r->w, &g_stop);
    ad_stats s;
    ad_world_get_stats(r->w, &s);
    unsigned long long step = s.step, step0 = step;
    double t0 = wall();
    const ad_scene *sc = &r->sc;
    unsigned long long frame_every = sc->frame_interval ? sc->frame_interval : r->total;
    /* frames.csv (index, step, time) carries the times of earlier frames across a resume */
    ad_status st = out_load_frames(r, step);
    arm(sc->checkpoint_seconds);
    while (!st.code && step < r->total && !g_user) {
        unsigned long long next = r->total;
        if (!r->m.settled && sc->settle_steps > step && sc->settle_steps < next) next = sc->settle_steps;
        unsigned long long ev[] = {next_multiple(step, sc->force_interval), next_multiple(step, frame_every),
                                   next_multiple(step, sc->checkpoint_interval)};
        for (int k = 0; k < 3; k++)
            if (ev[k] < next) next = ev[k];
        st = ad_world_step(r->w, next - step);
        agree_signals();
        ad_world_get_stats(r->w, &s);
        step = s.step;
        if (!st.code) st = at_step(r, step, frame_every);
        progress(r, t0, step0, 0);
        live_offer(r);
    }
    arm(0);
    progress(r, t0, step0, 1);
    ad_world_set_interrupt(r->w, NULL);
    if (st.code) return report_lost(r, st);
    if (step < r->total) {
        st = save_checkpoint(r);
        if (!st.code) st = out_summary(r, 1);
        if (!st.code) st = out_surface(r);
        if (st.code) return report_lost(r, st);
        char ckpt[AD_PATH_MAX + 32];
        snprintf(ckpt, sizeof ckpt, "%s/checkpoint.ckpt", r->dir);
        fprintf(stderr, "aerodem: interrupted at step %llu; checkpoint written to %s\n  continue with: ", step, ckpt);
        print_continue(r, ckpt);
        return AD_EXIT_INTERRUPTED;
    }
    out_video(r);
    double secs = wall() - t0;
    ad_world_get_stats(r->w, &s);
    say(r, "  done: %llu steps in %.1f s (%.3g %s-steps/s, %zu %s at the end); results in %s/\n", step - step0, secs,
        secs > 0 ? (double)(step - step0) * (double)s.count / secs : 0.0, r->sc.dimensions == 3 ? "sphere" : "disc",
        s.count, r->sc.dimensions == 3 ? "spheres" : "discs", r->dir);
    if (s.ranks > 1) {
        double x[AD_SLABS_SHOWN + 1];
        unsigned long long moves = 0;
        int n = ad_world_slabs(r->w, x, AD_SLABS_SHOWN + 1, &moves);
        char edges[AD_SLABS_SHOWN * 16 + 8] = "";
        for (int k = 1; k < n && k < AD_SLABS_SHOWN; k++)
            snprintf(edges + strlen(edges), sizeof edges - strlen(edges), "%s%.4g", k > 1 ? ", " : "", x[k]);
        say(r, "  %d ranks: the slowest rank's busy time is %.3g x the mean (rank imbalance; 1 is even); slab edges "
               "at x = %s%s m, moved %llu times by the load balance\n",
            s.ranks, s.rank_imbalance, edges, n > AD_SLABS_SHOWN ? ", ..." : "", moves);
    }
    return AD_EXIT_OK;
}

/* Everything a run needs besides the world; the outputs checked as far as they can be now. */
ad_status prepare(run *r, const ad_run_options *opt)
{
    const char *dir = opt->out_dir ? opt->out_dir : r->sc.dir;
    if (!dir[0])
        return fail(AD_ERR_INVALID, "the output folder is empty (--out \"\" or [output] dir with no value): name a "
                                    "folder");
    /* the job's lead writes the folder; another rank of an MPI job its scratch copy (ranks.h) */
    ad_status st = ranks_folder(dir, r->dir, sizeof r->dir);
    if (st.code) return st;
    r->quiet = opt->quiet;
    r->live = opt->live;
    r->resume_cmd = opt->resume_command;
    r->flow = ad_scene_flow_numbers(&r->sc);
    r->fd.nx = (int)ceil(r->sc.width / r->sc.field_cell);
    r->fd.ny = (int)ceil(r->sc.height / r->sc.field_cell);
    r->fd.x0 = 0;
    r->fd.y0 = 0;
    r->fd.x1 = r->fd.nx * r->sc.field_cell;
    r->fd.y1 = r->fd.ny * r->sc.field_cell;
    r->fd.interval = (uint32_t)(r->sc.field_interval > 0xFFFFFFFFull ? 0xFFFFFFFFull : r->sc.field_interval);
    st = out_check(r);
    if (st.code) return st;
    st = r->sc.dimensions == 3 ? out3_prepare(r) : ad_scene_outline(&r->sc, &r->ox, &r->oy, &r->on, &r->oclosed);
    if (!st.code) st = surf_prepare(r);
    if (st.code) return st;
    r->scene_ini = ad_scene_to_ini(&r->sc);
    if (!r->scene_ini) return fail(AD_ERR_NO_MEMORY, "out of memory");
    st = ad_scene_layout_with(&r->sc, &r->mesh, &r->layout); /* 3D: out3_prepare's mesh, built once */
    if (st.code) return st;
    r->probe = r->layout.probe_x1 > r->layout.probe_x0;
    return ok();
}

/* The probe, once the world and its fields exist (a resumed world has it already). */
static ad_status set_probe(run *r)
{
    if (!r->probe) return ok();
    /* the discs moving downstream: the stream as it comes, not what the body throws back */
    ad_probe_def p = {r->layout.probe_x0, r->layout.probe_y0, r->layout.probe_x1, r->layout.probe_y1, 1.0, 0.0,
                      r->layout.probe_z0, r->layout.probe_z1};
    return ad_world_set_probe(r->w, &p);
}

void cleanup(run *r)
{
    live_end(r);
    ad_world_destroy(r->w);
    AD_FREE_EACH(r->scene_ini, r->ox, r->oy, r->fidx, r->ftime, r->section);
    surf_free(r);
    ad_mesh_free(&r->mesh);
}

ad_status out_body(run *r)
{
    if (r->sc.dimensions == 3) return out3_body(r);
    if (!r->on || !r->sc.vtk) return ok();
    char path[AD_PATH_MAX + 32];
    ad_status st = path_in(r, path, sizeof path, "body.vtp");
    if (!st.code) st = ad_write_vtp_panels(path, r->ox, r->oy, r->on, r->oclosed, NULL, 0);
    return st;
}

/* A fresh run starts fresh files: the rows and the summary of an earlier run in the folder go. */
static ad_status start_folder(run *r)
{
    out_remove_temps(r);
    const char *gone[] = {"forces.csv", "frames.csv", "summary.txt"};
    char path[AD_PATH_MAX + 32];
    for (int k = 0; k < 3; k++) {
        ad_status st = path_in(r, path, sizeof path, "%s", gone[k]);
        if (st.code) return st;
        if (unlink(path) != 0 && errno != ENOENT) return fail(AD_ERR_IO, "cannot remove %s: %s", path, strerror(errno));
    }
    ad_status st = out_scene_ini(r);
    if (!st.code) st = out_body(r);
    return st;
}

/* The settling must end before the run does. A --steps shorter than the scene's settling takes the
 * scene's share of settling (settle_steps / steps) of the shorter run, said in a note and kept in
 * scene.ini; where the scene itself settles for all of its steps the message says what to set. */
ad_status ad_tunnel_fit_settling(ad_scene *sc, unsigned long long total, int steps_given, int quiet_note)
{
    if (sc->settle_steps < total) return ok();
    if (steps_given && sc->settle_steps < sc->steps) {
        unsigned long long was = sc->settle_steps;
        sc->settle_steps = (unsigned long long)((double)total * ((double)was / (double)sc->steps));
        if (!quiet_note)
            fprintf(stderr,
                    "aerodem: note: --steps %llu is within the scene's settling: [run] settle_steps shortened from "
                    "%llu to %llu (the scene's share, %llu of %llu steps); --set run.settle_steps=N sets it\n",
                    total, was, sc->settle_steps, was, sc->steps);
        return ok();
    }
    return fail(AD_ERR_INVALID,
                "the run of %llu steps ends before its settling does ([run] settle_steps = %llu): give --set "
                "run.settle_steps=%llu (a quarter of the run, or any number below %llu) or more --steps",
                total, sc->settle_steps, total / 4, total);
}

int ad_tunnel_run(ad_scene *scene, const ad_run_options *opt, ad_run_result *res)
{
    run r;
    memset(&r, 0, sizeof r);
    r.frame_lo = r.frame_hi = NAN; /* fixed at the first frame */
    r.sc = *scene;
    r.ckpt_step = -1;
    r.total = opt->steps ? opt->steps : r.sc.steps;
    ad_status st = ad_tunnel_fit_settling(&r.sc, r.total, opt->steps != 0, 0);
    if (st.code) return report(st);
    r.id = new_run_id();
    snprintf(r.origin, sizeof r.origin, "%s", r.sc.source);
    st = prepare(&r, opt);
    ad_scene built = r.sc; /* scene.ini keeps threads = 0: the choice is this machine's, now */
    if (!st.code) machine_load_fit(&built);
    if (!st.code) st = ad_scene_build_with(&built, &r.mesh, &r.w);
    if (!st.code) st = ad_world_set_fields(r.w, &r.fd);
    if (!st.code) st = set_probe(&r);
    if (!st.code) st = out_make_dirs(&r);
    if (!st.code) st = start_folder(&r);
    if (st.code) {
        cleanup(&r);
        return report(st);
    }
    print_start(&r);
    live_begin(&r, opt->label ? opt->label : r.sc.source);
    int rc = run_loop(&r);
    if (res) run_result(&r, res);
    cleanup(&r);
    return rc;
}

void run_result(const run *r, ad_run_result *res)
{
    double n = (double)r->m.n;
    ad_stats s;
    ad_world_get_stats(r->w, &s);
    res->cl = mean_of(r->m.sum_cl, n);
    res->cd = mean_of(r->m.sum_cd, n);
    res->cl_se = se_of(r->m.sum_cl, r->m.sum_cl2, n);
    res->cd_se = se_of(r->m.sum_cd, r->m.sum_cd2, n);
    res->steps = s.step;
    res->intervals = r->m.n;
    res->run_id = r->id;
}
