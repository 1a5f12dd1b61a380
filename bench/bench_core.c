/* Engine benchmark: particle-steps per second and time per phase, a periodic gas box or the default tunnel scaled up. */
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
    printf("usage: bench_core [--sizes N,N,...] [--steps S] [--threads T] [--backend cpu|cuda|auto]\n"
           "                  [--fraction F] [--scene FILE] [--fast] [--warmup W] [--csv FILE]\n"
           "                  [--integrator symplectic|euler|verlet|rk4]\n"
           "  Default: a periodic square box of discs (radius 0.5 m, mass 1 kg, k_n = 1e4 N/m, e = 1) at area\n"
           "  fraction F (default 0.3), velocity variance 1 m^2/s^2 per component, fixed dt = t_c/20.\n"
           "  --scene FILE: that scene's tunnel instead, scaled in size (tunnel, chord, position) to hold N discs.\n"
           "  --fast: non-deterministic mode (atomic scatter on the GPU); default deterministic.\n"
           "  S steps (default: about 2e7 particle-steps per size on the CPU, 2e9 on the GPU, at least 20)\n"
           "  after W warm-up steps (default 5). On the GPU it also times a device-to-device copy and prints the step's\n"
           "  modelled memory traffic against it.\n");
}

/* Bytes a step must move per disc (each array read or written once per pass), for the
 * symplectic Euler fast path on a step nobody reads (all but the last of a call): the
 * scatter reads rank, start, state, id (28; the cell is computed from the state) and writes
 * state and id (20); the gather-and-integrate reads the state (16; neighbours come from
 * cache) and start twice per neighbour row (about 8), and writes the state (16); it bins the
 * new position for the next step: writes the rank (4) and bumps a counter (4); per cell, the
 * counter memset (b, the counter's bytes) and the scan (b + 4). An observed step also writes
 * pressure, virial and acceleration (16 more). History: 168 bytes a disc in the default
 * tunnel with a separate bin kernel (it read the state again), 152 with the bin in the pass
 * and the observables counted on every step, 128 with the cell no longer stored and read back
 * and the model counting what a step that is not read must write, 112 with the GPU's 8-bit
 * cell counters (src/cuda/counts.cuh; 2.6 cells a disc). */
static double model_bytes(double cells_per_disc, unsigned counter_bits)
{
    double b = counter_bits / 8.0;
    return 8 + 48 + 40 + (4 + 2 * b) * cells_per_disc;
}

int main(int argc, char **argv)
{
    bench_args a = {{1e5, 1e6, 1e7}, 3, 0, 0, 5, NULL, NULL};
    int fast = 0;
    double fraction = 0.3;
    ad_backend backend = AD_BACKEND_CPU;
    ad_integrator integ = AD_INTEGRATOR_SYMPLECTIC_EULER;
    const char *integ_name = NULL; /* named in the case column where not the default */
    for (int i = 1; i < argc; i++) {
        if (bench_arg(argc, argv, &i, &a)) continue;
        if (!strcmp(argv[i], "--integrator") && i + 1 < argc) {
            static const char *names[] = {"symplectic", "euler", "verlet", "rk4"};
            static const ad_integrator kinds[] = {AD_INTEGRATOR_SYMPLECTIC_EULER, AD_INTEGRATOR_EULER,
                                                  AD_INTEGRATOR_VERLET, AD_INTEGRATOR_RK4};
            integ_name = argv[++i];
            int k = 0;
            while (k < 4 && strcmp(integ_name, names[k])) k++;
            if (k == 4) {
                fprintf(stderr, "bench_core: --integrator %s: expected symplectic, euler, verlet or rk4\n", integ_name);
                return 2;
            }
            integ = kinds[k];
            if (k == 0) integ_name = NULL;
            continue;
        }
        if (!strcmp(argv[i], "--fraction") && i + 1 < argc) {
            fraction = atof(argv[++i]);
        } else if (!strcmp(argv[i], "--fast")) {
            fast = 1;
        } else if (!strcmp(argv[i], "--backend") && i + 1 < argc) {
            const char *b = argv[++i];
            backend = !strcmp(b, "cuda") ? AD_BACKEND_CUDA : !strcmp(b, "auto") ? AD_BACKEND_AUTO : AD_BACKEND_CPU;
        } else {
            usage();
            return strcmp(argv[i], "--help") ? 2 : 0;
        }
    }
    double copy_rate = 0.0;
#if defined(AD_HAVE_CUDA)
    if (backend != AD_BACKEND_CPU && ad_cuda_device_count() > 0) {
        copy_rate = ad_cuda_copy_rate((size_t)2 << 30, 21);
        printf("device-to-device copy of 2 GiB: %.3g bytes/s (read + written, median of 21)\n", copy_rate);
    }
#endif
    FILE *out;
    if (!bench_csv("bench_core", a.csv,
                   "backend,case,n,threads,deterministic,steps,seconds,particle_steps_per_s,per_thread,bin_ms,scan_ms,"
                   "scatter_ms,interact_ms,cells,bytes_per_particle,model_bytes_per_step,achieved_bytes_per_s,"
                   "copy_bytes_per_s\n",
                   &out))
        return 1;
    printf("%-5s %-6s %11s %4s %6s %9s %11s %10s %8s %8s %8s %9s %6s %9s\n", "back", "case", "particles", "thr",
           "steps", "seconds", "p-steps/s", "per thread", "bin ms", "scan ms", "scat ms", "inter ms", "B/p",
           "BW/copy");
    for (int k = 0; k < a.nsizes; k++) {
        double n = a.sizes[k], r = 0.5;
        ad_world *w = NULL;
        ad_status st;
        ad_world_def d;
        if (a.scene) {
            ad_scene sc;
            st = scaled_scene(a.scene, n, &sc);
            if (st.code) {
                fprintf(stderr, "bench_core: %s\n", st.message);
                return 1;
            }
            sc.backend = backend;
            sc.threads = a.threads;
            sc.deterministic = !fast;
            sc.integrator = integ;
            st = ad_scene_build(&sc, &w);
            r = sc.radius;
        } else {
            double L = sqrt(n * M_PI * r * r / fraction);
            d = ad_default_world_def();
            d.capacity = (size_t)(n * 1.01) + 16;
            d.radius = r;
            d.x_min = d.y_min = 0.0;
            d.x_max = d.y_max = L;
            d.boundary_x = d.boundary_y = AD_BOUNDARY_PERIODIC;
            d.adaptive_dt = 0;
            d.dt = M_PI * sqrt(0.5 / d.stiffness) / 20.0;
            d.threads = a.threads;
            d.backend = backend;
            d.deterministic = !fast;
            d.integrator = integ;
            st = ad_world_create(&d, &w);
            if (!st.code) {
                ad_fill_def f = {0, 0, L, L, fraction, 0, 0, 1.0, 42, 0, 0, 0};
                st = ad_world_fill(w, &f, NULL);
            }
        }
        if (!st.code) st = ad_world_step(w, (uint64_t)a.warmup);
        if (st.code) {
            fprintf(stderr, "bench_core: %s\n", st.message);
            return 1;
        }
        ad_stats s0, s1;
        ad_world_get_stats(w, &s0);
        size_t added = s0.count;
        double budget = s0.backend == AD_BACKEND_CUDA ? 2e9 : 2e7;
        long steps = a.steps > 0 ? a.steps : (long)fmax(20.0, budget / (double)added);
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
        double cells = (double)s1.grid_nx * s1.grid_ny;
        double mb = model_bytes(cells / (double)added, s1.cell_counter_bits), achieved = mb * ps;
        int thr = s1.threads > 0 ? s1.threads : 1;
        double bpp = 0;
        {
            /* bytes per disc of the buffers, from the world's own accounting */
            ad_world_def dd = w->def;
            bpp = (double)ad_world_bytes_needed(&dd) / (double)dd.capacity;
        }
        char kase[64];
        snprintf(kase, sizeof kase, "%s%s%s", a.scene ? "tunnel" : "box", integ_name ? "-" : "",
                 integ_name ? integ_name : "");
        printf("%-5s %-6s %11zu %4d %6ld %9.3f %11.4g %10.4g %8.3f %8.3f %8.3f %9.3f %6.0f %9s\n",
               ad_backend_name(s1.backend), kase, added, thr, steps, sec, ps, ps / thr, ph[0],
               ph[1], ph[2], ph[3], bpp, "");
        if (copy_rate > 0)
            printf("      modelled traffic %.0f bytes/disc/step -> %.3g bytes/s = %.2f of the copy rate; the step "
                   "takes %.2fx the copy time of that traffic\n",
                   mb, achieved, achieved / copy_rate, copy_rate / achieved);
        fflush(stdout);
        if (out)
            fprintf(out, "%s,%s,%zu,%d,%d,%ld,%.6f,%.6g,%.6g,%.5f,%.5f,%.5f,%.5f,%.0f,%.1f,%.1f,%.6g,%.6g\n",
                    ad_backend_name(s1.backend), kase, added, thr, !fast, steps, sec, ps,
                    ps / thr, ph[0], ph[1], ph[2], ph[3], cells, bpp, mb, achieved, copy_rate);
        ad_world_destroy(w);
    }
    if (out) fclose(out);
    return 0;
}
