/* Checkpoints: a versioned, checksummed file holding a whole world, written atomically (temp + rename).
 *
 * Layout (little-endian as written by this machine; the endian mark refuses others):
 *   "AERODEM\x1a"  u32 version  u32 endian mark 0x01020304
 *   sections: char tag[4], u32 zero, u64 length, payload
 *     DEF   ad_world_def (its size must match this build's)
 *     STAT  ad_stats
 *     SEGS  ad_segment[]
 *     PART  u64 n, u32 primed, u32 zero, state[n], id[n], pressure[n], virial[n], accel[n]
 *     OPEN  double owed[4], u32 next_id, u32 nwaiting, ad_entry waiting[nwaiting], u32 res_boxes, u32 zero,
 *           double res_state[2 res_boxes]   (open sides and the reservoir, open.h)
 *     FLDS  ad_field_def, u64 samples, u32 probe, u32 zero, ad_probe_def, u64 probe_samples,
 *           double sums[(nx*ny + 1)*AD_FS_COUNT] (the cells', then the probe's)   (only with fields)
 *     USER  the caller's bytes
 *     END.  empty
 *   u32 CRC-32 (IEEE) of every byte before it
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "world_internal.h"

#define CKPT_VERSION 2u
#define CKPT_ENDIAN 0x01020304u
static const char CKPT_MAGIC[8] = {'A', 'E', 'R', 'O', 'D', 'E', 'M', 0x1a};

static uint32_t crc_table[256];

static void crc_init(void)
{
    if (crc_table[1]) return;
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[i] = c;
    }
}

static uint32_t crc_update(uint32_t crc, const void *data, size_t n)
{
    const unsigned char *p = data;
    crc = ~crc;
    for (size_t i = 0; i < n; i++) crc = crc_table[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
    return ~crc;
}

typedef struct writer {
    FILE *f;
    uint32_t crc;
    int err;
} writer;

static void put(writer *w, const void *p, size_t n)
{
    if (w->err || n == 0) return;
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

ad_status ad_world_save(const ad_world *w, const char *path, const void *user, size_t user_bytes)
{
    if (!w || !path) return ad_fail(AD_ERR_INVALID, "path", "world or path is NULL");
    crc_init();
    ad_snapshot snap;
    ad_status st = w->ops->pull_stats ? w->ops->pull_stats((ad_world *)w) : ad_ok();
    if (st.code) return st;
    st = w->ops->export_state(w, &snap);
    if (st.code) return st;
    if (w->fields.enabled && w->ops->fields_to_host) {
        st = w->ops->fields_to_host((ad_world *)w);
        if (st.code) {
            ad_snapshot_free(&snap);
            return st;
        }
    }
    size_t len = strlen(path);
    char *tmp = malloc(len + 16);
    if (!tmp) {
        ad_snapshot_free(&snap);
        return ad_fail(AD_ERR_NO_MEMORY, "", "out of memory");
    }
    snprintf(tmp, len + 16, "%s.tmp", path);
    writer wr = {fopen(tmp, "wb"), 0, 0};
    if (!wr.f) {
        int e = errno;
        ad_snapshot_free(&snap);
        st = ad_fail(AD_ERR_IO, "path", "cannot write checkpoint %s: %s", tmp, strerror(e));
        free(tmp);
        return st;
    }
    uint32_t version = CKPT_VERSION, endian = CKPT_ENDIAN;
    put(&wr, CKPT_MAGIC, 8);
    put(&wr, &version, 4);
    put(&wr, &endian, 4);
    section(&wr, "DEF ", sizeof w->def);
    put(&wr, &w->def, sizeof w->def);
    section(&wr, "STAT", sizeof w->stats);
    put(&wr, &w->stats, sizeof w->stats);
    section(&wr, "SEGS", w->seg.count * sizeof(ad_segment));
    put(&wr, w->seg.raw, w->seg.count * sizeof(ad_segment));
    uint64_t n = snap.n;
    uint32_t primed = (uint32_t)snap.primed, zero = 0;
    section(&wr, "PART", 16 + n * (sizeof(ad_state) + 3 * 4 + sizeof(ad_accel)));
    put(&wr, &n, 8);
    put(&wr, &primed, 4);
    put(&wr, &zero, 4);
    put(&wr, snap.state, n * sizeof(ad_state));
    put(&wr, snap.id, n * 4);
    put(&wr, snap.pressure, n * 4);
    put(&wr, snap.virial, n * 4);
    put(&wr, snap.accel, n * sizeof(ad_accel));
    if (ad_world_open(w)) {
        uint32_t nwait = snap.open.nwaiting, nbox = snap.open.res_boxes;
        section(&wr, "OPEN", sizeof snap.open.owed + 16 + (uint64_t)nwait * sizeof(ad_entry) + 16ull * nbox);
        put(&wr, snap.open.owed, sizeof snap.open.owed);
        put(&wr, &snap.open.next_id, 4);
        put(&wr, &nwait, 4);
        put(&wr, snap.open.waiting, (size_t)nwait * sizeof(ad_entry));
        put(&wr, &nbox, 4);
        put(&wr, &zero, 4);
        put(&wr, snap.open.res_state, 16 * (size_t)nbox);
    }
    if (w->fields.enabled) {
        size_t cells = (size_t)w->fields.def.nx * w->fields.def.ny + 1;
        uint32_t probe = (uint32_t)w->fields.grid.probe;
        section(&wr, "FLDS", sizeof(ad_field_def) + 16 + sizeof(ad_probe_def) + 8 + cells * AD_FS_COUNT * sizeof(double));
        put(&wr, &w->fields.def, sizeof(ad_field_def));
        put(&wr, &w->fields.samples, 8);
        put(&wr, &probe, 4);
        put(&wr, &zero, 4);
        put(&wr, &w->fields.probe, sizeof(ad_probe_def));
        put(&wr, &w->fields.probe_samples, 8);
        put(&wr, w->fields.sums, cells * AD_FS_COUNT * sizeof(double));
    }
    section(&wr, "USER", user_bytes);
    put(&wr, user, user ? user_bytes : 0);
    section(&wr, "END.", 0);
    uint32_t crc = wr.crc;
    if (!wr.err && fwrite(&crc, 4, 1, wr.f) != 1) wr.err = errno ? errno : EIO;
    if (!wr.err && fflush(wr.f) != 0) wr.err = errno;
    if (!wr.err && fsync(fileno(wr.f)) != 0) wr.err = errno;
    if (fclose(wr.f) != 0 && !wr.err) wr.err = errno;
    ad_snapshot_free(&snap);
    if (wr.err) {
        unlink(tmp);
        st = ad_fail(AD_ERR_IO, "path", "writing checkpoint %s failed: %s", tmp, strerror(wr.err));
        free(tmp);
        return st;
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        st = ad_fail(AD_ERR_IO, "path", "cannot rename %s to %s: %s", tmp, path, strerror(e));
        free(tmp);
        return st;
    }
    free(tmp);
    return ad_ok();
}

/* ------------------------------------------------------------------ load -- */

typedef struct reader {
    FILE *f;
    const char *path;
    uint64_t left; /* bytes before the checksum */
} reader;

static ad_status get(reader *r, void *p, uint64_t n, const char *what)
{
    if (n > r->left || (n && fread(p, 1, (size_t)n, r->f) != (size_t)n))
        return ad_fail(AD_ERR_FORMAT, "checkpoint", "checkpoint %s is truncated (reading %s)", r->path, what);
    r->left -= n;
    return ad_ok();
}

/* First pass: the checksum over the whole file, before anything is trusted. */
static ad_status verify(FILE *f, const char *path, uint64_t *body)
{
    crc_init();
    if (fseek(f, 0, SEEK_END) != 0) return ad_fail(AD_ERR_IO, "checkpoint", "cannot seek in %s", path);
    long size = ftell(f);
    rewind(f);
    if (size < 20) return ad_fail(AD_ERR_FORMAT, "checkpoint", "%s is too short to be an aerodem checkpoint", path);
    char magic[8];
    if (fread(magic, 1, 8, f) != 8 || memcmp(magic, CKPT_MAGIC, 8) != 0)
        return ad_fail(AD_ERR_FORMAT, "checkpoint", "%s is not an aerodem checkpoint (bad magic bytes)", path);
    rewind(f);
    uint64_t n = (uint64_t)size - 4, done = 0;
    uint32_t crc = 0;
    static unsigned char buf[1 << 16];
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
    *body = n;
    return ad_ok();
}

static int u32_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The discs' ids are unique, and without open sides 0 .. n-1 (ad_open_state). */
static ad_status check_ids(const ad_snapshot *snap, int open, const char *path)
{
    size_t n = snap->n;
    uint32_t *v = malloc((n ? n : 1) * sizeof *v);
    if (!v) return ad_fail(AD_ERR_NO_MEMORY, "", "out of memory checking the ids of %s", path);
    memcpy(v, snap->id, n * sizeof *v);
    qsort(v, n, sizeof *v, u32_cmp);
    ad_status st = ad_ok();
    for (size_t i = 0; i < n && !st.code; i++) {
        if (!open && v[i] >= n)
            st = ad_fail(AD_ERR_FORMAT, "checkpoint", "checkpoint %s: particle id %u out of range", path, v[i]);
        else if (i > 0 && v[i] == v[i - 1])
            st = ad_fail(AD_ERR_FORMAT, "checkpoint", "checkpoint %s: particle id %u appears twice", path, v[i]);
    }
    free(v);
    return st;
}

#define TRYL(expr)                                                                                                \
    do {                                                                                                          \
        st = (expr);                                                                                              \
        if (st.code != AD_OK) goto done;                                                                          \
    } while (0)

ad_status ad_world_load(const char *path, ad_backend backend, int threads, ad_world **out, void **user,
                        size_t *user_bytes)
{
    if (!path || !out) return ad_fail(AD_ERR_INVALID, "path", "path or output is NULL");
    *out = NULL;
    if (user) *user = NULL;
    if (user_bytes) *user_bytes = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return ad_fail(AD_ERR_IO, "checkpoint", "cannot open checkpoint %s: %s", path, strerror(errno));
    ad_status st;
    ad_world *w = NULL;
    ad_snapshot snap;
    memset(&snap, 0, sizeof snap);
    snap.owned = 1;
    void *ublock = NULL;
    uint64_t ulen = 0;
    ad_segment *segs = NULL;
    uint64_t nseg = 0;
    ad_stats stats;
    int have_def = 0, have_stats = 0, have_part = 0, ended = 0;
    ad_world_def def;
    ad_field_def fdef;
    memset(&fdef, 0, sizeof fdef);
    uint64_t fsamples = 0, psamples = 0;
    uint32_t fprobe = 0;
    ad_probe_def pdef;
    memset(&pdef, 0, sizeof pdef);
    double *fsums = NULL;
    int have_open = 0;
    uint64_t body = 0;
    TRYL(verify(f, path, &body));
    reader r = {f, path, body};
    char magic[8];
    uint32_t version, endian;
    TRYL(get(&r, magic, 8, "the header"));
    TRYL(get(&r, &version, 4, "the header"));
    TRYL(get(&r, &endian, 4, "the header"));
    if (endian != CKPT_ENDIAN) {
        st = ad_fail(AD_ERR_FORMAT, "checkpoint", "checkpoint %s was written on a machine of other byte order", path);
        goto done;
    }
    if (version != CKPT_VERSION) {
        st = ad_fail(AD_ERR_FORMAT, "checkpoint", "checkpoint %s has format version %u; this aerodem reads version %u",
                     path, version, CKPT_VERSION);
        goto done;
    }
    while (!ended) {
        char tag[4];
        uint32_t zero;
        uint64_t len;
        TRYL(get(&r, tag, 4, "a section header"));
        TRYL(get(&r, &zero, 4, "a section header"));
        TRYL(get(&r, &len, 8, "a section header"));
        if (len > r.left) {
            st = ad_fail(AD_ERR_FORMAT, "checkpoint", "checkpoint %s: section %.4s claims %llu bytes, %llu remain", path,
                         tag, (unsigned long long)len, (unsigned long long)r.left);
            goto done;
        }
        if (!memcmp(tag, "DEF ", 4)) {
            if (len != sizeof def) {
                st = ad_fail(AD_ERR_FORMAT, "checkpoint",
                             "checkpoint %s was written by another build of aerodem (world definition of %llu bytes, "
                             "this build has %zu)",
                             path, (unsigned long long)len, sizeof def);
                goto done;
            }
            TRYL(get(&r, &def, len, "the world definition"));
            have_def = 1;
        } else if (!memcmp(tag, "STAT", 4)) {
            if (len != sizeof stats) {
                st = ad_fail(AD_ERR_FORMAT, "checkpoint", "checkpoint %s was written by another build of aerodem", path);
                goto done;
            }
            TRYL(get(&r, &stats, len, "the statistics"));
            have_stats = 1;
        } else if (!memcmp(tag, "SEGS", 4)) {
            nseg = len / sizeof(ad_segment);
            segs = malloc(len ? len : 1);
            if (!segs) {
                st = ad_fail(AD_ERR_NO_MEMORY, "", "out of memory reading %s", path);
                goto done;
            }
            TRYL(get(&r, segs, len, "the segments"));
        } else if (!memcmp(tag, "PART", 4)) {
            uint32_t primed, z;
            TRYL(get(&r, &snap.n, 8, "the particle count"));
            TRYL(get(&r, &primed, 4, "the particle header"));
            TRYL(get(&r, &z, 4, "the particle header"));
            uint64_t n = snap.n;
            if (!have_def || n > def.capacity || len != 16 + n * (sizeof(ad_state) + 12 + sizeof(ad_accel))) {
                st = ad_fail(AD_ERR_FORMAT, "checkpoint", "checkpoint %s: the particle section is inconsistent", path);
                goto done;
            }
            snap.primed = (int)primed;
            snap.state = malloc(n * sizeof(ad_state) + 1);
            snap.id = malloc(n * 4 + 1);
            snap.pressure = malloc(n * 4 + 1);
            snap.virial = malloc(n * 4 + 1);
            snap.accel = malloc(n * sizeof(ad_accel) + 1);
            if (!snap.state || !snap.id || !snap.pressure || !snap.virial || !snap.accel) {
                st = ad_fail(AD_ERR_NO_MEMORY, "", "out of memory reading %llu particles from %s",
                             (unsigned long long)n, path);
                goto done;
            }
            TRYL(get(&r, snap.state, n * sizeof(ad_state), "particle states"));
            TRYL(get(&r, snap.id, n * 4, "particle ids"));
            TRYL(get(&r, snap.pressure, n * 4, "particle pressures"));
            TRYL(get(&r, snap.virial, n * 4, "particle virials"));
            TRYL(get(&r, snap.accel, n * sizeof(ad_accel), "particle accelerations"));
            have_part = 1;
        } else if (!memcmp(tag, "OPEN", 4)) {
            uint32_t nwait, nbox, z;
            TRYL(get(&r, snap.open.owed, sizeof snap.open.owed, "the open sides"));
            TRYL(get(&r, &snap.open.next_id, 4, "the open sides"));
            TRYL(get(&r, &nwait, 4, "the open sides"));
            if (nwait > AD_WAITING_MAX || len < sizeof snap.open.owed + 16 + (uint64_t)nwait * sizeof(ad_entry)) {
                st = ad_fail(AD_ERR_FORMAT, "checkpoint", "checkpoint %s: the open sides' section is inconsistent", path);
                goto done;
            }
            for (int k = 0; k < 4; k++)
                if (!(snap.open.owed[k] >= 0.0 && snap.open.owed[k] < 1.0)) {
                    st = ad_fail(AD_ERR_FORMAT, "checkpoint", "checkpoint %s: the entries owed at side %d (%g) are not in [0, 1)",
                                 path, k, snap.open.owed[k]);
                    goto done;
                }
            uint64_t rest = len - (sizeof snap.open.owed + 16 + (uint64_t)nwait * sizeof(ad_entry));
            if (rest % 16 || rest / 16 > 0x7fffffffu) {
                st = ad_fail(AD_ERR_FORMAT, "checkpoint", "checkpoint %s: the open sides' section is inconsistent", path);
                goto done;
            }
            TRYL(ad_open_state_alloc(&snap.open_alloc, (uint32_t)(rest / 16)));
            snap.open.waiting = snap.open_alloc.waiting;
            snap.open.res_state = snap.open_alloc.res_state;
            snap.open.nwaiting = nwait;
            TRYL(get(&r, snap.open.waiting, (uint64_t)nwait * sizeof(ad_entry), "the waiting entries"));
            TRYL(get(&r, &nbox, 4, "the reservoir"));
            TRYL(get(&r, &z, 4, "the reservoir"));
            if (nbox != rest / 16) {
                st = ad_fail(AD_ERR_FORMAT, "checkpoint", "checkpoint %s: the reservoir's section is inconsistent", path);
                goto done;
            }
            snap.open.res_boxes = nbox;
            TRYL(get(&r, snap.open.res_state, 16ull * nbox, "the reservoir's controllers"));
            for (uint32_t b = 0; b < 2 * nbox; b++)
                if (!isfinite(snap.open.res_state[b])) {
                    st = ad_fail(AD_ERR_FORMAT, "checkpoint", "checkpoint %s: a reservoir controller is not finite", path);
                    goto done;
                }
            have_open = 1;
        } else if (!memcmp(tag, "FLDS", 4)) {
            uint32_t z;
            TRYL(get(&r, &fdef, sizeof fdef, "the field grid"));
            TRYL(get(&r, &fsamples, 8, "the field grid"));
            TRYL(get(&r, &fprobe, 4, "the field grid"));
            TRYL(get(&r, &z, 4, "the field grid"));
            TRYL(get(&r, &pdef, sizeof pdef, "the probe"));
            TRYL(get(&r, &psamples, 8, "the probe"));
            uint64_t cells = (uint64_t)(fdef.nx > 0 ? fdef.nx : 0) * (uint64_t)(fdef.ny > 0 ? fdef.ny : 0);
            if (cells == 0 || cells > 100000000u || fprobe > 1 ||
                len != sizeof fdef + 16 + sizeof pdef + 8 + (cells + 1) * AD_FS_COUNT * sizeof(double)) {
                st = ad_fail(AD_ERR_FORMAT, "checkpoint", "checkpoint %s: the field section is inconsistent", path);
                goto done;
            }
            fsums = malloc((cells + 1) * AD_FS_COUNT * sizeof(double));
            if (!fsums) {
                st = ad_fail(AD_ERR_NO_MEMORY, "", "out of memory reading the fields of %s", path);
                goto done;
            }
            TRYL(get(&r, fsums, (cells + 1) * AD_FS_COUNT * sizeof(double), "the field sums"));
        } else if (!memcmp(tag, "USER", 4)) {
            ublock = malloc(len + 1);
            if (!ublock) {
                st = ad_fail(AD_ERR_NO_MEMORY, "", "out of memory reading %s", path);
                goto done;
            }
            TRYL(get(&r, ublock, len, "the caller block"));
            ((char *)ublock)[len] = 0;
            ulen = len;
        } else if (!memcmp(tag, "END.", 4)) {
            ended = 1;
        } else {
            st = ad_fail(AD_ERR_FORMAT, "checkpoint", "checkpoint %s has an unknown section '%.4s'", path, tag);
            goto done;
        }
    }
    if (!have_def || !have_stats || !have_part) {
        st = ad_fail(AD_ERR_FORMAT, "checkpoint", "checkpoint %s lacks its %s section", path,
                     !have_def ? "definition" : !have_stats ? "statistics" : "particle");
        goto done;
    }
    int open = def.boundary_x == AD_BOUNDARY_OPEN || def.boundary_y == AD_BOUNDARY_OPEN;
    if (open != have_open) {
        st = ad_fail(AD_ERR_FORMAT, "checkpoint", "checkpoint %s: the open sides' section does not match the world", path);
        goto done;
    }
    if (!open) snap.open.next_id = (uint32_t)snap.n; /* ids 0 .. n-1 */
    TRYL(check_ids(&snap, open, path));
    if (backend != AD_BACKEND_AUTO) def.backend = backend;
    if (threads >= 0) def.threads = threads;
    TRYL(ad_world_create(&def, &w));
    if (nseg) TRYL(ad_world_add_segments(w, segs, (size_t)nseg));
    if (fsums) {
        TRYL(ad_world_set_fields(w, &fdef));
        if (fprobe) TRYL(ad_world_set_probe(w, &pdef));
        memcpy(w->fields.sums, fsums, ((size_t)fdef.nx * fdef.ny + 1) * AD_FS_COUNT * sizeof(double));
        w->fields.samples = fsamples;
        w->fields.probe_samples = psamples;
        if (w->ops->fields_to_device) TRYL(w->ops->fields_to_device(w));
    }
    /* the run's history; the new world's own backend, threads and timers stand */
    ad_backend b = w->stats.backend;
    int t = w->stats.threads;
    uint32_t bits = w->stats.cell_counter_bits;
    w->stats = stats;
    w->stats.backend = b;
    w->stats.threads = t;
    w->stats.cell_counter_bits = bits;
    w->stats.count = snap.n;
    for (int k = 0; k < AD_PHASE_COUNT; k++) w->stats.phase_seconds[k] = 0.0;
    if (open && snap.open.res_boxes != (uint32_t)w->params.res_boxes) {
        st = ad_fail(AD_ERR_FORMAT, "checkpoint", "checkpoint %s holds %u reservoir boxes; its world has %d", path,
                     snap.open.res_boxes, w->params.res_boxes);
        goto done;
    }
    TRYL(w->ops->import_state(w, &snap)); /* a device backend takes its statistics from w->stats */
    w->count = snap.n;
    st = ad_ok();
done:
    fclose(f);
    free(segs);
    free(fsums);
    ad_snapshot_free(&snap);
    if (st.code != AD_OK) {
        ad_world_destroy(w);
        free(ublock);
        return st;
    }
    *out = w;
    if (user) *user = ublock;
    else free(ublock);
    if (user_bytes) *user_bytes = (size_t)ulen;
    return st;
}

void ad_snapshot_free(ad_snapshot *s)
{
    if (!s) return;
    ad_open_state_free(&s->open_alloc);
    if (s->owned) {
        free(s->state);
        free(s->id);
        free(s->pressure);
        free(s->virial);
        free(s->accel);
    }
    memset(s, 0, sizeof *s);
}
