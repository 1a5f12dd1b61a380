/* A body's triangles: checked by name, made into the kernels' form, their components labelled. */
#include "triangles.h"

#include <math.h>
#include <stdlib.h>

#include "components.h"
#include "free_each.h"

static ad_status check_triangle(const ad_triangle *t, size_t i)
{
    static const char axis[3] = {'x', 'y', 'z'};
    for (int j = 0; j < 3; j++)
        for (int d = 0; d < 3; d++)
            if (!isfinite(t->v[j][d]))
                return ad_fail(AD_ERR_INVALID, "triangles", "triangle %zu: vertex %d's %c is %g (not a finite number)",
                               i, j, axis[d], t->v[j][d]);
    double e[3][3], len2[3];
    for (int j = 0; j < 3; j++) {
        len2[j] = 0;
        for (int d = 0; d < 3; d++) {
            e[j][d] = (double)t->v[(j + 1) % 3][d] - t->v[j][d];
            len2[j] += e[j][d] * e[j][d];
        }
    }
    double cx = e[0][1] * e[2][2] - e[0][2] * e[2][1], cy = e[0][2] * e[2][0] - e[0][0] * e[2][2];
    double cz = e[0][0] * e[2][1] - e[0][1] * e[2][0];
    double twice_area = sqrt(cx * cx + cy * cy + cz * cz);
    double longest = fmax(len2[0], fmax(len2[1], len2[2]));
    if (!(twice_area > 2e-6 * longest))
        return ad_fail(AD_ERR_INVALID, "triangles",
                       "triangle %zu is degenerate: its vertices (%g, %g, %g), (%g, %g, %g), (%g, %g, %g) are %s", i,
                       t->v[0][0], t->v[0][1], t->v[0][2], t->v[1][0], t->v[1][1], t->v[1][2], t->v[2][0], t->v[2][1],
                       t->v[2][2], longest == 0 ? "one point" : "on a line (no area)");
    return ad_ok();
}

ad_status ad_triangles_make(const ad_triangle *raw, size_t n, ad_tri *out)
{
    for (size_t i = 0; i < n; i++) {
        ad_status st = check_triangle(&raw[i], i);
        if (st.code) return st;
    }
    float *pts = malloc((9 * n + 1) * sizeof *pts);
    uint32_t *comp = malloc((n + 1) * sizeof *comp);
    ad_status st = ad_ok();
    if (!pts || !comp) st = ad_fail(AD_ERR_NO_MEMORY, "", "out of memory for %zu triangles", n);
    for (size_t i = 0; i < n && !st.code; i++)
        for (int j = 0; j < 3; j++)
            for (int d = 0; d < 3; d++) pts[9 * i + 3 * j + d] = raw[i].v[j][d];
    if (!st.code) st = ad_label_components(pts, 3, 3, n, comp, NULL);
    for (size_t i = 0; i < n && !st.code; i++) {
        const float(*v)[3] = raw[i].v;
        out[i].a = ad_v3(v[0][0], v[0][1], v[0][2]);
        out[i].ab = ad_v3(v[1][0] - v[0][0], v[1][1] - v[0][1], v[1][2] - v[0][2]);
        out[i].ac = ad_v3(v[2][0] - v[0][0], v[2][1] - v[0][1], v[2][2] - v[0][2]);
        out[i].flags = comp[i] << AD_TRI_COMP_SHIFT;
    }
    AD_FREE_EACH(pts, comp);
    return st;
}
