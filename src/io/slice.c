/* Slices of 3D cell fields for pictures (the plane of cells, its frame) and a mesh's section by a plane. */
#include "slice.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/status.h"
#include "vtk.h"

static const char *const AXIS_NAME[3] = {"x", "y", "z"};

void ad_slice_axes(int axis, int *h_axis, int *v_axis)
{
    static const int H[3] = {2, 0, 0}, V[3] = {1, 2, 1};
    int ok = axis >= 0 && axis <= 2;
    if (h_axis) *h_axis = ok ? H[axis] : -1;
    if (v_axis) *v_axis = ok ? V[axis] : -1;
}

/* The normal and the fraction along it checked by name; *layer: the layer of cells holding the fraction. */
static ad_status slice_layer(const int n[3], int axis, double where_fraction, int *layer)
{
    if (axis < 0 || axis > 2)
        return ad_fail(AD_ERR_INVALID, "axis", "The slice's normal %d is not 0 (x), 1 (y) or 2 (z).", axis);
    if (!(where_fraction >= 0 && where_fraction <= 1))
        return ad_fail(AD_ERR_INVALID, "where_fraction", "The slice's place %g is outside 0..1 of the extent along %s.",
                       where_fraction, AXIS_NAME[axis]);
    int k = (int)floor(where_fraction * n[axis]);
    *layer = k < n[axis] ? k : n[axis] - 1; /* 1 is in the last layer */
    return ad_ok();
}

ad_status ad_field_slice(const float *data, int components, int component, int nx, int ny, int nz, int axis,
                         double where_fraction, float *out, int *out_nx, int *out_ny)
{
    if (!data) return ad_fail(AD_ERR_INVALID, "data", "The field to slice has no data.");
    if (components < 1)
        return ad_fail(AD_ERR_INVALID, "components", "The field has %d components a cell; at least 1 is needed.",
                       components);
    if (component < 0 || component >= components)
        return ad_fail(AD_ERR_INVALID, "component", "Component %d is outside 0..%d.", component, components - 1);
    if (!out_nx || !out_ny) return ad_fail(AD_ERR_INVALID, out_nx ? "out_ny" : "out_nx", "No place for the sides.");
    const int n[3] = {nx, ny, nz};
    uint64_t cells;
    AD_TRY(ad_io_check_grid(n, NULL, NULL, 3, 4 * (uint64_t)components, &cells));
    int layer, h, v;
    AD_TRY(slice_layer(n, axis, where_fraction, &layer));
    ad_slice_axes(axis, &h, &v);
    *out_nx = n[h];
    *out_ny = n[v];
    if (!out) return ad_ok();
    const size_t stride[3] = {(size_t)components, (size_t)components * (size_t)nx,
                              (size_t)components * (size_t)nx * (size_t)ny};
    const float *plane = data + (size_t)component + (size_t)layer * stride[axis];
    for (int j = 0; j < n[v]; j++)
        for (int i = 0; i < n[h]; i++)
            out[(size_t)j * (size_t)n[h] + (size_t)i] = plane[(size_t)i * stride[h] + (size_t)j * stride[v]];
    return ad_ok();
}

ad_status ad_field_slice_frame(int nx, int ny, int nz, double x0, double y0, double z0, double dx, double dy, double dz,
                               int axis, double where_fraction, ad_slice_frame *out)
{
    if (!out) return ad_fail(AD_ERR_INVALID, "out", "No place for the slice's frame.");
    const int n[3] = {nx, ny, nz};
    const double o[3] = {x0, y0, z0}, d[3] = {dx, dy, dz};
    uint64_t cells;
    AD_TRY(ad_io_check_grid(n, o, d, 3, 4, &cells));
    ad_slice_frame f;
    AD_TRY(slice_layer(n, axis, where_fraction, &f.layer));
    f.axis = axis;
    ad_slice_axes(axis, &f.h_axis, &f.v_axis);
    f.coordinate = o[axis] + (f.layer + 0.5) * d[axis];
    f.x0 = o[f.h_axis];
    f.x1 = o[f.h_axis] + n[f.h_axis] * d[f.h_axis];
    f.y0 = o[f.v_axis];
    f.y1 = o[f.v_axis] + n[f.v_axis] * d[f.v_axis];
    f.x_name = AXIS_NAME[f.h_axis];
    f.y_name = AXIS_NAME[f.v_axis];
    *out = f;
    return ad_ok();
}

/* ---------------------------------------------------------- a mesh's section -- */

/* Where the edge (p, q) meets the plane {axis = c}, p and q on its two sides, in picture coordinates (h, v):
 * computed from the endpoints in lexicographic order, so both triangles of an edge give the same floats. */
static void edge_cut(const float *p, const float *q, int axis, double c, int h, int v, float out[2])
{
    if (q[0] < p[0] || (q[0] == p[0] && (q[1] < p[1] || (q[1] == p[1] && q[2] < p[2])))) {
        const float *t = p;
        p = q;
        q = t;
    }
    double dp = p[axis] - c, dq = q[axis] - c, t = dp / (dp - dq); /* dp - dq != 0: opposite sides */
    if (dp == 0 || dq == 0) { /* a vertex on the plane: itself, whichever edge reaches it */
        const float *on = dp == 0 ? p : q;
        out[0] = on[h];
        out[1] = on[v];
        return;
    }
    out[0] = (float)(p[h] + t * ((double)q[h] - p[h]));
    out[1] = (float)(p[v] + t * ((double)q[v] - p[v]));
}

/* The segment the plane {axis = c} cuts from triangle t, counter-clockwise about the inside in the picture for
 * an outward-wound mesh; 0 when the triangle does not cross the plane or the cut is a point. */
static int triangle_cut(const ad_triangle *t, int axis, double c, int h, int v, float seg[4])
{
    int side[3], up = 0;
    for (int j = 0; j < 3; j++) {
        side[j] = t->v[j][axis] - c >= 0; /* on the plane counts as + */
        up += side[j];
    }
    if (up == 0 || up == 3) return 0;
    int lone = 0; /* the vertex alone on its side */
    for (int j = 0; j < 3; j++)
        if (side[j] == (up == 1)) lone = j;
    const float *a = t->v[lone], *b = t->v[(lone + 1) % 3], *e = t->v[(lone + 2) % 3];
    edge_cut(a, b, axis, c, h, v, seg);
    edge_cut(a, e, axis, c, h, v, seg + 2);
    if (seg[0] == seg[2] && seg[1] == seg[3]) return 0;
    /* the outward normal's part in the plane points out of the section; turned by +90 degrees it runs
     * counter-clockwise (h right, v up) */
    const float *p = t->v[0], *q = t->v[1], *r = t->v[2];
    double u[3], w[3], nrm[3];
    for (int k = 0; k < 3; k++) u[k] = (double)q[k] - p[k], w[k] = (double)r[k] - p[k];
    for (int k = 0; k < 3; k++) nrm[k] = u[(k + 1) % 3] * w[(k + 2) % 3] - u[(k + 2) % 3] * w[(k + 1) % 3];
    if ((seg[2] - seg[0]) * -nrm[v] + (seg[3] - seg[1]) * nrm[h] < 0) {
        float s0 = seg[0], s1 = seg[1];
        seg[0] = seg[2], seg[1] = seg[3], seg[2] = s0, seg[3] = s1;
    }
    return 1;
}

ad_status ad_mesh_slice_segments(const ad_mesh *m, int axis, double coordinate, float **x0y0x1y1, size_t *nseg)
{
    if (!x0y0x1y1 || !nseg)
        return ad_fail(AD_ERR_INVALID, x0y0x1y1 ? "nseg" : "x0y0x1y1", "No place for the section's segments.");
    *x0y0x1y1 = NULL;
    *nseg = 0;
    if (!m || (m->n && !m->t)) return ad_fail(AD_ERR_INVALID, "mesh", "No mesh given.");
    if (axis < 0 || axis > 2)
        return ad_fail(AD_ERR_INVALID, "axis", "The section's normal %d is not 0 (x), 1 (y) or 2 (z).", axis);
    if (!isfinite(coordinate))
        return ad_fail(AD_ERR_INVALID, "coordinate", "The section's plane %s = %g m is not finite.", AXIS_NAME[axis],
                       coordinate);
    for (size_t i = 0; i < m->n; i++)
        for (int j = 0; j < 3; j++)
            for (int d = 0; d < 3; d++)
                if (!isfinite(m->t[i].v[j][d]))
                    return ad_fail(AD_ERR_INVALID, "mesh", "Triangle %zu's vertex %d is not finite.", i, j);
    if (m->n == 0) return ad_ok();
    float *s = malloc(m->n * 4 * sizeof *s); /* at most a segment a triangle; fits as the triangles do */
    if (!s) return ad_fail(AD_ERR_NO_MEMORY, "mesh", "No memory for the section of %zu triangles.", m->n);
    int h, v;
    ad_slice_axes(axis, &h, &v);
    size_t k = 0;
    for (size_t i = 0; i < m->n; i++) k += (size_t)triangle_cut(&m->t[i], axis, coordinate, h, v, s + 4 * k);
    if (k == 0) {
        free(s);
        return ad_ok();
    }
    float *fit = realloc(s, k * 4 * sizeof *s);
    *x0y0x1y1 = fit ? fit : s;
    *nseg = k;
    return ad_ok();
}
