/* Resume: the run's identity and its checkpoint caller block, the folder it continues in (its own,
 * trimmed to the checkpoint; a new one, started fresh; another run's, refused), and a finished run's
 * final outputs written again. */
#include "run.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "io/vtk.h"

/* ------------------------------------------------------------ identity -- */

uint64_t new_run_id(void)
{
    uint64_t id = 0;
    FILE *f = fopen("/dev/urandom", "rb");
    if (f) {
        if (fread(&id, sizeof id, 1, f) != 1) id = 0;
        fclose(f);
    }
    if (!id) { /* no /dev/urandom: the clock and the process */
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        id = ((uint64_t)t.tv_sec * 1000000007ull) ^ ((uint64_t)t.tv_nsec << 20) ^ (uint64_t)getpid();
        id ^= id >> 29;
        id *= 0xbf58476d1ce4e5b9ull;
        id ^= id >> 32;
    }
    return id ? id : 1;
}

uint64_t folder_run_id(const run *r, int *has_scene)
{
    char path[AD_PATH_MAX + 32], line[256];
    *has_scene = 0;
    if (path_in(r, path, sizeof path, "scene.ini").code) return 0;
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    *has_scene = 1;
    unsigned long long id = 0;
    for (int k = 0; k < 4 && fgets(line, sizeof line, f); k++)
        if (sscanf(line, "; run_id %llx", &id) == 1) break;
    fclose(f);
    return id;
}

/* The probe sums into zeroed memory, up to their last field: the block holds no stray padding bytes
 * (the sums have none before `directed`, only after it), so a resumed run's final checkpoint equals an
 * uninterrupted one's byte for byte. */
static ad_probe_sums clean_probe(const ad_probe_sums *p)
{
    _Static_assert(offsetof(ad_probe_sums, directed) == sizeof(uint64_t) + 6 * sizeof(double),
                   "the probe's sums gained padding: copy them field by field");
    ad_probe_sums c;
    memset(&c, 0, sizeof c);
    memcpy(&c, p, offsetof(ad_probe_sums, directed) + sizeof c.directed);
    return c;
}

/* The measure is part of the checkpoint format (tests/test_outputs.sh patches frames at 72). */
_Static_assert(sizeof(measure) == 224 && offsetof(measure, frames) == 72 && offsetof(measure, probe_row) == 96,
               "the layout of the run state in checkpoints changed");
_Static_assert(sizeof(run_tag) == 1040, "the run tag of checkpoints changed");
_Static_assert(sizeof(measure3) == 72, "the 3D run state of checkpoints changed");

/* The scene text, the measure, the total, the surface state (surface_out.c; checkpoints older than it have
 * none), the run tag and a 3D run's measure3: the tag and measure3 stay the block's last bytes, where checkpoints
 * older than the surface state have them too. */
void *ckpt_block(const run *r, size_t *n)
{
    size_t tl = strlen(r->scene_ini) + 1;
    int three = r->sc.dimensions == 3;
    size_t at_surface = tl + sizeof(measure) + sizeof(unsigned long long), at_tag = at_surface + surf_block_size(r);
    *n = at_tag + sizeof(run_tag) + (three ? sizeof(measure3) : 0);
    char *blk = calloc(1, *n);
    if (!blk) return NULL;
    measure m;
    memcpy(&m, &r->m, sizeof m); /* bytes, not an assignment: padding is copied as it is (zero) */
    ad_probe_sums row = clean_probe(&r->m.probe_row), settled = clean_probe(&r->m.probe_settled);
    memcpy(&m.probe_row, &row, sizeof row);
    memcpy(&m.probe_settled, &settled, sizeof settled);
    run_tag tag;
    memset(&tag, 0, sizeof tag);
    memcpy(tag.magic, AD_RUN_TAG, 8);
    tag.id = r->id;
    snprintf(tag.source, sizeof tag.source, "%s", r->origin);
    memcpy(blk, r->scene_ini, tl);
    memcpy(blk + tl, &m, sizeof m);
    memcpy(blk + tl + sizeof m, &r->total, sizeof r->total);
    surf_block_pack(r, blk + at_surface);
    memcpy(blk + at_tag, &tag, sizeof tag);
    if (three) {
        measure3 m3;
        memcpy(&m3, &r->m3, sizeof m3);
        memcpy(m3.magic, AD_MEASURE3_TAG, sizeof m3.magic);
        memcpy(blk + at_tag + sizeof tag, &m3, sizeof m3);
    }
    return blk;
}

/* The caller block back: the scene, the measure (checked: a CRC proves the file intact, not sane),
 * the total and the tag (absent in checkpoints older than it: run id 0); the surface state's place in
 * [*surface, *surface + *surface_n) (empty in checkpoints older than it), read once the panels are known. */
static ad_status unpack_block(run *r, const char *blk, size_t n, const char *checkpoint, uint64_t step,
                              size_t *surface, size_t *surface_n)
{
    size_t tl = blk ? strnlen(blk, n) + 1 : 0;
    size_t base = tl + sizeof(measure) + sizeof(unsigned long long);
    *surface = base, *surface_n = 0;
    if (!blk || tl > n || (n != base && n < base + sizeof(run_tag)))
        return fail(AD_ERR_FORMAT, "%s holds a world but not an aerodem run (no scene in it)", checkpoint);
    ad_scene_defaults(&r->sc);
    snprintf(r->sc.source, sizeof r->sc.source, "%s", checkpoint);
    ad_status st = ad_scene_load_string(&r->sc, blk, checkpoint);
    if (!st.code) st = ad_scene_finish(&r->sc);
    if (st.code) return st;
    memcpy(&r->m, blk + tl, sizeof r->m);
    memcpy(&r->total, blk + tl + sizeof r->m, sizeof r->total);
    snprintf(r->origin, sizeof r->origin, "%s", checkpoint);
    int three = r->sc.dimensions == 3;
    size_t last = sizeof(run_tag) + (three ? sizeof(measure3) : 0); /* the tag and measure3, at the end */
    if ((n == base && three) || (n != base && n < base + last))
        return fail(AD_ERR_FORMAT, "%s: the run state in the caller block is not that of a %dD run", checkpoint,
                    r->sc.dimensions);
    size_t at_tag = n == base ? n : n - last;
    *surface_n = at_tag - base;
    if (three) {
        memcpy(&r->m3, blk + at_tag + sizeof(run_tag), sizeof r->m3);
        const measure3 *q = &r->m3;
        if (memcmp(q->magic, AD_MEASURE3_TAG, sizeof q->magic) != 0 || !isfinite(q->impulse_z) ||
            !isfinite(q->angular[0]) || !isfinite(q->angular[1]) || !isfinite(q->angular[2]) || !isfinite(q->sum_cy) ||
            !isfinite(q->sum_cy2) || !isfinite(q->sum_cm) || !isfinite(q->sum_cm2))
            return fail(AD_ERR_FORMAT, "%s: the 3D run state in the caller block is damaged", checkpoint);
    }
    if (n != base) {
        run_tag tag;
        memcpy(&tag, blk + at_tag, sizeof tag);
        if (memcmp(tag.magic, AD_RUN_TAG, 8) != 0 || !memchr(tag.source, 0, sizeof tag.source))
            return fail(AD_ERR_FORMAT, "%s: the run's identity in the caller block is damaged", checkpoint);
        r->id = tag.id;
        snprintf(r->origin, sizeof r->origin, "%s", tag.source);
    }
    const measure *m = &r->m;
    int sane = m->frames <= step && m->rows <= step && m->n <= m->rows && (m->settled == 0 || m->settled == 1) &&
               (m->finished == 0 || (m->finished == 1 && m->frames >= 1)) && isfinite(m->sum_cd) && isfinite(m->sum_cd2) &&
               isfinite(m->sum_cl) && isfinite(m->sum_cl2) && isfinite(m->time) && m->time >= 0 &&
               isfinite(m->impulse_x) && isfinite(m->impulse_y) && r->total > 0;
    if (!sane)
        return fail(AD_ERR_FORMAT,
                    "%s: the run state in the caller block is out of range at step %llu (frames %llu, force rows "
                    "%llu, averaged %llu, total %llu)",
                    checkpoint, (unsigned long long)step, m->frames, m->rows, m->n, r->total);
    return ok();
}

/* ---------------------------------------------------------------- folder -- */

/* Rewrites NAME keeping the header (a first line not starting with a digit) and the rows a
 * checkpoint at `step` has seen: whole lines only (a kill or a full disk can cut the last one),
 * forces.csv rows up to the step, frames.csv rows of frames before `frames`, each index once. A
 * file without its header (frames.csv of an aerodem older than the header) gets header_line first,
 * so that the rows appended next sit under it. */
static ad_status trim_rows(const run *r, const char *name, const char *header_line, int frames_csv,
                           unsigned long long step)
{
    char path[AD_PATH_MAX + 32];
    ad_status st = path_in(r, path, sizeof path, "%s", name);
    if (st.code) return st;
    FILE *in = fopen(path, "r");
    if (!in) return ok();
    ad_io_file io;
    st = ad_io_open(&io, path);
    if (st.code) {
        fclose(in);
        return st;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int first = 1;
    unsigned long long last = 0, kept = 0;
    while ((len = getline(&line, &cap, in)) > 0) {
        if (line[len - 1] != '\n') break;
        int header = first && !(line[0] >= '0' && line[0] <= '9');
        if (first && !header && header_line) fputs(header_line, io.f);
        first = 0;
        unsigned long long a, b;
        double t;
        int keep = header;
        if (!header && frames_csv)
            keep = sscanf(line, "%llu,%llu,%lf", &a, &b, &t) == 3 && a < r->m.frames && b <= step &&
                   (kept == 0 || a > last);
        else if (!header)
            keep = sscanf(line, "%llu,", &a) == 1 && a <= step;
        if (!keep) continue;
        if (!header) {
            last = a;
            kept++;
        }
        fputs(line, io.f);
    }
    free(line);
    fclose(in);
    return ad_io_commit(&io);
}

/* Where the run continues: its own folder (trimmed to the checkpoint), a folder with no run in it
 * (fresh files: the continuation only), never another run's. */
static ad_status claim_folder(run *r, const char *checkpoint, unsigned long long step)
{
    int has_scene = 0;
    uint64_t fid = folder_run_id(r, &has_scene);
    char path[AD_PATH_MAX + 32];
    int rows = 0;
    const char *csv[] = {"forces.csv", "frames.csv"};
    for (int k = 0; k < 2; k++)
        if (!path_in(r, path, sizeof path, "%s", csv[k]).code && access(path, F_OK) == 0) rows = 1;
    char who[64];
    if (r->id) snprintf(who, sizeof who, "run %016llx", (unsigned long long)r->id);
    else snprintf(who, sizeof who, "a run of an older aerodem (no run id)");
    if (fid && fid != r->id)
        return fail(AD_ERR_INVALID,
                    "%s/ holds run %016llx (its scene.ini) and %s is of %s: resuming there would splice two runs "
                    "into one forces.csv; resume into the checkpoint's own folder, or give --out a new folder",
                    r->dir, (unsigned long long)fid, checkpoint, who);
    if (!fid && r->id && (rows || has_scene))
        return fail(AD_ERR_INVALID,
                    "%s/ holds the outputs of another run (%s without a run id) and %s is of %s: resuming there "
                    "would splice two runs into one forces.csv; resume into the checkpoint's own folder, or give "
                    "--out a new folder",
                    r->dir, has_scene ? "a scene.ini" : "forces.csv or frames.csv", checkpoint, who);
    out_remove_temps(r);
    ad_status st = ok();
    if (fid || !r->id) { /* its own folder (or, for a checkpoint older than run ids, the folder it names) */
        st = trim_rows(r, "forces.csv", NULL, 0, step);
        if (!st.code) st = trim_rows(r, "frames.csv", AD_FRAMES_HEADER, 1, step);
    }
    if (!st.code && (!fid || !has_scene)) st = out_scene_ini(r);
    if (!st.code) st = out_body(r);
    return st;
}

/* summary.txt says the run finished at its total: written after the final checkpoint, and whole
 * (written under a temporary name), it is kept as it is. */
static int summary_done(const run *r)
{
    char path[AD_PATH_MAX + 32], line[256];
    if (path_in(r, path, sizeof path, "summary.txt").code) return 0;
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    int finished = 0, at_total = 0;
    unsigned long long n;
    while (fgets(line, sizeof line, f)) {
        if (!strcmp(line, "status finished\n")) finished = 1;
        if (sscanf(line, "steps %llu", &n) == 1 && n == r->total) at_total = 1;
    }
    fclose(f);
    return finished && at_total;
}

/* A finished run's final checkpoint resumed with no more steps: its end outputs written again (a
 * kill may have come between the final checkpoint and them). */
static int finish_again(run *r)
{
    ad_status st = out_load_frames(r, r->total);
    if (!st.code && (r->nf == 0 || r->fidx[r->nf - 1] + 1 != r->m.frames)) {
        r->m.frames--; /* a new folder: the last frame's row, so that its .pvd lists it */
        st = out_frame_row(r);
    }
    /* the summary as the run wrote it, from the world that stepped (a loaded world's statistics
     * may lack what only stepping measures) */
    if (!st.code && !summary_done(r)) st = out_summary(r, 0);
    if (!st.code) st = out_surface(r);
    if (!st.code) st = out_frame_files(r, r->m.frames - 1, 1);
    if (st.code) return report(st);
    out_video(r);
    say(r, "  the run was finished at step %llu: its summary and last frame written again in %s/\n", r->total, r->dir);
    return AD_EXIT_OK;
}

/* The field grid the checkpoint's world samples must be the one its scene gives: the outputs are
 * sized from the scene (an intact file whose two disagree is refused, not read past a buffer). */
static ad_status same_fields(const run *r, const char *checkpoint)
{
    ad_field_def have;
    ad_status st = ad_world_get_fields(r->w, &have);
    if (st.code)
        return fail(AD_ERR_FORMAT, "%s: its world samples no fields, but its scene asks for a %d x %d grid", checkpoint,
                    r->fd.nx, r->fd.ny);
    int three = r->sc.dimensions == 3;
    if (have.nx != r->fd.nx || have.ny != r->fd.ny || have.x0 != r->fd.x0 || have.y0 != r->fd.y0 ||
        have.x1 != r->fd.x1 || have.y1 != r->fd.y1 || have.interval != r->fd.interval ||
        (three && (have.nz != r->fd.nz || have.z0 != r->fd.z0 || have.z1 != r->fd.z1)))
        return fail(AD_ERR_FORMAT,
                    "%s: its world's field grid (%d x %d cells over [%g, %g] x [%g, %g] m, every %u steps) is not the "
                    "one its scene gives (%d x %d over [%g, %g] x [%g, %g] m, every %u steps)",
                    checkpoint, have.nx, have.ny, have.x0, have.x1, have.y0, have.y1, have.interval, r->fd.nx, r->fd.ny,
                    r->fd.x0, r->fd.x1, r->fd.y0, r->fd.y1, r->fd.interval);
    return ok();
}

int ad_tunnel_resume(const char *checkpoint, ad_backend backend, int threads, const ad_run_options *opt,
                     ad_run_result *res)
{
    run r;
    memset(&r, 0, sizeof r);
    r.frame_lo = r.frame_hi = NAN; /* fixed at the first frame */
    r.ckpt_step = -1;
    r.from = checkpoint;
    void *blk = NULL;
    size_t n = 0;
    ad_status st = ad_world_load(checkpoint, backend, threads, &r.w, &blk, &n);
    if (st.code) return report(st);
    ad_stats s;
    ad_world_get_stats(r.w, &s);
    size_t surface, surface_n;
    st = unpack_block(&r, blk, n, checkpoint, s.step, &surface, &surface_n);
    if (opt->steps) r.total = opt->steps;
    int again = r.m.finished && r.total == s.step;
    if (!st.code) st = prepare(&r, opt);
    if (!st.code) st = surf_block_unpack(&r, (const char *)blk + surface, surface_n, checkpoint);
    free(blk);
    if (!st.code) st = same_fields(&r, checkpoint);
    if (st.code) {
        cleanup(&r);
        return report(st);
    }
    if (r.total <= s.step && !again) {
        fprintf(stderr, "aerodem: error: %s is at step %llu already; --steps must be larger to continue (it is %llu)\n",
                checkpoint, (unsigned long long)s.step, r.total);
        cleanup(&r);
        return AD_EXIT_USAGE;
    }
    if (!again) r.m.finished = 0;
    st = out_make_dirs(&r);
    if (!st.code) st = claim_folder(&r, checkpoint, s.step);
    if (st.code) {
        cleanup(&r);
        return report(st);
    }
    int rc;
    if (again) rc = finish_again(&r);
    else {
        say(&r, "aerodem: resuming %s at step %llu of %llu (t = %.4g s)\n", checkpoint, (unsigned long long)s.step,
            r.total, s.time);
        live_begin(&r, opt->label ? opt->label : checkpoint);
        rc = run_loop(&r);
    }
    if (res) run_result(&r, res);
    cleanup(&r);
    return rc;
}
