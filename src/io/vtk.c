/* ParaView XML writers (.vtp, .vti, .pvd) with appended raw data, each file written atomically. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "vtk.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/number_text.h"
#include "core/status.h"

/* ------------------------------------------------------------ atomic file -- */

ad_status ad_io_error(const ad_io_file *io, int err)
{
    return ad_fail(AD_ERR_IO, "path", "cannot write '%s': %s", io->path, err ? strerror(err) : "write error");
}

ad_status ad_io_open(ad_io_file *io, const char *path)
{
    io->f = NULL;
    io->tmp = NULL;
    io->path = path;
    if (!path || !path[0]) return ad_fail(AD_ERR_INVALID, "path", "The output path is empty.");
    size_t len = strlen(path);
    io->tmp = malloc(len + 5);
    if (!io->tmp) return ad_fail(AD_ERR_NO_MEMORY, "path", "No memory for the name of '%s.tmp'.", path);
    memcpy(io->tmp, path, len);
    memcpy(io->tmp + len, ".tmp", 5);
    io->f = fopen(io->tmp, "wb");
    if (!io->f) {
        int err = errno;
        ad_status s = ad_fail(AD_ERR_IO, "path", "cannot write '%s': cannot create '%s': %s", path, io->tmp,
                              strerror(err));
        free(io->tmp);
        io->tmp = NULL;
        return s;
    }
    return ad_ok();
}

void ad_io_discard(ad_io_file *io)
{
    if (io->f) fclose(io->f);
    if (io->tmp) remove(io->tmp);
    free(io->tmp);
    io->f = NULL;
    io->tmp = NULL;
}

ad_status ad_io_commit(ad_io_file *io)
{
    int err = 0;
    if (ferror(io->f)) err = errno ? errno : EIO;
    if (!err && fflush(io->f) != 0) err = errno;
    /* Without the sync a power loss right after the rename could leave an empty file under
     * the final name; EINVAL means the target cannot be synced (a pipe, a special file). */
    if (!err && fsync(fileno(io->f)) != 0 && errno != EINVAL) err = errno;
    if (fclose(io->f) != 0 && !err) err = errno;
    io->f = NULL;
    if (!err && rename(io->tmp, io->path) != 0) err = errno;
    if (err) {
        ad_status s = ad_fail(AD_ERR_IO, "path", "cannot write '%s': %s", io->path, strerror(err));
        remove(io->tmp);
        free(io->tmp);
        io->tmp = NULL;
        return s;
    }
    free(io->tmp);
    io->tmp = NULL;
    return ad_ok();
}

/* ------------------------------------------------- little-endian words out -- */

/* All appended data is a stream of 32-bit words (64-bit values as two), so one small
 * buffer converts any host to the little-endian files ParaView expects. */
enum { WB_WORDS = 8192 };
typedef struct wbuf {
    FILE *f;
    int err;
    size_t k;
    uint32_t w[WB_WORDS];
} wbuf;

static int host_is_le(void)
{
    const uint16_t one = 1;
    uint8_t b;
    memcpy(&b, &one, 1);
    return b == 1;
}

static void wb_flush(wbuf *b)
{
    if (b->k && !b->err) {
        if (!host_is_le())
            for (size_t i = 0; i < b->k; i++) {
                uint32_t v = b->w[i];
                b->w[i] = (v >> 24) | ((v >> 8) & 0xff00u) | ((v << 8) & 0xff0000u) | (v << 24);
            }
        if (fwrite(b->w, sizeof(uint32_t), b->k, b->f) != b->k) b->err = errno ? errno : EIO;
    }
    b->k = 0;
}

static inline void wb_u32(wbuf *b, uint32_t v)
{
    b->w[b->k++] = v;
    if (b->k == WB_WORDS) wb_flush(b);
}

static inline void wb_f32(wbuf *b, float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    wb_u32(b, u);
}

static inline void wb_u64(wbuf *b, uint64_t v)
{
    wb_u32(b, (uint32_t)v);
    wb_u32(b, (uint32_t)(v >> 32));
}

/* An index (connectivity, offsets) as Int32 or Int64. */
static inline void wb_index(wbuf *b, uint64_t v, int wide)
{
    if (wide) wb_u64(b, v);
    else wb_u32(b, (uint32_t)v);
}

static wbuf *wb_new(FILE *f)
{
    wbuf *b = malloc(sizeof *b);
    if (b) {
        b->f = f;
        b->err = 0;
        b->k = 0;
    }
    return b;
}

/* ------------------------------------------------------------ XML helpers -- */

static void xml_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default: fputc(*s, f);
        }
    }
}

static void xml_header(FILE *f, const char *type)
{
    fprintf(f, "<?xml version=\"1.0\"?>\n<VTKFile type=\"%s\" version=\"1.0\" byte_order=\"LittleEndian\" "
               "header_type=\"UInt64\">\n", type);
}

static void xml_array(FILE *f, const char *indent, const char *type, const char *name, int comps, uint64_t offset)
{
    fprintf(f, "%s<DataArray type=\"%s\"", indent, type);
    if (name) {
        fputs(" Name=\"", f);
        xml_text(f, name);
        fputc('"', f);
    }
    if (comps > 1) fprintf(f, " NumberOfComponents=\"%d\"", comps);
    fprintf(f, " format=\"appended\" offset=\"%" PRIu64 "\"/>\n", offset);
}

static void xml_appended_begin(FILE *f)
{
    fputs("  <AppendedData encoding=\"raw\">\n   _", f);
}

static void xml_appended_end(FILE *f)
{
    fputs("\n  </AppendedData>\n</VTKFile>\n", f);
}

/* Finishes a file whose appended data went through b: flushes and commits, or discards. */
static ad_status finish(ad_io_file *io, wbuf *b)
{
    wb_flush(b);
    int err = b->err;
    free(b);
    if (!err) xml_appended_end(io->f);
    if (err) {
        ad_status s = ad_io_error(io, err);
        ad_io_discard(io);
        return s;
    }
    return ad_io_commit(io);
}

/* ----------------------------------------------------------------- .vtp -- */

/* path.tmp opened with a write buffer on it; on failure nothing is left behind. */
static ad_status open_buffered(ad_io_file *io, const char *path, wbuf **b)
{
    ad_status s = ad_io_open(io, path);
    if (s.code != AD_OK) return s;
    *b = wb_new(io->f);
    if (!*b) {
        ad_io_discard(io);
        return ad_fail(AD_ERR_NO_MEMORY, "path", "No memory for the write buffer of '%s'.", path);
    }
    return ad_ok();
}

/* One particle's position and velocity as three floats each (z = 0 for a disc). */
typedef void particle_get(const void *p, size_t i, float pos[3], float vel[3]);

static void get_disc(const void *p, size_t i, float pos[3], float vel[3])
{
    const ad_particle *q = (const ad_particle *)p + i;
    pos[0] = q->x, pos[1] = q->y, pos[2] = 0.0f;
    vel[0] = q->vx, vel[1] = q->vy, vel[2] = 0.0f;
}

static void get_sphere(const void *p, size_t i, float pos[3], float vel[3])
{
    const ad_particle3 *q = (const ad_particle3 *)p + i;
    pos[0] = q->x, pos[1] = q->y, pos[2] = q->z;
    vel[0] = q->vx, vel[1] = q->vy, vel[2] = q->vz;
}

/* The particle file of both dimensions: n particles read through get. */
static ad_status write_particles(const char *path, size_t n, const void *p, particle_get *get, const uint32_t *id,
                                 const float *pressure)
{
    if (n > 0 && !p) return ad_fail(AD_ERR_INVALID, "p", "No particle array for %zu particles.", n);
    /* at most 48 bytes a particle (id, velocity, pressure, point, two Int64 indices) */
    if ((uint64_t)n > (UINT64_MAX - 64) / 48)
        return ad_fail(AD_ERR_INVALID, "n", "%zu particles overflow the file's byte counts.", n);
    int wide = n > (size_t)INT32_MAX;
    uint64_t nn = (uint64_t)n, isz = wide ? 8 : 4;
    uint64_t off_id = 0;
    uint64_t off_vel = id ? off_id + 8 + 4 * nn : 0;
    uint64_t off_pres = off_vel + 8 + 12 * nn;
    uint64_t off_pts = pressure ? off_pres + 8 + 4 * nn : off_pres;
    uint64_t off_conn = off_pts + 8 + 12 * nn;
    uint64_t off_offs = off_conn + 8 + isz * nn;
    const char *itype = wide ? "Int64" : "Int32";

    ad_io_file io;
    wbuf *b;
    ad_status s = open_buffered(&io, path, &b);
    if (s.code != AD_OK) return s;
    FILE *f = io.f;
    xml_header(f, "PolyData");
    fputs("  <PolyData>\n", f);
    fprintf(f, "    <Piece NumberOfPoints=\"%" PRIu64 "\" NumberOfVerts=\"%" PRIu64 "\" NumberOfLines=\"0\" "
               "NumberOfStrips=\"0\" NumberOfPolys=\"0\">\n", nn, nn);
    fprintf(f, "      <PointData%s Vectors=\"velocity\">\n", pressure ? " Scalars=\"pressure\"" : "");
    if (id) xml_array(f, "        ", "UInt32", "id", 1, off_id);
    xml_array(f, "        ", "Float32", "velocity", 3, off_vel);
    if (pressure) xml_array(f, "        ", "Float32", "pressure", 1, off_pres);
    fputs("      </PointData>\n      <Points>\n", f);
    xml_array(f, "        ", "Float32", "Points", 3, off_pts);
    fputs("      </Points>\n      <Verts>\n", f);
    xml_array(f, "        ", itype, "connectivity", 1, off_conn);
    xml_array(f, "        ", itype, "offsets", 1, off_offs);
    fputs("      </Verts>\n    </Piece>\n  </PolyData>\n", f);
    xml_appended_begin(f);

    float pos[3], vel[3];
    if (id) {
        wb_u64(b, 4 * nn);
        for (size_t i = 0; i < n; i++) wb_u32(b, id[i]);
    }
    wb_u64(b, 12 * nn);
    for (size_t i = 0; i < n; i++) {
        get(p, i, pos, vel);
        for (int d = 0; d < 3; d++) wb_f32(b, vel[d]);
    }
    if (pressure) {
        wb_u64(b, 4 * nn);
        for (size_t i = 0; i < n; i++) wb_f32(b, pressure[i]);
    }
    wb_u64(b, 12 * nn);
    for (size_t i = 0; i < n; i++) {
        get(p, i, pos, vel);
        for (int d = 0; d < 3; d++) wb_f32(b, pos[d]);
    }
    wb_u64(b, isz * nn);
    for (size_t i = 0; i < n; i++) wb_index(b, i, wide);
    wb_u64(b, isz * nn);
    for (size_t i = 0; i < n; i++) wb_index(b, i + 1, wide);
    return finish(&io, b);
}

ad_status ad_write_vtp_particles(const char *path, size_t n, const ad_particle *p, const uint32_t *id,
                                 const float *pressure)
{
    return write_particles(path, n, p, get_disc, id, pressure);
}

ad_status ad_write_vtp_particles3(const char *path, size_t n, const ad_particle3 *p, const uint32_t *id,
                                  const float *pressure)
{
    return write_particles(path, n, p, get_sphere, id, pressure);
}

/* Named Float32 cell arrays (the first the active scalars), at the offsets from off; returns the bytes they take. */
static uint64_t cells_header(FILE *f, const ad_vtp_cells *c, int nc, uint64_t cells, uint64_t off)
{
    if (nc <= 0) return 0;
    fputs("      <CellData Scalars=\"", f);
    xml_text(f, c[0].name);
    fputs("\">\n", f);
    for (int k = 0; k < nc; k++) xml_array(f, "        ", "Float32", c[k].name, 1, off + (uint64_t)k * (8 + 4 * cells));
    fputs("      </CellData>\n", f);
    return (uint64_t)nc * (8 + 4 * cells);
}

static void cells_data(wbuf *b, const ad_vtp_cells *c, int nc, size_t cells)
{
    for (int k = 0; k < nc; k++) {
        wb_u64(b, 4 * (uint64_t)cells);
        for (size_t i = 0; i < cells; i++) wb_f32(b, c[k].data[i]);
    }
}

static ad_status check_cells(const ad_vtp_cells *c, int nc)
{
    if (nc < 0 || (nc > 0 && !c)) return ad_fail(AD_ERR_INVALID, "cells", "No cell arrays given.");
    for (int k = 0; k < nc; k++)
        if (!c[k].name || !c[k].name[0] || !c[k].data)
            return ad_fail(AD_ERR_INVALID, "cells", "Cell array %d has no name or no data.", k);
    return ad_ok();
}

/* The outline's points and its lines: one polyline, or (per_segment) one 2-point line per segment. */
static ad_status write_lines(const char *path, const float *x, const float *y, size_t n, int closed, int per_segment,
                             const ad_vtp_cells *c, int nc)
{
    if (!x || !y) return ad_fail(AD_ERR_INVALID, x ? "y" : "x", "The outline has no coordinate array.");
    if (n < 2) return ad_fail(AD_ERR_INVALID, "n", "An outline needs at least 2 points, got %zu.", n);
    AD_TRY(check_cells(c, nc));
    size_t segs = closed ? n : n - 1, lines = per_segment ? segs : 1;
    size_t m = per_segment ? 2 * segs : n + (closed ? 1 : 0); /* ids in the lines */
    int wide = m > (size_t)INT32_MAX;
    uint64_t isz = wide ? 8 : 4;
    const char *itype = wide ? "Int64" : "Int32";

    ad_io_file io;
    wbuf *b;
    ad_status s = open_buffered(&io, path, &b);
    if (s.code != AD_OK) return s;
    FILE *f = io.f;
    xml_header(f, "PolyData");
    fputs("  <PolyData>\n", f);
    fprintf(f, "    <Piece NumberOfPoints=\"%zu\" NumberOfVerts=\"0\" NumberOfLines=\"%zu\" NumberOfStrips=\"0\" "
               "NumberOfPolys=\"0\">\n", n, lines);
    uint64_t off_pts = cells_header(f, c, nc, lines, 0);
    uint64_t off_conn = off_pts + 8 + 12 * (uint64_t)n, off_offs = off_conn + 8 + isz * (uint64_t)m;
    fputs("      <Points>\n", f);
    xml_array(f, "        ", "Float32", "Points", 3, off_pts);
    fputs("      </Points>\n      <Lines>\n", f);
    xml_array(f, "        ", itype, "connectivity", 1, off_conn);
    xml_array(f, "        ", itype, "offsets", 1, off_offs);
    fputs("      </Lines>\n    </Piece>\n  </PolyData>\n", f);
    xml_appended_begin(f);

    cells_data(b, c, nc, lines);
    wb_u64(b, 12 * (uint64_t)n);
    for (size_t i = 0; i < n; i++) {
        wb_f32(b, x[i]);
        wb_f32(b, y[i]);
        wb_f32(b, 0.0f);
    }
    wb_u64(b, isz * (uint64_t)m);
    for (size_t i = 0; i < m; i++) wb_index(b, per_segment ? (i / 2 + i % 2) % n : (i < n ? i : 0), wide);
    wb_u64(b, isz * (uint64_t)lines);
    for (size_t i = 0; i < lines; i++) wb_index(b, per_segment ? 2 * (i + 1) : m, wide);
    return finish(&io, b);
}

ad_status ad_write_vtp_outline(const char *path, const float *x, const float *y, size_t n, int closed)
{
    return write_lines(path, x, y, n, closed, 0, NULL, 0);
}

ad_status ad_write_vtp_panels(const char *path, const float *x, const float *y, size_t n, int closed,
                              const ad_vtp_cells *cells, int ncells)
{
    return write_lines(path, x, y, n, closed, 1, cells, ncells);
}

/* ------------------------------------------------------------ mesh .vtp -- */

/* A vertex copy: its coordinates and its place (3 * triangle + corner) in the mesh. */
typedef struct vtx_ref {
    float p[3];
    size_t ref;
} vtx_ref;

/* By coordinates (== as floats, so -0 equals +0), then by place: a group's first entry is its first copy. */
static int vtx_ref_cmp(const void *a, const void *b)
{
    const vtx_ref *x = a, *y = b;
    for (int d = 0; d < 3; d++)
        if (x->p[d] != y->p[d]) return x->p[d] < y->p[d] ? -1 : 1;
    return x->ref < y->ref ? -1 : x->ref > y->ref;
}

/* id[r]: the point of vertex copy r, points numbered as they first appear; first[k]: point k's first copy.
 * Returns the number of points, or (size_t)-1 without memory. */
static size_t merge_vertices(const ad_mesh *m, size_t *id, size_t *first)
{
    size_t nv = 3 * m->n;
    vtx_ref *v = malloc((nv + 1) * sizeof *v);
    if (!v) return (size_t)-1;
    for (size_t r = 0; r < nv; r++) {
        memcpy(v[r].p, m->t[r / 3].v[r % 3], sizeof v[r].p);
        v[r].ref = r;
    }
    qsort(v, nv, sizeof *v, vtx_ref_cmp);
    for (size_t k = 0; k < nv; k++) { /* id[] holds each copy's group leader for now */
        const float *p = v[k].p, *q = k ? v[k - 1].p : NULL;
        id[v[k].ref] = q && p[0] == q[0] && p[1] == q[1] && p[2] == q[2] ? id[v[k - 1].ref] : v[k].ref;
    }
    free(v);
    size_t np = 0;
    for (size_t r = 0; r < nv; r++) { /* a leader comes before the copies it leads */
        if (id[r] == r) {
            first[np] = r;
            id[r] = np++;
        } else {
            id[r] = id[id[r]];
        }
    }
    return np;
}

/* The mesh file's XML up to its appended data; the arrays at the offsets ad_write_vtp_mesh_cells computed. */
static void mesh_header(FILE *f, size_t np, size_t nc, const ad_vtp_cells *c, int ncells, const char *itype,
                        const uint64_t off[4])
{
    xml_header(f, "PolyData");
    fprintf(f, "  <PolyData>\n    <Piece NumberOfPoints=\"%zu\" NumberOfVerts=\"0\" NumberOfLines=\"0\" "
               "NumberOfStrips=\"0\" NumberOfPolys=\"%zu\">\n", np, nc);
    cells_header(f, c, ncells, nc, off[0]);
    fputs("      <Points>\n", f);
    xml_array(f, "        ", "Float32", "Points", 3, off[1]);
    fputs("      </Points>\n      <Polys>\n", f);
    xml_array(f, "        ", itype, "connectivity", 1, off[2]);
    xml_array(f, "        ", itype, "offsets", 1, off[3]);
    fputs("      </Polys>\n    </Piece>\n  </PolyData>\n", f);
    xml_appended_begin(f);
}

ad_status ad_write_vtp_mesh(const char *path, const ad_mesh *m, const char *cell_field_name, const float *cell_field)
{
    if (cell_field && (!cell_field_name || !cell_field_name[0]))
        return ad_fail(AD_ERR_INVALID, "cell_field_name", "A cell field needs a name.");
    ad_vtp_cells c = {cell_field_name, cell_field};
    return ad_write_vtp_mesh_cells(path, m, &c, cell_field ? 1 : 0);
}

ad_status ad_write_vtp_mesh_cells(const char *path, const ad_mesh *m, const ad_vtp_cells *cells, int ncells)
{
    if (!m || (m->n && !m->t)) return ad_fail(AD_ERR_INVALID, "mesh", "No mesh given.");
    AD_TRY(check_cells(cells, ncells));
    for (size_t i = 0; i < m->n; i++)
        for (int j = 0; j < 3; j++)
            for (int d = 0; d < 3; d++)
                if (!isfinite(m->t[i].v[j][d]))
                    return ad_fail(AD_ERR_INVALID, "mesh", "Triangle %zu's vertex %d is not finite.", i, j);
    size_t nv = 3 * m->n, *id = malloc((nv + 1) * sizeof *id), *first = malloc((nv + 1) * sizeof *first);
    size_t np = id && first ? merge_vertices(m, id, first) : (size_t)-1;
    if (np == (size_t)-1) {
        free(id);
        free(first);
        return ad_fail(AD_ERR_NO_MEMORY, "mesh", "No memory for merging the %zu vertices of '%s'.", nv, path);
    }
    int wide = nv > (size_t)INT32_MAX;
    uint64_t isz = wide ? 8 : 4, nc = (uint64_t)m->n;
    uint64_t off[4] = {0, (uint64_t)(ncells > 0 ? ncells : 0) * (8 + 4 * nc)}; /* cells, points, connectivity, offsets */
    off[2] = off[1] + 8 + 12 * (uint64_t)np;
    off[3] = off[2] + 8 + isz * 3 * nc;

    ad_io_file io;
    wbuf *b;
    ad_status s = open_buffered(&io, path, &b);
    if (s.code == AD_OK) {
        mesh_header(io.f, np, m->n, cells, ncells, wide ? "Int64" : "Int32", off);
        cells_data(b, cells, ncells, m->n);
        wb_u64(b, 12 * (uint64_t)np);
        for (size_t k = 0; k < np; k++)
            for (int d = 0; d < 3; d++) wb_f32(b, m->t[first[k] / 3].v[first[k] % 3][d]);
        wb_u64(b, isz * 3 * nc);
        for (size_t r = 0; r < nv; r++) wb_index(b, id[r], wide);
        wb_u64(b, isz * nc);
        for (size_t i = 0; i < m->n; i++) wb_index(b, 3 * (uint64_t)(i + 1), wide);
        s = finish(&io, b);
    }
    free(id);
    free(first);
    return s;
}

/* ----------------------------------------------------------------- .vti -- */

/* The cells of a .vti: n[d] along axis d from o[d] in steps of h[d] [m]. A 2D file (flat) is one layer of
 * cells whose z extent is 0..0 in points, origin z 0 and spacing z 1. */
typedef struct img_grid {
    int n[3];
    double o[3], h[3];
    int flat;
} img_grid;

/* A field as the shared writer sees it: `comps` floats a cell in data, written as `out` components (1 or 3;
 * a 2D vector's z is 0). */
typedef struct img_field {
    const char *name;
    int comps, out;
    const float *data;
} img_field;

static const char *const AXIS_N[3] = {"nx", "ny", "nz"}, *const AXIS_O[3] = {"x0", "y0", "z0"},
                         *const AXIS_H[3] = {"dx", "dy", "dz"};

ad_status ad_io_check_grid(const int n[3], const double *o, const double *h, int dims, uint64_t bytes_per_cell,
                           uint64_t *cells)
{
    const uint64_t most = SIZE_MAX < UINT64_MAX ? (uint64_t)SIZE_MAX : UINT64_MAX;
    const uint64_t cap = most / (bytes_per_cell ? bytes_per_cell : 1);
    uint64_t c = 1;
    for (int d = 0; d < dims; d++) {
        if (n[d] < 1)
            return ad_fail(AD_ERR_INVALID, AXIS_N[d], "The grid has %d cells along %c; at least 1 is needed.", n[d],
                           'x' + d);
        if ((uint64_t)n[d] > cap / c)
            return ad_fail(AD_ERR_INVALID, AXIS_N[d], "%d cells along %c make the grid too large: its byte counts "
                           "overflow.", n[d], 'x' + d);
        c *= (uint64_t)n[d];
    }
    for (int d = 0; o && h && d < dims; d++) {
        if (!isfinite(o[d]))
            return ad_fail(AD_ERR_INVALID, AXIS_O[d], "The grid origin's %c, %g m, is not finite.", 'x' + d, o[d]);
        if (!(h[d] > 0 && isfinite(h[d])))
            return ad_fail(AD_ERR_INVALID, AXIS_H[d], "The cell size along %c, %g m, is not positive and finite.",
                           'x' + d, h[d]);
        if (!isfinite(o[d] + n[d] * h[d]))
            return ad_fail(AD_ERR_INVALID, AXIS_H[d], "The grid's far end along %c, %g + %d x %g m, is not finite.",
                           'x' + d, o[d], n[d], h[d]);
    }
    *cells = c;
    return ad_ok();
}

/* Names present and unique, components 1 or vec, data given. */
static ad_status check_fields(const img_field *fl, int nfields, int vec)
{
    for (int k = 0; k < nfields; k++) {
        const img_field *fk = &fl[k];
        if (!fk->name || !fk->name[0]) return ad_fail(AD_ERR_INVALID, "fields", "Field %d has no name.", k);
        if (fk->comps != 1 && fk->comps != vec)
            return ad_fail(AD_ERR_INVALID, "fields", "Field '%s' has %d components; 1 or %d are allowed.", fk->name,
                           fk->comps, vec);
        if (!fk->data) return ad_fail(AD_ERR_INVALID, "fields", "Field '%s' has no data.", fk->name);
        for (int j = 0; j < k; j++)
            if (strcmp(fl[j].name, fk->name) == 0)
                return ad_fail(AD_ERR_INVALID, "fields", "Two fields are named '%s'.", fk->name);
    }
    return ad_ok();
}

/* The file's XML up to its appended data: the first scalar and the first vector field are the active ones. */
static void image_header(FILE *f, const img_grid *g, uint64_t cells, const img_field *fl, int nfields)
{
    char t[6][32];
    for (int d = 0; d < 3; d++) {
        ad_format_double(t[d], sizeof t[d], g->o[d]);
        ad_format_double(t[3 + d], sizeof t[3 + d], g->h[d]);
    }
    int nz = g->flat ? 0 : g->n[2];
    xml_header(f, "ImageData");
    fprintf(f, "  <ImageData WholeExtent=\"0 %d 0 %d 0 %d\" Origin=\"%s %s %s\" Spacing=\"%s %s %s\">\n", g->n[0],
            g->n[1], nz, t[0], t[1], t[2], t[3], t[4], t[5]);
    fprintf(f, "    <Piece Extent=\"0 %d 0 %d 0 %d\">\n      <PointData>\n      </PointData>\n      <CellData", g->n[0],
            g->n[1], nz);
    for (int want = 1; want <= 3; want += 2)
        for (int k = 0; k < nfields; k++)
            if (fl[k].out == want) {
                fputs(want == 1 ? " Scalars=\"" : " Vectors=\"", f);
                xml_text(f, fl[k].name);
                fputc('"', f);
                break;
            }
    fputs(">\n", f);
    uint64_t off = 0;
    for (int k = 0; k < nfields; k++) {
        xml_array(f, "        ", "Float32", fl[k].name, fl[k].out, off);
        off += 8 + 4 * (uint64_t)fl[k].out * cells;
    }
    fputs("      </CellData>\n    </Piece>\n  </ImageData>\n", f);
    xml_appended_begin(f);
}

/* The .vti writer of both dimensions; `vec` is the components of a vector field (2 in 2D, 3 in 3D). */
static ad_status write_image(const char *path, const img_grid *g, int vec, const img_field *fl, int nfields)
{
    uint64_t cells;
    /* each field takes at most 12 bytes a cell and an 8-byte header: 16 (nfields + 1) a cell bounds them all */
    AD_TRY(ad_io_check_grid(g->n, g->o, g->h, g->flat ? 2 : 3, 16 * ((uint64_t)nfields + 1), &cells));
    AD_TRY(check_fields(fl, nfields, vec));
    ad_io_file io;
    wbuf *b;
    AD_TRY(open_buffered(&io, path, &b));
    image_header(io.f, g, cells, fl, nfields);
    for (int k = 0; k < nfields; k++) {
        const float *d = fl[k].data;
        size_t comps = (size_t)fl[k].comps;
        wb_u64(b, 4 * (uint64_t)fl[k].out * cells);
        for (size_t i = 0; i < (size_t)cells; i++) {
            for (size_t c = 0; c < comps; c++) wb_f32(b, d[comps * i + c]);
            for (int c = fl[k].comps; c < fl[k].out; c++) wb_f32(b, 0.0f);
        }
    }
    return finish(&io, b);
}

/* A .vti's fields refused: a count below 0, or no array for them. */
static ad_status no_fields(int nfields)
{
    return ad_fail(AD_ERR_INVALID, "fields", "%d fields given with no array.", nfields);
}

static ad_status no_memory_for_fields(int nfields)
{
    return ad_fail(AD_ERR_NO_MEMORY, "fields", "No memory for %d fields.", nfields);
}

ad_status ad_write_vti(const char *path, int nx, int ny, double x0, double y0, double dx, double dy,
                       const ad_vti_field *fields, int nfields)
{
    if (nfields < 0 || (nfields > 0 && !fields)) return no_fields(nfields);
    img_field *fl = malloc(((size_t)nfields + 1) * sizeof *fl);
    if (!fl) return no_memory_for_fields(nfields);
    for (int k = 0; k < nfields; k++)
        fl[k] = (img_field){fields[k].name, fields[k].components, fields[k].components == 1 ? 1 : 3, fields[k].data};
    img_grid g = {{nx, ny, 1}, {x0, y0, 0}, {dx, dy, 1}, 1};
    ad_status s = write_image(path, &g, 2, fl, nfields);
    free(fl);
    return s;
}

ad_status ad_write_vti3(const char *path, int nx, int ny, int nz, double x0, double y0, double z0, double dx,
                        double dy, double dz, const ad_vti3_field *fields, int nfields)
{
    if (nfields < 0 || (nfields > 0 && !fields)) return no_fields(nfields);
    img_field *fl = malloc(((size_t)nfields + 1) * sizeof *fl);
    if (!fl) return no_memory_for_fields(nfields);
    for (int k = 0; k < nfields; k++)
        fl[k] = (img_field){fields[k].name, fields[k].components, fields[k].components == 1 ? 1 : 3, fields[k].data};
    img_grid g = {{nx, ny, nz}, {x0, y0, z0}, {dx, dy, dz}, 0};
    ad_status s = write_image(path, &g, 3, fl, nfields);
    free(fl);
    return s;
}

/* ----------------------------------------------------------------- .pvd -- */

ad_status ad_write_pvd(const char *path, const ad_pvd_entry *e, size_t n)
{
    if (n > 0 && !e) return ad_fail(AD_ERR_INVALID, "e", "%zu entries given with no array.", n);
    for (size_t i = 0; i < n; i++) {
        if (!e[i].file || !e[i].file[0]) return ad_fail(AD_ERR_INVALID, "e", "Entry %zu has no file name.", i);
        if (!isfinite(e[i].time)) return ad_fail(AD_ERR_INVALID, "e", "Entry %zu has a non-finite time.", i);
    }
    ad_io_file io;
    ad_status s = ad_io_open(&io, path);
    if (s.code != AD_OK) return s;
    FILE *f = io.f;
    fputs("<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
          "  <Collection>\n", f);
    for (size_t i = 0; i < n; i++) {
        char t[32];
        ad_format_double(t, sizeof t, e[i].time);
        fprintf(f, "    <DataSet timestep=\"%s\" group=\"\" part=\"0\" file=\"", t);
        xml_text(f, e[i].file);
        fputs("\"/>\n", f);
    }
    fputs("  </Collection>\n</VTKFile>\n", f);
    return ad_io_commit(&io);
}
