/* Time-averaged fields on a coarse grid: the sums the backends add to, and the averages read from them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "world_internal.h"

ad_status ad_world_set_fields(ad_world *w, const ad_field_def *d)
{
    if (!w || !d) return ad_fail(AD_ERR_INVALID, "fields", "world or field definition is NULL");
    if (w->params.dims == 3)
        return ad_fail(AD_ERR_INVALID, "dimensions", "field grids are 2D for now: a 3D world samples no fields");
    if (d->nx < 1 || d->ny < 1 || (double)d->nx * (double)d->ny > 1e8)
        return ad_fail(AD_ERR_INVALID, "fields.nx", "field grid %d x %d is invalid: 1 to 1e8 cells", d->nx, d->ny);
    if (!isfinite(d->x0) || !isfinite(d->x1) || !isfinite(d->y0) || !isfinite(d->y1) || !(d->x1 > d->x0) ||
        !(d->y1 > d->y0))
        return ad_fail(AD_ERR_INVALID, "fields.extent", "field extent [%g, %g] x [%g, %g] is empty or not finite",
                       d->x0, d->x1, d->y0, d->y1);
    if (d->interval < 1) return ad_fail(AD_ERR_INVALID, "fields.interval", "fields.interval must be at least 1 step");
    size_t n = ((size_t)d->nx * (size_t)d->ny + 1) * AD_FS_COUNT; /* the cells, then the probe */
    double *sums = calloc(n, sizeof *sums);
    if (!sums) return ad_fail(AD_ERR_NO_MEMORY, "fields", "out of memory for a %d x %d field grid", d->nx, d->ny);
    ad_fields *f = &w->fields;
    free(f->sums);
    f->sums = sums;
    f->def = *d;
    f->grid.x0 = (float)d->x0;
    f->grid.y0 = (float)d->y0;
    f->grid.inv_dx = (float)(d->nx / (d->x1 - d->x0));
    f->grid.inv_dy = (float)(d->ny / (d->y1 - d->y0));
    f->grid.nx = d->nx;
    f->grid.ny = d->ny;
    f->grid.probe = 0;
    f->samples = 0;
    f->probe_samples = 0;
    f->enabled = 1;
    return w->ops->fields_to_device ? w->ops->fields_to_device(w) : ad_ok();
}

ad_status ad_world_get_fields(const ad_world *w, ad_field_def *out)
{
    if (!w || !out) return ad_fail(AD_ERR_INVALID, "fields", "world or output is NULL");
    if (!w->fields.enabled) return ad_fail(AD_ERR_INVALID, "fields", "the world samples no fields");
    *out = w->fields.def;
    return ad_ok();
}

ad_status ad_world_reset_fields(ad_world *w)
{
    if (!w || !w->fields.enabled) return ad_fail(AD_ERR_INVALID, "fields", "the world has no field grid");
    if (w->ops->fields_to_host) { /* the probe's sums stay */
        ad_status st = w->ops->fields_to_host(w);
        if (st.code) return st;
    }
    memset(w->fields.sums, 0, (size_t)w->fields.def.nx * w->fields.def.ny * AD_FS_COUNT * sizeof(double));
    w->fields.samples = 0;
    return w->ops->fields_to_device ? w->ops->fields_to_device(w) : ad_ok();
}

ad_status ad_world_set_probe(ad_world *w, const ad_probe_def *d)
{
    if (!w || !d) return ad_fail(AD_ERR_INVALID, "probe", "world or probe is NULL");
    if (!w->fields.enabled) return ad_fail(AD_ERR_INVALID, "probe", "the probe samples with the fields: set them first");
    if (!isfinite(d->x0) || !isfinite(d->x1) || !isfinite(d->y0) || !isfinite(d->y1) || !(d->x1 > d->x0) ||
        !(d->y1 > d->y0))
        return ad_fail(AD_ERR_INVALID, "probe", "probe [%g, %g] x [%g, %g] is empty or not finite", d->x0, d->x1,
                       d->y0, d->y1);
    ad_fields *f = &w->fields;
    if (f->def.nx < 1) return ad_fail(AD_ERR_INVALID, "probe", "the world has no field grid");
    if (w->ops->fields_to_host) {
        ad_status st = w->ops->fields_to_host(w);
        if (st.code) return st;
    }
    double len = hypot(d->dir_x, d->dir_y);
    if (!isfinite(len))
        return ad_fail(AD_ERR_INVALID, "probe", "probe direction (%g, %g) is not finite", d->dir_x, d->dir_y);
    f->probe = *d;
    f->grid.probe = 1;
    f->grid.probe_all = !(len > 0.0);
    f->grid.pdx = len > 0.0 ? (float)(d->dir_x / len) : 1.0f;
    f->grid.pdy = len > 0.0 ? (float)(d->dir_y / len) : 0.0f;
    f->grid.px0 = (float)d->x0;
    f->grid.py0 = (float)d->y0;
    f->grid.px1 = (float)d->x1;
    f->grid.py1 = (float)d->y1;
    memset(f->sums + (size_t)f->def.nx * f->def.ny * AD_FS_COUNT, 0, AD_FS_COUNT * sizeof(double));
    f->probe_samples = 0;
    return w->ops->fields_to_device ? w->ops->fields_to_device(w) : ad_ok();
}

ad_status ad_world_read_probe(const ad_world *w, ad_probe_sums *out)
{
    if (!w || !out) return ad_fail(AD_ERR_INVALID, "probe", "world or output is NULL");
    const ad_fields *f = &w->fields;
    if (!f->enabled || !f->grid.probe) return ad_fail(AD_ERR_INVALID, "probe", "the world has no probe");
    if (w->ops->fields_to_host) {
        ad_status st = w->ops->fields_to_host((ad_world *)w);
        if (st.code) return st;
    }
    const double *q = f->sums + (size_t)f->def.nx * f->def.ny * AD_FS_COUNT;
    out->samples = f->probe_samples;
    out->count = q[AD_PS_N];
    out->v_par = q[AD_PS_PAR];
    out->v_perp = q[AD_PS_PERP];
    out->v_par2 = q[AD_PS_PAR2];
    out->v_perp2 = q[AD_PS_PERP2];
    out->area = (f->probe.x1 - f->probe.x0) * (f->probe.y1 - f->probe.y0);
    out->directed = !f->grid.probe_all;
    return ad_ok();
}

ad_status ad_world_read_field(const ad_world *w, ad_field which, float *out, uint64_t *samples)
{
    if (!w || !out || !w->fields.enabled) return ad_fail(AD_ERR_INVALID, "fields", "the world has no field grid");
    if ((unsigned)which >= AD_FIELD_COUNT) return ad_fail(AD_ERR_INVALID, "field", "field %d is unknown", (int)which);
    if (w->ops->fields_to_host) {
        ad_status st = w->ops->fields_to_host((ad_world *)w);
        if (st.code) return st;
    }
    const ad_fields *f = &w->fields;
    double m = w->def.mass, S = (double)f->samples;
    double area = (f->def.x1 - f->def.x0) * (f->def.y1 - f->def.y0) / ((double)f->def.nx * f->def.ny);
    size_t cells = (size_t)f->def.nx * f->def.ny;
    for (size_t c = 0; c < cells; c++) {
        const double *q = f->sums + c * AD_FS_COUNT;
        double n = q[AD_FS_N], v = NAN;
        if (which == AD_FIELD_DENSITY) {
            v = S > 0 ? n / (S * area) : NAN;
        } else if (n > 0) {
            double ux = q[AD_FS_VX] / n, uy = q[AD_FS_VY] / n;
            /* peculiar kinetic energy: sum |v - u|^2 = sum |v|^2 - n |u|^2 */
            double pec = fmax(q[AD_FS_V2] - n * (ux * ux + uy * uy), 0.0);
            switch (which) {
            case AD_FIELD_VELOCITY_X: v = ux; break;
            case AD_FIELD_VELOCITY_Y: v = uy; break;
            case AD_FIELD_TEMPERATURE: v = 0.5 * m * pec / n; break;
            case AD_FIELD_PRESSURE: v = (m * pec + q[AD_FS_VIRIAL]) / (2.0 * area * S); break;
            case AD_FIELD_ACCEL_X: v = q[AD_FS_AX] / n; break;
            case AD_FIELD_ACCEL_Y: v = q[AD_FS_AY] / n; break;
            case AD_FIELD_CONTACT: v = q[AD_FS_CONTACT] / n; break;
            default: break;
            }
        }
        out[c] = (float)v;
    }
    if (samples) *samples = f->samples;
    return ad_ok();
}

/* The mean along the stream of the part of a Maxwellian (velocity u, variance sigma^2) moving along it. */
static double half_mean(double u, double sigma)
{
    if (!(sigma > 0.0)) return u;
    double a = u / sigma, cdf = 0.5 * erfc(-a * 0.7071067811865476);
    return cdf > 0.0 ? u + sigma * 0.3989422804014327 * exp(-0.5 * a * a) / cdf : 0.0;
}

ad_probe_stream ad_probe_between(const ad_probe_sums *a, const ad_probe_sums *b)
{
    ad_probe_stream f = {NAN, NAN, NAN, (double)(b->samples - a->samples), b->count - a->count};
    double n = f.discs;
    if (!(f.samples > 0) || !(n > 1) || !(b->area > 0)) return f;
    double par = (b->v_par - a->v_par) / n, perp = (b->v_perp - a->v_perp) / n;
    double var = fmax((b->v_perp2 - a->v_perp2) / n - perp * perp, 0.0), sigma = sqrt(var);
    if (!b->directed) {
        f.velocity = par;
        f.temperature = 0.5 * (var + fmax((b->v_par2 - a->v_par2) / n - par * par, 0.0));
        f.density = n / (f.samples * b->area);
        return f;
    }
    /* U from the measured mean along the stream (half_mean grows with u: bisection) */
    double lo = par - 10.0 * sigma - 1.0, hi = par;
    for (int k = 0; k < 200; k++) {
        double mid = 0.5 * (lo + hi);
        if (half_mean(mid, sigma) < par) lo = mid;
        else hi = mid;
    }
    double u = 0.5 * (lo + hi), frac = sigma > 0.0 ? 0.5 * erfc(-u / sigma * 0.7071067811865476) : (u > 0.0);
    f.velocity = u;
    f.temperature = var;
    f.density = frac > 0.0 ? n / (f.samples * b->area) / frac : NAN;
    return f;
}

const char *ad_field_name(ad_field f)
{
    static const char *names[AD_FIELD_COUNT] = {"density",      "velocity_x", "velocity_y", "temperature",
                                                "pressure",     "accel_x",    "accel_y",    "contact_force"};
    return (unsigned)f < AD_FIELD_COUNT ? names[f] : "unknown";
}

const char *ad_field_units(ad_field f)
{
    static const char *units[AD_FIELD_COUNT] = {"1/m^2", "m/s", "m/s", "J", "N/m", "m/s^2", "m/s^2", "N"};
    return (unsigned)f < AD_FIELD_COUNT ? units[f] : "";
}
