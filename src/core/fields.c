/* Time-averaged fields on a coarse grid: the sums the backends add to, and the averages read from them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "world_internal.h"

/* 3D: the grid's depth (nz cells over [z0, z1]), refused by name where it is none. */
static ad_status check_depth(const ad_field_def *d)
{
    if (d->nz < 1) return ad_fail(AD_ERR_INVALID, "fields.nz", "fields.nz = %d: a 3D field grid has at least 1 cell "
                                  "along z", d->nz);
    if (!isfinite(d->z0) || !isfinite(d->z1) || !(d->z1 > d->z0))
        return ad_fail(AD_ERR_INVALID, "fields.z1", "field extent along z [%g, %g] is empty or not finite (a 3D field "
                       "grid needs z1 > z0)", d->z0, d->z1);
    return ad_ok();
}

ad_status ad_world_set_fields(ad_world *w, const ad_field_def *d)
{
    if (!w || !d) return ad_fail(AD_ERR_INVALID, "fields", "world or field definition is NULL");
    int dims = w->params.dims;
    if (dims == 3) AD_TRY(check_depth(d));
    double depth = dims == 3 ? (double)d->nz : 1.0;
    if (d->nx < 1 || d->ny < 1 || (double)d->nx * (double)d->ny * depth > 1e8)
        return ad_fail(AD_ERR_INVALID, "fields.nx", "field grid %d x %d x %g is invalid: 1 to 1e8 cells", d->nx, d->ny,
                       depth);
    if (!isfinite(d->x0) || !isfinite(d->x1) || !isfinite(d->y0) || !isfinite(d->y1) || !(d->x1 > d->x0) ||
        !(d->y1 > d->y0))
        return ad_fail(AD_ERR_INVALID, "fields.extent", "field extent [%g, %g] x [%g, %g] is empty or not finite",
                       d->x0, d->x1, d->y0, d->y1);
    if (d->interval < 1) return ad_fail(AD_ERR_INVALID, "fields.interval", "fields.interval must be at least 1 step");
    ad_field_def def = *d;
    if (dims != 3) def.nz = 0, def.z0 = def.z1 = 0.0; /* ignored in 2D: kept as none */
    size_t n = ad_field_sum_count(&def, dims); /* the cells, then the probe */
    double *sums = calloc(n, sizeof *sums);
    if (!sums) return ad_fail(AD_ERR_NO_MEMORY, "fields", "out of memory for a %d x %d x %g field grid", d->nx, d->ny,
                              depth);
    ad_fields *f = &w->fields;
    free(f->sums);
    f->sums = sums;
    f->def = def;
    f->dims = dims;
    f->grid.x0 = (float)d->x0;
    f->grid.y0 = (float)d->y0;
    f->grid.inv_dx = (float)(d->nx / (d->x1 - d->x0));
    f->grid.inv_dy = (float)(d->ny / (d->y1 - d->y0));
    f->grid.nx = d->nx;
    f->grid.ny = d->ny;
    f->grid.z0 = (float)def.z0;
    f->grid.inv_dz = dims == 3 ? (float)(def.nz / (def.z1 - def.z0)) : 0.0f;
    f->grid.nz = dims == 3 ? def.nz : 1;
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
    memset(w->fields.sums, 0, (ad_field_probe_sums(&w->fields) - w->fields.sums) * sizeof(double));
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
    int three = f->dims == 3;
    if (three && (!isfinite(d->z0) || !isfinite(d->z1) || !(d->z1 > d->z0)))
        return ad_fail(AD_ERR_INVALID, "probe.z1",
                       "probe along z [%g, %g] is empty or not finite (a 3D probe is a box: z1 > z0)", d->z0, d->z1);
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
    f->grid.pz0 = three ? (float)d->z0 : 0.0f;
    f->grid.pz1 = three ? (float)d->z1 : 0.0f;
    if (!three) f->probe.z0 = f->probe.z1 = 0.0; /* ignored in 2D */
    memset(ad_field_probe_sums(f), 0, AD_FS_COUNT_DIM(f->dims) * sizeof(double));
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
    const double *q = ad_field_probe_sums(f);
    memset(out, 0, sizeof *out); /* its padding too: a caller may compare or hash the bytes */
    out->samples = f->probe_samples;
    out->count = q[AD_PS_N];
    out->v_par = q[AD_PS_PAR];
    out->v_perp = q[AD_PS_PERP];
    out->v_par2 = q[AD_PS_PAR2];
    out->v_perp2 = q[AD_PS_PERP2];
    out->area = (f->probe.x1 - f->probe.x0) * (f->probe.y1 - f->probe.y0);
    if (f->dims == 3) out->area *= f->probe.z1 - f->probe.z0; /* the box's volume */
    out->directed = !f->grid.probe_all;
    return ad_ok();
}

/* Where a cell's sums are (fields.h; the velocity of axis k at vx + k, its acceleration at ax + k), and the
 * degrees of freedom a disc's peculiar motion has. */
typedef struct field_layout {
    int per, vx, v2, virial, contact, ax;
    double dof;
} field_layout;

/* The time average of field `which` in one cell, from its sums q over S samples; `size` is the cell's area
 * (3D: volume). */
static double field_value(const field_layout *L, int three, ad_field which, const double *q, double S, double m,
                          double size)
{
    double n = q[0];
    if (which == AD_FIELD_DENSITY) return S > 0 ? n / (S * size) : NAN;
    if (!(n > 0)) return NAN;
    double ux = q[L->vx] / n, uy = q[L->vx + 1] / n, uz = three ? q[L->vx + 2] / n : 0.0;
    double u2 = ux * ux + uy * uy;
    if (three) u2 += uz * uz;
    /* peculiar kinetic energy: sum |v - u|^2 = sum |v|^2 - n |u|^2 */
    double pec = fmax(q[L->v2] - n * u2, 0.0);
    switch (which) {
    case AD_FIELD_VELOCITY_X: return ux;
    case AD_FIELD_VELOCITY_Y: return uy;
    case AD_FIELD_VELOCITY_Z: return uz;
    case AD_FIELD_TEMPERATURE: return (1.0 / L->dof) * m * pec / n;
    case AD_FIELD_PRESSURE: return (m * pec + q[L->virial]) / (L->dof * size * S);
    case AD_FIELD_ACCEL_X: return q[L->ax] / n;
    case AD_FIELD_ACCEL_Y: return q[L->ax + 1] / n;
    case AD_FIELD_ACCEL_Z: return q[L->ax + 2] / n;
    case AD_FIELD_CONTACT: return q[L->contact] / n;
    default: return NAN;
    }
}

ad_status ad_world_read_field(const ad_world *w, ad_field which, float *out, uint64_t *samples)
{
    if (!w || !out || !w->fields.enabled) return ad_fail(AD_ERR_INVALID, "fields", "the world has no field grid");
    if ((unsigned)which >= AD_FIELD_COUNT) return ad_fail(AD_ERR_INVALID, "field", "field %d is unknown", (int)which);
    const ad_fields *f = &w->fields;
    int three = f->dims == 3;
    if (!three && (unsigned)which >= AD_FIELD_COUNT_2D)
        return ad_fail(AD_ERR_INVALID, "field", "field %s is a 3D field: a 2D world has none", ad_field_name(which));
    if (w->ops->fields_to_host) {
        ad_status st = w->ops->fields_to_host((ad_world *)w);
        if (st.code) return st;
    }
    static const field_layout L2 = {AD_FS_COUNT, AD_FS_VX, AD_FS_V2, AD_FS_VIRIAL, AD_FS_CONTACT, AD_FS_AX, 2.0};
    static const field_layout L3 = {AD_FS3_COUNT, AD_FS3_VX, AD_FS3_V2, AD_FS3_VIRIAL, AD_FS3_CONTACT, AD_FS3_AX, 3.0};
    const field_layout *L = three ? &L3 : &L2;
    double m = w->def.mass, S = (double)f->samples;
    double size = (f->def.x1 - f->def.x0) * (f->def.y1 - f->def.y0) / ((double)f->def.nx * f->def.ny);
    if (three) size *= (f->def.z1 - f->def.z0) / f->def.nz;
    size_t cells = ad_field_cells(&f->def, f->dims);
    for (size_t c = 0; c < cells; c++)
        out[c] = (float)field_value(L, three, which, f->sums + c * (size_t)L->per, S, m, size);
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
    static const char *names[AD_FIELD_COUNT] = {"density",  "velocity_x", "velocity_y",    "temperature",
                                                "pressure", "accel_x",    "accel_y",       "contact_force",
                                                "velocity_z", "accel_z"};
    return (unsigned)f < AD_FIELD_COUNT ? names[f] : "unknown";
}

const char *ad_field_units(ad_field f)
{
    static const char *units[AD_FIELD_COUNT] = {"1/m^2", "m/s",   "m/s", "J",   "N/m",
                                                "m/s^2", "m/s^2", "N",   "m/s", "m/s^2"};
    return (unsigned)f < AD_FIELD_COUNT ? units[f] : "";
}

const char *ad_field_units3(ad_field f)
{
    if (f == AD_FIELD_DENSITY) return "1/m^3";
    if (f == AD_FIELD_PRESSURE) return "N/m^2";
    return ad_field_units(f);
}
