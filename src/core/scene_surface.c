/* A scene's gas-surface models: the body's and the solid walls' (specular, diffuse, maxwell), their
 * accommodation and temperature resolved and checked, and handed to the world's definition. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "scene.h"
#include "status.h"

/* One surface's keys, as the checks name them. */
typedef struct surface_keys {
    const char *section;                   /* "body" or "tunnel" */
    const char *model, *accommodation, *temperature; /* key names */
    int *m;
    double *a, *t;
} surface_keys;

static ad_status resolve(ad_scene *s, const surface_keys *k, const char *src)
{
    char field[48];
    const char *name = *k->m == AD_SURFACE_DIFFUSE ? "diffuse" : *k->m == AD_SURFACE_MAXWELL ? "maxwell" : "specular";
    snprintf(field, sizeof field, "%s.%s", k->section, k->accommodation);
    if (isnan(*k->a) && *k->m == AD_SURFACE_MAXWELL)
        return ad_fail(AD_ERR_INVALID, field,
                       "%s: [%s] %s = maxwell needs [%s] %s, the fraction of contacts that end diffuse (0 to 1)", src,
                       k->section, k->model, k->section, k->accommodation);
    double fixed = *k->m == AD_SURFACE_DIFFUSE ? 1.0 : 0.0;
    if (!isnan(*k->a) && *k->m != AD_SURFACE_MAXWELL && *k->a != fixed)
        return ad_fail(AD_ERR_INVALID, field,
                       "%s: [%s] %s = %g with %s = %s, whose accommodation is %g; for a fraction of diffuse contacts "
                       "give %s = maxwell",
                       src, k->section, k->accommodation, *k->a, k->model, name, fixed, k->model);
    if (isnan(*k->a)) *k->a = fixed;
    /* auto: the stream's, stated in the resolved scene.ini; a specular surface, which never uses it, keeps auto
     * where the stream is cold (a temperature of 0 is no value the key takes: the copy must read back) */
    if (isnan(*k->t) && (*k->m != AD_SURFACE_SPECULAR || s->temperature > 0)) *k->t = s->temperature;
    snprintf(field, sizeof field, "%s.%s", k->section, k->temperature);
    if (*k->m != AD_SURFACE_SPECULAR && !(*k->t > 0))
        return ad_fail(AD_ERR_INVALID, field,
                       "%s: [%s] %s = %s re-emits discs at [%s] %s, which is %g (auto takes gas.temperature): give it "
                       "a temperature above 0 (m^2/s^2)",
                       src, k->section, k->model, name, k->section, k->temperature, *k->t);
    return ad_ok();
}

/* Whether the tunnel has a solid wall for [tunnel] wall_surface to act on. */
static int has_solid_wall(const ad_scene *s)
{
    return s->kind == AD_TUNNEL_BOX || s->walls == AD_BOUNDARY_SOLID ||
           (s->dimensions == 3 && s->span_walls == AD_BOUNDARY_SOLID);
}

ad_status ad_scene_finish_surfaces(ad_scene *s)
{
    const char *src = s->source[0] ? s->source : "scene";
    surface_keys body = {"body", "surface", "accommodation", "wall_temperature", &s->surface, &s->accommodation,
                         &s->surface_temperature};
    surface_keys walls = {"tunnel", "wall_surface", "wall_accommodation", "wall_temperature", &s->wall_surface,
                          &s->wall_accommodation, &s->wall_temperature};
    AD_TRY(resolve(s, &body, src));
    AD_TRY(resolve(s, &walls, src));
    if (s->surface_out == AD_SURFACE_OUT_AUTO)
        s->surface_out = s->surface != AD_SURFACE_SPECULAR ? AD_SURFACE_OUT_YES : AD_SURFACE_OUT_NO;
    if (s->surface != AD_SURFACE_SPECULAR && s->shape == AD_SHAPE_NONE)
        return ad_fail(AD_ERR_INVALID, "body.surface", "%s: [body] surface is given, and the tunnel has no body "
                       "(shape = none)", src);
    if (s->wall_surface != AD_SURFACE_SPECULAR && !has_solid_wall(s))
        return ad_fail(AD_ERR_INVALID, "tunnel.wall_surface",
                       "%s: [tunnel] wall_surface applies to solid walls, and this tunnel has none (walls = %s%s): give "
                       "walls = solid, or leave wall_surface specular",
                       src, s->walls == AD_BOUNDARY_OPEN ? "far_field" : "periodic",
                       s->dimensions == 3 ? ", span_walls = periodic" : "");
    return ad_ok();
}

/* A specular surface keeps the definition's default (today's contact, bit for bit). */
static void to_surface(int model, double accommodation, double temperature, ad_surface *out)
{
    if (model == AD_SURFACE_SPECULAR) return;
    out->model = (ad_surface_model)model;
    out->accommodation = accommodation;
    out->temperature = temperature;
}

void ad_scene_surfaces_to_def(const ad_scene *s, ad_world_def *d)
{
    to_surface(s->surface, s->accommodation, s->surface_temperature, &d->body_surface);
    /* every wall: the world uses the entries of the walls that are solid */
    for (int k = 0; k < 6; k++) to_surface(s->wall_surface, s->wall_accommodation, s->wall_temperature, &d->wall_surface[k]);
}
