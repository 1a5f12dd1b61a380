/* `aerodem sweep --resume`: the sweep's record (DIR/sweep.ini), each point's record of a finished run
 * (POINT_RECORD), what a sweep's folder holds checked against the sweep asked for, and the command that
 * continues an interrupted sweep.
 *
 * A finished point is known by its record, not by its final checkpoint: the checkpoint is written
 * before the run's end outputs (summary, last frame, heat maps, video), so a kill after it leaves a
 * point that is not whole; the record is written after all of them, whole (a temporary name renamed),
 * so that it exists says exactly that the point is done. It holds the numbers as text that reads back
 * to the same doubles, so a resumed sweep's polar is an uninterrupted one's byte for byte, and it is
 * read without loading a world (no memory for the discs, no GPU). It names its run (run_id, as the
 * folder's scene.ini does), so a folder that another run has used since is not taken as done. A point
 * without it but with a checkpoint continues from the checkpoint (a finished one writes the end
 * outputs that are missing). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/number_text.h"
#include "io/vtk.h"
#include "sweep.h"

enum { TEXT_MAX = 1 << 20 }; /* the records and scene.ini files read: a resolved scene is a few KiB */

/* The whole text of a file into *text (malloc'ed); *text = NULL where there is no file. 0, or the exit
 * code after a message naming the file. */
static int read_text(const char *path, char **text)
{
    *text = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (errno == ENOENT) return 0;
        fprintf(stderr, "aerodem: error: cannot read %s: %s\n", path, strerror(errno));
        return AD_EXIT_ERROR;
    }
    char *buf = malloc(TEXT_MAX + 1);
    size_t n = buf ? fread(buf, 1, TEXT_MAX + 1, f) : 0;
    int err = ferror(f);
    fclose(f);
    if (!buf || err || n > TEXT_MAX) {
        fprintf(stderr, "aerodem: error: cannot read %s: %s\n", path,
                !buf ? "out of memory" : err ? "a read error" : "longer than 1 MiB, not a record aerodem wrote");
        free(buf);
        return AD_EXIT_ERROR;
    }
    buf[n] = 0;
    *text = buf;
    return 0;
}

/* The next line of *p that is not a comment (';') or blank, into line (without its new line); 0 at the
 * end. */
static int next_line(const char **p, char *line, size_t n)
{
    while (**p) {
        const char *s = *p, *e = strchr(s, '\n');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        *p = e ? e + 1 : s + len;
        while (len && (s[len - 1] == '\r' || s[len - 1] == ' ')) len--;
        if (!len || s[0] == ';') continue;
        snprintf(line, n, "%.*s", (int)len, s);
        return 1;
    }
    return 0;
}

/* Where `have` and `want` differ (comments and blank lines aside), as "[section] key = HAVE there, WANT in
 * this sweep" for up to four keys, into what; 0 where they are the same. Lines out of step (a key
 * missing) end the list there. */
static int differences(const char *have, const char *want, char *what, size_t n)
{
    char a[AD_PATH_MAX + 160], b[AD_PATH_MAX + 160], sec[160] = "";
    size_t len = 0;
    what[0] = 0;
    for (int count = 0;;) {
        int ha = next_line(&have, a, sizeof a), hb = next_line(&want, b, sizeof b);
        if (!ha && !hb) return count;
        if (ha && hb && !strcmp(a, b)) {
            if (a[0] == '[') snprintf(sec, sizeof sec, "%.150s ", a);
            continue;
        }
        if (count == 4) {
            snprintf(what + len, n - len, "; and more");
            return count;
        }
        const char *ea = ha ? strstr(a, " = ") : NULL, *eb = hb ? strstr(b, " = ") : NULL;
        int same_key = ea && eb && ea - a == eb - b && !strncmp(a, b, (size_t)(ea - a));
        int k = same_key ? snprintf(what + len, n - len, "%s%s%s there, %s in this sweep", count ? "; " : "", sec, a,
                                    eb + 3)
                         : snprintf(what + len, n - len, "%safter %s'%s' there, '%s' in this sweep", count ? "; " : "",
                                    sec[0] ? sec : "the start ", ha ? a : "(the end)", hb ? b : "(the end)");
        len = k < 0 || (size_t)k >= n - len ? n - 1 : len + (size_t)k;
        count++;
        if (!same_key || len >= n - 1) return count;
    }
}

char *sweep_record(const sweep_args *a, const ad_scene *first)
{
    char *scene = ad_scene_to_ini(first);
    if (!scene) return NULL;
    char from[64], to[64], step[64];
    ad_format_double(from, sizeof from, a->from);
    ad_format_double(to, sizeof to, a->to);
    ad_format_double(step, sizeof step, a->step);
    size_t n = strlen(scene) + 1024;
    char *out = malloc(n);
    if (out) /* steps: the first point's (--steps, or the scene's [run] steps), as its run goes */
        snprintf(out, n,
                 "; the sweep this folder holds: `aerodem sweep ... --resume` continues it only where every line\n"
                 "; but these comments is the same\n[sweep]\nkey = %s\nrange = %s:%s:%s\nsteps = %llu\n"
                 "; the scene of the first point, every key resolved\n%s",
                 a->key, from, to, step, point_total(a, first), scene);
    free(scene);
    return out;
}

int sweep_write_record(const char *dir, const char *record)
{
    char path[AD_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/sweep.ini", dir);
    if (ad_tunnel_make_dirs(dir) != 0) {
        fprintf(stderr, "aerodem: error: cannot create the sweep's folder %s: %s\n", dir, strerror(errno));
        return AD_EXIT_ERROR;
    }
    ad_io_file io;
    ad_status st = ad_io_open(&io, path);
    if (!st.code) {
        fputs(record, io.f);
        st = ad_io_commit(&io);
    }
    if (st.code) {
        fprintf(stderr, "aerodem: error: %s\n", st.message);
        return AD_EXIT_ERROR;
    }
    return AD_EXIT_OK;
}

/* ------------------------------------------------------------ the point's record -- */

int point_write(const point *p)
{
    char path[AD_PATH_MAX + 32], v[5][64];
    const double x[5] = {p->v, p->r.cl, p->r.cl_se, p->r.cd, p->r.cd_se};
    for (int k = 0; k < 5; k++) ad_format_double(v[k], sizeof v[k], x[k]);
    snprintf(path, sizeof path, "%s/" POINT_RECORD, p->dir);
    ad_io_file io;
    ad_status st = ad_io_open(&io, path);
    if (!st.code) {
        fprintf(io.f,
                "; a point of an aerodem sweep, written once every output of its run was: `aerodem sweep ... "
                "--resume`\n; takes its numbers from here instead of running it again\nrun_id %016llx\nvalue %s\n"
                "cl %s\ncl_se %s\ncd %s\ncd_se %s\nsteps %llu\nintervals %llu\n",
                (unsigned long long)p->r.run_id, v[0], v[1], v[2], v[3], v[4], p->r.steps, p->r.intervals);
        st = ad_io_commit(&io);
    }
    if (st.code) {
        fprintf(stderr, "aerodem: error: %s\n", st.message);
        return AD_EXIT_ERROR;
    }
    return AD_EXIT_OK;
}

int point_forget(const point *p)
{
    char path[AD_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/" POINT_RECORD, p->dir);
    if (unlink(path) != 0 && errno != ENOENT) {
        fprintf(stderr, "aerodem: error: cannot remove %s: %s\n", path, strerror(errno));
        return AD_EXIT_ERROR;
    }
    return AD_EXIT_OK;
}

/* The record in `text` into *r and *v; 1 where every line is there and reads whole. */
static int parse_record(const char *text, double *v, ad_run_result *r)
{
    const char *names[] = {"run_id", "value", "cl", "cl_se", "cd", "cd_se", "steps", "intervals"};
    double *d[] = {NULL, v, &r->cl, &r->cl_se, &r->cd, &r->cd_se, NULL, NULL};
    unsigned long long *u[] = {NULL, NULL, NULL, NULL, NULL, NULL, &r->steps, &r->intervals};
    int seen = 0;
    char line[256];
    for (const char *p = text; next_line(&p, line, sizeof line);) {
        char *sp = strchr(line, ' '), *end;
        if (!sp) return 0;
        *sp = 0;
        for (int k = 0; k < 8; k++) {
            if (strcmp(line, names[k])) continue;
            errno = 0;
            if (k == 0) r->run_id = strtoull(sp + 1, &end, 16);
            else if (d[k]) *d[k] = strtod(sp + 1, &end);
            else *u[k] = strtoull(sp + 1, &end, 10);
            if (end == sp + 1 || *end || errno) return 0;
            seen |= 1 << k;
        }
    }
    return seen == 0xff;
}

/* ----------------------------------------------------------------- inspection -- */

/* The run id in a scene.ini's comments (0: none). */
static uint64_t scene_run_id(const char *text)
{
    unsigned long long id = 0;
    for (const char *p = text; p && *p == ';'; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (sscanf(p, "; run_id %llx", &id) == 1) break;
    return id;
}

/* Point p's state from its folder; `want` is its resolved scene. -1 to go on, else the exit code. */
static int inspect_point(const sweep_args *a, point *p, const char *want, unsigned long long total)
{
    char path[AD_PATH_MAX + 32], what[2 * AD_PATH_MAX + 400];
    snprintf(path, sizeof path, "%s/scene.ini", p->dir);
    char *have = NULL, *rec = NULL;
    int rc = read_text(path, &have);
    if (rc) return rc;
    snprintf(path, sizeof path, "%s/checkpoint.ckpt", p->dir);
    int has_ckpt = access(path, F_OK) == 0;
    p->state = POINT_NEW;
    if (!have) {
        if (!has_ckpt) return -1; /* not begun, or killed before its folder held anything */
        fprintf(stderr, "aerodem: error: %s/ holds a checkpoint.ckpt but no scene.ini: which run it is cannot be "
                        "told; remove the folder to run the point (%s = %g) afresh\n", p->dir, a->key, p->v);
        return AD_EXIT_USAGE;
    }
    if (differences(have, want, what, sizeof what)) {
        fprintf(stderr, "aerodem: error: %s/ holds a run of another scene than this sweep's point %s = %g (its "
                        "scene.ini: %s); resuming would mix two sweeps in one polar: remove that folder to run the "
                        "point afresh, give --out a new folder, or run the sweep without --resume to start every "
                        "point afresh\n", p->dir, a->key, p->v, what);
        free(have);
        return AD_EXIT_USAGE;
    }
    uint64_t id = scene_run_id(have);
    free(have);
    snprintf(path, sizeof path, "%s/" POINT_RECORD, p->dir);
    rc = read_text(path, &rec);
    if (rc) return rc;
    double v = NAN;
    ad_run_result r;
    memset(&r, 0, sizeof r);
    /* a record of another run (the folder used again since) or one damaged is no record: the
     * checkpoint, or a fresh run, decides */
    if (rec && parse_record(rec, &v, &r) && r.run_id == id && id != 0 && v == p->v) {
        if (r.steps != total) {
            fprintf(stderr, "aerodem: error: %s/ holds a run of %llu steps and this sweep's points run %llu: "
                            "resuming would mix two sweeps in one polar; give --out a new folder, or the --steps "
                            "of that sweep\n", p->dir, r.steps, total);
            free(rec);
            return AD_EXIT_USAGE;
        }
        p->state = POINT_DONE;
        p->done = 1;
        p->r = r;
    } else if (has_ckpt) p->state = POINT_RESUME;
    free(rec);
    return -1;
}

int sweep_inspect(const sweep_args *a, const ad_scene *base, const char *dir, const char *record, point *pts)
{
    char path[AD_PATH_MAX + 32], what[2 * AD_PATH_MAX + 400];
    snprintf(path, sizeof path, "%s/sweep.ini", dir);
    char *have = NULL;
    int rc = read_text(path, &have);
    if (rc) return rc;
    if (have && differences(have, record, what, sizeof what)) {
        fprintf(stderr, "aerodem: error: %s/ holds another sweep (its sweep.ini: %s); resuming would mix two "
                        "sweeps in one polar: give --out a new folder, continue that sweep with its own command, or "
                        "run this one without --resume to start every point afresh\n", dir, what);
        free(have);
        return AD_EXIT_USAGE;
    }
    free(have);
    for (int k = 0; k < a->nval; k++) {
        ad_scene t;
        ad_status st = point_scene(a, base, k, &t, NULL);
        char *want = st.code ? NULL : ad_scene_to_ini(&t);
        if (!want) {
            fprintf(stderr, "aerodem: error: %s\n", st.code ? st.message : "out of memory");
            return st.code ? AD_EXIT_USAGE : AD_EXIT_ERROR;
        }
        rc = inspect_point(a, &pts[k], want, point_total(a, &t));
        free(want);
        if (rc >= 0) return rc;
    }
    return -1;
}

/* ---------------------------------------------------------------- the command -- */

/* s quoted for a POSIX shell where it needs it, appended at out + *len (cap bytes in all). */
static void append_quoted(char *out, size_t *len, size_t cap, const char *s)
{
    int plain = *s != 0;
    for (const char *c = s; *c; c++)
        if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-", *c)) plain = 0;
    if (*len) out[(*len)++] = ' ';
    if (plain) {
        *len += (size_t)snprintf(out + *len, cap - *len, "%s", s);
        return;
    }
    out[(*len)++] = '\'';
    for (const char *c = s; *c; c++) {
        if (*c == '\'') { /* ' ends the quote, \' is the quote, ' starts it again */
            memcpy(out + *len, "'\\''", 4);
            *len += 4;
        } else out[(*len)++] = *c;
    }
    out[(*len)++] = '\'';
    out[*len] = 0;
}

char *sweep_resume_command(int argc, char **argv)
{
    size_t cap = 32, len = 0;
    int has = 0;
    for (int i = 0; i < argc; i++) {
        cap += 4 * strlen(argv[i]) + 3; /* every character a quote at worst, the quotes, the space */
        has |= !strcmp(argv[i], "--resume");
    }
    char *out = malloc(cap);
    if (!out) return NULL;
    out[0] = 0;
    for (int i = 0; i < argc; i++) append_quoted(out, &len, cap, argv[i]);
    if (!has) append_quoted(out, &len, cap, "--resume");
    return out;
}
