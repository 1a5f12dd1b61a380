/* The CPU backend's AVX2 build (the interior gather and the eight-disc integrate, chosen at run
 * time) gives the portable build's results bit for bit: lane by lane against the scalar functions
 * on edge cases, then whole worlds stepped with and without AVX2 (AD_CPU_NO_AVX2). Skipped (77)
 * on a CPU without AVX2. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/world_internal.h"
#include "cpu/cpu_world.h"
#include "cpu/interact_cpu.h"
#include "physics/integrate.h"
#include "physics/rng.h"
#include "test_gpu_tunnel.h"
#include "test_util.h"

#ifdef AD_CPU_X86

static int same_bits(const void *a, const void *b, size_t n) { return memcmp(a, b, n) == 0; }

/* What interact_block's scalar path does after a disc's gather, for one disc. */
static int scalar_motion(const ad_params *P, ad_state me, float ax, float ay, float dt, int symplectic,
                         ad_state *nw, uint32_t *cell, uint32_t *outside, ad_motion8 *m8, unsigned lane,
                         ad_step_sums *sums)
{
    ad_state s = symplectic ? ad_step_symplectic(me, ax, ay, dt) : ad_step_euler(me, ax, ay, dt);
    if (P->periodic_x) {
        float x = s.x;
        if (x < P->x_min) x += P->len_x;
        else if (x >= P->x_min + P->len_x) x -= P->len_x;
        if (!(x >= P->x_min && x < P->x_min + P->len_x)) return 0; /* ad_wrap's full reduction */
    }
    if (P->periodic_y) {
        float y = s.y;
        if (y < P->y_min) y += P->len_y;
        else if (y >= P->y_min + P->len_y) y -= P->len_y;
        if (!(y >= P->y_min && y < P->y_min + P->len_y)) return 0;
    }
    s = ad_wrap_state(P, s);
    if (ad_left_open(P, s.x, s.y)) return 0;                               /* removed (open.h) */
    if (P->res_boxes && ad_reservoir_box(P, s.x, s.y) >= 0) return 0;     /* the reservoir's draws */
    *nw = s;
    *cell = ad_cell_index(P, s.x, s.y);
    *outside += (uint32_t)ad_outside_domain(P, s.x, s.y);
    ad_motion8_add(m8, sums, P, s, lane);
    return 1;
}

static ad_params params_of(ad_boundary bx, ad_boundary by, double reservoir)
{
    int open = bx == AD_BOUNDARY_OPEN; /* with a stream of 2 m/s, 0.3 discs a square metre; else none */
    ad_world_def d = tu_channel(ad_default_world_def(), 64, 40, 30, open ? 2.0 : 0.0, open ? 0.3 : 0.0);
    d.backend = AD_BACKEND_CPU;
    d.boundary_x = bx;
    d.boundary_y = by;
    d.reservoir = reservoir;
    ad_world *w;
    REQUIRE_OK(ad_world_create(&d, &w));
    ad_params p = w->params;
    ad_world_destroy(w);
    return p;
}

/* Eight discs at a time, random and at the edges: the eight-disc integrate writes exactly what
 * the scalar code writes, or gives up exactly where the scalar code would need its rare paths. */
static void lanes(void)
{
    const ad_boundary kinds[][2] = {{AD_BOUNDARY_PERIODIC, AD_BOUNDARY_PERIODIC}, {AD_BOUNDARY_SOLID, AD_BOUNDARY_SOLID},
                                    {AD_BOUNDARY_OPEN, AD_BOUNDARY_SOLID},       {AD_BOUNDARY_OPEN, AD_BOUNDARY_PERIODIC},
                                    {AD_BOUNDARY_OPEN, AD_BOUNDARY_OPEN},        {AD_BOUNDARY_OPEN, AD_BOUNDARY_OPEN}};
    const double reservoir[] = {0, 0, 0, 0, 0, 4};
    const int nkinds = (int)(sizeof reservoir / sizeof reservoir[0]);
    const float special[] = {0.0f, -0.0f, 40.0f, 30.0f, 39.9999962f, -1e-7f, 40.0001f, -3.0f, 45.0f, 1e9f, -1e9f,
                             NAN, INFINITY, 0.5f, 29.9999981f};
    long agree = 0, gave_up = 0, wrote = 0;
    uint64_t key = 7;
    for (int kind = 0; kind < nkinds; kind++) {
        ad_params P = params_of(kinds[kind][0], kinds[kind][1], reservoir[kind]);
        uint8_t *count_v = calloc((size_t)P.nx * (size_t)P.ny, 1), *count_s = calloc((size_t)P.nx * (size_t)P.ny, 1);
        for (int trial = 0; trial < 4000; trial++) {
            ad_state in[8];
            _Alignas(32) float AX[8], AY[8];
            for (int l = 0; l < 8; l++) {
                float r[6];
                for (int k = 0; k < 6; k++) r[k] = (float)ad_rng_uniform(key, (uint64_t)(trial * 64 + l * 8 + k));
                in[l].x = -2.0f + 44.0f * r[0];
                in[l].y = -2.0f + 34.0f * r[1];
                in[l].vx = 8.0f * (r[2] - 0.5f);
                in[l].vy = 8.0f * (r[3] - 0.5f);
                AX[l] = 100.0f * (r[4] - 0.5f);
                AY[l] = 100.0f * (r[5] - 0.5f);
                /* one trial in four puts special values in some lanes, at rest so that the
                 * step leaves them exactly there (the edges of the wraps and of the grid) */
                if (trial % 4 == 0 && r[4] < 0.3f) {
                    in[l].x = special[(trial / 4 + l) % 15];
                    in[l].vx = AX[l] = 0.0f;
                }
                if (trial % 4 == 0 && r[5] < 0.3f) {
                    in[l].y = special[(trial / 4 + 3 * l) % 15];
                    in[l].vy = AY[l] = 0.0f;
                }
            }
            float dt = trial % 3 == 0 ? 0.5f : 1e-3f;
            int symplectic = trial & 1;
            ad_state out_v[8], out_s[8];
            uint32_t cell_v[8], cell_s[8], outside_v = 0, outside_s = 0;
            ad_step_sums sums_v, sums_s;
            memset(&sums_v, 0, sizeof sums_v);
            memset(&sums_s, 0, sizeof sums_s);
            ad_motion8 m8_v, m8_s; /* lane sums with something in them already */
            for (int l = 0; l < 8; l++) m8_v.ke[l] = m8_v.px[l] = m8_v.py[l] = 0.1 * (trial + l);
            m8_s = m8_v;
            memset(out_v, 0, sizeof out_v);
            int scalar_ok = 1;
            for (int l = 0; l < 8; l++)
                scalar_ok &= scalar_motion(&P, in[l], AX[l], AY[l], dt, symplectic, &out_s[l], &cell_s[l], &outside_s,
                                           &m8_s, (unsigned)l, &sums_s);
            ad_cpu_fused_bin bins = {count_v, 0, UINT32_MAX, NULL, 0, 0};
            int v = ad_cpu_integrate8_avx2_entry(&P, in, out_v, AX, AY, dt, symplectic, cell_v, &bins, &m8_v,
                                                 &sums_v, &outside_v);
            if (v != scalar_ok) {
                ENSURE_MSG(v == scalar_ok, "boundaries %d, trial %d: the eight-disc integrate %s, the scalar code %s",
                           kind, trial, v ? "wrote" : "gave up", scalar_ok ? "writes" : "needs its rare paths");
                continue;
            }
            if (!v) {
                gave_up++;
                continue;
            }
            wrote++;
            for (int l = 0; l < 8; l++) count_s[cell_s[l]]++;
            int ok = same_bits(out_v, out_s, sizeof out_v) && same_bits(cell_v, cell_s, sizeof cell_v) &&
                     outside_v == outside_s && same_bits(&m8_v, &m8_s, sizeof m8_v) &&
                     same_bits(&sums_v.vmax2, &sums_s.vmax2, 4) && sums_v.nonfinite == sums_s.nonfinite;
            ENSURE_MSG(ok, "boundaries %d, trial %d: the eight-disc integrate's results differ from the scalar code's",
                       kind, trial);
            agree += ok;
        }
        ENSURE(same_bits(count_v, count_s, (size_t)P.nx * (size_t)P.ny));
        free(count_v);
        free(count_s);
    }
    printf("eight-disc integrate: %ld groups bit-identical to the scalar code, %ld handed back to it (open sides, the "
           "reservoir, far outside, NaN)\n", agree, gave_up);
    ENSURE(wrote > 1000 && gave_up > 100);
}

/* A world created with AVX2 and one without, stepped side by side. */
static void worlds(const char *what, ad_world_def d, const ad_fill_def *f, int segments, uint64_t steps)
{
    ad_world *w[2];
    for (int k = 0; k < 2; k++) {
        if (k) setenv("AD_CPU_NO_AVX2", "1", 1);
        REQUIRE_OK(ad_world_create(&d, &w[k]));
        unsetenv("AD_CPU_NO_AVX2");
        if (segments) gt_fill(w[k]);
        else REQUIRE_OK(ad_world_fill(w[k], f, NULL));
        REQUIRE_OK(ad_world_step(w[k], steps));
    }
    ad_stats s[2];
    size_t n = tu_stats(w[0]).count, got[2];
    ad_particle *p[2];
    float *pr[2], *vi[2];
    for (int k = 0; k < 2; k++) {
        s[k] = tu_stats(w[k]);
        p[k] = malloc(n * sizeof(ad_particle));
        pr[k] = malloc(n * 4);
        vi[k] = malloc(n * 4);
        REQUIRE_OK(ad_world_read_particles(w[k], AD_READ_BY_ID, n, p[k], NULL, pr[k], vi[k], &got[k]));
    }
    int same = got[0] == got[1] && s[0].count == s[1].count && same_bits(p[0], p[1], n * sizeof(ad_particle)) &&
               same_bits(pr[0], pr[1], n * 4) && same_bits(vi[0], vi[1], n * 4) &&
               same_bits(&s[0].kinetic_energy, &s[1].kinetic_energy, 8) &&
               same_bits(&s[0].momentum_x, &s[1].momentum_x, 8) && same_bits(&s[0].momentum_y, &s[1].momentum_y, 8) &&
               s[0].max_cell_occupancy == s[1].max_cell_occupancy && s[0].outside_grid == s[1].outside_grid &&
               same_bits(&s[0].dt, &s[1].dt, 8);
    printf("%-44s %6zu discs, %4llu steps: AVX2 and portable builds %s\n", what, n, (unsigned long long)steps,
           same ? "bit-identical" : "DIFFERENT");
    ENSURE(same);
    for (int k = 0; k < 2; k++) {
        free(p[k]);
        free(pr[k]);
        free(vi[k]);
        ad_world_destroy(w[k]);
    }
}

int main(void)
{
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
        printf("SKIP: this CPU has no AVX2 and FMA (only the portable build runs)\n");
        return 77;
    }
    lanes();
    ad_world_def d = tu_square(ad_default_world_def(), 60, AD_BOUNDARY_PERIODIC);
    d.backend = AD_BACKEND_CPU;
    d.capacity = 20000;
    d.restitution = 0.8;
    d.threads = 1;
    ad_fill_def f = {0, 0, 60, 60, 0.35, 0.5, -0.2, 1.0, 3, 0, 0, 0};
    worlds("periodic box, symplectic Euler, 1 thread", d, &f, 0, 600);
    d.integrator = AD_INTEGRATOR_EULER;
    d.threads = 2;
    worlds("periodic box, explicit Euler, 2 threads", d, &f, 0, 600);
    d = ad_default_world_def();
    d.backend = AD_BACKEND_CPU;
    d.capacity = 20000;
    d.x_max = 50;
    d.y_max = 40;
    d.gravity_y = -2.0;
    d.restitution = 0.9;
    d.threads = 2;
    ad_fill_def g = {0, 0, 50, 40, 0.3, 0.0, 0.0, 1.0, 4, 0, 0, 0};
    worlds("walled box with gravity, 2 threads", d, &g, 0, 600);
    d.integrator = AD_INTEGRATOR_VERLET; /* its fast path: the drift's bin, the prefilters, the kick */
    worlds("walled box with gravity, Verlet, 2 threads", d, &g, 0, 600);
    worlds("flow tunnel with a body, open sides, reservoir", gt_def(AD_BACKEND_CPU, AD_INTEGRATOR_SYMPLECTIC_EULER),
           NULL, 1, 1500);
    worlds("the same tunnel, Verlet", gt_def(AD_BACKEND_CPU, AD_INTEGRATOR_VERLET), NULL, 1, 1500);
    d = tu_square(ad_default_world_def(), 60, AD_BOUNDARY_PERIODIC);
    d.backend = AD_BACKEND_CPU;
    d.capacity = 20000;
    d.restitution = 0.8;
    d.integrator = AD_INTEGRATOR_VERLET;
    d.threads = 1;
    worlds("periodic box, Verlet, 1 thread", d, &f, 0, 600);
    d.threads = 2;
    worlds("periodic box, Verlet, 2 threads", d, &f, 0, 600);
    return tu_finish("isa");
}

#else

int main(void)
{
    printf("SKIP: not an x86-64 build (only the portable build exists)\n");
    return 77;
}

#endif
