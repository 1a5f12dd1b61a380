/* The CPU backend's 3D worlds (dimensions = 3): the arrays, spheres in and out, the snapshot a
 * checkpoint holds; the step is step3_cpu.c's. */
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "../core/free_each.h"
#include "../physics/integrate.h"
#include "cpu3_world.h"

/* Bytes a sphere takes: two states, ids and accelerations (double-buffered), pressure, virial, its
 * cell; RK4 three states more. */
static size_t per_sphere(const ad_world_def *d)
{
    size_t b = 2 * sizeof(ad_state3) + 2 * sizeof(uint32_t) + 2 * sizeof(ad_accel3) + 2 * sizeof(float) +
               sizeof(uint32_t);
    return d->integrator == AD_INTEGRATOR_RK4 ? b + 3 * sizeof(ad_state3) : b;
}

static size_t cpu3_bytes_needed(const ad_world_def *d, const ad_params *p)
{
    size_t cells = (size_t)p->nx * (size_t)p->ny * (size_t)p->nz;
    return d->capacity * per_sphere(d) + (2 * cells + 1) * sizeof(uint32_t) +
           cpu3_blocks(d->capacity) * sizeof(ad_step_sums) + sizeof(cpu3_world);
}

static void cpu3_destroy(ad_world *w)
{
    cpu3_world *c = w->impl;
    if (!c) return;
    AD_FREE_EACH(c->state, c->spare, c->id, c->id_spare, c->acc, c->acc_spare, c->pressure, c->virial, c->rk_in,
                 c->rk_out, c->rk_sum, c->cell_of, c->count, c->start, c->blocks);
    free(c);
    w->impl = NULL;
}

static ad_status cpu3_create(ad_world *w)
{
    const ad_world_def *d = &w->def;
    size_t need = cpu3_bytes_needed(d, &w->params);
    if (need > ad_host_bytes_available())
        return ad_fail(AD_ERR_NO_MEMORY, "capacity", "capacity: the world needs %zu bytes of host memory (%zu spheres "
                       "x %zu bytes) but less is available", need, d->capacity, per_sphere(d));
    cpu3_world *c = calloc(1, sizeof *c);
    if (!c) return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory");
    w->impl = c;
#ifdef _OPENMP
    c->threads = d->threads > 0 ? d->threads : omp_get_max_threads();
#else
    c->threads = 1;
#endif
    w->stats.threads = c->threads;
    w->stats.cell_counter_bits = 32;
    size_t cap = d->capacity;
    c->cap = cap;

    c->ncell = (size_t)w->params.nx * (size_t)w->params.ny * (size_t)w->params.nz;
    int rk4 = d->integrator == AD_INTEGRATOR_RK4;
    const struct {
        void **array;
        size_t count, size;
    } arrays[] = {
        {(void **)&c->state, cap, sizeof(ad_state3)},   {(void **)&c->spare, cap, sizeof(ad_state3)},
        {(void **)&c->id, cap, 4},                      {(void **)&c->id_spare, cap, 4},
        {(void **)&c->acc, cap, sizeof(ad_accel3)},     {(void **)&c->acc_spare, cap, sizeof(ad_accel3)},
        {(void **)&c->pressure, cap, 4},                {(void **)&c->virial, cap, 4},
        {(void **)&c->cell_of, cap, 4},                 {(void **)&c->count, c->ncell, 4},
        {(void **)&c->start, c->ncell + 1, 4},          {(void **)&c->blocks, cpu3_blocks(cap) + 1, sizeof(ad_step_sums)},
        {(void **)&c->rk_in, rk4 ? cap : 0, sizeof(ad_state3)}, {(void **)&c->rk_out, rk4 ? cap : 0, sizeof(ad_state3)},
        {(void **)&c->rk_sum, rk4 ? cap : 0, sizeof(ad_state3)},
    };
    int fail = 0;
    for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; k++)
        if (arrays[k].count) fail |= (*arrays[k].array = calloc(arrays[k].count, arrays[k].size)) == NULL;
    if (!fail) return ad_ok();
    cpu3_destroy(w);
    return ad_fail(AD_ERR_NO_MEMORY, "capacity", "capacity: allocating %zu bytes for the world failed", need);
}

static ad_status cpu3_add(ad_world *w, const ad_particle3 *p, size_t n)
{
    cpu3_world *c = w->impl;
    for (size_t i = 0; i < n; i++) {
        size_t s = c->n++;
        ad_state3 q = {p[i].x, p[i].y, p[i].z, 0.0f, p[i].vx, p[i].vy, p[i].vz, 0.0f};
        c->state[s] = ad_wrap_state3(&w->params, q);
        c->id[s] = (uint32_t)s; /* no sphere leaves a 3D world yet: ids are the slots of first placement */
        c->acc[s] = (ad_accel3){0.0f, 0.0f, 0.0f};
        c->pressure[s] = c->virial[s] = 0.0f;
    }
    c->primed = 0;
    c->dt_stale = 1;
    return ad_ok();
}

static ad_status cpu3_body_changed(ad_world *w)
{
    ((cpu3_world *)w->impl)->primed = 0;
    return ad_ok();
}

static ad_status cpu3_read(const ad_world *w, int flags, size_t max, const ad_particle_out *out, size_t *count)
{
    const cpu3_world *c = w->impl;
    return ad_read3_host(c->state, c->id, c->pressure, c->virial, c->acc, c->n, flags, max, out, count);
}

/* The snapshot points into the world's arrays (nothing copied). */
static ad_status cpu3_export(const ad_world *w, ad_snapshot *s)
{
    const cpu3_world *c = w->impl;
    memset(s, 0, sizeof *s);
    s->n = c->n;
    s->state3 = c->state;
    s->id = c->id;
    s->pressure = c->pressure;
    s->virial = c->virial;
    s->accel3 = c->acc;
    s->primed = c->primed;
    return ad_ok();
}

static ad_status cpu3_import(ad_world *w, const ad_snapshot *s)
{
    cpu3_world *c = w->impl;
    if (s->n > c->cap)
        return ad_fail(AD_ERR_CAPACITY, "capacity", "capacity: the snapshot holds %zu spheres, the world %zu", s->n,
                       c->cap);
    c->n = s->n;
    memcpy(c->state, s->state3, s->n * sizeof *c->state);
    memcpy(c->id, s->id, s->n * sizeof *c->id);
    memcpy(c->pressure, s->pressure, s->n * sizeof *c->pressure);
    memcpy(c->virial, s->virial, s->n * sizeof *c->virial);
    memcpy(c->acc, s->accel3, s->n * sizeof *c->acc);
    c->primed = s->primed;
    c->dt_stale = 0;
    return ad_ok();
}

const ad_backend_ops ad_cpu3_backend = {
    .name = "cpu",
    .create = cpu3_create,
    .destroy = cpu3_destroy,
    .add_particles3 = cpu3_add,
    .set_segments = cpu3_body_changed,
    .step = ad_cpu3_step,
    .read = cpu3_read,
    .export_state = cpu3_export,
    .import_state = cpu3_import,
    .bytes_needed = cpu3_bytes_needed,
};
