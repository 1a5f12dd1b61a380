/* 3D worlds on the plain pipeline (plain_dim.h, the same code as the 2D reference's steps 1 to 4):
 * backend = reference runs it on one thread; backend = cpu runs it over the world's threads (the CPU
 * backend has no 3D fast path yet: what its 2D worlds add for speed, the fused bin, 8-bit counters,
 * the prefilters and AVX2, is 2D only). Results are the same for any thread count, so the two agree
 * sphere by sphere (tests/test_world3.c).
 *
 * A step: Verlet's drift, steps 1-3 (bin, scan, stable scatter), step 4 (each sphere gathers its own
 * contacts, the stencil's 27 cells, the triangles and the walls, and writes its new state), step 5
 * (the periodic wraps and the open sides), the fold of the blocks' sums in block order (the next dt),
 * and every `interval` steps step 6's field sample (plain_dim.h, the same as the 2D reference's). */
#include "plain.h"
#include "../physics/open3.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* A 3D world: the plain pipeline's arrays and the free stream's state (open3.h). */
typedef struct world3 {
    ad_plain3 g;
    ad_open_state open;
    ad_entry3 *entries; /* a step's entering spheres: the waiting ones, then the new ones */
    ad_state3 *spots;   /* where they would go */
    unsigned char *room;
    size_t spots_cap;
} world3;

static size_t plain3_cells(const ad_params *p) { return (size_t)p->nx * (size_t)p->ny * (size_t)p->nz + 1; }

static size_t plain3_bytes_needed(const ad_world_def *d, const ad_params *p)
{
    return ad_plain_bytes3(d->capacity, plain3_cells(p), d->integrator) + sizeof(world3) +
           AD_WAITING_MAX * sizeof(ad_entry3);
}

static void plain3_destroy(ad_world *w)
{
    world3 *r = w->impl;
    if (!r) return;
    ad_plain_free3(&r->g);
    ad_open_state_free(&r->open);
    AD_FREE_EACH(r->entries, r->spots, r->room);
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
    world3 *r = calloc(1, sizeof *r);
    if (!r) return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory");
    w->impl = r;
    r->g.threads = w->stats.threads = threads;
    w->stats.cell_counter_bits = 32;
    ad_status st = ad_plain_alloc3(&r->g, d->capacity, plain3_cells(&w->params), d->integrator)
                       ? ad_open_state_alloc(&r->open, 0, 3)
                       : ad_fail(AD_ERR_NO_MEMORY, "capacity", "capacity: allocating %zu bytes for the world failed",
                                 need);
    if (st.code) plain3_destroy(w);
    return st;
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

/* Appends sphere q at slot n with a new id. */
static void append(world3 *r, ad_state3 q)
{
    size_t s = r->g.n++;
    r->g.state[s] = q;
    r->g.id[s] = r->open.next_id++;
    r->g.acc[s] = (ad_accel3){0.0f, 0.0f, 0.0f};
    r->g.pressure[s] = r->g.virial[s] = 0.0f;
}

static ad_status plain3_add(ad_world *w, const ad_particle3 *p, size_t n)
{
    world3 *r = w->impl;
    if (r->g.n + n > r->g.cap) /* removed spheres still hold their slots until the next sort */
        return ad_fail(AD_ERR_CAPACITY, "capacity", "capacity: adding %zu spheres to %zu slots in use exceeds %zu", n,
                       r->g.n, r->g.cap);
    for (size_t i = 0; i < n; i++) {
        ad_state3 q = {p[i].x, p[i].y, p[i].z, 0.0f, p[i].vx, p[i].vy, p[i].vz, 0.0f};
        append(r, ad_wrap_state3(&w->params, q));
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

/* ------------------------------------------------- the free stream (step 5) -- */

static int grow_spots(world3 *r, size_t need)
{
    if (need <= r->spots_cap) return 1;
    ad_entry3 *e = realloc(r->entries, need * sizeof *e);
    if (e) r->entries = e;
    ad_state3 *s = realloc(r->spots, need * sizeof *s);
    if (s) r->spots = s;
    unsigned char *room = realloc(r->room, need);
    if (room) r->room = room;
    if (!e || !s || !room) return 0;
    r->spots_cap = need;
    return 1;
}

/* The step's entering spheres in their fixed order, the waiting ones first, and their spots; *ne of them. */
static ad_status list_entries(ad_world *w, world3 *r, float dt, size_t *ne)
{
    const ad_params *P = &w->params;
    uint64_t step = w->stats.step;
    uint32_t owe[4];
    size_t e = r->open.nwaiting + ad_open_owe(&r->open, P, dt, owe);
    *ne = e;
    if (e == 0) return ad_ok();
    if (ad_entries_overflow(e, r->g.n, r->g.cap, AD_WAITING_MAX))
        return ad_fail(AD_ERR_CAPACITY, "capacity", "capacity: at step %llu the free stream brings %zu spheres in one "
                       "step to a world of %zu spheres with a capacity of %zu (a stream far denser or faster than the "
                       "world was sized for)", (unsigned long long)step, e, r->g.n, r->g.cap);
    if (!grow_spots(r, e)) return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory for %zu entering spheres", e);
    memcpy(r->entries, r->open.waiting3, r->open.nwaiting * sizeof *r->entries);
    size_t k = r->open.nwaiting;
    for (int f = 0; f < 4; f++)
        for (uint32_t j = 0; j < owe[f]; j++) r->entries[k++] = ad_entry_draw3(P, f, step, j);
    for (size_t i = 0; i < e; i++) r->spots[i] = ad_entry_spot3(P, r->entries[i], dt, step, (uint32_t)i);
    return ad_ok();
}

/* After the pass: the free stream's entering spheres, placed in list order where they have room (no
 * sphere of the gas, through the step's grid, and no earlier spot within a diameter); the others wait.
 * *vmax2: the largest speed squared of those placed. */
static ad_status enter(ad_world *w, world3 *r, float dt, float *vmax2)
{
    const ad_params *P = &w->params;
    size_t ne;
    *vmax2 = 0.0f;
    AD_TRY(list_entries(w, r, dt, &ne));
    size_t placed = 0;
    for (size_t i = 0; i < ne; i++) {
        r->room[i] = !P->disc_contacts ||
                     (i < AD_ROOM_MAX && ad_room_for_plain3(P, r->g.start, r->g.state, r->spots, (uint32_t)i));
        placed += r->room[i];
    }
    if (r->g.n + placed > r->g.cap)
        return ad_fail(AD_ERR_CAPACITY, "capacity", "capacity: at step %llu the free stream brings the world to %zu "
                       "spheres, past its capacity of %zu", (unsigned long long)w->stats.step, r->g.n + placed,
                       r->g.cap);
    uint32_t waiting = 0;
    for (size_t i = 0; i < ne; i++) {
        if (r->room[i]) {
            ad_state3 q = r->spots[i];
            append(r, q);
            *vmax2 = fmaxf(*vmax2, q.vx * q.vx + q.vy * q.vy + q.vz * q.vz);
            w->stats.entered++;
        } else if (waiting < AD_WAITING_MAX) {
            r->open.waiting3[waiting++] = r->entries[i];
        } else {
            w->stats.entries_lost++;
        }
    }
    r->open.nwaiting = waiting;
    w->stats.entries_waiting = waiting;
    return ad_ok();
}

static ad_status one_step(ad_world *w, world3 *r, float dt)
{
    ad_plain_before_pass3(w, &r->g, dt);
    double t0 = ad_plain_now();
    size_t nb = ad_plain_blocks(r->g.n), removed = 0;
    ad_plain_interact3(w, &r->g, dt);
    for (size_t b = 0; b < nb; b++) removed += r->g.blocks[b].left;
    float v2_new = 0.0f;
    ad_status st = ad_world_open(w) ? enter(w, r, dt, &v2_new) : ad_ok();
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
    if (s->open.nwaiting > AD_WAITING_MAX || (s->open.nwaiting && !s->open.waiting3))
        return ad_fail(AD_ERR_FORMAT, "checkpoint", "the snapshot has %u entering spheres waiting (at most %d)",
                       s->open.nwaiting, AD_WAITING_MAX);
    ad_plain_import3(&r->g, s);
    memcpy(r->open.owed, s->open.owed, sizeof r->open.owed);
    r->open.next_id = s->open.next_id;
    r->open.nwaiting = s->open.nwaiting;
    if (s->open.nwaiting) memcpy(r->open.waiting3, s->open.waiting3, s->open.nwaiting * sizeof(ad_entry3));
    return ad_ok();
}

#define AD_PLAIN3_OPS                                                                                             \
    .destroy = plain3_destroy, .add_particles3 = plain3_add, .set_segments = plain3_body_changed,                  \
    .step = plain3_step, .read = plain3_read, .export_state = plain3_export, .import_state = plain3_import,        \
    .bytes_needed = plain3_bytes_needed

const ad_backend_ops ad_reference3_backend = {.name = "reference", .create = reference3_create, AD_PLAIN3_OPS};
const ad_backend_ops ad_cpu3_backend = {.name = "cpu", .create = cpu3_create, AD_PLAIN3_OPS};
