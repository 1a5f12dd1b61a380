/* deterministic = 1: two separate runs of the same world are bit-identical after
 * 500 steps, for every integrator (particles by id and in internal order, stats). And the
 * steps nobody reads skip the per-disc observables: one call of 60 steps gives the same
 * discs, pressures, virials and accelerations as 60 calls of one step, and the same field
 * sums sampled every 7 steps. */
#include "test_util.h"

#define STEPS 500

typedef struct snapshot {
    size_t n;
    ad_particle *by_id, *raw;
    uint32_t *raw_id;
    ad_stats s;
} snapshot;

static const ad_segment segs[] = {
    {5.0f, 30.0f, 17.0f, 20.0f}, {23.0f, 20.0f, 35.0f, 30.0f}, /* funnel */
    {12.0f, 8.0f, 28.0f, 8.0f},
};

/* The world both checks run: a gas falling through a funnel, periodic in x. */
static ad_world *make(ad_integrator integ, size_t *n)
{
    ad_world_def d = tu_def();
    d.deterministic = 1;
    d.integrator = integ;
    d.x_max = 40.0;
    d.y_max = 40.0;
    d.boundary_x = AD_BOUNDARY_PERIODIC;
    d.gravity_y = -9.81;
    d.restitution = 0.85;
    d.wall_restitution = 0.9;
    ad_world *w = NULL;
    REQUIRE_OK(ad_world_create(&d, &w));
    REQUIRE_OK(ad_world_add_segments(w, segs, sizeof segs / sizeof segs[0]));
    ad_fill_def f = {0.5, 0.0, 39.5, 40.0, 0.35, 0.5, 0.0, 2.0, 99, 0, 0, 0};
    REQUIRE_OK(ad_world_fill(w, &f, n));
    return w;
}

static snapshot run(ad_integrator integ)
{
    snapshot sn;
    memset(&sn, 0, sizeof sn);
    ad_world *w = make(integ, &sn.n);
    REQUIRE_OK(ad_world_step(w, STEPS));
    sn.by_id = calloc(sn.n, sizeof *sn.by_id);
    sn.raw = calloc(sn.n, sizeof *sn.raw);
    sn.raw_id = calloc(sn.n, sizeof *sn.raw_id);
    size_t c1 = 0, c2 = 0;
    ENSURE_OK(ad_world_read_particles(w, AD_READ_BY_ID, sn.n, sn.by_id, NULL, NULL, NULL, &c1));
    ENSURE_OK(ad_world_read_particles(w, 0, sn.n, sn.raw, sn.raw_id, NULL, NULL, &c2));
    ENSURE(c1 == sn.n && c2 == sn.n);
    sn.s = tu_stats(w);
    ad_world_destroy(w);
    return sn;
}

static int same(const void *a, const void *b, size_t bytes) { return memcmp(a, b, bytes) == 0; }

/* The world of make() after `steps` steps in `calls` calls, with fields every 7 steps: every
 * per-disc output by id and the time-averaged pressure field. */
typedef struct observed {
    size_t n;
    ad_particle *state;
    float *pressure, *virial, *accel, field[64];
} observed;

static observed observe(ad_integrator integ, int steps, int calls)
{
    observed o;
    memset(&o, 0, sizeof o);
    ad_world *w = make(integ, &o.n);
    ad_field_def fd = {8, 8, 0.0, 0.0, 40.0, 40.0, 7, 0, 0.0, 0.0};
    REQUIRE_OK(ad_world_set_fields(w, &fd));
    for (int k = 0; k < calls; k++) REQUIRE_OK(ad_world_step(w, (uint64_t)(steps / calls)));
    o.state = calloc(o.n, sizeof *o.state);
    o.pressure = calloc(o.n, sizeof *o.pressure);
    o.virial = calloc(o.n, sizeof *o.virial);
    o.accel = calloc(2 * o.n, sizeof *o.accel);
    ad_particle_out out = {o.state, NULL, o.pressure, o.virial, o.accel, NULL};
    ENSURE_OK(ad_world_read(w, AD_READ_BY_ID, o.n, &out, NULL));
    ENSURE_OK(ad_world_read_field(w, AD_FIELD_PRESSURE, o.field, NULL));
    ad_world_destroy(w);
    return o;
}

static void observables_on_read_steps(ad_integrator integ)
{
    const char *name = ad_integrator_name(integ);
    observed a = observe(integ, 60, 1), b = observe(integ, 60, 60);
    ENSURE(a.n == b.n);
    int st = same(a.state, b.state, a.n * sizeof *a.state), pr = same(a.pressure, b.pressure, a.n * 4),
        vi = same(a.virial, b.virial, a.n * 4), ac = same(a.accel, b.accel, a.n * 8);
    /* the fields: sums of the same samples (on the GPU by double atomics, in any order) */
    double worst = 0.0;
    for (int k = 0; k < 64; k++)
        if (!(a.field[k] != a.field[k] && b.field[k] != b.field[k]))
            worst = fmax(worst, fabs((double)a.field[k] - b.field[k]) / (fabs((double)a.field[k]) + 1e-30));
    printf("%-18s 60 steps in 1 call vs 60 calls: discs %s, pressure %s, virial %s, acceleration %s, "
           "pressure field within %.2g\n",
           name, st ? "same" : "DIFFER", pr ? "same" : "DIFFER", vi ? "same" : "DIFFER", ac ? "same" : "DIFFER",
           worst);
    ENSURE_MSG(st && pr && vi && ac, "%s: the per-disc outputs of one call differ from those of 60", name);
    ENSURE_MSG(worst <= 1e-5, "%s: pressure field differs by %g", name, worst);
    observed *all[2] = {&a, &b};
    for (int i = 0; i < 2; i++) {
        free(all[i]->state);
        free(all[i]->pressure);
        free(all[i]->virial);
        free(all[i]->accel);
    }
}

int main(void)
{
    const ad_integrator integ[4] = {AD_INTEGRATOR_SYMPLECTIC_EULER, AD_INTEGRATOR_EULER, AD_INTEGRATOR_VERLET,
                                    AD_INTEGRATOR_RK4};
    for (int k = 0; k < 4; k++) {
        snapshot a = run(integ[k]), b = run(integ[k]);
        const char *name = ad_integrator_name(integ[k]);
        printf("%-18s %zu discs, %d steps, t = %.4f s, KE = %.9g\n", name, a.n, STEPS, a.s.time, a.s.kinetic_energy);
        ENSURE_MSG(a.n == b.n && a.n > 400, "%s: %zu vs %zu discs", name, a.n, b.n);
        if (a.n == b.n) {
            size_t ndiff = 0;
            for (size_t i = 0; i < a.n; i++) ndiff += !same(&a.by_id[i], &b.by_id[i], sizeof a.by_id[i]);
            ENSURE_MSG(ndiff == 0, "%s: %zu of %zu particles (by id) differ between two runs", name, ndiff, a.n);
            ENSURE_MSG(same(a.raw, b.raw, a.n * sizeof *a.raw) && same(a.raw_id, b.raw_id, a.n * sizeof *a.raw_id),
                       "%s: internal order differs between two runs", name);
        }
        ENSURE_MSG(a.s.step == STEPS && b.s.step == STEPS, "%s: step %llu, %llu", name,
                   (unsigned long long)a.s.step, (unsigned long long)b.s.step);
        ENSURE_MSG(same(&a.s.time, &b.s.time, sizeof(double)), "%s: time %.17g vs %.17g", name, a.s.time, b.s.time);
        ENSURE_MSG(same(&a.s.kinetic_energy, &b.s.kinetic_energy, sizeof(double)), "%s: KE %.17g vs %.17g", name,
                   a.s.kinetic_energy, b.s.kinetic_energy);
        ENSURE_MSG(same(&a.s.potential_energy, &b.s.potential_energy, sizeof(double)), "%s: PE %.17g vs %.17g",
                   name, a.s.potential_energy, b.s.potential_energy);
        ENSURE_MSG(same(&a.s.momentum_x, &b.s.momentum_x, sizeof(double)) &&
                       same(&a.s.momentum_y, &b.s.momentum_y, sizeof(double)),
                   "%s: momentum differs", name);
        ENSURE_MSG(same(&a.s.body_impulse_x, &b.s.body_impulse_x, sizeof(double)) &&
                       same(&a.s.body_impulse_y, &b.s.body_impulse_y, sizeof(double)),
                   "%s: body impulse differs", name);
        ENSURE_MSG(same(a.s.wall_impulse, b.s.wall_impulse, sizeof a.s.wall_impulse), "%s: wall impulse differs",
                   name);
        ENSURE_MSG(isfinite(a.s.kinetic_energy) && a.s.kinetic_energy > 0.0, "%s: KE %g", name, a.s.kinetic_energy);
        snapshot *all[2] = {&a, &b};
        for (int i = 0; i < 2; i++) {
            free(all[i]->by_id);
            free(all[i]->raw);
            free(all[i]->raw_id);
        }
    }
    for (int k = 0; k < 4; k++) observables_on_read_steps(integ[k]);
    return tu_finish("test_determinism");
}
