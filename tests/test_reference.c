/* The optimised backends against the plain reference (backend = reference), disc by disc.
 *
 * The reference (src/reference/reference_backend.c) is the grid pipeline of DESIGN.md written
 * plainly on one thread. Five worlds (a periodic gas, a closed box with walls and gravity, the
 * default scene, the GPU tests' tunnel with a square and a plate, an open tunnel whose reservoir
 * adds and removes discs), each with the four integrators, start in the same state in two worlds:
 * freshly made, and warmed up 400 steps on the CPU and checkpointed into both (a gas with many
 * contacts, the body in the stream). Both are stepped by the same calls and compared after each,
 * every disc by id: position, velocity, pressure, virial, acceleration; and the statistics
 * (energies, momentum, virial, body force and impulses, wall impulses, dt, time, counts of
 * entering and removed discs, the grid's diagnostics); with fields on, every field.
 *
 * Tolerances, and why.
 *  - The optimised CPU backend (2 threads, its AVX2 pass where the CPU has it) against the
 *    reference: EQUAL, every value. Both sum a disc's contacts in the same order (cell order, the
 *    rows of its 3x3 cells, slots ascending: the CPU's SIMD lanes are added in candidate order),
 *    sum blocks of AD_BLOCK slots in slot order (kinetic energy and momentum in eight partial sums by
 *    slot, as the CPU's AVX2 tail adds them), and fold the blocks in block order; the build does not
 *    contract a*b+c. So they agree bit for bit; the only difference allowed is the sign of a zero
 *    (the CPU's lanes add 0 - f n where the plain gather subtracts f n, gather_cpu.h), counted apart.
 *    Bit equality after 100 steps of a chaotic gas also shows that nothing diverges.
 *  - The CUDA backend (deterministic mode, where a GPU is found) against the reference: the GPU takes
 *    distances from the hardware's reciprocal square root (within 2 ulp) and sums a block's discs in
 *    float warps (src/physics/step_sums.h), so the values differ by rounding, which a dense gas
 *    amplifies step by step: |got - ref| <= abs + rel |ref| with 1e-5 + 1e-5 after one step and
 *    1e-4 + 1e-4 after ten (states; pressure, virial and acceleration 1e-2 + 1e-3; measured on an
 *    H200: at most 0.18 of the tolerance after one step, 0.66 after ten), the disc
 *    counts equal, time to 1e-6 and kinetic energy to 1e-4 relative (as tests/test_gpu.c does
 *    between the CPU and the GPU). Where no GPU is found that part is skipped; the CPU part always runs.
 *
 * Also: a checkpoint of the reference resumes bit-identically on the reference and on the CPU, and
 * the reference refuses broad_phase = bvh, naming the key. */
#include <unistd.h>

#include "core/scene.h"
#include "core/status.h"
#include "test_gpu_tunnel.h"
#include "test_util.h"

/* What a world holds, read by id. */
typedef struct world_copy {
    size_t n;
    ad_particle *p;
    uint32_t *id;
    float *pr, *vi, *acc;
    ad_stats st;
} world_copy;

static world_copy take(const ad_world *w)
{
    world_copy c;
    memset(&c, 0, sizeof c);
    c.st = tu_stats(w);
    size_t n = c.st.count, got = 0, m = n ? n : 1;
    c.p = calloc(m, sizeof *c.p);
    c.id = calloc(m, sizeof *c.id);
    c.pr = calloc(m, sizeof *c.pr);
    c.vi = calloc(m, sizeof *c.vi);
    c.acc = calloc(2 * m, sizeof *c.acc);
    if (!c.p || !c.id || !c.pr || !c.vi || !c.acc) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    ad_particle_out out = {c.p, c.id, c.pr, c.vi, c.acc, NULL};
    REQUIRE_OK(ad_world_read(w, AD_READ_BY_ID, n, &out, &got));
    c.n = got;
    return c;
}

static void drop(world_copy *c)
{
    free(c->p);
    free(c->id);
    free(c->pr);
    free(c->vi);
    free(c->acc);
}

/* Agreement of many values: bit-equal, equal but for the sign of a zero, outside the tolerance, the
 * largest relative difference and the largest difference as a fraction of the tolerance. */
typedef struct tally {
    size_t values, bits, zero_sign, outside;
    double worst, worst_tol;
} tally;

static void cmp(tally *t, double ref, double got, double abs_tol, double rel_tol)
{
    t->values++;
    if (memcmp(&ref, &got, sizeof ref) == 0) {
        t->bits++;
        return;
    }
    if (ref == got) {
        t->zero_sign++;
        return;
    }
    double d = fabs(ref - got), scale = fmax(fabs(ref), fabs(got));
    double tol = abs_tol + rel_tol * fabs(ref);
    t->worst = fmax(t->worst, scale > 0.0 ? d / scale : d);
    if (tol > 0.0) t->worst_tol = fmax(t->worst_tol, d / tol);
    if (!(d <= tol)) t->outside++;
}

/* The discs of two worlds by id: states within (abs, rel), the per-disc observables within the looser
 * (oabs, orel). Returns the discs in contact (pressure > 0) in the reference. */
static size_t cmp_discs(tally *t, const world_copy *r, const world_copy *g, double abs, double rel, double oabs,
                        double orel)
{
    size_t contact = 0, n = r->n < g->n ? r->n : g->n;
    for (size_t i = 0; i < n; i++) {
        t->outside += r->id[i] != g->id[i];
        const float *u = &r->p[i].x, *v = &g->p[i].x;
        for (int k = 0; k < 4; k++) cmp(t, u[k], v[k], abs, rel);
        cmp(t, r->pr[i], g->pr[i], oabs, orel);
        cmp(t, r->vi[i], g->vi[i], oabs, orel);
        cmp(t, r->acc[2 * i], g->acc[2 * i], oabs, orel);
        cmp(t, r->acc[2 * i + 1], g->acc[2 * i + 1], oabs, orel);
        contact += r->pr[i] > 0.0f;
    }
    return contact;
}

/* Every statistic a step computes, exactly (the CPU against the reference). */
static void cmp_stats_exact(tally *t, const ad_stats *a, const ad_stats *b)
{
    const double da[] = {a->time, a->dt, a->kinetic_energy, a->potential_energy, a->momentum_x, a->momentum_y,
                         a->contact_virial, a->max_overlap, a->body_force_x, a->body_force_y, a->body_impulse_x,
                         a->body_impulse_y, a->wall_impulse[0], a->wall_impulse[1], a->wall_impulse[2],
                         a->wall_impulse[3], a->kinetic_energy_integral, a->contact_virial_integral};
    const double db[] = {b->time, b->dt, b->kinetic_energy, b->potential_energy, b->momentum_x, b->momentum_y,
                         b->contact_virial, b->max_overlap, b->body_force_x, b->body_force_y, b->body_impulse_x,
                         b->body_impulse_y, b->wall_impulse[0], b->wall_impulse[1], b->wall_impulse[2],
                         b->wall_impulse[3], b->kinetic_energy_integral, b->contact_virial_integral};
    for (size_t k = 0; k < sizeof da / sizeof da[0]; k++) cmp(t, da[k], db[k], 0.0, 0.0);
    const uint64_t ua[] = {a->step, a->count, a->entered, a->left, a->reservoir_added, a->reservoir_removed,
                           a->entries_lost, a->entries_waiting, a->max_cell_occupancy, a->cell_overflow,
                           a->outside_grid, a->skin_violations};
    const uint64_t ub[] = {b->step, b->count, b->entered, b->left, b->reservoir_added, b->reservoir_removed,
                           b->entries_lost, b->entries_waiting, b->max_cell_occupancy, b->cell_overflow,
                           b->outside_grid, b->skin_violations};
    for (size_t k = 0; k < sizeof ua / sizeof ua[0]; k++) {
        t->values++;
        if (ua[k] == ub[k]) t->bits++;
        else t->outside++;
    }
}

/* Every field of two worlds, exactly. */
static void cmp_fields(tally *t, const ad_world *a, const ad_world *b, const ad_field_def *fd)
{
    size_t cells = (size_t)fd->nx * (size_t)fd->ny;
    float *fa = calloc(cells, sizeof *fa), *fb = calloc(cells, sizeof *fb);
    for (int k = 0; k < AD_FIELD_COUNT_2D && fa && fb; k++) {
        uint64_t sa = 0, sb = 0;
        REQUIRE_OK(ad_world_read_field(a, (ad_field)k, fa, &sa));
        REQUIRE_OK(ad_world_read_field(b, (ad_field)k, fb, &sb));
        t->outside += sa != sb;
        for (size_t c = 0; c < cells; c++) cmp(t, fa[c], fb[c], 0.0, 0.0);
    }
    free(fa);
    free(fb);
}

/* ------------------------------------------------------------------ the cases -- */

typedef enum { PERIODIC_GAS, CLOSED_BOX, DEFAULT_SCENE, GPU_TUNNEL, RESERVOIR, NCASES } case_kind;
static const char *CASE_NAME[] = {"periodic gas", "closed box, gravity", "default scene", "tunnel, square + plate",
                                  "reservoir at work"};

static ad_status box(ad_backend b, ad_integrator integ, int periodic, ad_world **w)
{
    ad_world_def d = ad_default_world_def();
    d.backend = b;
    d.threads = 2;
    d.integrator = integ;
    d.x_max = periodic ? 100.0 : 40.0;
    d.y_max = periodic ? 60.0 : 40.0;
    d.restitution = 0.9;
    if (periodic) {
        d.boundary_x = d.boundary_y = AD_BOUNDARY_PERIODIC;
    } else { /* and a mass and radius other than the defaults' 1 and 0.5 */
        d.gravity_y = -9.81;
        d.wall_restitution = 0.7;
        d.mass = 0.7;
        d.radius = 0.4;
    }
    AD_TRY(ad_world_create(&d, w));
    /* dense and warm: many contacts from the first steps; the drift crosses the periodic sides */
    ad_fill_def f = {0.0, 0.0, d.x_max, d.y_max, periodic ? 0.55 : 0.5, periodic ? 2.0 : 0.0, -0.5, 1.0, 20260117, 0, 0, 0};
    return ad_world_fill(*w, &f, NULL);
}

static ad_status scene(ad_backend b, ad_integrator integ, ad_world **w)
{
    ad_scene s;
    ad_scene_defaults(&s);
    AD_TRY(ad_scene_load(&s, AD_SOURCE_DIR "/scenes/default.ini"));
    s.backend = b;
    s.threads = 2;
    s.deterministic = 1;
    s.integrator = integ;
    AD_TRY(ad_scene_finish(&s));
    AD_TRY(ad_scene_build(&s, w));
    ad_field_def fd = {24, 12, 0.0, 0.0, s.width, s.height, 5, 0, 0.0, 0.0};
    return ad_world_set_fields(*w, &fd);
}

/* An open tunnel, periodic across, whose reservoir works from the first steps: its controller is fast
 * (reservoir_rate) and the gas starts in the downstream half only, denser than the stream, so that the
 * boxes upstream add discs and those downstream remove them. */
static ad_status reservoir(ad_backend b, ad_integrator integ, ad_world **w)
{
    ad_world_def d = ad_default_world_def();
    d.backend = b;
    d.threads = 2;
    d.integrator = integ;
    d.x_max = 60.0;
    d.y_max = 30.0;
    d.boundary_x = AD_BOUNDARY_OPEN;
    d.boundary_y = AD_BOUNDARY_PERIODIC;
    d.stream_vx = 8.0;
    d.stream_density = 0.3 / (TU_PI * 0.25);
    d.reservoir = 4.0;
    d.reservoir_rate = 30.0;
    d.restitution = 0.9;
    AD_TRY(ad_world_create(&d, w));
    ad_fill_def f = {30.0, 0.0, 60.0, 30.0, 0.5, 8.0, 0.0, 1.0, 5, 0, 0, 0};
    return ad_world_fill(*w, &f, NULL);
}

static ad_status make(case_kind k, ad_backend b, ad_integrator integ, ad_world **w)
{
    *w = NULL;
    if (k == PERIODIC_GAS || k == CLOSED_BOX) return box(b, integ, k == PERIODIC_GAS, w);
    if (k == DEFAULT_SCENE) return scene(b, integ, w);
    if (k == RESERVOIR) return reservoir(b, integ, w);
    ad_world_def d = gt_def(b, integ);
    AD_TRY(ad_world_create(&d, w));
    gt_fill(*w);
    return ad_ok();
}

static const ad_integrator INTEG[] = {AD_INTEGRATOR_SYMPLECTIC_EULER, AD_INTEGRATOR_EULER, AD_INTEGRATOR_VERLET,
                                      AD_INTEGRATOR_RK4};

/* ------------------------------------------------------------- the comparisons -- */

/* A temporary file name for a checkpoint (removed by the caller). */
static void temp_path(char *path)
{
    strcpy(path, "/tmp/aerodem_test_reference_XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0) {
        fprintf(stderr, "mkstemp %s failed\n", path);
        exit(1);
    }
    close(fd);
}

/* Steps the reference r and the CPU world c by the same calls and compares them after each, every
 * value equal. */
static void cpu_steps(case_kind k, ad_integrator integ, const char *start, ad_world *r, ad_world *c,
                      const uint64_t *calls, int ncalls)
{
    ENSURE(tu_stats(r).backend == AD_BACKEND_REFERENCE && tu_stats(c).backend == AD_BACKEND_CPU);
    uint64_t done = 0;
    for (int i = 0; i < ncalls; i++) {
        if (calls[i]) {
            REQUIRE_OK(ad_world_step(r, calls[i]));
            REQUIRE_OK(ad_world_step(c, calls[i]));
        }
        done += calls[i];
        world_copy a = take(r), b = take(c);
        tally d = {0}, s = {0};
        ENSURE_MSG(a.n == b.n, "%s, %s: %zu discs on the reference, %zu on the CPU", CASE_NAME[k],
                   ad_integrator_name(integ), a.n, b.n);
        size_t contact = cmp_discs(&d, &a, &b, 0.0, 0.0, 0.0, 0.0);
        cmp_stats_exact(&s, &a.st, &b.st);
        if (k == DEFAULT_SCENE) {
            ad_field_def fd = {24, 12, 0.0, 0.0, 120.0, 60.0, 5, 0, 0.0, 0.0};
            cmp_fields(&s, r, c, &fd);
        }
        printf("  %-23s %-16s %-6s +%3llu: %4zu discs, %4zu in contact, body force %7.3g N: %6zu values %s "
               "(%zu zero signs), %4zu statistics %s\n", CASE_NAME[k], ad_integrator_name(integ), start,
               (unsigned long long)done, a.n, contact, hypot(a.st.body_force_x, a.st.body_force_y), d.values,
               d.outside ? "DIFFER" : "equal", d.zero_sign, s.values, s.outside ? "DIFFER" : "equal");
        ENSURE_MSG(d.outside == 0, "%s, %s, %s + %llu steps: %zu of %zu per-disc values differ from the reference "
                   "(largest relative difference %.3g)", CASE_NAME[k], ad_integrator_name(integ), start,
                   (unsigned long long)done, d.outside, d.values, d.worst);
        ENSURE_MSG(s.outside == 0, "%s, %s, %s + %llu steps: %zu of %zu statistics and field values differ from the "
                   "reference (largest relative difference %.3g)", CASE_NAME[k], ad_integrator_name(integ), start,
                   (unsigned long long)done, s.outside, s.values, s.worst);
        if (a.st.entered + a.st.left + a.st.reservoir_added + a.st.reservoir_removed)
            printf("  %-23s %-16s %-6s +%3llu: since creation %llu entered, %llu left, the reservoir added %llu "
                   "and removed %llu; %u waiting\n", "", "", "", (unsigned long long)done,
                   (unsigned long long)a.st.entered, (unsigned long long)a.st.left,
                   (unsigned long long)a.st.reservoir_added, (unsigned long long)a.st.reservoir_removed,
                   a.st.entries_waiting);
        drop(&a);
        drop(&b);
    }
}

/* The CPU against the reference: from the fresh world (0, 1 and 10 steps: the first steps after adding
 * discs, Verlet's first forces), then from the same world warmed up to WARM steps on the CPU, saved
 * and loaded into both, a gas with many contacts and the body in the stream (1, 10, 100 steps). */
#define WARM 400
static void cpu_case(case_kind k, ad_integrator integ)
{
    ad_world *r, *c;
    REQUIRE_OK(make(k, AD_BACKEND_REFERENCE, integ, &r));
    REQUIRE_OK(make(k, AD_BACKEND_CPU, integ, &c));
    static const uint64_t FRESH[] = {0, 1, 9}, WARMED[] = {1, 9, 90};
    cpu_steps(k, integ, "fresh", r, c, FRESH, 3);
    ad_world_destroy(r);
    REQUIRE_OK(ad_world_step(c, WARM - 10));
    char path[64];
    temp_path(path);
    REQUIRE_OK(ad_world_save(c, path, NULL, 0));
    ad_world_destroy(c);
    REQUIRE_OK(ad_world_load(path, AD_BACKEND_REFERENCE, -1, &r, NULL, NULL));
    REQUIRE_OK(ad_world_load(path, AD_BACKEND_CPU, 2, &c, NULL, NULL));
    unlink(path);
    cpu_steps(k, integ, "warmed", r, c, WARMED, 3);
    ad_world_destroy(r);
    ad_world_destroy(c);
}

/* Steps the reference r and the GPU world g by 1 and 9 steps and compares them after each, within rounding. */
static void cuda_steps(case_kind k, ad_integrator integ, const char *start, ad_world *r, ad_world *g)
{
    static const uint64_t CALLS[] = {1, 9};
    static const double TOL[] = {1e-5, 1e-4};
    uint64_t done = 0;
    for (int i = 0; i < 2; i++) {
        REQUIRE_OK(ad_world_step(r, CALLS[i]));
        REQUIRE_OK(ad_world_step(g, CALLS[i]));
        done += CALLS[i];
        world_copy a = take(r), b = take(g);
        tally d = {0};
        ENSURE_MSG(a.n == b.n, "%s, %s, %s: %zu discs on the reference, %zu on the GPU", CASE_NAME[k],
                   ad_integrator_name(integ), start, a.n, b.n);
        size_t contact = cmp_discs(&d, &a, &b, TOL[i], TOL[i], 1e-2, 1e-3);
        printf("  %-23s %-16s %-6s +%3llu: %4zu discs, %4zu in contact: %6zu values, %zu outside abs %.0e + rel "
               "%.0e, worst %.2g of the tolerance\n", CASE_NAME[k], ad_integrator_name(integ), start,
               (unsigned long long)done, a.n, contact, d.values, d.outside, TOL[i], TOL[i], d.worst_tol);
        ENSURE_MSG(d.outside == 0, "%s, %s, %s + %llu steps: %zu values outside the tolerance", CASE_NAME[k],
                   ad_integrator_name(integ), start, (unsigned long long)done, d.outside);
        ENSURE_REL(b.st.time, a.st.time, 1e-6);
        ENSURE_REL(b.st.kinetic_energy, a.st.kinetic_energy, 1e-4);
        ENSURE(a.st.step == b.st.step);
        drop(&a);
        drop(&b);
    }
}

/* The GPU against the reference within rounding, from the fresh world and from the warmed one (as
 * cpu_case); 0 when there is no GPU. */
static int cuda_case(case_kind k, ad_integrator integ)
{
    ad_world *r, *g;
    ad_status st = make(k, AD_BACKEND_CUDA, integ, &g);
    if (st.code == AD_ERR_BACKEND) {
        printf("  cuda: skipped (%s)\n", st.message);
        ad_world_destroy(g);
        return 0;
    }
    REQUIRE_OK(st);
    REQUIRE_OK(make(k, AD_BACKEND_REFERENCE, integ, &r));
    cuda_steps(k, integ, "fresh", r, g);
    ad_world_destroy(r);
    ad_world_destroy(g);
    ad_world *c;
    REQUIRE_OK(make(k, AD_BACKEND_CPU, integ, &c));
    REQUIRE_OK(ad_world_step(c, WARM));
    char path[64];
    temp_path(path);
    REQUIRE_OK(ad_world_save(c, path, NULL, 0));
    ad_world_destroy(c);
    REQUIRE_OK(ad_world_load(path, AD_BACKEND_REFERENCE, -1, &r, NULL, NULL));
    REQUIRE_OK(ad_world_load(path, AD_BACKEND_CUDA, -1, &g, NULL, NULL));
    unlink(path);
    cuda_steps(k, integ, "warmed", r, g);
    ad_world_destroy(r);
    ad_world_destroy(g);
    return 1;
}

/* A checkpoint of the reference after 50 steps, resumed on the reference and on the CPU: both continue as
 * the world that was not saved, bit for bit. */
static void checkpoint(ad_integrator integ)
{
    char path[64];
    temp_path(path);
    ad_world *a, *b, *c;
    REQUIRE_OK(make(DEFAULT_SCENE, AD_BACKEND_REFERENCE, integ, &a));
    REQUIRE_OK(ad_world_step(a, 50));
    REQUIRE_OK(ad_world_save(a, path, NULL, 0));
    REQUIRE_OK(ad_world_load(path, AD_BACKEND_REFERENCE, -1, &b, NULL, NULL));
    REQUIRE_OK(ad_world_load(path, AD_BACKEND_CPU, 2, &c, NULL, NULL));
    ENSURE(tu_stats(b).backend == AD_BACKEND_REFERENCE);
    for (int k = 0; k < 3; k++) REQUIRE_OK(ad_world_step(k == 0 ? a : k == 1 ? b : c, 50));
    world_copy x = take(a), y = take(b), z = take(c);
    tally t = {0};
    ENSURE(x.n == y.n && x.n == z.n);
    cmp_discs(&t, &x, &y, 0.0, 0.0, 0.0, 0.0);
    cmp_discs(&t, &x, &z, 0.0, 0.0, 0.0, 0.0);
    cmp_stats_exact(&t, &x.st, &y.st);
    cmp_stats_exact(&t, &x.st, &z.st);
    printf("  checkpoint %-16s saved at step 50, resumed on the reference and the CPU to 100: %zu values %s\n",
           ad_integrator_name(integ), t.values, t.outside ? "DIFFER" : "equal");
    ENSURE_MSG(t.outside == 0, "%zu values differ after the resume", t.outside);
    drop(&x);
    drop(&y);
    drop(&z);
    ad_world_destroy(a);
    ad_world_destroy(b);
    ad_world_destroy(c);
    unlink(path);
}

int main(void)
{
    printf("the CPU backend against the reference (every value equal):\n");
    for (int k = 0; k < NCASES; k++)
        for (int i = 0; i < 4; i++) cpu_case((case_kind)k, INTEG[i]);
    checkpoint(AD_INTEGRATOR_SYMPLECTIC_EULER);
    checkpoint(AD_INTEGRATOR_VERLET);

    ad_world_def d = ad_default_world_def();
    d.backend = AD_BACKEND_REFERENCE;
    d.broad_phase = AD_BROAD_PHASE_BVH;
    ad_world *w = NULL;
    ad_status st = ad_world_create(&d, &w);
    ENSURE_MSG(st.code == AD_ERR_INVALID && !strcmp(st.field, "broad_phase"), "broad_phase = bvh: %s", st.message);
    ENSURE(w == NULL);

    printf("the CUDA backend against the reference (within rounding):\n");
    for (int k = 0; k < NCASES; k++)
        for (int i = 0; i < 4; i++)
            if (!cuda_case((case_kind)k, INTEG[i])) goto done;
done:
    return tu_finish("test_reference");
}
