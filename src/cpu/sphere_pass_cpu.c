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

/* 1 where the screen may trust the slot's state (sphere_gather_cpu.h): finite, slower than 1e15 m/s, and
 * inside the box along each periodic axis. */
static inline int trusted(const ad_params *P, ad_state3 q)
{
    int ok = fabsf(q.x) <= FLT_MAX && fabsf(q.y) <= FLT_MAX && fabsf(q.z) <= FLT_MAX &&
             q.vx * q.vx + q.vy * q.vy + q.vz * q.vz < 1e30f;
    ok &= !P->periodic_x || (q.x >= P->x_min && q.x <= P->x_max);
    ok &= !P->periodic_y || (q.y >= P->y_min && q.y <= P->y_max);
    ok &= !P->periodic_z || (q.z >= P->z_min && q.z <= P->z_max);
    return ok;
}

/* The mirror of the sorted states' positions, NaN where a slot is not trusted. */
static void mirror(const ad_params *P, const ad_plain3 *g, ad_cpu_xyz *q)
{
    const ad_state3 *s = g->state;
#pragma omp parallel for num_threads(g->threads) schedule(static)
    for (size_t k = 0; k < g->n; k++) {
        ad_state3 v = s[k];
        int ok = trusted(P, v);
        q->x[k] = ok ? v.x : NAN;
        q->y[k] = v.y;
        q->z[k] = v.z;
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
