/* Engine-core benchmark: particle-steps per second and time per phase for a 2D gas at area fraction 0.3. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aerodem/aerodem.h"

static double wall(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void usage(void)
{
    printf("usage: bench_core [--sizes N,N,...] [--steps S] [--threads T] [--backend cpu|cuda|auto]\n"
           "                  [--fraction F] [--csv FILE]\n"
           "  A periodic square box of discs (radius 0.5 m, mass 1 kg, k_n = 1e4 N/m, e = 1) at area\n"
           "  fraction F (default 0.3), velocity variance 1 m^2/s^2 per component, fixed dt = t_c/20.\n"
           "  S steps (default: about 2e7 particle-steps per size, at least 20) after 5 warm-up steps.\n");
}

int main(int argc, char **argv)
{
    double sizes[16] = {1e5, 1e6, 1e7};
    int nsizes = 3, threads = 0;
    long steps_arg = 0;
    double fraction = 0.3;
    const char *csv = NULL;
    ad_backend backend = AD_BACKEND_CPU;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
            nsizes = 0;
            for (char *t = strtok(argv[++i], ","); t && nsizes < 16; t = strtok(NULL, ",")) sizes[nsizes++] = atof(t);
        } else if (!strcmp(argv[i], "--steps") && i + 1 < argc) {
            steps_arg = atol(argv[++i]);
        } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            threads = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--fraction") && i + 1 < argc) {
            fraction = atof(argv[++i]);
        } else if (!strcmp(argv[i], "--csv") && i + 1 < argc) {
            csv = argv[++i];
        } else if (!strcmp(argv[i], "--backend") && i + 1 < argc) {
            const char *b = argv[++i];
            backend = !strcmp(b, "cuda") ? AD_BACKEND_CUDA : !strcmp(b, "auto") ? AD_BACKEND_AUTO : AD_BACKEND_CPU;
        } else {
            usage();
            return strcmp(argv[i], "--help") ? 2 : 0;
        }
    }
    FILE *out = NULL;
    if (csv) {
        out = fopen(csv, "w");
        if (!out) {
            fprintf(stderr, "bench_core: cannot write %s\n", csv);
            return 1;
        }
        fprintf(out, "backend,n,threads,steps,seconds,particle_steps_per_s,per_thread,bin_ms,scan_ms,scatter_ms,"
                     "interact_ms,cells,bytes_per_particle\n");
    }
    printf("%-5s %10s %4s %6s %9s %12s %11s %8s %8s %8s %9s %6s\n", "back", "particles", "thr", "steps", "seconds",
           "p-steps/s", "per thread", "bin ms", "scan ms", "scat ms", "inter ms", "B/p");
    for (int k = 0; k < nsizes; k++) {
        double n = sizes[k], r = 0.5;
        double L = sqrt(n * M_PI * r * r / fraction);
        ad_world_def d = ad_default_world_def();
        d.capacity = (size_t)(n * 1.01) + 16;
        d.radius = r;
        d.x_min = d.y_min = 0.0;
        d.x_max = d.y_max = L;
        d.boundary_x = d.boundary_y = AD_BOUNDARY_PERIODIC;
        d.adaptive_dt = 0;
        d.dt = M_PI * sqrt(0.5 / d.stiffness) / 20.0;
        d.threads = threads;
        d.backend = backend;
        ad_world *w;
        ad_status st = ad_world_create(&d, &w);
        if (st.code) {
            fprintf(stderr, "bench_core: %s\n", st.message);
            return 1;
        }
        ad_fill_def f = {0, 0, L, L, fraction, 0, 0, 1.0, 42};
        size_t added = 0;
        st = ad_world_fill(w, &f, &added);
        if (!st.code) st = ad_world_step(w, 5);
        if (st.code) {
            fprintf(stderr, "bench_core: %s\n", st.message);
            return 1;
        }
        long steps = steps_arg > 0 ? steps_arg : (long)fmax(20.0, 2e7 / (double)added);
        ad_stats s0, s1;
        ad_world_get_stats(w, &s0);
        double t0 = wall();
        st = ad_world_step(w, (uint64_t)steps);
        ad_world_get_stats(w, &s1); /* on the GPU this waits for the steps to finish */
        double sec = wall() - t0;
        if (st.code) {
            fprintf(stderr, "bench_core: %s\n", st.message);
            return 1;
        }
        double ps = (double)added * (double)steps / sec;
        double ph[AD_PHASE_COUNT];
        for (int p = 0; p < AD_PHASE_COUNT; p++) ph[p] = 1e3 * (s1.phase_seconds[p] - s0.phase_seconds[p]) / steps;
        double bpp = (double)ad_world_bytes_needed(&d) / (double)d.capacity;
        printf("%-5s %10zu %4d %6ld %9.3f %12.4g %11.4g %8.3f %8.3f %8.3f %9.3f %6.0f\n", ad_backend_name(s1.backend),
               added, s1.threads, steps, sec, ps, ps / s1.threads, ph[0], ph[1], ph[2], ph[3], bpp);
        fflush(stdout);
        if (out)
            fprintf(out, "%s,%zu,%d,%ld,%.6f,%.6g,%.6g,%.5f,%.5f,%.5f,%.5f,%u,%.1f\n", ad_backend_name(s1.backend),
                    added, s1.threads, steps, sec, ps, ps / s1.threads, ph[0], ph[1], ph[2], ph[3],
                    s1.grid_nx * s1.grid_ny, bpp);
        ad_world_destroy(w);
    }
    if (out) fclose(out);
    return 0;
}
