/* Broad-phase benchmark: the grid against the BVH (build and query time per step) on a tunnel, a dense pile and a
 * dilute gas. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aerodem/aerodem.h"
#include "core/scene.h"
#include "core/world_internal.h"
#include "bench_util.h"

static void usage(void)
{
    printf("usage: bench_broadphase [--sizes N,N,...] [--cases tunnel,pile,dilute] [--steps S] [--warmup W]\n"
           "                        [--threads T] [--backend cpu|cuda] [--scene FILE] [--csv FILE]\n"
           "  Times one step's broad phase on the grid and on the BVH: build (keys or bins, sort or scan,\n"
           "  reorder, tree) and query (the fused gather-and-integrate pass, which walks the grid or the tree).\n"
           "  tunnel: the scene (default scenes/default.ini) scaled in size to N discs (area fraction 0.3).\n"
           "  pile:   a closed box under gravity (g = 1 m/s^2) whose lower half is packed at area fraction 0.7\n"
           "          with cold discs (kT/m = 1e-4 m^2/s^2) and whose upper half is empty.\n"
           "  dilute: a periodic box at area fraction 0.01.\n"
           "  Variants: grid, bvh (gather, stack in local memory); on CUDA also bvh-shared (stack in shared\n"
           "  memory), bvh-reflexive and bvh-reflexive-shared. S steps (default: about 2e7 disc-steps per run on\n"
           "  the CPU, 2e9 on the GPU, at least 5) after W warm-up steps (default 3).\n");
}

typedef struct variant {
    const char *name;
    ad_broad_phase phase;
    ad_bvh_traversal trav;
    int shared, gpu_only;
} variant;

static const variant VARIANTS[] = {
    {"grid", AD_BROAD_PHASE_GRID, AD_BVH_GATHER, 0, 0},
    {"bvh", AD_BROAD_PHASE_BVH, AD_BVH_GATHER, 0, 0},
    {"bvh-shared", AD_BROAD_PHASE_BVH, AD_BVH_GATHER, 1, 1},
    {"bvh-reflexive", AD_BROAD_PHASE_BVH, AD_BVH_REFLEXIVE, 0, 1},
    {"bvh-reflexive-shared", AD_BROAD_PHASE_BVH, AD_BVH_REFLEXIVE, 1, 1},
};

/* A world of about n discs for one case and variant. */
static ad_status make(const char *kind, double n, const char *scene_path, const variant *v, ad_backend backend,
                      int threads, ad_world **out)
{
    *out = NULL;
    if (!strcmp(kind, "tunnel")) {
        ad_scene sc;
        ad_status st = scaled_scene(scene_path, n, &sc);
        if (st.code) return st;
        sc.backend = backend;
        sc.threads = threads;
        sc.broad_phase = v->phase;
        sc.bvh_traversal = v->trav;
        st = ad_scene_build(&sc, out);
        if (!st.code) (*out)->bvh_shared_stack = v->shared;
        return st;
    }
    int pile = !strcmp(kind, "pile");
    double r = 0.5, frac = pile ? 0.7 : 0.01;
    double filled = n * M_PI * r * r / frac; /* area of the filled region */
    double L = sqrt(pile ? 2.0 * filled : filled); /* the pile fills the lower half of its box */
    ad_world_def d = ad_default_world_def();
    d.capacity = (size_t)(n * 1.05) + 16;
    d.radius = r;
    d.x_max = d.y_max = L;
    d.boundary_x = d.boundary_y = pile ? AD_BOUNDARY_SOLID : AD_BOUNDARY_PERIODIC;
    d.gravity_y = pile ? -1.0 : 0.0;
    d.restitution = pile ? 0.5 : 1.0;
    d.threads = threads;
    d.backend = backend;
    d.broad_phase = v->phase;
    d.bvh_traversal = v->trav;
    ad_status st = ad_world_create(&d, out);
    if (st.code) return st;
    (*out)->bvh_shared_stack = v->shared;
    ad_fill_def f = {0, 0, L, pile ? 0.5 * L : L, frac, 0, 0, pile ? 1e-4 : 1.0, 42, 0, 0, 0};
    return ad_world_fill(*out, &f, NULL);
}

int main(int argc, char **argv)
{
    bench_args a = {{1e5, 1e6}, 2, 0, 0, 3, "scenes/default.ini", NULL};
    char cases_buf[256] = "tunnel,pile,dilute";
    ad_backend backend = AD_BACKEND_CPU;
    for (int i = 1; i < argc; i++) {
        if (bench_arg(argc, argv, &i, &a)) continue;
        if (!strcmp(argv[i], "--cases") && i + 1 < argc) {
            snprintf(cases_buf, sizeof cases_buf, "%s", argv[++i]);
        } else if (!strcmp(argv[i], "--backend") && i + 1 < argc) {
            backend = !strcmp(argv[++i], "cuda") ? AD_BACKEND_CUDA : AD_BACKEND_CPU;
        } else {
            usage();
            return strcmp(argv[i], "--help") ? 2 : 0;
        }
    }
    const char *cases[8];
    int ncases = 0;
    for (char *t = strtok(cases_buf, ","); t && ncases < 8; t = strtok(NULL, ",")) cases[ncases++] = t;
    FILE *out;
    if (!bench_csv("bench_broadphase", a.csv,
                   "backend,case,n,variant,threads,steps,build_ms,query_ms,step_ms,bytes_per_disc\n", &out))
        return 1;
    printf("%-5s %-7s %10s %-21s %4s %6s %10s %10s %10s %8s\n", "back", "case", "discs", "broad phase", "thr", "steps",
           "build ms", "query ms", "step ms", "B/disc");
    for (int ci = 0; ci < ncases; ci++)
        for (int k = 0; k < a.nsizes; k++)
            for (size_t vi = 0; vi < sizeof VARIANTS / sizeof VARIANTS[0]; vi++) {
                const variant *v = &VARIANTS[vi];
                if (v->gpu_only && backend != AD_BACKEND_CUDA) continue;
                ad_world *w = NULL;
                ad_status st = make(cases[ci], a.sizes[k], a.scene, v, backend, a.threads, &w);
                if (!st.code) st = ad_world_step(w, (uint64_t)a.warmup);
                if (st.code) {
                    printf("%-5s %-7s %10.0f %-21s skipped: %s\n", backend == AD_BACKEND_CUDA ? "cuda" : "cpu",
                           cases[ci], a.sizes[k], v->name, st.message);
                    ad_world_destroy(w);
                    continue;
                }
                ad_stats s0, s1;
                ad_world_get_stats(w, &s0);
                double budget = s0.backend == AD_BACKEND_CUDA ? 2e9 : 2e7;
                long steps = a.steps > 0 ? a.steps : (long)fmax(5.0, budget / (double)s0.count);
                double t0 = wall();
                st = ad_world_step(w, (uint64_t)steps);
                ad_world_get_stats(w, &s1);
                double sec = wall() - t0;
                if (st.code) {
                    fprintf(stderr, "bench_broadphase: %s\n", st.message);
                    return 1;
                }
                double ph[AD_PHASE_COUNT];
                for (int p = 0; p < AD_PHASE_COUNT; p++)
                    ph[p] = 1e3 * (s1.phase_seconds[p] - s0.phase_seconds[p]) / (double)steps;
                double build = ph[AD_PHASE_BIN] + ph[AD_PHASE_SCAN] + ph[AD_PHASE_SCATTER];
                double bpd = (double)ad_world_bytes_needed(&w->def) / (double)w->def.capacity;
                const char *bn = ad_backend_name(s1.backend);
                int thr = s1.threads > 0 ? s1.threads : 1;
                printf("%-5s %-7s %10zu %-21s %4d %6ld %10.3f %10.3f %10.3f %8.0f\n", bn, cases[ci], s1.count,
                       v->name, thr, steps, build, ph[AD_PHASE_INTERACT], 1e3 * sec / (double)steps, bpd);
                fflush(stdout);
                if (out)
                    fprintf(out, "%s,%s,%zu,%s,%d,%ld,%.5f,%.5f,%.5f,%.1f\n", bn, cases[ci], s1.count, v->name, thr,
                            steps, build, ph[AD_PHASE_INTERACT], 1e3 * sec / (double)steps, bpd);
                ad_world_destroy(w);
            }
    if (out) fclose(out);
    return 0;
}
