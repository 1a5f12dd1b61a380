/* Gas-surface models and the body's panels in the core: the surfaces' defaults and checks, and the
 * per-panel sums the backends fold each step's fixed-point sums into (docs/ARCHITECTURE.md, "Panels"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "world_internal.h"

static const char *const WALL_NAMES[6] = {"x_min", "x_max", "y_min", "y_max", "z_min", "z_max"};

void ad_surface_defaults(ad_world_def *d)
{
    ad_surface s = {AD_SURFACE_SPECULAR, 0.0, 1.0};
    d->body_surface = s;
    for (int k = 0; k < 6; k++) d->wall_surface[k] = s;
}

/* One surface's fields in range, named as `field` (body_surface, wall_surface[2] ...). */
static ad_status check_surface(const ad_surface *s, const char *field)
{
    char name[96];
    if ((unsigned)s->model > (unsigned)AD_SURFACE_MAXWELL) {
        snprintf(name, sizeof name, "%s.model", field);
        return ad_fail(AD_ERR_INVALID, name, "%s = %d is invalid: specular (0), diffuse (1) or maxwell (2)", name,
                       (int)s->model);
    }
    snprintf(name, sizeof name, "%s.accommodation", field);
    if (!(s->accommodation >= 0.0 && s->accommodation <= 1.0))
        return ad_fail(AD_ERR_INVALID, name, "%s = %g is invalid: the diffuse fraction lies in [0, 1]", name,
                       s->accommodation);
    snprintf(name, sizeof name, "%s.temperature", field);
    if (s->model != AD_SURFACE_SPECULAR && !(s->temperature > 0.0 && s->temperature <= 3.0e38))
        return ad_fail(AD_ERR_INVALID, name,
                       "%s = %g is invalid: a %s surface re-emits at its temperature kT/m, which must be a positive "
                       "finite value in m^2/s^2",
                       name, s->temperature, s->model == AD_SURFACE_DIFFUSE ? "diffuse" : "maxwell");
    return ad_ok();
}

ad_status ad_surfaces_check(const ad_world_def *d)
{
    AD_TRY(check_surface(&d->body_surface, "body_surface"));
    for (int k = 0; k < 6; k++) {
        char field[40];
        snprintf(field, sizeof field, "wall_surface[%d]", k);
        ad_status st = check_surface(&d->wall_surface[k], field);
        if (st.code) {
            size_t m = strlen(st.message);
            snprintf(st.message + m, sizeof st.message - m, " (the %s wall)", WALL_NAMES[k]);
            return st;
        }
    }
    return ad_ok();
}

const char *ad_surfaces_nonspecular(const ad_world_def *d)
{
    static const char *const names[6] = {"wall_surface[0]", "wall_surface[1]", "wall_surface[2]",
                                         "wall_surface[3]", "wall_surface[4]", "wall_surface[5]"};
    if (d->body_surface.model != AD_SURFACE_SPECULAR) return "body_surface";
    for (int k = 0; k < 6; k++)
        if (d->wall_surface[k].model != AD_SURFACE_SPECULAR) return names[k];
    return NULL;
}

/* The fraction of contacts that end diffusely: 1 diffuse, accommodation for maxwell, 0 specular. */
double ad_surface_diffuse_fraction(const ad_surface *s)
{
    return s->model == AD_SURFACE_DIFFUSE ? 1.0 : s->model == AD_SURFACE_MAXWELL ? s->accommodation : 0.0;
}

ad_status ad_panels_resize(ad_panels *pn, size_t count)
{
    if (count <= pn->count) return ad_ok();
    ad_panel_sums *s = realloc(pn->sums, count * sizeof *s);
    if (!s) return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory for the sums of %zu panels", count);
    memset(s + pn->count, 0, (count - pn->count) * sizeof *s);
    pn->sums = s;
    pn->count = count;
    return ad_ok();
}

void ad_panels_free(ad_panels *pn)
{
    free(pn->sums);
    memset(pn, 0, sizeof *pn);
}

ad_status ad_world_read_panels(const ad_world *w, size_t first, size_t n, ad_panel_sums *out)
{
    if (!w) return ad_fail(AD_ERR_INVALID, "w", "world is NULL");
    if (n == 0) return ad_ok();
    if (!out) return ad_fail(AD_ERR_INVALID, "out", "output array is NULL");
    if (first > w->panels.count || n > w->panels.count - first)
        return ad_fail(AD_ERR_INVALID, "first",
                       "panels %zu to %zu asked for: the body has %zu panels (segments in 2D, triangles in 3D)", first,
                       first + n - 1, w->panels.count);
    if (w->stats.backend == AD_BACKEND_CUDA && !w->ops->panels_to_host)
        return ad_fail(AD_ERR_BACKEND, "backend",
                       "ad_world_read_panels: backend = cuda does not sample the body's panels yet; run on backend = "
                       "cpu or reference for per-panel sums");
    if (w->ops->panels_to_host) AD_TRY(w->ops->panels_to_host((ad_world *)w));
    memcpy(out, w->panels.sums + first, n * sizeof *out);
    return ad_ok();
}

ad_status ad_world_reset_panels(ad_world *w)
{
    if (!w) return ad_fail(AD_ERR_INVALID, "w", "world is NULL");
    if (w->panels.count) memset(w->panels.sums, 0, w->panels.count * sizeof *w->panels.sums);
    w->stats.panel_time = 0.0;
    if (w->ops->panels_reset) AD_TRY(w->ops->panels_reset(w));
    return ad_ok();
}
