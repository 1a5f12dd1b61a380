/* Body outlines: their memory and area, the simple shapes (plate, wedge, circle), and placement in the tunnel as
 * segments. The check is in outline_check.c, NACA sections in naca.c, coordinate files in airfoil_file.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "outline_internal.h"
#include "world_internal.h"

#define AD_AIRFOIL_PI 3.14159265358979323846

void ad_outline_free(ad_outline *o)
{
    if (!o) return;
    free(o->x);
    free(o->y);
    o->x = o->y = NULL;
    o->n = 0;
    o->closed = 0;
}

ad_status ad_outline_alloc(size_t n, int closed, ad_outline *out, const char *field)
{
    out->x = malloc(n * sizeof *out->x);
    out->y = malloc(n * sizeof *out->y);
    out->n = n;
    out->closed = closed;
    if (!out->x || !out->y) {
        ad_outline_free(out);
        return ad_fail(AD_ERR_NO_MEMORY, field, "Cannot allocate an outline of %zu points.", n);
    }
    return ad_ok();
}

double ad_outline_shoelace(const double *x, const double *y, size_t n)
{
    if (n < 3) return 0.0;
    /* relative to the first point: keeps the products small for outlines far from the origin */
    double s = 0.0;
    for (size_t i = 1; i + 1 < n; i++)
        s += (x[i] - x[0]) * (y[i + 1] - y[0]) - (x[i + 1] - x[0]) * (y[i] - y[0]);
    return 0.5 * s;
}

/* --------------------------------------------------------------- shapes -- */

ad_status ad_shape_plate(double thickness, ad_outline *out)
{
    if (!out) return ad_fail(AD_ERR_INVALID, "out", "ad_shape_plate: no output outline given.");
    memset(out, 0, sizeof *out);
    if (!(thickness >= 0.0 && thickness <= 1.0))
        return ad_fail(AD_ERR_INVALID, "thickness", "plate thickness %g is outside [0, 1] chord.", thickness);
    if (thickness == 0.0) {
        ad_status st = ad_outline_alloc(2, 0, out, "thickness");
        if (st.code != AD_OK) return st;
        out->x[0] = 0.0;
        out->y[0] = 0.0;
        out->x[1] = 1.0;
        out->y[1] = 0.0;
        return ad_ok();
    }
    double h = 0.5 * thickness;
    /* TE midpoint first, as a Selig file starts; the long sides are split so the outline has enough points */
    static const double px[] = {1.0, 1.0, 0.75, 0.5, 0.25, 0.0, 0.0, 0.0, 0.25, 0.5, 0.75, 1.0};
    static const double py[] = {0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, -1.0, -1.0, -1.0, -1.0, -1.0};
    size_t n = sizeof px / sizeof px[0];
    ad_status st = ad_outline_alloc(n, 1, out, "thickness");
    if (st.code != AD_OK) return st;
    for (size_t i = 0; i < n; i++) {
        out->x[i] = px[i];
        out->y[i] = py[i] * h;
    }
    return ad_ok();
}

ad_status ad_shape_wedge(double half_angle_deg, ad_outline *out)
{
    if (!out) return ad_fail(AD_ERR_INVALID, "out", "ad_shape_wedge: no output outline given.");
    memset(out, 0, sizeof *out);
    if (!(half_angle_deg > 0.0 && half_angle_deg < 90.0))
        return ad_fail(AD_ERR_INVALID, "half_angle", "wedge half-angle %g deg is outside (0, 90).", half_angle_deg);
    double h = tan(half_angle_deg * AD_AIRFOIL_PI / 180.0);
    static const double px[] = {1.0, 1.0, 0.75, 0.5, 0.25, 0.0, 0.25, 0.5, 0.75, 1.0};
    static const double side[] = {0.0, 1.0, 1.0, 1.0, 1.0, 0.0, -1.0, -1.0, -1.0, -1.0};
    size_t n = sizeof px / sizeof px[0];
    ad_status st = ad_outline_alloc(n, 1, out, "half_angle");
    if (st.code != AD_OK) return st;
    for (size_t i = 0; i < n; i++) {
        out->x[i] = px[i];
        out->y[i] = side[i] * h * px[i];
    }
    return ad_ok();
}

ad_status ad_shape_circle(int panels, ad_outline *out)
{
    if (!out) return ad_fail(AD_ERR_INVALID, "out", "ad_shape_circle: no output outline given.");
    memset(out, 0, sizeof *out);
    if (panels < AD_OUTLINE_MIN_CLOSED || panels > AD_OUTLINE_MAX_PANELS)
        return ad_fail(AD_ERR_INVALID, "panels", "circle with %d points; give %d to %d.", panels, AD_OUTLINE_MIN_CLOSED,
                       AD_OUTLINE_MAX_PANELS);
    size_t n = (size_t)panels;
    ad_status st = ad_outline_alloc(n, 1, out, "panels");
    if (st.code != AD_OK) return st;
    for (size_t i = 0; i < n; i++) {
        double a = 2.0 * AD_AIRFOIL_PI * (double)i / (double)n;
        out->x[i] = 0.5 + 0.5 * cos(a);
        out->y[i] = 0.5 * sin(a);
    }
    if (n % 2 == 0) {
        /* the leading edge exactly at the origin, as for the other bodies */
        out->x[n / 2] = 0.0;
        out->y[n / 2] = 0.0;
    }
    return ad_ok();
}

/* ------------------------------------------------------------ placement -- */

ad_status ad_outline_area(const ad_outline *o, double *area)
{
    if (!o || !area) return ad_fail(AD_ERR_INVALID, "body", "ad_outline_area: no outline or no result given.");
    if (o->n > 0 && (!o->x || !o->y)) return ad_fail(AD_ERR_INVALID, "body", "ad_outline_area: no point arrays.");
    *area = ad_outline_shoelace(o->x, o->y, o->n);
    return ad_ok();
}

ad_status ad_outline_place(const ad_outline *o, double chord, double aoa_deg, double pivot_x, double pivot_y,
                           ad_segment **segs, size_t *nseg)
{
    if (!segs || !nseg) return ad_fail(AD_ERR_INVALID, "segs", "ad_outline_place: no output given.");
    *segs = NULL;
    *nseg = 0;
    if (!(chord > 0.0) || !isfinite(chord))
        return ad_fail(AD_ERR_INVALID, "chord", "chord %g m must be positive and finite.", chord);
    if (!isfinite(aoa_deg)) return ad_fail(AD_ERR_INVALID, "aoa", "angle of attack %g deg is not finite.", aoa_deg);
    if (!isfinite(pivot_x) || !isfinite(pivot_y))
        return ad_fail(AD_ERR_INVALID, "pivot", "pivot (%g, %g) m is not finite.", pivot_x, pivot_y);
    ad_status st = ad_outline_check(o, "body outline");
    if (st.code != AD_OK) return st;

    size_t n = o->n, m = o->closed ? n : n - 1;
    float *vx = malloc(n * sizeof *vx), *vy = malloc(n * sizeof *vy);
    ad_segment *s = malloc(m * sizeof *s);
    if (!vx || !vy || !s) {
        free(vx);
        free(vy);
        free(s);
        return ad_fail(AD_ERR_NO_MEMORY, "body", "Cannot allocate %zu segments.", m);
    }
    /* nose up for flow along +x is a clockwise turn */
    double a = aoa_deg * AD_AIRFOIL_PI / 180.0, c = cos(a), sn = sin(a);
    for (size_t i = 0; i < n; i++) {
        double dx = o->x[i] - 0.25, dy = o->y[i];
        vx[i] = (float)(pivot_x + chord * (dx * c + dy * sn));
        vy[i] = (float)(pivot_y + chord * (-dx * sn + dy * c));
        if (!isfinite(vx[i]) || !isfinite(vy[i])) {
            st = ad_fail(AD_ERR_INVALID, "chord", "point %zu lands outside float range (chord %g m, pivot %g, %g).", i,
                         chord, pivot_x, pivot_y);
            goto fail;
        }
    }
    /* Rounding to float must not collapse an edge or fold the outline over itself (a small body far from the
     * origin): check the rounded outline as it will be used, through a double copy of it. */
    {
        double *fx = malloc(n * sizeof *fx), *fy = malloc(n * sizeof *fy);
        if (!fx || !fy) {
            free(fx);
            free(fy);
            st = ad_fail(AD_ERR_NO_MEMORY, "body", "Cannot allocate %zu points.", n);
            goto fail;
        }
        for (size_t i = 0; i < n; i++) {
            fx[i] = vx[i];
            fy[i] = vy[i];
        }
        ad_outline rounded = {fx, fy, n, o->closed};
        ad_check_result r = ad_outline_check_core(&rounded);
        free(fx);
        free(fy);
        if (r.kind == AD_CHECK_NO_MEMORY) {
            st = ad_fail(AD_ERR_NO_MEMORY, "body", "Cannot check the placed outline of %zu points.", n);
            goto fail;
        }
        if (r.kind != AD_CHECK_OK) {
            st =
                ad_fail(AD_ERR_INVALID, "chord",
                        "the outline %s in float precision (chord %g m at pivot %g, %g m, edge %zu); use a larger "
                        "chord, fewer points, or a pivot nearer the origin.",
                        r.kind == AD_CHECK_SHORT ? "loses an edge" : "folds over itself", chord, pivot_x, pivot_y, r.i);
            goto fail;
        }
    }
    /* every vertex is rounded once, so neighbouring segments share it bit for bit */
    for (size_t k = 0; k < m; k++) {
        size_t k1 = (k + 1) % n;
        s[k] = (ad_segment){vx[k], vy[k], vx[k1], vy[k1]};
    }
    free(vx);
    free(vy);
    *segs = s;
    *nseg = m;
    return ad_ok();

fail:
    free(vx);
    free(vy);
    free(s);
    return st;
}
