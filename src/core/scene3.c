/* 3D scenes: the body as a triangle mesh placed in the tunnel (sphere, cylinder, wing, STL), its reference
 * area, length and pivot, the 3D keys' cross checks, and the world a 3D scene makes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "body3.h"
#include "mesh_check.h"
#include "scene.h"
#include "stl.h"
#include "world_internal.h"

double ad_scene_fraction(const ad_scene *s) { return s->dimensions == 3 ? s->volume_fraction : s->area_fraction; }

double ad_scene_particle_size(const ad_scene *s)
{
    double r = s->radius;
    return s->dimensions == 3 ? 4.0 / 3.0 * AD_PI * r * r * r : AD_PI * r * r;
}

/* The wing's or cylinder's span as resolved (auto: the tunnel's depth). */
static double span_of(const ad_scene *s) { return isnan(s->span) ? s->depth : s->span; }

/* A wing or cylinder that spans a periodic tunnel from side to side: an infinite body. */
static int spans_tunnel(const ad_scene *s)
{
    return (s->shape == AD_SHAPE_WING || s->shape == AD_SHAPE_CYLINDER) && s->span_walls == AD_BOUNDARY_PERIODIC &&
           span_of(s) >= s->depth;
}

/* The wing in its own frame: the mid-span quarter chord at the origin, the span along z. */
static ad_status wing_mesh(const ad_scene *s, ad_mesh *m)
{
    ad_outline o;
    AD_TRY(ad_scene_section(s, &o));
    char what[AD_PATH_MAX + 32];
    if (s->section == AD_SECTION_FILE) snprintf(what, sizeof what, "%s", s->file);
    else snprintf(what, sizeof what, "NACA %s", s->naca);
    ad_status st = ad_outline_check(&o, what);
    double span = span_of(s);
    /* strips about a quarter chord wide: the tree's boxes stay compact */
    int strips = (int)fmin(AD_BODY3_MAX_SPAN_PANELS, fmax(1.0, ceil(4.0 * span / s->chord)));
    if (!st.code) st = ad_mesh_wing(&o, s->chord, span, s->sweep, strips, !spans_tunnel(s), m);
    ad_outline_free(&o);
    if (st.code) return st;
    double shift[3] = {-(0.25 * s->chord + 0.5 * span * tan(s->sweep * AD_PI / 180.0)), 0.0, 0.0};
    return ad_mesh_place(m, 1.0, NULL, shift);
}

/* The STL body in its own frame: scaled, rotated, its box centred on the origin. */
static ad_status stl_mesh(const ad_scene *s, ad_mesh *m)
{
    char path[2 * AD_PATH_MAX];
    ad_scene_path(s, s->file, path, sizeof path);
    AD_TRY(ad_stl_load(path, m));
    ad_status st = ad_mesh_check(m, path, 1);
    if (!st.code) st = ad_mesh_place(m, s->scale, s->rotate, NULL);
    if (st.code) return st;
    double lo[3], hi[3], c[3];
    ad_mesh_bounds(m, lo, hi);
    for (int k = 0; k < 3; k++) c[k] = -0.5 * (lo[k] + hi[k]);
    return ad_mesh_place(m, 1.0, NULL, c);
}

/* The body about its pivot at the origin, before the angle of attack. */
static ad_status own_frame(const ad_scene *s, ad_mesh *m)
{
    switch (s->shape) {
    case AD_SHAPE_SPHERE: return ad_mesh_sphere(0.5 * s->chord, s->subdivisions, m);
    case AD_SHAPE_CYLINDER: return ad_mesh_cylinder(0.5 * s->chord, span_of(s), s->panels, m);
    case AD_SHAPE_WING: return wing_mesh(s, m);
    case AD_SHAPE_STL: return stl_mesh(s, m);
    default: return ad_ok();
    }
}

/* The body must sit inside the tunnel, clear of its walls by a diameter (along a periodic span a body that
 * spans the tunnel reaches both sides). */
static ad_status inside_tunnel(const ad_scene *s, const ad_mesh *m)
{
    double lo[3], hi[3], size[3] = {s->width, s->height, s->depth}, gap = 2.0 * s->radius;
    static const char *axis[3] = {"x", "y", "z"};
    ad_mesh_bounds(m, lo, hi);
    for (int k = 0; k < 3; k++) {
        if (k == 2 && spans_tunnel(s)) continue;
        if (lo[k] < gap || hi[k] > size[k] - gap)
            return ad_fail(AD_ERR_INVALID, "body.chord",
                           "%s: the body reaches %s = %g .. %g m, outside the %g x %g x %g m tunnel less a diameter at "
                           "each wall; make it smaller or move it (body.x, body.y, body.z)",
                           s->source, axis[k], lo[k], hi[k], s->width, s->height, s->depth);
    }
    return ad_ok();
}

static void reference_of(const ad_scene *s, const ad_mesh *m, ad_body_reference *ref)
{
    double d = s->chord, lo[3], hi[3];
    ad_mesh_bounds(m, lo, hi);
    switch (s->shape) {
    case AD_SHAPE_WING: ref->area = span_of(s) * d, ref->length = d; break;
    case AD_SHAPE_SPHERE: ref->area = 0.25 * AD_PI * d * d, ref->length = d; break;
    case AD_SHAPE_CYLINDER: ref->area = span_of(s) * d, ref->length = d; break;
    case AD_SHAPE_STL: ref->area = ad_mesh_frontal_area(m, 0, 1e-3), ref->length = hi[0] - lo[0]; break;
    default: ref->area = ref->length = NAN;
    }
    if (!isnan(s->ref_area)) ref->area = s->ref_area;
    if (!isnan(s->ref_length)) ref->length = s->ref_length;
    ref->pivot[0] = s->x;
    ref->pivot[1] = s->y;
    ref->pivot[2] = s->z;
}

ad_status ad_scene_body_mesh(const ad_scene *s, ad_mesh *out, ad_body_reference *ref)
{
    memset(out, 0, sizeof *out);
    if (ref) {
        memset(ref, 0, sizeof *ref);
        ref->area = ref->length = NAN;
    }
    if (s->dimensions != 3 || s->shape == AD_SHAPE_NONE) return ad_ok();
    ad_status st = own_frame(s, out);
    /* the angle of attack pitches the body nose up about its pivot (body3.h: rot_deg {0, 0, -alpha}) */
    double pitch[3] = {0.0, 0.0, -s->aoa}, at[3] = {s->x, s->y, s->z};
    if (!st.code) st = ad_mesh_place(out, 1.0, pitch, at);
    if (!st.code) st = inside_tunnel(s, out);
    if (!st.code && ref) reference_of(s, out, ref);
    if (!st.code && ref && !(ref->area > 0))
        st = ad_fail(AD_ERR_INVALID, "body.ref_area", "%s: the body's frontal area is %g m^2; give [body] ref_area",
                     s->source, ref->area);
    if (st.code) ad_mesh_free(out);
    return st;
}

/* Keys that belong to the other dimension's shapes. */
static int shape_is_3d(int shape)
{
    return shape == AD_SHAPE_SPHERE || shape == AD_SHAPE_CYLINDER || shape == AD_SHAPE_WING || shape == AD_SHAPE_STL;
}

static ad_status check_shape(const ad_scene *s, const char *src)
{
    static const char *names[] = {"none", "naca", "file", "plate", "wedge", "circle", "sphere", "cylinder", "wing", "stl"};
    int three = s->dimensions == 3;
    if (s->shape != AD_SHAPE_NONE && shape_is_3d(s->shape) != three)
        return ad_fail(AD_ERR_INVALID, "body.shape",
                       three ? "%s: [body] shape = %s is a 2D outline; a 3D tunnel takes sphere, cylinder, wing (a "
                               "section extruded along the span: section = naca or file) or stl"
                             : "%s: [body] shape = %s is a 3D body; set [tunnel] dimensions = 3 (2D shapes: naca, "
                               "file, plate, wedge, circle)",
                       src, names[s->shape]);
    if ((s->shape == AD_SHAPE_STL || (s->shape == AD_SHAPE_WING && s->section == AD_SECTION_FILE)) && !s->file[0])
        return ad_fail(AD_ERR_INVALID, "body.file", "%s: [body] shape = %s needs a [body] file = PATH", src,
                       names[s->shape]);
    if (s->shape == AD_SHAPE_CYLINDER && s->panels < 8)
        return ad_fail(AD_ERR_INVALID, "body.panels", "%s: a cylinder needs [body] panels >= 8 around", src);
    return ad_ok();
}

ad_status ad_scene_finish3(ad_scene *s)
{
    const char *src = s->source[0] ? s->source : "scene";
    AD_TRY(check_shape(s, src));
    if (s->dimensions != 3) return ad_ok();
    if (*ad_scene_seen(s, "gas", "area_fraction"))
        return ad_fail(AD_ERR_INVALID, "gas.area_fraction",
                       "%s: [gas] area_fraction is 2D's; a 3D tunnel's gas is given by volume_fraction", src);
    if (s->depth < 4 * s->radius)
        return ad_fail(AD_ERR_INVALID, "tunnel.depth", "%s: [tunnel] depth = %g m: at least 4 radii (%g m)", src,
                       s->depth, 4 * s->radius);
    double span = span_of(s);
    if ((s->shape == AD_SHAPE_WING || s->shape == AD_SHAPE_CYLINDER) && span > s->depth)
        return ad_fail(AD_ERR_INVALID, "body.span", "%s: [body] span = %g m is longer than the tunnel's depth %g m",
                       src, span, s->depth);
    if (isnan(s->z)) s->z = 0.5 * s->depth;
    if (spans_tunnel(s) && s->z != 0.5 * s->depth)
        return ad_fail(AD_ERR_INVALID, "body.z",
                       "%s: [body] z = %g m: a body spanning the periodic tunnel is centred on it (z = auto, %g m)", src,
                       s->z, 0.5 * s->depth);
    if (spans_tunnel(s) && s->sweep != 0.0)
        return ad_fail(AD_ERR_INVALID, "body.sweep",
                       "%s: [body] sweep = %g deg on a wing spanning the periodic tunnel: its ends would not meet across "
                       "the periodic sides; give a span shorter than the depth (closed tips) or sweep = 0",
                       src, s->sweep);
    if (s->field_cell > s->depth)
        return ad_fail(AD_ERR_INVALID, "output.field_cell",
                       "%s: [output] field_cell = %g m does not fit in the tunnel's depth %g m", src, s->field_cell,
                       s->depth);
    double cells = ceil(s->width / s->field_cell) * ceil(s->height / s->field_cell) * ceil(s->depth / s->field_cell);
    if (cells > 5e7)
        return ad_fail(AD_ERR_INVALID, "output.field_cell",
                       "%s: [output] field_cell = %g m makes %.3g field cells in the 3D tunnel; at most 5e7", src,
                       s->field_cell, cells);
    if (isnan(s->slice_x)) s->slice_x = s->shape == AD_SHAPE_NONE ? 0.5 * s->width : s->x;
    if (isnan(s->slice_z)) s->slice_z = s->shape == AD_SHAPE_NONE ? 0.5 * s->depth : s->z;
    if (!(s->slice_x >= 0 && s->slice_x <= s->width))
        return ad_fail(AD_ERR_INVALID, "output.slice_x", "%s: [output] slice_x = %g m lies outside the tunnel (0 .. %g m)",
                       src, s->slice_x, s->width);
    if (!(s->slice_z >= 0 && s->slice_z <= s->depth))
        return ad_fail(AD_ERR_INVALID, "output.slice_z", "%s: [output] slice_z = %g m lies outside the tunnel (0 .. %g m)",
                       src, s->slice_z, s->depth);
    return ad_ok();
}
