/* 3D worlds on the plain pipeline (plain_dim.h, the same code as the 2D reference's steps 1 to 4):
 * backend = reference runs it on one thread; backend = cpu runs it over the world's threads with the CPU's
 * step 4 (src/cpu/sphere_pass_cpu.h: the sphere gather, which hands the law only the candidates that
 * touch, with an AVX2 screen; the plain gather's sums bit for bit). What the 2D CPU backend adds besides,
 * the fused bin, 8-bit counters, the parallel reorder and the contact-free clock, is 2D only. Results are
 * the same for any thread count, so the two agree sphere by sphere (tests/test_world3.c,
 * tests/test_sphere_pass.c).
 *
 * A step: Verlet's drift, steps 1-3 (bin, scan, stable scatter), step 4 (each sphere gathers its own
 * contacts, the stencil's 27 cells, the triangles and the walls, and writes its new state), step 5
 * (the periodic wraps, removal past open faces, the reservoir's removals and thermostat; then the free
 * stream's entering spheres and the reservoir's additions: plain_open_dim.h, before the pass its plan),
 * the fold of the blocks' sums in block order (the next dt), and every `interval` steps step 6's field
 * sample (plain_dim.h, the same as the 2D reference's). */
#include "plain.h"
#include "../cpu/sphere_pass_cpu.h"
#include "../physics/open3.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* A 3D world: the plain pipeline's arrays and the free stream's state (open3.h). */
typedef struct world3 {
    ad_plain3 g;
    ad_open_state open;
    ad_plain_spots3 sp; /* step 5's new spheres and the reservoir's additions (plain_open_dim.h) */
    int fast;           /* backend = cpu: step 4 is the CPU's sphere pass (src/cpu/sphere_pass_cpu.h) */
    ad_cpu_sphere_pass pass;
} world3;

static size_t plain3_cells(const ad_params *p) { return (size_t)p->nx * (size_t)p->ny * (size_t)p->nz + 1; }

static size_t plain3_bytes_needed(const ad_world_def *d, const ad_params *p)
{
    return ad_plain_bytes3(d->capacity, plain3_cells(p), d->integrator) + sizeof(world3) +
           AD_WAITING_MAX * sizeof(ad_entry3) +
           (d->backend == AD_BACKEND_REFERENCE ? 0 : ad_cpu_sphere_pass_bytes(d->capacity));
}

static void plain3_destroy(ad_world *w)
{
    world3 *r = w->impl;
    if (!r) return;
    ad_plain_free3(&r->g);
    ad_open_state_free(&r->open);
    ad_plain_spots_free3(&r->sp);
    if (r->fast) ad_cpu_sphere_pass_free(&r->pass);
    free(r);
    w->impl = NULL;
}

static ad_status plain3_create(ad_world *w, int threads, int fast)
{
    const ad_world_def *d = &w->def;
    size_t need = plain3_bytes_needed(d, &w->params);
    if (need > ad_host_bytes_available())
        return ad_fail(AD_ERR_NO_MEMORY, "capacity", "capacity: the world needs %zu bytes of host memory (%zu spheres "
                       "x %zu bytes) but less is available", need, d->capacity, ad_plain_per_particle3(d->integrator));
    world3 *r = calloc(1, sizeof *r);
    if (!r) return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory");
    w->impl = r;
    r->g.threads = w->stats.threads = threads;
    w->stats.cell_counter_bits = 32;
    r->fast = fast;
    ad_status st = ad_plain_alloc3(&r->g, d->capacity, plain3_cells(&w->params), d->integrator) &&
                           ad_plain_spots_alloc3(&r->sp, w->params.res_boxes) &&
                           (!fast || ad_cpu_sphere_pass_alloc(&r->pass, d->capacity))
                       ? ad_open_state_alloc(&r->open, (uint32_t)w->params.res_boxes, 3)
                       : ad_fail(AD_ERR_NO_MEMORY, "capacity", "capacity: allocating %zu bytes for the world failed",
                                 need);
    if (st.code) plain3_destroy(w);
    return st;
}

static ad_status reference3_create(ad_world *w) { return plain3_create(w, 1, 0); }

static ad_status cpu3_create(ad_world *w)
{
#ifdef _OPENMP
    return plain3_create(w, w->def.threads > 0 ? w->def.threads : omp_get_max_threads(), 1);
#else
    return plain3_create(w, 1, 1);
#endif
}

static ad_status plain3_add(ad_world *w, const ad_particle3 *p, size_t n)
{
    world3 *r = w->impl;
    if (r->g.n + n > r->g.cap) /* removed spheres still hold their slots until the next sort */
        return ad_fail(AD_ERR_CAPACITY, "capacity", "capacity: adding %zu spheres to %zu slots in use exceeds %zu", n,
                       r->g.n, r->g.cap);
    for (size_t i = 0; i < n; i++) {
        ad_state3 q = {p[i].x, p[i].y, p[i].z, 0.0f, p[i].vx, p[i].vy, p[i].vz, 0.0f};
        ad_plain_append3(&r->g, &r->open, ad_wrap_state3(&w->params, q));
    }
    r->g.primed = 0;
    r->g.dt_stale = 1;
    return ad_ok();
}

static ad_status plain3_body_changed(ad_world *w)
{
    ((world3 *)w->impl)->g.primed = 0;
    return ad_ok();
}

static ad_status one_step(ad_world *w, world3 *r, float dt)
{
    ad_plain_before_pass3(w, &r->g, dt);
    if (w->params.res_boxes) ad_plain_reservoir_plan3(w, &r->g, &r->open, &r->sp, dt);
    double t0 = ad_plain_now();
    size_t nb = ad_plain_blocks(r->g.n), removed = 0;
    if (r->fast) ad_cpu_sphere_pass_run(w, &r->g, &r->pass, dt);
    else ad_plain_interact3(w, &r->g, dt);
    if (w->params.res_boxes) memset(r->g.doomed, 0, r->g.n);
    for (size_t b = 0; b < nb; b++) removed += r->g.blocks[b].left + r->g.blocks[b].res_removed;
    float v2_new = 0.0f;
    ad_status st = ad_world_open(w) ? ad_plain_enter3(w, &r->g, &r->open, &r->sp, dt, &v2_new) : ad_ok();
    ad_stats_fold(w, r->g.blocks, nb, dt, v2_new);
    if (ad_world_open(w)) w->count = w->stats.count = r->g.n - removed;
    w->stats.phase_seconds[AD_PHASE_INTERACT] += ad_plain_now() - t0;
    if (w->fields.enabled && w->stats.step % w->fields.def.interval == 0) ad_plain_sample_fields3(w, &r->g);
    AD_TRY(ad_plain_finite3(w, &r->g, nb, dt));
    return st;
}

static ad_status plain3_step(ad_world *w, uint64_t nsteps)
{
    world3 *r = w->impl;
    ad_plain_refresh_dt3(w, &r->g);
    for (uint64_t k = 0; k < nsteps; k++) {
        if (w->interrupt && *w->interrupt) break;
        AD_TRY(one_step(w, r, (float)w->stats.dt));
    }
    return ad_ok();
}

static ad_status plain3_read(const ad_world *w, int flags, size_t max, const ad_particle_out *out, size_t *count)
{
    const world3 *r = w->impl;
    return ad_read3_host(r->g.state, r->g.id, r->g.pressure, r->g.virial, r->g.acc, r->g.n, flags, max, out, count);
}

/* The live spheres copied out (plain_dim.h); the free stream's state is the world's own (not owned). */
static ad_status plain3_export(const ad_world *w, ad_snapshot *s)
{
    const world3 *r = w->impl;
    AD_TRY(ad_plain_export3(w, &r->g, s));
    s->open = r->open;
    return ad_ok();
}

static ad_status plain3_import(ad_world *w, const ad_snapshot *s)
{
    world3 *r = w->impl;
    if (s->n > r->g.cap)
        return ad_fail(AD_ERR_CAPACITY, "capacity", "capacity: the snapshot holds %zu spheres, the world %zu", s->n,
                       r->g.cap);
    AD_TRY(ad_plain_import_open3(&r->open, s));
    ad_plain_import3(&r->g, s);
    return ad_ok();
}

#define AD_PLAIN3_OPS                                                                                             \
    .destroy = plain3_destroy, .add_particles3 = plain3_add, .set_segments = plain3_body_changed,                  \
    .step = plain3_step, .read = plain3_read, .export_state = plain3_export, .import_state = plain3_import,        \
    .bytes_needed = plain3_bytes_needed

const ad_backend_ops ad_reference3_backend = {.name = "reference", .create = reference3_create, AD_PLAIN3_OPS};
const ad_backend_ops ad_cpu3_backend = {.name = "cpu", .create = cpu3_create, AD_PLAIN3_OPS};
