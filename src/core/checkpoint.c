/* Checkpoints: a versioned, checksummed file holding a whole world, written atomically (temp + rename).
 *
 * Layout (little-endian as written by this machine; the endian mark refuses others):
 *   "AERODEM\x1a"  u32 version  u32 endian mark 0x01020304
 *   sections: char tag[4], u32 zero, u64 length, payload; each at most once, in any order
 *     DEF   ad_world_def (its size must match this build's)
 *     STAT  ad_stats
 *     SEGS  ad_segment[]   (2D)
 *     TRIS  ad_triangle[]  (3D)
 *     PART  u64 n, u32 primed, u32 zero, state[n], id[n], pressure[n], virial[n], accel[n]   (2D)
 *     PAR3  the same with 3D states (ad_state3) and accelerations (ad_accel3)                  (3D)
 *     OPEN  double owed[4], u32 next_id, u32 nwaiting, ad_entry waiting[nwaiting], u32 res_boxes, u32 zero,
 *           double res_state[2 res_boxes]   (open sides and the reservoir, open.h; a 3D world's nwaiting is 0)
 *     WAI3  u32 nwaiting, u32 zero, ad_entry3 waiting[nwaiting]   (3D worlds with open sides, open3.h)
 *     FLDS  ad_field_def up to z0, u64 samples, u32 probe, u32 zero, ad_probe_def up to z0, u64 probe_samples,
 *           double sums[(nx*ny + 1)*AD_FS_COUNT] (the cells', then the probe's)   (2D, only with fields)
 *     FLD3  the same with the whole ad_field_def and ad_probe_def (nz, z0, z1; the probe's z0, z1) and
 *           double sums[(nx*ny*nz + 1)*AD_FS3_COUNT]   (3D, only with fields)
 *     PANL, TUCH  the panels' sums and the discs' contact states, where surfaces are sampled (checkpoint_panels.h)
 *     USER  the caller's bytes (at most AD_CKPT_USER_MAX)
 *     END.  empty, the last section
 *   u32 CRC-32 (IEEE) of every byte before it
 *
 * The CRC proves the file intact, not sane: the loader checks every field against the file's size,
 * the world's definition and the engine's own invariants before anything is allocated from it or
 * handed to a backend (checkpoint_check.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "free_each.h"
#include "world_internal.h"

#define CKPT_VERSION 3u
#define CKPT_ENDIAN 0x01020304u
#define AD_CKPT_USER_MAX (1ull << 30) /* the caller block: a scene and some state, never near this */
static const char CKPT_MAGIC[8] = {'A', 'E', 'R', 'O', 'D', 'E', 'M', 0x1a};

static uint32_t crc_table[256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_fill(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[i] = c;
    }
}

/* Once per process: worlds may be saved and loaded from several threads at once. */
static void crc_init(void) { pthread_once(&crc_once, crc_fill); }

static uint32_t crc_update(uint32_t crc, const void *data, size_t n)
{
    const unsigned char *p = data;
    crc = ~crc;
    for (size_t i = 0; i < n; i++) crc = crc_table[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
    return ~crc;
}

/* ----------------------------------------------------------------- save -- */

typedef struct writer {
    FILE *f;
    uint32_t crc;
    int err;
} writer;

static void put(writer *w, const void *p, size_t n)
{
    if (w->err || n == 0) return;
    errno = 0;
    if (fwrite(p, 1, n, w->f) != n) w->err = errno ? errno : EIO;
    w->crc = crc_update(w->crc, p, n);
}

static void section(writer *w, const char tag[4], uint64_t len)
{
    uint32_t zero = 0;
    put(w, tag, 4);
    put(w, &zero, 4);
    put(w, &len, 8);
}

static void put_particles(writer *wr, const ad_snapshot *snap)
{
    uint64_t n = snap->n;
    uint32_t primed = (uint32_t)snap->primed, zero = 0;
    int three = snap->state3 != NULL;
    size_t st = three ? sizeof(ad_state3) : sizeof(ad_state), acc = three ? sizeof(ad_accel3) : sizeof(ad_accel);
    section(wr, three ? "PAR3" : "PART", 16 + n * (st + 3 * 4 + acc));
    put(wr, &n, 8);
    put(wr, &primed, 4);
    put(wr, &zero, 4);
    put(wr, three ? (const void *)snap->state3 : (const void *)snap->state, n * st);
    put(wr, snap->id, n * 4);
    put(wr, snap->pressure, n * 4);
    put(wr, snap->virial, n * 4);
    put(wr, three ? (const void *)snap->accel3 : (const void *)snap->accel, n * acc);
}

/* A 3D world's waiting entries go to WAI3 (ad_entry3), its OPEN section holding none. */
static void put_open(writer *wr, const ad_open_state *o, int dims)
{
    uint32_t nwait = dims == 3 ? 0 : o->nwaiting, nbox = o->res_boxes, zero = 0;
    section(wr, "OPEN", sizeof o->owed + 16 + (uint64_t)nwait * sizeof(ad_entry) + 16ull * nbox);
    put(wr, o->owed, sizeof o->owed);
    put(wr, &o->next_id, 4);
    put(wr, &nwait, 4);
    put(wr, o->waiting, (size_t)nwait * sizeof(ad_entry));
    put(wr, &nbox, 4);
    put(wr, &zero, 4);
    put(wr, o->res_state, 16 * (size_t)nbox);
    if (dims != 3) return;
    nwait = o->nwaiting;
    section(wr, "WAI3", 8 + (uint64_t)nwait * sizeof(ad_entry3));
    put(wr, &nwait, 4);
    put(wr, &zero, 4);
    put(wr, o->waiting3, (size_t)nwait * sizeof(ad_entry3));
}

/* The definitions' bytes a field section holds: 2D's FLDS their parts before z0 (all they had before 3D
 * fields; a 2D grid's nz, in the padding that was there, is 0), 3D's FLD3 the whole. */
#define FLD_DEF_BYTES(three) ((three) ? sizeof(ad_field_def) : offsetof(ad_field_def, z0))
#define FLD_PROBE_BYTES(three) ((three) ? sizeof(ad_probe_def) : offsetof(ad_probe_def, z0))
_Static_assert(offsetof(ad_field_def, z0) == 48 && offsetof(ad_probe_def, z0) == 48, "FLDS holds 48 + 48 bytes");

static void put_fields(writer *wr, const ad_fields *fl)
{
    int three = fl->dims == 3;
    size_t vals = ad_field_sum_count(&fl->def, fl->dims);
    uint32_t probe = (uint32_t)fl->grid.probe, zero = 0;
    section(wr, three ? "FLD3" : "FLDS",
            FLD_DEF_BYTES(three) + 16 + FLD_PROBE_BYTES(three) + 8 + vals * sizeof(double));
    put(wr, &fl->def, FLD_DEF_BYTES(three));
    put(wr, &fl->samples, 8);
    put(wr, &probe, 4);
    put(wr, &zero, 4);
    put(wr, &fl->probe, FLD_PROBE_BYTES(three));
    put(wr, &fl->probe_samples, 8);
    put(wr, fl->sums, vals * sizeof(double));
}

static void put_panels(writer *wr, const ad_world *w, const ad_snapshot *snap); /* checkpoint_panels.h */

/* The whole file but its checksum's flush: the header, every section, the CRC. */
static void put_file(writer *wr, const ad_world *w, const ad_snapshot *snap, const void *user, size_t user_bytes)
{
    uint32_t version = CKPT_VERSION, endian = CKPT_ENDIAN;
    put(wr, CKPT_MAGIC, 8);
    put(wr, &version, 4);
    put(wr, &endian, 4);
    section(wr, "DEF ", sizeof w->def);
    put(wr, &w->def, sizeof w->def);
    /* the phase timers are wall-clock time (the load restarts them): saved as zero, so that two
     * checkpoints of one state are the same bytes */
    ad_stats stats = w->stats;
    for (int k = 0; k < AD_PHASE_COUNT; k++) stats.phase_seconds[k] = 0.0;
    section(wr, "STAT", sizeof stats);
    put(wr, &stats, sizeof stats);
    if (w->params.dims == 3) {
        section(wr, "TRIS", w->tri.count * sizeof(ad_triangle));
        put(wr, w->tri.raw, w->tri.count * sizeof(ad_triangle));
    } else {
        section(wr, "SEGS", w->seg.count * sizeof(ad_segment));
        put(wr, w->seg.raw, w->seg.count * sizeof(ad_segment));
    }
    put_particles(wr, snap);
    if (ad_world_open(w)) put_open(wr, &snap->open, w->params.dims);
    if (w->fields.enabled) put_fields(wr, &w->fields);
    put_panels(wr, w, snap);
    section(wr, "USER", user_bytes);
    put(wr, user, user ? user_bytes : 0);
    section(wr, "END.", 0);
    uint32_t crc = wr->crc;
    put(wr, &crc, 4);
}

/* This host's name as it goes into a temporary file's name: letters, digits and '-' (others as '_'). */
static void host_tag(char *buf, size_t n)
{
    char h[65] = "";
    if (gethostname(h, sizeof h - 1) != 0 || !h[0]) snprintf(h, sizeof h, "host");
    size_t k = 0;
    for (; h[k] && k + 1 < n && k < 32; k++) {
        char c = h[k];
        int keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
        buf[k] = keep ? c : '_';
    }
    buf[k] = 0;
}

/* A kill during a save leaves its temporary file (PATH.HOST-PID.tmp, or PATH.tmp of older builds):
 * the next save of PATH removes those of this host whose process is gone. Another live writer's file
 * stays (kill(pid, 0) answers for it), so two runs in one folder never remove each other's. */
static void remove_stale_temps(const char *path, const char *host)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t dlen = !slash ? 1 : slash == path ? 1 : (size_t)(slash - path), blen = strlen(base), hlen = strlen(host);
    char *dir = malloc(dlen + 1);
    if (!dir) return;
    memcpy(dir, slash ? path : ".", dlen);
    dir[dlen] = 0;
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            const char *s = e->d_name;
            size_t len = strlen(s);
            if (len < blen + 4 || strncmp(s, base, blen) != 0 || s[blen] != '.' || strcmp(s + len - 4, ".tmp") != 0)
                continue;
            const char *mid = s + blen + 1; /* HOST-PID.tmp, or tmp for the old name */
            long pid = 0;
            if (mid != s + len - 3) {
                char *end;
                if (strncmp(mid, host, hlen) != 0 || mid[hlen] != '-') continue;
                pid = strtol(mid + hlen + 1, &end, 10);
                if (pid <= 0 || strcmp(end, ".tmp") != 0 || (pid_t)pid == getpid()) continue;
                if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
            }
            size_t plen = dlen + len + 2;
            char *full = malloc(plen);
            if (!full) break;
            snprintf(full, plen, "%s/%s", dir, s);
            unlink(full);
            free(full);
        }
        closedir(d);
    }
    free(dir);
}

/* The rename is durable only once the folder's entry is on disk too. */
static void sync_folder(const char *path)
{
    const char *slash = strrchr(path, '/');
    char dir[4096];
    if (!slash) snprintf(dir, sizeof dir, ".");
    else snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    int fd = open(dir, O_RDONLY);
    if (fd < 0) return;
    (void)fsync(fd);
    close(fd);
}

/* Writes the file under tmp, flushed and synced; on any error removes it and returns the errno. */
static int write_temp(const char *tmp, const ad_world *w, const ad_snapshot *snap, const void *user, size_t user_bytes)
{
    writer wr = {fopen(tmp, "wb"), 0, 0};
    if (!wr.f) return errno ? errno : EIO;
    put_file(&wr, w, snap, user, user_bytes);
    if (!wr.err && fflush(wr.f) != 0) wr.err = errno ? errno : EIO;
    if (!wr.err && fsync(fileno(wr.f)) != 0) wr.err = errno ? errno : EIO;
    if (fclose(wr.f) != 0 && !wr.err) wr.err = errno ? errno : EIO;
    if (wr.err) unlink(tmp);
    return wr.err;
}

ad_status ad_world_save(const ad_world *w, const char *path, const void *user, size_t user_bytes)
{
    if (!w || !path || !*path) return ad_fail(AD_ERR_INVALID, "path", "world or path is NULL or empty");
    if (user_bytes > AD_CKPT_USER_MAX)
        return ad_fail(AD_ERR_INVALID, "user_bytes", "user_bytes = %zu: a checkpoint's caller block holds at most %llu bytes",
                       user_bytes, (unsigned long long)AD_CKPT_USER_MAX);
    crc_init();
    ad_status st = w->ops->pull_stats ? w->ops->pull_stats((ad_world *)w) : ad_ok();
    if (st.code) return st;
    if (w->fields.enabled && w->ops->fields_to_host) AD_TRY(w->ops->fields_to_host((ad_world *)w));
    ad_snapshot snap;
    AD_TRY(w->ops->export_state(w, &snap));
    char host[40];
    host_tag(host, sizeof host);
    size_t len = strlen(path) + strlen(host) + 32;
    char *tmp = malloc(len);
    if (!tmp) {
        ad_snapshot_free(&snap);
        return ad_fail(AD_ERR_NO_MEMORY, "", "out of memory saving the checkpoint %s", path);
    }
    /* unique per process and host: two runs saving into one folder never share a temporary file */
    snprintf(tmp, len, "%s.%s-%ld.tmp", path, host, (long)getpid());
    /* several processes: one writes, every one returns its status */
    int writes = !w->ops->writer || w->ops->writer(w);
    int err = writes ? write_temp(tmp, w, &snap, user, user_bytes) : 0;
    ad_snapshot_free(&snap);
    if (!writes) {
        st = ad_ok();
    } else if (err) {
        st = ad_fail(AD_ERR_IO, "path", "cannot write the checkpoint %s (temporary file %s): %s; the previous "
                     "checkpoint, if any, is unchanged", path, tmp, strerror(err));
    } else if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        st = ad_fail(AD_ERR_IO, "path", "cannot rename %s to the checkpoint %s: %s", tmp, path, strerror(e));
    } else {
        sync_folder(path);
        remove_stale_temps(path, host);
        st = ad_ok();
    }
    free(tmp);
    return w->ops->agree ? w->ops->agree(w, st) : st;
}

/* ------------------------------------------------------------------ load -- */

enum {
    SEC_DEF = 1, SEC_STAT = 2, SEC_SEGS = 4, SEC_PART = 8, SEC_OPEN = 16, SEC_FLDS = 32, SEC_USER = 64, SEC_TRIS = 128,
    SEC_WAI3 = 256, SEC_PANL = 512, SEC_TUCH = 1024
};

/* A checkpoint as read, before any of it has reached a world. */
typedef struct loader {
    FILE *f;
    const char *path;
    uint64_t left;    /* bytes before the checksum */
    unsigned seen;    /* SEC_* */
    ad_world_def def;
    ad_params params; /* from def, once the definition passed a new world's checks */
    ad_stats stats;
    ad_segment *segs;
    uint64_t nseg;
    ad_triangle *tris;
    uint64_t ntri;
    int three;        /* the particles are 3D (PAR3) */
    ad_snapshot snap;
    ad_field_def fdef;
    uint64_t fsamples, psamples;
    uint32_t fprobe;
    int fields3;      /* the fields are 3D (FLD3) */
    uint32_t nwait3;  /* WAI3: the 3D entries waiting, in wait3 */
    ad_entry3 *wait3;
    ad_probe_def pdef;
    double *fsums;
    void *ublock;
    uint64_t ulen;
    ad_panel_sums *panels; /* PANL */
    uint64_t npanel, ntouch;
} loader;

/* A refusal: AD_ERR_FORMAT, naming the file. */
static ad_status bad(const loader *ld, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static ad_status bad(const loader *ld, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ad_fail(AD_ERR_FORMAT, "checkpoint", "checkpoint %s: %s", ld->path, msg);
}

static ad_status get(loader *ld, void *p, uint64_t n, const char *what)
{
    if (n > ld->left || (n && fread(p, 1, (size_t)n, ld->f) != (size_t)n))
        return bad(ld, "the file is truncated (reading %s)", what);
    ld->left -= n;
    return ad_ok();
}

#include "checkpoint_check.h"
#include "checkpoint_panels.h"

/* First pass: the checksum over the whole file, before anything is trusted. */
static ad_status verify(loader *ld)
{
    FILE *f = ld->f;
    const char *path = ld->path;
    crc_init();
    if (fseek(f, 0, SEEK_END) != 0) return ad_fail(AD_ERR_IO, "checkpoint", "cannot seek in %s", path);
    long size = ftell(f);
    rewind(f);
    if (size < 0) return ad_fail(AD_ERR_IO, "checkpoint", "cannot tell the size of %s", path);
    if (size < 20) return ad_fail(AD_ERR_FORMAT, "checkpoint", "%s is too short to be an aerodem checkpoint (%ld bytes)", path, size);
    char magic[8];
    if (fread(magic, 1, 8, f) != 8 || memcmp(magic, CKPT_MAGIC, 8) != 0)
        return ad_fail(AD_ERR_FORMAT, "checkpoint", "%s is not an aerodem checkpoint (bad magic bytes)", path);
    rewind(f);
    uint64_t n = (uint64_t)size - 4, done = 0;
    uint32_t crc = 0;
    unsigned char buf[1 << 14]; /* on the stack: loads in several threads at once */
    while (done < n) {
        size_t k = (size_t)(n - done < sizeof buf ? n - done : sizeof buf);
        if (fread(buf, 1, k, f) != k) return ad_fail(AD_ERR_IO, "checkpoint", "cannot read %s", path);
        crc = crc_update(crc, buf, k);
        done += k;
    }
    uint32_t stored;
    if (fread(&stored, 4, 1, f) != 1) return ad_fail(AD_ERR_IO, "checkpoint", "cannot read %s", path);
    if (stored != crc)
        return ad_fail(AD_ERR_FORMAT, "checkpoint",
                       "checkpoint %s is corrupt: checksum %08x does not match the stored %08x", path, crc, stored);
    rewind(f);
    ld->left = n;
    return ad_ok();
}

static ad_status read_header(loader *ld)
{
    char magic[8];
    uint32_t version, endian;
    AD_TRY(get(ld, magic, 8, "the header"));
    AD_TRY(get(ld, &version, 4, "the header"));
    AD_TRY(get(ld, &endian, 4, "the header"));
    if (endian != CKPT_ENDIAN) return bad(ld, "it was written on a machine of other byte order (mark %08x)", endian);
    if (version != CKPT_VERSION)
        return bad(ld, "it has format version %u; this aerodem reads version %u", version, CKPT_VERSION);
    return ad_ok();
}

static ad_status read_def(loader *ld, uint64_t len)
{
    /* a definition of the builds before the surfaces (issue 20): theirs, specular; before the GPU ranks:
     * theirs, on CPU ranks */
    size_t old = offsetof(ad_world_def, body_surface), before_ranks = offsetof(ad_world_def, rank_backend);
    if (len == old || len == before_ranks) {
        AD_TRY(get(ld, &ld->def, len, "the world definition"));
        if (len == old) ad_surface_defaults(&ld->def);
        ld->def.rank_backend = AD_BACKEND_CPU;
        len = 0;
    } else if (len != sizeof ld->def)
        return bad(ld, "its world definition has %llu bytes, this build's %zu (a checkpoint of another build of aerodem)",
                   (unsigned long long)len, sizeof ld->def);
    AD_TRY(get(ld, &ld->def, len, "the world definition"));
    /* the checks a new world's definition gets, before anything is sized from it */
    AD_TRY(precheck_def(ld));
    ad_status st = ad_params_from_def(&ld->def, &ld->params);
    if (st.code) return bad(ld, "its world definition is refused: %s", st.message);
    return ad_ok();
}

static ad_status read_stats(loader *ld, uint64_t len)
{
    if (len == offsetof(ad_stats, panel_time)) return get(ld, &ld->stats, len, "the statistics"); /* no panels */
    if (len != sizeof ld->stats)
        return bad(ld, "its statistics have %llu bytes, this build's %zu (a checkpoint of another build of aerodem)",
                   (unsigned long long)len, sizeof ld->stats);
    return get(ld, &ld->stats, len, "the statistics");
}

/* The body's elements (segments or triangles, `size` bytes each): a whole number of them, at most 2^24. */
static ad_status read_body(loader *ld, uint64_t len, size_t size, const char *what, void **out, uint64_t *n)
{
    if (len % size || len / size > ((uint64_t)1 << 24))
        return bad(ld, "its %s section of %llu bytes is not a whole number of %ss up to 2^24", what,
                   (unsigned long long)len, what);
    *n = len / size;
    *out = malloc(len ? (size_t)len : 1);
    if (!*out) return ad_fail(AD_ERR_NO_MEMORY, "", "out of memory reading the %ss of %s", what, ld->path);
    return get(ld, *out, len, what);
}
static ad_status read_segs(loader *ld, uint64_t len)
{
    return read_body(ld, len, sizeof(ad_segment), "segment", (void **)&ld->segs, &ld->nseg);
}
static ad_status read_tris(loader *ld, uint64_t len)
{
    return read_body(ld, len, sizeof(ad_triangle), "triangle", (void **)&ld->tris, &ld->ntri);
}

/* PART (2D) or PAR3 (3D, three = 1). */
static ad_status read_particles(loader *ld, uint64_t len, int three)
{
    const size_t st = three ? sizeof(ad_state3) : sizeof(ad_state), acc = three ? sizeof(ad_accel3) : sizeof(ad_accel);
    const uint64_t per = st + 12 + acc;
    uint64_t n;
    uint32_t primed, z;
    AD_TRY(get(ld, &n, 8, "the particle count"));
    AD_TRY(get(ld, &primed, 4, "the particle header"));
    AD_TRY(get(ld, &z, 4, "the particle header"));
    if (primed > 1 || z != 0) return bad(ld, "its particle header has primed = %u (0 or 1) and reserved = %u (0)", primed, z);
    /* the count against the section's bytes first: no allocation larger than the file */
    if (len < 16 || (len - 16) % per || (len - 16) / per != n)
        return bad(ld, "its particle section of %llu bytes does not hold the %llu particles its header gives",
                   (unsigned long long)len, (unsigned long long)n);
    ad_snapshot *s = &ld->snap;
    s->n = (size_t)n;
    s->primed = (int)primed;
    ld->three = three;
    void *state = malloc(n * st + 1), *accel = malloc(n * acc + 1);
    if (three) s->state3 = state, s->accel3 = accel;
    else s->state = state, s->accel = accel;
    s->id = malloc(n * 4 + 1);
    s->pressure = malloc(n * 4 + 1);
    s->virial = malloc(n * 4 + 1);
    if (!state || !s->id || !s->pressure || !s->virial || !accel)
        return ad_fail(AD_ERR_NO_MEMORY, "", "out of memory reading %llu particles from %s", (unsigned long long)n,
                       ld->path);
    AD_TRY(get(ld, state, n * st, "particle states"));
    AD_TRY(get(ld, s->id, n * 4, "particle ids"));
    AD_TRY(get(ld, s->pressure, n * 4, "particle pressures"));
    AD_TRY(get(ld, s->virial, n * 4, "particle virials"));
    return get(ld, accel, n * acc, "particle accelerations");
}
static ad_status read_part(loader *ld, uint64_t len) { return read_particles(ld, len, 0); }
static ad_status read_par3(loader *ld, uint64_t len) { return read_particles(ld, len, 1); }

static ad_status read_open(loader *ld, uint64_t len)
{
    ad_open_state *o = &ld->snap.open;
    double owed[4];
    uint32_t next_id, nwait, nbox, z;
    const uint64_t head = sizeof owed + 16;
    AD_TRY(get(ld, owed, sizeof owed, "the open sides"));
    AD_TRY(get(ld, &next_id, 4, "the open sides"));
    AD_TRY(get(ld, &nwait, 4, "the open sides"));
    if (nwait > AD_WAITING_MAX) return bad(ld, "%u entering discs wait for room; at most %d can", nwait, AD_WAITING_MAX);
    if (len < head + (uint64_t)nwait * sizeof(ad_entry) || (len - head - (uint64_t)nwait * sizeof(ad_entry)) % 16)
        return bad(ld, "its open sides' section of %llu bytes does not hold %u waiting entries and whole reservoir "
                   "boxes", (unsigned long long)len, nwait);
    uint64_t boxes = (len - head - (uint64_t)nwait * sizeof(ad_entry)) / 16;
    if (boxes > 0x7fffffffu) return bad(ld, "its open sides' section claims %llu reservoir boxes", (unsigned long long)boxes);
    AD_TRY(ad_open_state_alloc(&ld->snap.open_alloc, (uint32_t)boxes, 2));
    memcpy(o->owed, owed, sizeof owed);
    o->next_id = next_id;
    o->waiting = ld->snap.open_alloc.waiting;
    o->res_state = ld->snap.open_alloc.res_state;
    o->nwaiting = nwait;
    AD_TRY(get(ld, o->waiting, (uint64_t)nwait * sizeof(ad_entry), "the waiting entries"));
    AD_TRY(get(ld, &nbox, 4, "the reservoir"));
    AD_TRY(get(ld, &z, 4, "the reservoir"));
    if (nbox != boxes || z != 0)
        return bad(ld, "its reservoir header gives %u boxes (reserved %u), its section's length %llu", nbox, z,
                   (unsigned long long)boxes);
    o->res_boxes = nbox;
    return get(ld, o->res_state, 16ull * nbox, "the reservoir's controllers");
}

static ad_status read_wai3(loader *ld, uint64_t len)
{
    uint32_t n, z;
    AD_TRY(get(ld, &n, 4, "the 3D waiting entries"));
    AD_TRY(get(ld, &z, 4, "the 3D waiting entries"));
    if (z != 0 || n > AD_WAITING_MAX || len != 8 + (uint64_t)n * sizeof(ad_entry3))
        return bad(ld, "its 3D waiting entries' section of %llu bytes claims %u entries (at most %d), reserved word %u",
                   (unsigned long long)len, n, AD_WAITING_MAX, z);
    ld->wait3 = malloc(AD_WAITING_MAX * sizeof *ld->wait3);
    if (!ld->wait3) return ad_fail(AD_ERR_NO_MEMORY, "", "out of memory reading %s", ld->path);
    ld->nwait3 = n;
    return get(ld, ld->wait3, (uint64_t)n * sizeof(ad_entry3), "the 3D waiting entries");
}

/* FLDS (2D) or FLD3 (3D, three = 1). */
static ad_status read_fields(loader *ld, uint64_t len, int three)
{
    uint32_t z;
    AD_TRY(get(ld, &ld->fdef, FLD_DEF_BYTES(three), "the field grid"));
    AD_TRY(get(ld, &ld->fsamples, 8, "the field grid"));
    AD_TRY(get(ld, &ld->fprobe, 4, "the field grid"));
    AD_TRY(get(ld, &z, 4, "the field grid"));
    AD_TRY(get(ld, &ld->pdef, FLD_PROBE_BYTES(three), "the probe"));
    AD_TRY(get(ld, &ld->psamples, 8, "the probe"));
    const ad_field_def *d = &ld->fdef;
    char grid[64];
    snprintf(grid, sizeof grid, three ? "%d x %d x %d" : "%d x %d", d->nx, d->ny, d->nz);
    ld->fields3 = three;
    if (d->nx < 1 || d->ny < 1 || (three && d->nz < 1) || (double)d->nx * (double)d->ny * (three ? d->nz : 1) > 1e8)
        return bad(ld, "its field grid of %s cells is invalid: 1 to 1e8 cells", grid);
    if (ld->fprobe > 1 || z != 0) return bad(ld, "its field header has probe = %u (0 or 1) and reserved = %u (0)", ld->fprobe, z);
    uint64_t vals = ad_field_sum_count(d, three ? 3 : 2);
    if (len != FLD_DEF_BYTES(three) + 16 + FLD_PROBE_BYTES(three) + 8 + vals * sizeof(double))
        return bad(ld, "its field section of %llu bytes does not hold the sums of its %s grid", (unsigned long long)len,
                   grid);
    ld->fsums = malloc(vals * sizeof(double));
    if (!ld->fsums) return ad_fail(AD_ERR_NO_MEMORY, "", "out of memory reading the fields of %s", ld->path);
    return get(ld, ld->fsums, vals * sizeof(double), "the field sums");
}
static ad_status read_flds(loader *ld, uint64_t len) { return read_fields(ld, len, 0); }
static ad_status read_fld3(loader *ld, uint64_t len) { return read_fields(ld, len, 1); }

static ad_status read_user(loader *ld, uint64_t len)
{
    if (len > AD_CKPT_USER_MAX)
        return bad(ld, "its caller block of %llu bytes is over the %llu a checkpoint may hold", (unsigned long long)len,
                   (unsigned long long)AD_CKPT_USER_MAX);
    ld->ublock = malloc((size_t)len + 1);
    if (!ld->ublock) return ad_fail(AD_ERR_NO_MEMORY, "", "out of memory reading %s", ld->path);
    AD_TRY(get(ld, ld->ublock, len, "the caller block"));
    ((char *)ld->ublock)[len] = 0;
    ld->ulen = len;
    return ad_ok();
}

static const struct section_kind {
    char tag[4];
    unsigned bit;
    ad_status (*read)(loader *ld, uint64_t len);
} SECTIONS[] = {{{'D', 'E', 'F', ' '}, SEC_DEF, read_def},  {{'S', 'T', 'A', 'T'}, SEC_STAT, read_stats},
                {{'S', 'E', 'G', 'S'}, SEC_SEGS, read_segs}, {{'P', 'A', 'R', 'T'}, SEC_PART, read_part},
                {{'O', 'P', 'E', 'N'}, SEC_OPEN, read_open}, {{'F', 'L', 'D', 'S'}, SEC_FLDS, read_flds},
                {{'U', 'S', 'E', 'R'}, SEC_USER, read_user}, {{'P', 'A', 'R', '3'}, SEC_PART, read_par3},
                {{'T', 'R', 'I', 'S'}, SEC_TRIS, read_tris}, {{'W', 'A', 'I', '3'}, SEC_WAI3, read_wai3},
                {{'F', 'L', 'D', '3'}, SEC_FLDS, read_fld3}, {{'P', 'A', 'N', 'L'}, SEC_PANL, read_panl},
                {{'T', 'U', 'C', 'H'}, SEC_TUCH, read_tuch}};

/* A tag as text: printable characters as they are, others as \xNN. */
static const char *tag_text(const char tag[4], char out[20])
{
    char *o = out;
    for (int k = 0; k < 4; k++) {
        unsigned char c = (unsigned char)tag[k];
        if (c >= 0x20 && c < 0x7f && c != '\\') *o++ = (char)c;
        else o += snprintf(o, 5, "\\x%02x", c);
    }
    *o = 0;
    return out;
}

/* Every section up to END., each known, at most once, filling exactly its length. */
static ad_status read_sections(loader *ld)
{
    for (;;) {
        char tag[4], tt[20];
        uint32_t zero;
        uint64_t len;
        AD_TRY(get(ld, tag, 4, "a section header"));
        AD_TRY(get(ld, &zero, 4, "a section header"));
        AD_TRY(get(ld, &len, 8, "a section header"));
        tag_text(tag, tt);
        if (zero != 0) return bad(ld, "section '%s' has %u in its reserved word (0)", tt, zero);
        if (len > ld->left)
            return bad(ld, "section '%s' claims %llu bytes, %llu remain", tt, (unsigned long long)len,
                       (unsigned long long)ld->left);
        if (!memcmp(tag, "END.", 4)) {
            if (len != 0 || ld->left != 0)
                return bad(ld, "%llu bytes follow its end section", (unsigned long long)ld->left);
            return ad_ok();
        }
        const struct section_kind *k = NULL;
        for (size_t i = 0; i < sizeof SECTIONS / sizeof SECTIONS[0]; i++)
            if (!memcmp(tag, SECTIONS[i].tag, 4)) k = &SECTIONS[i];
        if (!k) return bad(ld, "it has an unknown section '%s'", tt);
        if (ld->seen & k->bit) return bad(ld, "section '%s' appears twice", tt);
        uint64_t before = ld->left;
        AD_TRY(k->read(ld, len));
        if (before - ld->left != len)
            return bad(ld, "section '%s' of %llu bytes holds %llu", tt, (unsigned long long)len,
                       (unsigned long long)(before - ld->left));
        ld->seen |= k->bit;
    }
}

/* A statement of the library about one of its checks becomes the file's refusal (memory and backend
 * failures stay what they are). */
static ad_status refused(const loader *ld, ad_status st, const char *what)
{
    if (st.code != AD_ERR_INVALID && st.code != AD_ERR_CAPACITY) return st;
    return bad(ld, "%s: %s", what, st.message);
}

/* The world from a checked checkpoint; *out is the world (or NULL) whatever the status. */
static ad_status build(loader *ld, ad_backend backend, int threads, ad_world **out)
{
    ad_world_def def = ld->def;
    if (backend != AD_BACKEND_AUTO) def.backend = backend;
    if (threads >= 0) def.threads = threads;
    AD_TRY(ad_world_create(&def, out));
    ad_world *w = *out;
    AD_TRY(check_clock(ld, w));
    if (ld->nseg) AD_TRY(refused(ld, ad_world_add_segments(w, ld->segs, (size_t)ld->nseg), "its segments"));
    if (ld->ntri) AD_TRY(refused(ld, ad_world_add_triangles(w, ld->tris, (size_t)ld->ntri), "its triangles"));
    if (ld->fsums) {
        AD_TRY(refused(ld, ad_world_set_fields(w, &ld->fdef), "its field grid"));
        if (ld->fprobe) AD_TRY(refused(ld, ad_world_set_probe(w, &ld->pdef), "its probe"));
        memcpy(w->fields.sums, ld->fsums, ad_field_sum_count(&ld->fdef, w->fields.dims) * sizeof(double));
        w->fields.samples = ld->fsamples;
        w->fields.probe_samples = ld->psamples;
        if (w->ops->fields_to_device) AD_TRY(w->ops->fields_to_device(w));
    }
    /* the run's history; what the new world derives from its definition and backend stands */
    ad_stats mine = w->stats;
    w->stats = ld->stats;
    w->stats.backend = mine.backend;
    w->stats.threads = mine.threads;
    w->stats.ranks = mine.ranks; /* the job that resumes, not the one that saved */
    w->stats.cell_counter_bits = mine.cell_counter_bits;
    w->stats.cell_capacity = mine.cell_capacity;
    w->stats.grid_nx = mine.grid_nx;
    w->stats.grid_ny = mine.grid_ny;
    w->stats.grid_nz = mine.grid_nz;
    w->stats.cell_size_x = mine.cell_size_x;
    w->stats.cell_size_y = mine.cell_size_y;
    w->stats.cell_size_z = mine.cell_size_z;
    w->stats.dimensions = mine.dimensions;
    w->stats.contact_time = mine.contact_time;
    w->stats.count = ld->snap.n;
    for (int k = 0; k < AD_PHASE_COUNT; k++) w->stats.phase_seconds[k] = 0.0;
    build_panels(ld, w);
    AD_TRY(w->ops->import_state(w, &ld->snap)); /* a device backend takes its statistics from w->stats */
    w->count = ld->snap.n;
    return ad_ok();
}

static ad_status load_file(loader *ld)
{
    AD_TRY(verify(ld));
    AD_TRY(read_header(ld));
    AD_TRY(read_sections(ld));
    AD_TRY(check_all(ld));
    return check_panels(ld);
}

ad_status ad_world_load(const char *path, ad_backend backend, int threads, ad_world **out, void **user,
                        size_t *user_bytes)
{
    if (!path || !out) return ad_fail(AD_ERR_INVALID, "path", "path or output is NULL");
    *out = NULL;
    if (user) *user = NULL;
    if (user_bytes) *user_bytes = 0;
    loader ld;
    memset(&ld, 0, sizeof ld);
    ld.path = path;
    ld.snap.owned = 1;
    ld.f = fopen(path, "rb");
    if (!ld.f) return ad_fail(AD_ERR_IO, "checkpoint", "cannot open checkpoint %s: %s", path, strerror(errno));
    ad_world *w = NULL;
    ad_status st = load_file(&ld);
    if (!st.code) st = build(&ld, backend, threads, &w);
    fclose(ld.f);
    free(ld.segs);
    free(ld.tris);
    free(ld.wait3);
    free(ld.fsums);
    free(ld.panels);
    ad_snapshot_free(&ld.snap);
    if (st.code != AD_OK) {
        ad_world_destroy(w);
        free(ld.ublock);
        return st;
    }
    *out = w;
    if (user) *user = ld.ublock;
    else free(ld.ublock);
    if (user_bytes) *user_bytes = (size_t)ld.ulen;
    return st;
}

void ad_snapshot_free(ad_snapshot *s)
{
    if (!s) return;
    ad_open_state_free(&s->open_alloc);
    if (s->owned) {
        AD_FREE_EACH(s->state, s->state3, s->id, s->touch, s->pressure, s->virial, s->accel, s->accel3);
    }
    memset(s, 0, sizeof *s);
}
