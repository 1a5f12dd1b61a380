/* Gas-surface models and the body's panels in the core: the surfaces' defaults and checks, and the
 * per-panel sums the backends fold each step's fixed-point sums into (docs/ARCHITECTURE.md, "Panels"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../physics/panel.h"
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

void ad_surface_params(const ad_world_def *d, ad_params *p)
{
    p->rough = ad_surfaces_nonspecular(d) != NULL;
    p->surfaces = p->rough;
    for (int k = 0; k < 7; k++) {
        const ad_surface *s = k == 0 ? &d->body_surface : &d->wall_surface[k - 1];
        p->surf_diffuse[k] = (float)ad_surface_diffuse_fraction(s);
        p->surf_sigma[k] = s->model == AD_SURFACE_SPECULAR ? 0.0f : (float)sqrt(s->temperature);
    }
    p->panel_inv_qf = AD_PANEL_QBITS / (d->stiffness * d->radius);
    p->panel_inv_qe = AD_PANEL_QBITS / (d->stiffness * d->radius * d->radius);
}

ad_status ad_panels_resize(ad_panels *pn, size_t count)
{
    if (count <= pn->count) return ad_ok();
    ad_panel_sums *s = realloc(pn->sums, count * sizeof *s);
    if (s) pn->sums = s;
    int64_t *f = realloc(pn->fix, count * AD_PANEL_WORDS * sizeof *f);
    if (f) pn->fix = f;
    if (!s || !f) return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory for the sums of %zu panels", count);
    memset(s + pn->count, 0, (count - pn->count) * sizeof *s);
    memset(f + pn->count * AD_PANEL_WORDS, 0, (count - pn->count) * AD_PANEL_WORDS * sizeof *f);
    pn->count = count;
    return ad_ok();
}

void ad_panels_free(ad_panels *pn)
{
    free(pn->sums);
    free(pn->fix);
    memset(pn, 0, sizeof *pn);
}

void ad_panels_fold(ad_world *w, double dt)
{
    ad_panels *pn = &w->panels;
    double qf = 1.0 / w->params.panel_inv_qf, qe = 1.0 / w->params.panel_inv_qe;
    for (size_t k = 0; k < pn->count; k++) {
        int64_t *f = pn->fix + k * AD_PANEL_WORDS;
        ad_panel_sums *s = &pn->sums[k];
        for (int j = 0; j < 3; j++) s->impulse[j] += (double)f[j] * qf * dt;
        s->energy += (double)f[AD_PANEL_E] * qe;
        s->contacts += (uint64_t)f[AD_PANEL_N];
        memset(f, 0, AD_PANEL_WORDS * sizeof *f);
    }
    w->stats.panel_time += dt;
}

/* Sampling starts where the panels are first asked for (or at creation, with a non-specular surface): a
 * world whose panels nobody reads keeps its fast paths. */
static void start_sampling(ad_world *w)
{
    if (w->panels.count) w->params.surfaces = 1;
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
    start_sampling((ad_world *)w);
    if (w->ops->panels_to_host) AD_TRY(w->ops->panels_to_host((ad_world *)w));
    memcpy(out, w->panels.sums + first, n * sizeof *out);
    return ad_ok();
}

ad_status ad_world_reset_panels(ad_world *w)
{
    if (!w) return ad_fail(AD_ERR_INVALID, "w", "world is NULL");
    start_sampling(w);
    if (w->panels.count) memset(w->panels.sums, 0, w->panels.count * sizeof *w->panels.sums);
    w->stats.panel_time = 0.0;
    if (w->ops->panels_reset) AD_TRY(w->ops->panels_reset(w));
    return ad_ok();
}
