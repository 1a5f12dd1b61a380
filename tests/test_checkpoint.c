/* The checkpoint loader and writer (src/core/checkpoint.c) against hostile files: checkpoints with a valid
 * checksum and one field out of range (each refused with AD_ERR_FORMAT naming the file and the field),
 * truncation at every section boundary, a foreign version, an empty file; and the writer against a full
 * disk (the previous checkpoint stays loadable, no temporary file stays) and stale temporary files.
 * With AERODEM_CKPT_SEEDS=DIR it also writes its good checkpoints into DIR (fuzz/corpus/checkpoint). */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/world_internal.h"
#include "test_util.h"

static char g_dir[256];

/* ------------------------------------------------------------ worlds -- */

enum { W_BOX, W_TUNNEL, W_VERLET, W_RK4, W_BVH, W_SPHERES, W_OPEN3, W_COUNT };
static const char *const W_NAME[W_COUNT] = {"box", "tunnel", "verlet", "rk4", "bvh", "spheres", "open3"};

/* Small worlds, a few KB as checkpoints: a closed box with fields, a far-field tunnel with a body, the
 * reservoir, fields and a probe, a periodic Verlet gas, an RK4 gas, a BVH gas with a plate, a 3D gas
 * of spheres around a tetrahedron, and a 3D tunnel open along x with spheres waiting for room. */
static ad_world *make_spheres(void)
{
    ad_world_def d = ad_default_world_def();
    d.dimensions = 3;
    d.backend = AD_BACKEND_CPU;
    d.threads = 1;
    d.capacity = 400;
    d.x_max = d.y_max = d.z_max = 10;
    d.boundary_z = AD_BOUNDARY_PERIODIC;
    d.integrator = AD_INTEGRATOR_VERLET;
    d.restitution = 0.9;
    ad_world *w;
    REQUIRE_OK(ad_world_create(&d, &w));
    ad_triangle tet[4] = {{{{4, 4, 4}, {6, 4, 4}, {4, 6, 4}}}, {{{4, 4, 4}, {4, 6, 4}, {4, 4, 6}}},
                          {{{4, 4, 4}, {4, 4, 6}, {6, 4, 4}}}, {{{6, 4, 4}, {4, 4, 6}, {4, 6, 4}}}};
    REQUIRE_OK(ad_world_add_triangles(w, tet, 4));
    ad_fill_def f = {0, 0, 10, 10, 0.15, 0.5, 0.0, 1.0, 9, 0, 10, -0.3};
    REQUIRE_OK(ad_world_fill(w, &f, NULL));
    REQUIRE_OK(ad_world_step(w, 150));
    return w;
}

static ad_world *make_open3(void)
{
    ad_world_def d = ad_default_world_def();
    d.dimensions = 3;
    d.backend = AD_BACKEND_CPU;
    d.threads = 1;
    d.capacity = 400;
    d.x_max = 8.0;
    d.y_max = d.z_max = 4.0;
    d.boundary_x = AD_BOUNDARY_OPEN;
    d.boundary_y = AD_BOUNDARY_PERIODIC;
    d.stream_vx = 2.0;
    d.stream_density = 0.6;
    ad_world *w;
    REQUIRE_OK(ad_world_create(&d, &w));
    ad_fill_def f = {0, 0, 8, 4, 0.3, 2.0, 0.0, 1.0, 5, 0, 4, 0.0};
    REQUIRE_OK(ad_world_fill(w, &f, NULL));
    for (int k = 0; k < 200 && tu_stats(w).entries_waiting == 0; k++) REQUIRE_OK(ad_world_step(w, 10));
    ENSURE(tu_stats(w).entries_waiting > 0);
    return w;
}

static ad_world *make_world(int kind)
{
    if (kind == W_SPHERES) return make_spheres();
    if (kind == W_OPEN3) return make_open3();
    ad_world_def d = ad_default_world_def();
    d.backend = AD_BACKEND_CPU;
    d.threads = 1;
    d.capacity = 400;
    d.x_max = kind == W_TUNNEL ? 40 : 16;
    d.y_max = kind == W_TUNNEL ? 20 : 16;
    d.restitution = 0.9;
    if (kind == W_TUNNEL) {
        d.boundary_x = AD_BOUNDARY_OPEN;
        d.stream_vx = 2.0;
        d.stream_density = 0.15;
        d.reservoir = 3.0;
        d.seed = 5;
    }
    if (kind == W_VERLET) d.integrator = AD_INTEGRATOR_VERLET, d.boundary_x = d.boundary_y = AD_BOUNDARY_PERIODIC;
    if (kind == W_RK4) d.integrator = AD_INTEGRATOR_RK4, d.gravity_y = -1.0;
    if (kind == W_BVH) d.broad_phase = AD_BROAD_PHASE_BVH;
    ad_world *w;
    REQUIRE_OK(ad_world_create(&d, &w));
    if (kind == W_TUNNEL) {
        ad_segment sq[] = {{14, 8, 18, 8}, {18, 8, 18, 12}, {18, 12, 14, 12}, {14, 12, 14, 8}};
        REQUIRE_OK(ad_world_add_segments(w, sq, 4));
    }
    if (kind == W_BVH) {
        ad_segment plate = {6, 4, 10, 5};
        REQUIRE_OK(ad_world_add_segments(w, &plate, 1));
    }
    ad_fill_def f = {0, 0, d.x_max, d.y_max, kind == W_TUNNEL ? 0.12 : 0.2, kind == W_TUNNEL ? 2.0 : 0.0, 0.0, 1.0,
                     (uint64_t)(kind + 3), 0, 0, 0};
    REQUIRE_OK(ad_world_fill(w, &f, NULL));
    if (kind == W_BOX || kind == W_TUNNEL) {
        ad_field_def fd = {4, 2, 0, 0, d.x_max, d.y_max, 2, 0, 0.0, 0.0};
        REQUIRE_OK(ad_world_set_fields(w, &fd));
    }
    if (kind == W_TUNNEL) {
        ad_probe_def p = {4, 2, 10, 18, 1, 0, 0.0, 0.0};
        REQUIRE_OK(ad_world_set_probe(w, &p));
    }
    REQUIRE_OK(ad_world_step(w, 150));
    return w;
}

/* ------------------------------------------------------------- bytes -- */

typedef struct file {
    unsigned char *b;
    size_t n;
} file;

static file read_all(const char *path)
{
    file f = {NULL, 0};
    FILE *in = fopen(path, "rb");
    if (!in) return f;
    fseek(in, 0, SEEK_END);
    long n = ftell(in);
    rewind(in);
    f.b = malloc((size_t)n + 1);
    f.n = fread(f.b, 1, (size_t)n, in);
    fclose(in);
    return f;
}

static void write_all(const char *path, const unsigned char *b, size_t n)
{
    FILE *out = fopen(path, "wb");
    if (!out) exit(1);
    if (n) ENSURE(fwrite(b, 1, n, out) == n);
    fclose(out);
}

/* CRC-32 (IEEE, reflected 0xEDB88320), as the format defines it, independent of the library's. */
static uint32_t crc32_of(const unsigned char *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    }
    return ~c;
}

/* The checksum of everything before the last 4 bytes, stored in them: the file is intact again. */
static void fix_crc(file *f)
{
    uint32_t c = crc32_of(f->b, f->n - 4);
    memcpy(f->b + f->n - 4, &c, 4);
}

/* The offset of a section's payload (its header is the 16 bytes before), or 0 when absent. */
static size_t find(const file *f, const char *tag, uint64_t *len)
{
    size_t at = 16;
    while (at + 16 <= f->n - 4) {
        uint64_t l;
        memcpy(&l, f->b + at + 8, 8);
        if (!memcmp(f->b + at, tag, 4)) {
            if (len) *len = l;
            return at + 16;
        }
        if (!memcmp(f->b + at, "END.", 4) || l > f->n) break;
        at += 16 + (size_t)l;
    }
    return 0;
}

static file copy(const file *f)
{
    file c = {malloc(f->n + 64), f->n};
    memcpy(c.b, f->b, f->n);
    return c;
}

/* The offsets of the particle arrays in a file's PART section. */
typedef struct part_at {
    size_t n, state, id, pressure, virial, accel;
} part_at;

static part_at part_of(const file *f)
{
    part_at p;
    size_t at = find(f, "PART", NULL);
    uint64_t n;
    memcpy(&n, f->b + at, 8);
    p.n = (size_t)n;
    p.state = at + 16;
    p.id = p.state + p.n * sizeof(ad_state);
    p.pressure = p.id + 4 * p.n;
    p.virial = p.pressure + 4 * p.n;
    p.accel = p.virial + 4 * p.n;
    return p;
}

/* The 3D particle section's arrays. */
static part_at par3_of(const file *f)
{
    part_at p;
    size_t at = find(f, "PAR3", NULL);
    uint64_t n;
    memcpy(&n, f->b + at, 8);
    p.n = (size_t)n;
    p.state = at + 16;
    p.id = p.state + p.n * sizeof(ad_state3);
    p.pressure = p.id + 4 * p.n;
    p.virial = p.pressure + 4 * p.n;
    p.accel = p.virial + 4 * p.n;
    return p;
}

/* A copy of g with the n bytes at `at` replaced by those of v. */
static file put(const file *g, size_t at, const void *v, size_t n)
{
    file f = copy(g);
    memcpy(f.b + at, v, n);
    return f;
}

static file put_u64(const file *g, size_t at, uint64_t v) { return put(g, at, &v, 8); }
static file put_u32(const file *g, size_t at, uint32_t v) { return put(g, at, &v, 4); }
static file put_f32(const file *g, size_t at, float v) { return put(g, at, &v, 4); }
static file put_f64(const file *g, size_t at, double v) { return put(g, at, &v, 8); }

/* ------------------------------------------------------------ checks -- */

/* Writes the patched file (checksum fixed unless keep_crc), loads it: refused with AD_ERR_FORMAT, no world,
 * a message naming the file and containing each of the expected pieces. Frees the file. */
static void refused(const char *name, file f, int keep_crc, const char *expect1, const char *expect2)
{
    if (!keep_crc && f.n >= 4) fix_crc(&f);
    char path[400];
    snprintf(path, sizeof path, "%s/%s.ckpt", g_dir, name);
    write_all(path, f.b, f.n);
    ad_world *w = (ad_world *)1;
    void *user = (void *)1;
    size_t ub = 7;
    ad_status st = ad_world_load(path, AD_BACKEND_CPU, 1, &w, &user, &ub);
    ENSURE_MSG(st.code == AD_ERR_FORMAT, "%s: code %s: %s", name, ad_code_name(st.code), st.message);
    ENSURE_MSG(w == NULL && user == NULL && ub == 0, "%s: a refused load left outputs set", name);
    ENSURE_MSG(strstr(st.message, name) != NULL, "%s: the message does not name the file: %s", name, st.message);
    ENSURE_MSG(!expect1 || strstr(st.message, expect1), "%s: '%s' not in: %s", name, expect1, st.message);
    ENSURE_MSG(!expect2 || strstr(st.message, expect2), "%s: '%s' not in: %s", name, expect2, st.message);
    printf("  %-22s -> %s\n", name, st.message);
    if (st.code == AD_OK) ad_world_destroy(w);
    remove(path);
    free(f.b);
}

static file saved(int kind, ad_world **keep)
{
    ad_world *w = make_world(kind);
    char path[400];
    snprintf(path, sizeof path, "%s/%s_good.ckpt", g_dir, W_NAME[kind]);
    const char user[] = "[run]\nsteps = 150\n";
    REQUIRE_OK(ad_world_save(w, path, user, sizeof user));
    file f = read_all(path);
    ENSURE(f.n > 100);
    /* the good file loads and holds the world */
    ad_world *r;
    REQUIRE_OK(ad_world_load(path, AD_BACKEND_CPU, 1, &r, NULL, NULL));
    ENSURE(tu_stats(r).count == tu_stats(w).count && tu_stats(r).step == tu_stats(w).step);
    ad_world_destroy(r);
    remove(path);
    if (keep) *keep = w;
    else ad_world_destroy(w);
    return f;
}

/* One bad field at a time in the closed box (fields on), each class of issue 16's list: the statistics. */
static void box_stats(void)
{
    printf("closed box, one bad field each (valid checksum):\n");
    file g = saved(W_BOX, NULL);
    size_t stat = find(&g, "STAT", NULL), flds = find(&g, "FLDS", NULL);
    refused("step_2_61", put_u64(&g, stat + offsetof(ad_stats, step), 1ull << 61),
            0, "step = 2305843009213693952", NULL);
    refused("samples_2_61", put_u64(&g, flds + offsetof(ad_field_def, z0), 1ull << 61),
            0, "2305843009213693952 samples", NULL);
    refused("time_nan", put_f64(&g, stat + offsetof(ad_stats, time), NAN), 0, "time = nan", NULL);
    refused("time_ahead", put_f64(&g, stat + offsetof(ad_stats, time), 1e6), 0, "time = 1e+06", NULL);
    refused("dt_huge", put_f64(&g, stat + offsetof(ad_stats, dt), 1e300), 0, "dt = 1e+300", NULL);
    refused("impulse_inf", put_f64(&g, stat + offsetof(ad_stats, body_impulse_x), INFINITY),
            0, "body_impulse_x = inf", NULL);
    free(g.b);
}

/* The discs: positions, velocities, forces, ids, count, the definition they live in. */
static void box_particles(void)
{
    file g = saved(W_BOX, NULL);
    part_at p = part_of(&g);
    size_t def = find(&g, "DEF ", NULL);
    ENSURE(p.n > 20);
    refused("disc_far_outside", put_f32(&g, p.state + 17 * sizeof(ad_state) + offsetof(ad_state, x), 1e10f),
            0, "particle 17", "x = 1e+10 m, outside the domain [-4, 20] m");
    refused("velocity_nan", put_f32(&g, p.state + 3 * sizeof(ad_state) + offsetof(ad_state, vx), NAN),
            0, "particle 3", "velocity (nan");
    refused("velocity_huge", put_f32(&g, p.state + 4 * sizeof(ad_state) + offsetof(ad_state, vy), 3e38f),
            0, "particle 4", "velocity");
    /* finite, but the next step (of the file's dt) would throw it 5e10 m out (a fuzzer's find) */
    refused("velocity_fast", put_f32(&g, p.state + 5 * sizeof(ad_state) + offsetof(ad_state, vy), 5e13f),
            0, "particle 5", "would move");
    refused("accel_huge", put_f32(&g, p.accel + 6 * sizeof(ad_accel), 1e20f), 0, "particle 6", "would move");
    refused("accel_inf", put_f32(&g, p.accel + 8 * sizeof(ad_accel), -INFINITY),
            0, "particle 8", "acceleration (-inf");
    refused("pressure_nan", put_f32(&g, p.pressure + 4 * 2, NAN), 0, "particle 2", "pressure nan");
    refused("duplicate_id", put(&g, p.id + 4 * 5, g.b + p.id + 4 * 6, 4), 0, "appears twice", NULL);
    refused("id_above_count", put_u32(&g, p.id, (uint32_t)p.n + 5), 0, "out of range", NULL);
    refused("count_above_capacity", put_u64(&g, def + offsetof(ad_world_def, capacity), p.n - 1),
            0, "more than the world's capacity", NULL);
    refused("def_radius", put_f64(&g, def + offsetof(ad_world_def, radius), -1.0),
            0, "world definition is refused", "radius");
    refused("huge_section", put_u64(&g, find(&g, "SEGS", NULL) - 8, 1ull << 62),
            0, "claims 4611686018427387904 bytes", NULL);
    refused("huge_particle_count", put_u64(&g, p.state - 16, 1ull << 61), 0, "2305843009213693952 particles", NULL);
    refused("primed_7", put_u32(&g, p.state - 8, 7), 0, "primed = 7", NULL);
    free(g.b);
}

/* The field grid and the container: version, sections, trailing bytes, the caller block, the checksum. */
static void box_container(void)
{
    file g = saved(W_BOX, NULL);
    size_t flds = find(&g, "FLDS", NULL);
    file f;
    /* the field grid: another cell count than its sums, cells too fine to index, a NaN sum */
    refused("field_grid_mismatch", put_u32(&g, flds + offsetof(ad_field_def, nx), 5), 0, "5 x 2 grid", NULL);
    refused("field_grid_huge", put_u32(&g, flds + offsetof(ad_field_def, nx), 0x7fffffff),
            0, "2147483647 x 2 cells", NULL);
    refused("field_cells_fine", put_f64(&g, flds + offsetof(ad_field_def, x1), 1e-30), 0, "so fine", NULL);
    /* FLDS holds the definitions' 2D parts, up to z0 */
    refused("field_sum_nan",
            put_f64(&g, flds + offsetof(ad_field_def, z0) + 16 + offsetof(ad_probe_def, z0) + 8 + 8 * 3, NAN),
            0, "field sum 3", NULL);
    /* the container: version, sections, trailing bytes, the caller block */
    refused("version_2", put_u32(&g, 8, 2), 0, "format version 2", NULL);
    refused("version_4", put_u32(&g, 8, 4), 0, "format version 4", NULL);
    refused("section_twice", put(&g, find(&g, "SEGS", NULL) - 16, "USER", 4), 0, "'USER' appears twice", NULL);
    refused("section_unknown", put(&g, find(&g, "SEGS", NULL) - 16, "S\001G\xff", 4),
            0, "unknown section 'S\\x01G\\xff'", NULL);
    refused("section_reserved", put_u32(&g, find(&g, "STAT", NULL) - 12, 9), 0, "reserved word", NULL);
    f = copy(&g), memmove(f.b + f.n + 4, f.b + f.n - 4, 4), memset(f.b + f.n - 4, 0, 8), f.n += 8;
    refused("trailing_bytes", f, 0, "8 bytes follow its end section", NULL);
    refused("user_huge", put_u64(&g, find(&g, "USER", NULL) - 8, (1ull << 30) + 1), 0, "claims", NULL);
    f = copy(&g), f.b[f.n / 2] ^= 0x40;
    refused("crc_flip", f, 1, "corrupt", NULL);
    f = copy(&g), f.n = 0;
    refused("empty", f, 1, "too short", NULL);
    free(g.b);
}

/* The tunnel: its open sides' state, the reservoir, segments, ids against the counter, the probe. */
static void tunnel_fields(void)
{
    printf("tunnel with a body, the reservoir, fields and a probe, one bad field each:\n");
    file g = saved(W_TUNNEL, NULL);
    part_at p = part_of(&g);
    size_t open = find(&g, "OPEN", NULL), segs = find(&g, "SEGS", NULL), def = find(&g, "DEF ", NULL);
    size_t flds = find(&g, "FLDS", NULL);
    ENSURE(open && segs && flds && p.n > 10);
    uint32_t next_id;
    memcpy(&next_id, g.b + open + 32, 4);
    file f;
    refused("id_above_counter", put_u32(&g, p.id + 4, next_id + 10), 0, "not below the id counter", NULL);
    refused("owed_1_5", put_f64(&g, open + 8, 1.5), 0, "owed at side 1 (1.5)", NULL);
    refused("waiting_100000", put_u32(&g, open + 36, 100000), 0, "100000 entering discs", NULL);
    refused("reservoir_boxes", put_f64(&g, def + offsetof(ad_world_def, reservoir), 6.0), 0, "reservoir boxes", NULL);
    /* definitions whose grid or reservoir arithmetic would overflow an int or a float (fuzzer finds) */
    refused("reservoir_wide", put_f64(&g, def + offsetof(ad_world_def, reservoir), 1e10),
            0, "reservoir bands of 1e+10 m", NULL);
    refused("reservoir_rate_huge", put_f64(&g, def + offsetof(ad_world_def, reservoir), 1e-300),
            0, "reservoir_rate", NULL);
    refused("stream_dense", put_f64(&g, def + offsetof(ad_world_def, stream_density), 1e12),
            0, "more than the world's capacity of 400", NULL);
    refused("cell_size_tiny", put_f64(&g, def + offsetof(ad_world_def, cell_size), 1e-12),
            0, "cell_size = 1e-12 m", NULL);
    refused("segment_nan", put_f32(&g, segs + 16 + 4, NAN), 0, "segment 1", "not finite");
    refused("segment_far", put_f32(&g, segs, 1e30f), 0, "segment 0", "far outside");
    refused("disc_below", put_f32(&g, p.state + 2 * sizeof(ad_state) + offsetof(ad_state, y), -1e10f),
            0, "particle 2", "y = -1e+10 m");
    refused("probe_nan", put_f64(&g, flds + offsetof(ad_field_def, z0) + 16, NAN), 0, "probe", NULL);
    refused("open_unknown", put(&g, open - 16, "USRX", 4), 0, "unknown section 'USRX'", NULL);
    uint64_t olen;
    find(&g, "OPEN", &olen);
    f = copy(&g), memmove(f.b + open - 16, f.b + open + olen, g.n - (open + olen)), f.n -= 16 + (size_t)olen;
    refused("open_missing", f, 0, "has open sides and the file lacks their section", NULL);
    free(g.b);
}

/* A 3D world's checkpoint: its spheres, its triangles and its dimensions checked by name. */
static void spheres_bad(void)
{
    printf("3D gas, one bad field each (valid checksum):\n");
    file g = saved(W_SPHERES, NULL);
    part_at p = par3_of(&g);
    size_t def = find(&g, "DEF ", NULL), tris = find(&g, "TRIS", NULL);
    ENSURE(p.n > 20 && tris > 0);
    refused("sphere_far_in_z", put_f32(&g, p.state + 7 * sizeof(ad_state3) + offsetof(ad_state3, z), 1e10f),
            0, "sphere 7", "z = 1e+10 m, outside the domain [-4, 14] m");
    refused("sphere_vz_nan", put_f32(&g, p.state + 3 * sizeof(ad_state3) + offsetof(ad_state3, vz), NAN),
            0, "sphere 3", "velocity (");
    refused("sphere_spare", put_f32(&g, p.state + 2 * sizeof(ad_state3) + offsetof(ad_state3, spare_v), 1.0f),
            0, "sphere 2", "spare words");
    refused("sphere_accel_inf", put_f32(&g, p.accel + 5 * sizeof(ad_accel3) + 8, INFINITY),
            0, "sphere 5", "acceleration");
    refused("sphere_duplicate_id", put(&g, p.id + 4 * 5, g.b + p.id + 4 * 6, 4), 0, "appears twice", NULL);
    refused("triangle_degenerate", put(&g, tris + sizeof(ad_triangle) + 12, g.b + tris + sizeof(ad_triangle), 12),
            0, "its triangles", "triangle 1 is degenerate");
    refused("triangle_nan", put_f32(&g, tris + 2 * sizeof(ad_triangle) + 20, NAN), 0, "triangle 2", "not a finite");
    refused("dimensions_2", put_u32(&g, def + offsetof(ad_world_def, dimensions), 2), 0, "dimensions = 2", NULL);
    refused("dimensions_5", put_u32(&g, def + offsetof(ad_world_def, dimensions), 5), 0, "dimensions = 5", NULL);
    refused("depth_zero", put_f64(&g, def + offsetof(ad_world_def, z_max), 0.0), 0, "z_max", NULL);
    free(g.b);
}

/* The 3D tunnel's waiting spheres (WAI3), one bad field each. */
static void open3_bad(void)
{
    printf("3D tunnel, one bad field each (valid checksum):\n");
    file g = saved(W_OPEN3, NULL);
    uint64_t len = 0;
    size_t w3 = find(&g, "WAI3", &len), e = w3 + 8;
    ENSURE(w3 > 0 && len >= 8 + sizeof(ad_entry3));
    refused("wait3_side_closed", put_u32(&g, e + offsetof(ad_entry3, side), 2), 0, "waiting entry 0",
            "not an open face");
    refused("wait3_outside_face", put_f32(&g, e + offsetof(ad_entry3, along) + 4, 99.0f), 0, "waiting entry 0",
            "outside its face");
    refused("wait3_speed_nan", put_f32(&g, e + offsetof(ad_entry3, vt) + 4, NAN), 0, "waiting entry 0", "speeds");
    refused("wait3_count", put_u32(&g, w3, 5000), 0, "3D waiting entries", NULL);
    free(g.b);
}

/* Cut at every section boundary (and inside every section header), a valid checksum appended. */
static void truncations(void)
{
    printf("truncated at every section boundary (checksum appended):\n");
    file g = saved(W_TUNNEL, NULL);
    size_t cuts[64], nc = 0, at = 16;
    cuts[nc++] = 0, cuts[nc++] = 8, cuts[nc++] = 16;
    while (at + 16 <= g.n - 4 && nc < 60) {
        uint64_t l;
        memcpy(&l, g.b + at + 8, 8);
        cuts[nc++] = at + 8;
        cuts[nc++] = at + 16;
        at += 16 + (size_t)l;
        cuts[nc++] = at;
    }
    int refusedall = 1;
    for (size_t k = 0; k < nc; k++) {
        if (cuts[k] >= g.n - 4) continue;
        file f = {malloc(cuts[k] + 4), cuts[k] + 4};
        memcpy(f.b, g.b, cuts[k]);
        fix_crc(&f);
        char path[400];
        snprintf(path, sizeof path, "%s/cut_%zu.ckpt", g_dir, cuts[k]);
        write_all(path, f.b, f.n);
        ad_world *w = (ad_world *)1;
        ad_status st = ad_world_load(path, AD_BACKEND_CPU, 1, &w, NULL, NULL);
        int ok = st.code == AD_ERR_FORMAT && w == NULL && strstr(st.message, path);
        ENSURE_MSG(ok, "cut at %zu: %s: %s", cuts[k], ad_code_name(st.code), st.message);
        refusedall &= ok;
        if (k == 6) printf("  e.g. %s\n", st.message);
        remove(path);
        free(f.b);
    }
    printf("  %zu cuts: %s\n", nc, refusedall ? "every one refused with AD_ERR_FORMAT" : "NOT ALL REFUSED");
    free(g.b);
}

/* ------------------------------------------------------------ writer -- */

static int temp_files(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (!strncmp(e->d_name, prefix, strlen(prefix)) && len > 4 && !strcmp(e->d_name + len - 4, ".tmp")) n++;
    }
    if (d) closedir(d);
    return n;
}

/* A full disk (RLIMIT_FSIZE, SIGXFSZ ignored: writes fail with EFBIG): the save fails naming the path and
 * the OS error, the previous checkpoint stays and loads, no temporary file is left. */
static void disk_full(void)
{
    printf("writer:\n");
    ad_world *w = make_world(W_BOX);
    char path[400];
    snprintf(path, sizeof path, "%s/full.ckpt", g_dir);
    REQUIRE_OK(ad_world_save(w, path, NULL, 0));
    uint64_t step0 = tu_stats(w).step;
    REQUIRE_OK(ad_world_step(w, 10));
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = 1000;
    void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
    ENSURE(setrlimit(RLIMIT_FSIZE, &lim) == 0);
    ad_status st = ad_world_save(w, path, NULL, 0);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, prev);
    ENSURE_MSG(st.code == AD_ERR_IO && strstr(st.message, path) && strstr(st.message, strerror(EFBIG)),
               "a save past the file size limit: %s: %s", ad_code_name(st.code), st.message);
    printf("  disk full: %s\n", st.message);
    ad_world *r = NULL;
    ENSURE_OK(ad_world_load(path, AD_BACKEND_CPU, 1, &r, NULL, NULL));
    ENSURE(r && tu_stats(r).step == step0);
    ad_world_destroy(r);
    ENSURE_MSG(temp_files(g_dir, "full.ckpt") == 0, "a temporary file was left behind");
    remove(path);
    ad_world_destroy(w);
}

/* A killed writer's temporary file (its process gone) and the old name go with the next save; a live
 * process's stays. */
static void stale_temps(void)
{
    ad_world *w = make_world(W_BOX);
    char path[400];
    snprintf(path, sizeof path, "%s/full.ckpt", g_dir);
    char host[65] = "";
    gethostname(host, sizeof host - 1);
    for (char *c = host; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '-')) *c = '_';
    if (strlen(host) > 32) host[32] = 0;
    if (!host[0]) snprintf(host, sizeof host, "host");
    pid_t dead = fork();
    if (dead == 0) _exit(0);
    waitpid(dead, NULL, 0);
    char stale[600], legacy[600], live[600];
    snprintf(stale, sizeof stale, "%s.%s-%ld.tmp", path, host, (long)dead);
    snprintf(legacy, sizeof legacy, "%s.tmp", path);
    snprintf(live, sizeof live, "%s.%s-%ld.tmp", path, host, (long)getppid());
    write_all(stale, (const unsigned char *)"x", 1);
    write_all(legacy, (const unsigned char *)"x", 1);
    write_all(live, (const unsigned char *)"x", 1);
    REQUIRE_OK(ad_world_save(w, path, NULL, 0));
    ENSURE_MSG(access(stale, F_OK) != 0 && access(legacy, F_OK) != 0, "a dead writer's temporary file stayed");
    ENSURE_MSG(access(live, F_OK) == 0, "a live writer's temporary file was removed");
    ENSURE(temp_files(g_dir, "full.ckpt") == 1);
    printf("  stale temporary files of dead writers removed, a live one's kept\n");
    remove(live);
    remove(path);
    ad_world_destroy(w);
}

/* The good checkpoints of every small world, for the fuzzer's seed corpus. */
static void write_seeds(const char *dir)
{
    for (int k = 0; k < W_COUNT; k++) {
        ad_world *w = make_world(k);
        char path[600];
        snprintf(path, sizeof path, "%s/%s.ckpt", dir, W_NAME[k]);
        const char user[] = "[run]\nsteps = 300\n";
        REQUIRE_OK(ad_world_save(w, path, user, sizeof user));
        printf("seed %s\n", path);
        ad_world_destroy(w);
    }
}

/* The fuzzer's seeds load: a change of the format or of a saved struct makes them another build's, and
 * the fuzzer would never pass their header (regenerate them: AERODEM_CKPT_SEEDS=fuzz/corpus/checkpoint). */
static void seeds_load(void)
{
    printf("seed corpus:\n");
    for (int k = 0; k < W_COUNT; k++) {
        char path[600];
        snprintf(path, sizeof path, "%s/fuzz/corpus/checkpoint/%s.ckpt", AD_SOURCE_DIR, W_NAME[k]);
        ad_world *w = NULL;
        ad_status st = ad_world_load(path, AD_BACKEND_CPU, 1, &w, NULL, NULL);
        ENSURE_MSG(st.code == AD_OK, "%s: %s; regenerate the seeds: AERODEM_CKPT_SEEDS=%s/fuzz/corpus/checkpoint "
                   "test_checkpoint", path, st.message, AD_SOURCE_DIR);
        if (w) ENSURE_OK(ad_world_step(w, 2));
        printf("  %s.ckpt: %s\n", W_NAME[k], st.code ? "REFUSED" : "loads and steps");
        ad_world_destroy(w);
    }
}

int main(void)
{
    const char *seeds = getenv("AERODEM_CKPT_SEEDS");
    if (seeds && *seeds) {
        write_seeds(seeds);
        return 0;
    }
    snprintf(g_dir, sizeof g_dir, "/tmp/aerodem_test_checkpoint_XXXXXX");
    if (!mkdtemp(g_dir)) return 1;
    box_stats();
    box_particles();
    box_container();
    tunnel_fields();
    truncations();
    spheres_bad();
    open3_bad();
    disk_full();
    stale_temps();
    seeds_load();
    rmdir(g_dir);
    return tu_finish("test_checkpoint");
}
