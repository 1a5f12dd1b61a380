/* The CPU backend's 3D pass (src/cpu/sphere_pass_cpu.h: the sphere gather, its AVX2 screen and its
 * scalar path) against the plain pipeline (backend = reference), sphere by sphere and bit for bit:
 * states, accelerations, ids, pressures and the step's sums (energies, virial, momentum, the largest
 * overlap's bits, the body's force and torque, the walls' impulses), on 1, 2 and 4 threads and without
 * AVX2 (AD_CPU_NO_AVX2). Worlds: a periodic gas and solid walls with a triangle body under every
 * integrator; a clumped gas (cells of two diameters: rows past the screen's eight lanes) settling
 * under gravity; the open tunnel with its inlet and reservoir. */
/* the cases' worlds (def3, gas), not their tests */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "world3_cases.h"
#pragma GCC diagnostic pop

#include <stdlib.h>

typedef struct run3 {
    uint64_t hash, pressure;
    ad_stats st;
    size_t n;
} run3;

static uint64_t pressure_hash(const ad_world *w)
{
    size_t n = w->count, got;
    float *pr = malloc(n * sizeof *pr + 1);
    ad_particle_out out = {NULL, NULL, pr, NULL, NULL, NULL};
    REQUIRE_OK(ad_world_read(w, AD_READ_BY_ID, n, &out, &got));
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < got * sizeof *pr; i++) h = (h ^ ((const unsigned char *)pr)[i]) * 1099511628211ull;
    free(pr);
    return h;
}

static run3 finish(ad_world *w, uint64_t steps)
{
    REQUIRE_OK(ad_world_step(w, steps));
    run3 r = {tu3_hash(w), pressure_hash(w), tu_stats(w), w->count};
    ad_world_destroy(w);
    return r;
}

static int same_bits(double a, double b) { return !memcmp(&a, &b, sizeof a); }

/* The observables two runs must share to the bit. */
static int same_run(const run3 *a, const run3 *b)
{
    const ad_stats *s = &a->st, *t = &b->st;
    int same = a->hash == b->hash && a->pressure == b->pressure && a->n == b->n && s->step == t->step &&
               same_bits(s->kinetic_energy, t->kinetic_energy) && same_bits(s->potential_energy, t->potential_energy) &&
               same_bits(s->contact_virial, t->contact_virial) && same_bits(s->max_overlap, t->max_overlap) &&
               same_bits(s->momentum_x, t->momentum_x) && same_bits(s->momentum_z, t->momentum_z) &&
               same_bits(s->body_force_x, t->body_force_x) && same_bits(s->body_force_z, t->body_force_z) &&
               same_bits(s->body_torque_y, t->body_torque_y) && same_bits(s->kinetic_energy_integral, t->kinetic_energy_integral) &&
               s->entered == t->entered && s->left == t->left && s->reservoir_added == t->reservoir_added &&
               s->reservoir_removed == t->reservoir_removed;
    for (int k = 0; k < 6; k++) same &= same_bits(s->wall_impulse[k], t->wall_impulse[k]);
    return same;
}

typedef run3 (*world_fn)(ad_backend b, int threads, int variant);

/* The world on the reference backend, then on the CPU backend's threads and without AVX2. */
static void compare(const char *name, world_fn make, int variant)
{
    run3 ref = make(AD_BACKEND_REFERENCE, 1, variant);
    static const int threads[4] = {1, 2, 4, 2};
    for (int k = 0; k < 4; k++) {
        if (k == 3) setenv("AD_CPU_NO_AVX2", "1", 1);
        run3 cpu = make(AD_BACKEND_CPU, threads[k], variant);
        unsetenv("AD_CPU_NO_AVX2");
        printf("%s: reference %016llx, cpu %d thread%s%s %016llx (%zu spheres, largest overlap %g)\n", name,
               (unsigned long long)ref.hash, threads[k], threads[k] > 1 ? "s" : "", k == 3 ? " without AVX2" : "",
               (unsigned long long)cpu.hash, cpu.n, ref.st.max_overlap);
        ENSURE_MSG(same_run(&ref, &cpu), "%s: cpu (%d threads%s) differs from the reference", name, threads[k],
                   k == 3 ? ", no AVX2" : "");
    }
}

static const ad_integrator integ[4] = {AD_INTEGRATOR_SYMPLECTIC_EULER, AD_INTEGRATOR_EULER, AD_INTEGRATOR_VERLET,
                                       AD_INTEGRATOR_RK4};

/* variant: the integrator, plus 4 for solid walls and the triangle cube (else periodic, no body). */
static run3 gas_world(ad_backend b, int threads, int variant)
{
    g_backend = b;
    int solid = variant >= 4;
    return finish(gas(!solid, 0.9, integ[variant % 4], threads, 0.3, solid), 80);
}

/* Cells of two diameters (rows of up to 12 spheres and more), settling onto the floor under gravity. */
static run3 clumped_world(ad_backend b, int threads, int variant)
{
    g_backend = b;
    ad_world_def d = def3();
    d.boundary_x = d.boundary_y = d.boundary_z = AD_BOUNDARY_SOLID;
    d.cell_size = 2.0;
    d.gravity_z = -20.0;
    d.restitution = d.wall_restitution = 0.7;
    d.integrator = integ[variant];
    d.threads = threads;
    ad_world *w = NULL;
    REQUIRE_OK(ad_world_create(&d, &w));
    ad_fill_def f = {2, 2, 18, 18, 0.45, 0.0, 0.0, 0.5, 91, 0, 12, 0.0};
    REQUIRE_OK(ad_world_fill(w, &f, NULL));
    return finish(w, 150);
}

/* The open tunnel: the inlet's stream through both x faces, periodic y and z, the reservoir. */
static run3 tunnel_world(ad_backend b, int threads, int variant)
{
    ad_world_def d = tu3_tunnel(b, threads, 24.0, tu3_density_of(0.2), 1);
    d.reservoir = 2.0;
    d.integrator = integ[variant];
    ad_world *w = tu3_filled(&d, 0.2);
    return finish(w, 100);
}

int main(void)
{
    char name[64];
    for (int k = 0; k < 8; k++) {
        snprintf(name, sizeof name, "%s, %s", k < 4 ? "periodic gas" : "walls and a body", ad_integrator_name(integ[k % 4]));
        compare(name, gas_world, k);
    }
    for (int k = 0; k < 4; k += 2) {
        snprintf(name, sizeof name, "clumped, %s", ad_integrator_name(integ[k]));
        compare(name, clumped_world, k);
    }
    compare("clumped, rk4", clumped_world, 3);
    compare("tunnel with a reservoir, symplectic-euler", tunnel_world, 0);
    compare("tunnel with a reservoir, verlet", tunnel_world, 2);
    return tu_finish("test_sphere_pass");
}
