/* Triangle meshes as binary STL files, written under a temporary name and renamed (vtk.h's ad_io_file). */
#include "stl_write.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "core/stl.h"
#include "vtk.h"

/* Records encoded at a time. */
#define STL_WRITE_CHUNK 4096

static void put_le32(unsigned char *p, uint32_t u)
{
    p[0] = (unsigned char)u;
    p[1] = (unsigned char)(u >> 8);
    p[2] = (unsigned char)(u >> 16);
    p[3] = (unsigned char)(u >> 24);
}

static void put_float(unsigned char *p, float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    put_le32(p, u);
}

/* The unit normal (b - a) x (c - a) / |...|, in double precision; zero for a triangle without area. */
static void unit_normal(const ad_triangle *t, float n[3])
{
    double e1[3], e2[3];
    for (int d = 0; d < 3; d++) {
        e1[d] = (double)t->v[1][d] - t->v[0][d];
        e2[d] = (double)t->v[2][d] - t->v[0][d];
    }
    double c[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
    double len = sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
    for (int d = 0; d < 3; d++)
        n[d] = len > 0 ? (float)(c[d] / len) : 0.0f;
}

/* One 50-byte record: normal, three vertices, a zero attribute. */
static void put_record(unsigned char *p, const ad_triangle *t)
{
    float n[3];
    unit_normal(t, n);
    for (int d = 0; d < 3; d++)
        put_float(p + 4 * d, n[d]);
    for (int j = 0; j < 3; j++)
        for (int d = 0; d < 3; d++)
            put_float(p + 12 + 12 * j + 4 * d, t->v[j][d]);
    p[48] = p[49] = 0;
}

/* What ad_stl_load would refuse, by triangle number, before anything is written. */
static ad_status check_mesh(const char *path, const ad_mesh *m)
{
    if (!m || !m->n || !m->t)
        return ad_fail(AD_ERR_INVALID, "mesh", "cannot write '%s': the mesh has no triangles", path);
    if (m->n > (size_t)AD_STL_MAX_TRIANGLES)
        return ad_fail(AD_ERR_INVALID, "mesh",
                       "cannot write '%s': %zu triangles, more than the %ld an STL file may "
                       "have",
                       path, m->n, (long)AD_STL_MAX_TRIANGLES);
    for (size_t i = 0; i < m->n; i++)
        for (int j = 0; j < 3; j++)
            for (int d = 0; d < 3; d++) {
                float x = m->t[i].v[j][d];
                if (!(fabsf(x) <= AD_STL_MAX_COORD))
                    return ad_fail(AD_ERR_INVALID, "mesh",
                                   "cannot write '%s': triangle %zu of %zu: vertex %d's %c is %g (not finite or beyond "
                                   "+-%g)",
                                   path, i + 1, m->n, j + 1, "xyz"[d], (double)x, AD_STL_MAX_COORD);
            }
    return ad_ok();
}

/* The header and count, then the records, a chunk at a time; 0 or the errno of a failed write. */
static int write_body(FILE *f, const ad_mesh *m, const char *solid_name, unsigned char *buf)
{
    memset(buf, 0, AD_STL_HEADER_BYTES + 4);
    snprintf((char *)buf, AD_STL_HEADER_BYTES, "binary STL by aerodem: %s", solid_name ? solid_name : "");
    put_le32(buf + AD_STL_HEADER_BYTES, (uint32_t)m->n);
    errno = 0;
    if (fwrite(buf, 1, AD_STL_HEADER_BYTES + 4, f) != AD_STL_HEADER_BYTES + 4) return errno ? errno : EIO;
    for (size_t i = 0; i < m->n;) {
        size_t k = m->n - i < STL_WRITE_CHUNK ? m->n - i : STL_WRITE_CHUNK;
        for (size_t r = 0; r < k; r++)
            put_record(buf + AD_STL_RECORD_BYTES * r, &m->t[i + r]);
        if (fwrite(buf, AD_STL_RECORD_BYTES, k, f) != k) return errno ? errno : EIO;
        i += k;
    }
    return 0;
}

ad_status ad_stl_write(const char *path, const ad_mesh *m, const char *solid_name)
{
    if (!path || !path[0]) return ad_fail(AD_ERR_INVALID, "path", "ad_stl_write: no file name given.");
    AD_TRY(check_mesh(path, m));
    unsigned char *buf = malloc((size_t)STL_WRITE_CHUNK * AD_STL_RECORD_BYTES);
    if (!buf) return ad_fail(AD_ERR_NO_MEMORY, "path", "cannot write '%s': no memory for a write buffer", path);
    ad_io_file io;
    ad_status st = ad_io_open(&io, path);
    if (st.code) {
        free(buf);
        return st;
    }
    int err = write_body(io.f, m, solid_name, buf);
    free(buf);
    if (err) {
        st = ad_io_error(&io, err);
        ad_io_discard(&io);
        return st;
    }
    return ad_io_commit(&io);
}
