/* Golden hashes: the whole world state after N steps, hashed bit for bit, against the values
 * recorded in tests/data/golden.txt. A refactoring that must not change results (the renovation
 * of issue 17, a new file layout, a kernel split) keeps every hash; a change of the physics or the
 * random streams changes them on purpose and records new ones (--record, with the reason in the
 * commit).
 *
 * What is hashed, per case: every disc by id (position, velocity, id, pressure, virial and
 * acceleration of the last force evaluation), every statistic of ad_stats that the step computes,
 * and every field (sampled every 5 steps). Cases: the default scene as shipped (open sides, the
 * reservoir, a NACA 2412) through the grid and through the BVH, a periodic box for each integrator. The CPU backend runs each case with 1, 2 and 4 threads (it is
 * bit-identical for any thread count, so all give one hash); the CUDA backend in deterministic mode
 * has hashes of its own (float sums in another order), checked where a GPU is found.
 *
 *   test_golden                 check against tests/data/golden.txt (cases without a GPU skip
 *                               the CUDA lines; exit 77 when nothing could be checked)
 *   test_golden --record [cpu|cuda]   print the lines of golden.txt for one backend
 */
#include "core/scene.h"
#include "test_util.h"

#define DEFAULT_STEPS 300
#define BOX_STEPS 400

typedef struct hash64 {
    uint64_t h;
} hash64;

static void mix(hash64 *x, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        x->h ^= b[i];
        x->h *= 1099511628211ull; /* FNV-1a, 64 bits */
    }
}

static void mix_d(hash64 *x, double v) { mix(x, &v, sizeof v); }
static void mix_u(hash64 *x, uint64_t v) { mix(x, &v, sizeof v); }

/* The statistics a step computes (not the grid diagnostics' capacity, a setting). */
static void mix_stats(hash64 *x, const ad_stats *s)
{
    mix_u(x, s->step);
    mix_d(x, s->time);
    mix_d(x, s->dt);
    mix_u(x, s->count);
    mix_u(x, s->entered);
    mix_u(x, s->left);
    mix_u(x, s->reservoir_added);
    mix_u(x, s->reservoir_removed);
    mix_u(x, s->entries_lost);
    mix_u(x, s->entries_waiting);
    const double d[] = {s->kinetic_energy, s->potential_energy, s->momentum_x, s->momentum_y, s->contact_virial,
                        s->max_overlap, s->body_force_x, s->body_force_y, s->body_impulse_x, s->body_impulse_y,
                        s->wall_impulse[0], s->wall_impulse[1], s->wall_impulse[2], s->wall_impulse[3],
                        s->kinetic_energy_integral, s->contact_virial_integral};
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++) mix_d(x, d[i]);
    mix_u(x, s->max_cell_occupancy);
    mix_u(x, s->cell_overflow);
    mix_u(x, s->outside_grid);
}

static ad_field_def field_grid(double x0, double y0, double x1, double y1)
{
    ad_field_def f = {24, 12, x0, y0, x1, y1, 5, 0, 0.0, 0.0};
    return f;
}

/* Hash of a world after its steps (REQUIRE on any failure). */
static uint64_t world_hash(ad_world *w, const ad_field_def *fd, uint64_t steps)
{
    REQUIRE_OK(ad_world_set_fields(w, fd));
    REQUIRE_OK(ad_world_step(w, steps));
    ad_stats s = tu_stats(w);
    size_t n = s.count, got = 0;
    ad_particle *p = calloc(n ? n : 1, sizeof *p);
    uint32_t *id = calloc(n ? n : 1, sizeof *id);
    float *pr = calloc(n ? n : 1, sizeof *pr), *vi = calloc(n ? n : 1, sizeof *vi);
    float *acc = calloc(2 * (n ? n : 1), sizeof *acc);
    float *field = calloc((size_t)fd->nx * (size_t)fd->ny, sizeof *field);
    if (!p || !id || !pr || !vi || !acc || !field) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    ad_particle_out out = {p, id, pr, vi, acc, NULL};
    REQUIRE_OK(ad_world_read(w, AD_READ_BY_ID, n, &out, &got));
    ENSURE(got == n);
    hash64 x = {1469598103934665603ull};
    mix_stats(&x, &s);
    mix(&x, p, got * sizeof *p);
    mix(&x, id, got * sizeof *id);
    mix(&x, pr, got * sizeof *pr);
    mix(&x, vi, got * sizeof *vi);
    mix(&x, acc, 2 * got * sizeof *acc);
    for (int k = 0; k < AD_FIELD_COUNT_2D; k++) {
        uint64_t samples = 0;
        REQUIRE_OK(ad_world_read_field(w, (ad_field)k, field, &samples));
        mix(&x, field, (size_t)fd->nx * (size_t)fd->ny * sizeof *field);
        mix_u(&x, samples);
    }
    free(p);
    free(id);
    free(pr);
    free(vi);
    free(acc);
    free(field);
    return x.h;
}

/* 1 when the backend cannot be had on this machine (no GPU), or does not run the case (the BVH with
 * open sides is the CPU's only): the case skips. */
static int unavailable(ad_status st)
{
    return st.code == AD_ERR_BACKEND || (st.code == AD_ERR_INVALID && !strcmp(st.field, "broad_phase"));
}

static int default_scene(ad_backend b, int threads, int broad_phase, uint64_t *h)
{
    ad_scene s;
    ad_scene_defaults(&s);
    REQUIRE_OK(ad_scene_load(&s, AD_SOURCE_DIR "/scenes/default.ini"));
    s.backend = b;
    s.threads = threads;
    s.deterministic = 1;
    s.broad_phase = broad_phase;
    ad_status st = ad_scene_finish(&s);
    if (unavailable(st)) return 0;
    REQUIRE_OK(st);
    ad_world *w = NULL;
    st = ad_scene_build(&s, &w);
    if (unavailable(st)) return 0;
    REQUIRE_OK(st);
    ad_field_def fd = field_grid(0.0, 0.0, s.width, s.height);
    *h = world_hash(w, &fd, DEFAULT_STEPS);
    ad_world_destroy(w);
    return 1;
}

/* A periodic box of an elastic-ish gas with gravity off: every disc interacts, no walls. */
static int periodic_box(ad_backend b, int threads, ad_integrator integ, uint64_t *h)
{
    ad_world_def d = ad_default_world_def();
    d.backend = b;
    d.threads = threads;
    d.deterministic = 1;
    d.integrator = integ;
    d.x_max = 60.0;
    d.y_max = 40.0;
    d.boundary_x = AD_BOUNDARY_PERIODIC;
    d.boundary_y = AD_BOUNDARY_PERIODIC;
    d.restitution = 0.9;
    ad_world *w = NULL;
    ad_status st = ad_world_create(&d, &w);
    if (unavailable(st)) return 0;
    REQUIRE_OK(st);
    ad_fill_def f = {0.0, 0.0, 60.0, 40.0, 0.3, 0.7, -0.2, 1.0, 20261201, 0, 0, 0};
    size_t added = 0;
    REQUIRE_OK(ad_world_fill(w, &f, &added));
    ad_field_def fd = field_grid(0.0, 0.0, 60.0, 40.0);
    *h = world_hash(w, &fd, BOX_STEPS);
    ad_world_destroy(w);
    return 1;
}

typedef struct golden_case {
    const char *name;
    int integ; /* -1: the default scene, -2: the default scene through the BVH */
} golden_case;

static const golden_case CASES[] = {
    {"default_scene", -1},
    {"default_scene_bvh", -2},
    {"periodic_box_symplectic_euler", AD_INTEGRATOR_SYMPLECTIC_EULER},
    {"periodic_box_euler", AD_INTEGRATOR_EULER},
    {"periodic_box_verlet", AD_INTEGRATOR_VERLET},
    {"periodic_box_rk4", AD_INTEGRATOR_RK4},
};
#define NCASES (sizeof CASES / sizeof CASES[0])

static int run_case(const golden_case *c, ad_backend b, int threads, uint64_t *h)
{
    if (c->integ < 0) return default_scene(b, threads, c->integ == -1 ? AD_BROAD_PHASE_GRID : AD_BROAD_PHASE_BVH, h);
    return periodic_box(b, threads, (ad_integrator)c->integ, h);
}

/* The recorded hash of a case on a backend; 0 when golden.txt has none. */
static int recorded(const char *name, const char *backend, uint64_t *h)
{
    FILE *f = fopen(AD_SOURCE_DIR "/tests/data/golden.txt", "r");
    if (!f) return 0;
    char line[256], n[128], b[16];
    unsigned long long v;
    int found = 0;
    while (fgets(line, sizeof line, f))
        if (line[0] != '#' && sscanf(line, "%127s %15s %llx", n, b, &v) == 3 && strcmp(n, name) == 0 &&
            strcmp(b, backend) == 0) {
            *h = v;
            found = 1;
        }
    fclose(f);
    return found;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--record") == 0) {
        int cuda = argc >= 3 && strcmp(argv[2], "cuda") == 0;
        for (size_t i = 0; i < NCASES; i++) {
            uint64_t h = 0;
            if (!run_case(&CASES[i], cuda ? AD_BACKEND_CUDA : AD_BACKEND_CPU, cuda ? 0 : 1, &h)) {
                fprintf(stderr, "test_golden: %s does not run on the %s backend here\n", CASES[i].name,
                        cuda ? "CUDA" : "CPU");
                continue;
            }
            printf("%s %s %016llx\n", CASES[i].name, cuda ? "cuda" : "cpu", (unsigned long long)h);
        }
        return 0;
    }
    int checked = 0;
    static const int THREADS[] = {1, 2, 4};
    for (size_t i = 0; i < NCASES; i++) {
        uint64_t want = 0, h = 0;
        ENSURE_MSG(recorded(CASES[i].name, "cpu", &want), "tests/data/golden.txt has no cpu hash of %s",
                   CASES[i].name);
        for (int t = 0; t < 3; t++) {
            if (!run_case(&CASES[i], AD_BACKEND_CPU, THREADS[t], &h)) continue;
            printf("%-32s cpu  %d threads: %016llx %s\n", CASES[i].name, THREADS[t], (unsigned long long)h,
                   h == want ? "as recorded" : "DIFFERS");
            ENSURE_MSG(h == want, "%s on %d CPU threads: hash %016llx, recorded %016llx", CASES[i].name, THREADS[t],
                       (unsigned long long)h, (unsigned long long)want);
            checked++;
        }
        if (recorded(CASES[i].name, "cuda", &want) && run_case(&CASES[i], AD_BACKEND_CUDA, 0, &h)) {
            printf("%-32s cuda deterministic: %016llx %s\n", CASES[i].name, (unsigned long long)h,
                   h == want ? "as recorded" : "DIFFERS");
            ENSURE_MSG(h == want, "%s on the GPU: hash %016llx, recorded %016llx", CASES[i].name,
                       (unsigned long long)h, (unsigned long long)want);
            checked++;
        }
    }
    if (!checked) return 77;
    return tu_finish("test_golden");
}
