/* The CPU backend's 3D pass (sphere_pass_cpu.h): the positions' mirror written after the sort, then the
 * plain pipeline's step 4 with the CPU's sphere gather, the AVX2 one where the CPU has AVX2 and FMA. */
#include "sphere_pass_cpu.h"

#include <float.h>

size_t ad_cpu_sphere_pass_bytes(size_t capacity) { return 3 * (capacity + AD_CPU_XY_PAD) * sizeof(float); }

void ad_cpu_sphere_pass_free(ad_cpu_sphere_pass *f) { AD_FREE_EACH(f->xyz.x, f->xyz.y, f->xyz.z); }

int ad_cpu_sphere_pass_alloc(ad_cpu_sphere_pass *f, size_t capacity)
{
    size_t n = capacity + AD_CPU_XY_PAD;
    memset(f, 0, sizeof *f);
    f->xyz.x = calloc(n, sizeof(float)); /* the padding stays zero: the screen masks lanes past a row */
    f->xyz.y = calloc(n, sizeof(float));
    f->xyz.z = calloc(n, sizeof(float));
    if (!f->xyz.x || !f->xyz.y || !f->xyz.z) {
        ad_cpu_sphere_pass_free(f);
        return 0;
    }
#ifdef AD_CPU_X86
    f->avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && !getenv("AD_CPU_NO_AVX2");
#endif
    return 1;
}

/* The mirror of the sorted states' positions, NaN where the screen may not trust a slot
 * (sphere_gather_cpu.h): not finite, 1e15 m/s or faster, or outside the box along a periodic axis. */
static void mirror(const ad_params *P, const ad_plain3 *g, ad_cpu_xyz *q)
{
    const ad_state3 *s = g->state;
    /* the bounds a trusted centre lies within (NaN fails every comparison) */
    const float x0 = P->periodic_x ? P->x_min : -FLT_MAX, x1 = P->periodic_x ? P->x_max : FLT_MAX;
    const float y0 = P->periodic_y ? P->y_min : -FLT_MAX, y1 = P->periodic_y ? P->y_max : FLT_MAX;
    const float z0 = P->periodic_z ? P->z_min : -FLT_MAX, z1 = P->periodic_z ? P->z_max : FLT_MAX;
    float *X = q->x, *Y = q->y, *Z = q->z;
#pragma omp parallel for num_threads(g->threads) schedule(static)
    for (size_t k = 0; k < g->n; k++) {
        ad_state3 v = s[k];
        int ok = v.x >= x0 && v.x <= x1 && v.y >= y0 && v.y <= y1 && v.z >= z0 && v.z <= z1 &&
                 v.vx * v.vx + v.vy * v.vy + v.vz * v.vz < 1e30f;
        X[k] = ok ? v.x : NAN;
        Y[k] = v.y;
        Z[k] = v.z;
    }
    q->mirror = s;
}

void ad_cpu_gather3_portable(const void *ctx, const ad_world *w, const ad_plain3 *r, const ad_state3 *in, size_t s,
                             ad_state3 at, ad_state3 me, ad_accum3 *a)
{
    ad_cpu_gather_all3(&w->params, &w->tri.tree, r->start, in, ctx, (uint32_t)s, at, me, a);
}

void ad_cpu_sphere_pass_run(ad_world *w, ad_plain3 *g, ad_cpu_sphere_pass *f, float dt)
{
    ad_plain_gatherer3 gather = {ad_cpu_gather3_portable, NULL};
    (void)f;
#ifdef AD_CPU_X86
    if (f->avx2) {
        mirror(&w->params, g, &f->xyz);
        gather.gather = ad_cpu_gather3_avx2;
        gather.ctx = &f->xyz;
    }
#endif
    ad_plain_interact_by3(w, g, dt, &gather);
}
