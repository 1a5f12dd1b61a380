/* 3D worlds on the plain pipeline (plain_dim.h, the same code as the 2D reference's steps 1 to 4):
 * backend = reference runs it on one thread; backend = cpu runs it over the world's threads (the CPU
 * backend has no 3D fast path yet: what its 2D worlds add for speed, the fused bin, 8-bit counters,
 * the prefilters and AVX2, is 2D only). Results are the same for any thread count, so the two agree
 * sphere by sphere (tests/test_world3.c).
 *
 * A step: Verlet's drift, steps 1-3 (bin, scan, stable scatter), step 4 (each sphere gathers its own
 * contacts, the stencil's 27 cells, the triangles and the walls, and writes its new state), step 5
 * (the periodic wraps: a 3D world's sides are solid or periodic), and the fold of the blocks' sums in
 * block order (the next dt). */
#include "plain.h"

#ifdef _OPENMP
#include <omp.h>
#endif

static size_t plain3_cells(const ad_params *p) { return (size_t)p->nx * (size_t)p->ny * (size_t)p->nz + 1; }

static size_t plain3_bytes_needed(const ad_world_def *d, const ad_params *p)
{
    return ad_plain_bytes3(d->capacity, plain3_cells(p), d->integrator) + sizeof(ad_plain3);
}

static void plain3_destroy(ad_world *w)
{
    ad_plain3 *r = w->impl;
    if (!r) return;
    ad_plain_free3(r);
    free(r);
    w->impl = NULL;
}

static ad_status plain3_create(ad_world *w, int threads)
{
    const ad_world_def *d = &w->def;
    size_t need = plain3_bytes_needed(d, &w->params);
    if (need > ad_host_bytes_available())
        return ad_fail(AD_ERR_NO_MEMORY, "capacity", "capacity: the world needs %zu bytes of host memory (%zu spheres "
                       "x %zu bytes) but less is available", need, d->capacity, ad_plain_per_particle3(d->integrator));
    ad_plain3 *r = calloc(1, sizeof *r);
    if (!r) return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory");
    w->impl = r;
    r->threads = w->stats.threads = threads;
    w->stats.cell_counter_bits = 32;
    if (ad_plain_alloc3(r, d->capacity, plain3_cells(&w->params), d->integrator)) return ad_ok();
    plain3_destroy(w);
    return ad_fail(AD_ERR_NO_MEMORY, "capacity", "capacity: allocating %zu bytes for the world failed", need);
}

static ad_status reference3_create(ad_world *w) { return plain3_create(w, 1); }

static ad_status cpu3_create(ad_world *w)
{
#ifdef _OPENMP
    return plain3_create(w, w->def.threads > 0 ? w->def.threads : omp_get_max_threads());
#else
    return plain3_create(w, 1);
#endif
}

static ad_status plain3_add(ad_world *w, const ad_particle3 *p, size_t n)
{
    ad_plain3 *r = w->impl;
    for (size_t i = 0; i < n; i++) {
        size_t s = r->n++;
        ad_state3 q = {p[i].x, p[i].y, p[i].z, 0.0f, p[i].vx, p[i].vy, p[i].vz, 0.0f};
        r->state[s] = ad_wrap_state3(&w->params, q);
        r->id[s] = (uint32_t)s; /* no sphere leaves a 3D world yet: ids are the slots of first placement */
        r->acc[s] = (ad_accel3){0.0f, 0.0f, 0.0f};
        r->pressure[s] = r->virial[s] = 0.0f;
    }
    r->primed = 0;
    r->dt_stale = 1;
    return ad_ok();
}

static ad_status plain3_body_changed(ad_world *w)
{
    ((ad_plain3 *)w->impl)->primed = 0;
    return ad_ok();
}

static ad_status one_step(ad_world *w, ad_plain3 *r, float dt)
{
    ad_plain_before_pass3(w, r, dt);
    double t0 = ad_plain_now();
    size_t nb = ad_plain_blocks(r->n);
    ad_plain_interact3(w, r, dt);
    ad_stats_fold(w, r->blocks, nb, dt, 0.0f);
    w->stats.phase_seconds[AD_PHASE_INTERACT] += ad_plain_now() - t0;
    uint64_t bad = 0;
    for (size_t b = 0; b < nb; b++) bad += r->blocks[b].nonfinite;
    if (bad)
        return ad_fail(AD_ERR_UNSTABLE, "dt", "step %llu: %llu spheres reached a non-finite position or velocity (the "
                       "step of %g s is too large for the stiffness, or spheres were placed overlapping)",
                       (unsigned long long)w->stats.step, (unsigned long long)bad, (double)dt);
    return ad_ok();
}

static ad_status plain3_step(ad_world *w, uint64_t nsteps)
{
    ad_plain3 *r = w->impl;
    if (r->dt_stale) { /* after spheres were added the next step's size comes from their speeds */
        w->stats.dt = ad_dt_next(&w->dt_rule, sqrt((double)ad_plain_vmax_sq3(r)));
        r->dt_stale = 0;
    }
    for (uint64_t k = 0; k < nsteps; k++) {
        if (w->interrupt && *w->interrupt) break;
        AD_TRY(one_step(w, r, (float)w->stats.dt));
    }
    return ad_ok();
}

static ad_status plain3_read(const ad_world *w, int flags, size_t max, const ad_particle_out *out, size_t *count)
{
    const ad_plain3 *r = w->impl;
    return ad_read3_host(r->state, r->id, r->pressure, r->virial, r->acc, r->n, flags, max, out, count);
}

/* The snapshot points into the world's arrays (nothing copied). */
static ad_status plain3_export(const ad_world *w, ad_snapshot *s)
{
    const ad_plain3 *r = w->impl;
    memset(s, 0, sizeof *s);
    s->n = r->n;
    s->state3 = r->state;
    s->id = r->id;
    s->pressure = r->pressure;
    s->virial = r->virial;
    s->accel3 = r->acc;
    s->primed = r->primed;
    return ad_ok();
}

static ad_status plain3_import(ad_world *w, const ad_snapshot *s)
{
    ad_plain3 *r = w->impl;
    if (s->n > r->cap)
        return ad_fail(AD_ERR_CAPACITY, "capacity", "capacity: the snapshot holds %zu spheres, the world %zu", s->n,
                       r->cap);
    r->n = s->n;
    memcpy(r->state, s->state3, s->n * sizeof *r->state);
    memcpy(r->id, s->id, s->n * sizeof *r->id);
    memcpy(r->pressure, s->pressure, s->n * sizeof *r->pressure);
    memcpy(r->virial, s->virial, s->n * sizeof *r->virial);
    memcpy(r->acc, s->accel3, s->n * sizeof *r->acc);
    r->primed = s->primed;
    r->dt_stale = 0;
    return ad_ok();
}

#define AD_PLAIN3_OPS                                                                                             \
    .destroy = plain3_destroy, .add_particles3 = plain3_add, .set_segments = plain3_body_changed,                  \
    .step = plain3_step, .read = plain3_read, .export_state = plain3_export, .import_state = plain3_import,        \
    .bytes_needed = plain3_bytes_needed

const ad_backend_ops ad_reference3_backend = {.name = "reference", .create = reference3_create, AD_PLAIN3_OPS};
const ad_backend_ops ad_cpu3_backend = {.name = "cpu", .create = cpu3_create, AD_PLAIN3_OPS};
