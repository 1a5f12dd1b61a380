/* 3D benchmark (issue 18): sphere-steps per second, time per phase and bytes per sphere, for three cases:
 *   gas      a periodic cube of spheres at volume fraction F (default 0.2) drifting at V (default 1 m/s) along x,
 *            velocity variance 1 m^2/s^2 per component
 *   tunnel   case (a) of issue 18: the same gas in a tunnel with an inlet, 4 x 1 x 1 (x by y by z), open
 *            along x (the free stream at V, kT/m = 1 and the gas's number density enters through both x
 *            faces, spheres past them leave: physics/open3.h), periodic along y and z, filled with the
 *            stream's gas; capacity 1.4 n (the gas piles up ahead of the outlet's loss: docs/VALIDATION.md)
 *   lattice  the scene of NVIDIA's cuda-samples `particles`: spheres on a cubic lattice of one diameter
 *            spacing filling a closed box, jittered by 1 % of the radius, at rest under weak gravity,
 *            cells of one diameter (cuda-samples runs 256^3 of them)
 * Radius 0.5 m, mass 1 kg, k_n = 1e4 N/m, e = 1 (the lattice e = 0.9), fixed dt = t_c / 20. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aerodem/aerodem.h"
#include "core/world_internal.h"
#include "bench_util.h"

static void usage(void)
{
    printf("usage: bench_3d [--case gas|lattice|tunnel|both|all] [--backend cpu|cuda] [--sizes N,N,...] [--steps S] [--threads T]\n"
           "                [--fraction F] [--drift V] [--warmup W] [--csv FILE]\n"
           "  --drift V: the gas's mean velocity along x (default 1 m/s; 0 for the side by side with LAMMPS,\n"
           "  bench/lammps/in.gas3d); the tunnel's free stream. both: gas and lattice; all: the three.\n"
           "  S steps (default: about 1e7 sphere-steps per size on the CPU, 1e9 on the GPU, at least 10) after W warm-up\n"
           "  steps (default 3).\n");
}

/* The GPU step's modelled memory traffic [bytes a sphere] (symplectic Euler, the counting sort of
 * src/cuda/cuda3.cu), counting each array a kernel must read or write once (neighbours' states and the
 * cells' starts come from cache):
 *   k3_count        reads the position half (16), writes cell and rank (8), adds to a counter (4);
 *   cell members    reads cell, rank and the cell's start (12), writes the member (4);
 *   stable rank     reads cell, two starts and the cell's members (about 16), writes perm (4);
 *   k3_reorder      reads perm, state and id (40), writes state and id (36) (Verlet alone also
 *                   moves the accelerations);
 *   k3_interact     reads the state (32), its rows' starts (about 8) and id (4), writes state, id,
 *                   acceleration, pressure and virial (56);
 * and per cell the scan: the counters read twice and cleared (3 b, b the counter's bytes) and start
 * written (4). 247 bytes a sphere for the lattice (one cell a sphere, 8-bit counters). */
static double model_bytes3(double cells_per_sphere, unsigned counter_bits)
{
    double b = counter_bits / 8.0;
    return 28 + 16 + 20 + 76 + 100 + (3 * b + 4) * cells_per_sphere;
}

enum { CASE_GAS, CASE_LATTICE, CASE_TUNNEL, CASES };
static const char *const case_name[CASES] = {"gas", "lattice", "tunnel"};

/* The tunnel (case (a)): 4 x 1 x 1, open along x, the free stream at the gas's density, drifting at V. */
static void tunnel_def(ad_world_def *d, double n, double fraction, double drift, double *side)
{
    *side = cbrt(n * M_PI / 6.0 / fraction / 4.0);
    d->x_max = 4.0 * *side;
    d->y_max = d->z_max = *side;
    d->capacity = (size_t)(n * 1.4) + 16;
    d->boundary_x = AD_BOUNDARY_OPEN;
    d->boundary_y = d->boundary_z = AD_BOUNDARY_PERIODIC;
    d->stream_vx = drift;
    d->stream_temperature = 1.0;
    d->stream_density = fraction / (M_PI / 6.0); /* spheres of one diameter a cubic metre */
}

static ad_world *make(int kind, double n, double fraction, double drift, int threads, ad_backend backend,
                      ad_status *st)
{
    ad_world_def d = ad_default_world_def();
    d.dimensions = 3;
    d.backend = backend;
    d.threads = threads;
    d.adaptive_dt = 0;
    d.dt = M_PI * sqrt(0.5 / d.stiffness) / 20.0;
    int lattice = kind == CASE_LATTICE;
    double side = lattice ? ceil(cbrt(n)) : cbrt(n * M_PI / 6.0 / fraction);
    d.x_max = d.y_max = d.z_max = side;
    d.capacity = (size_t)(lattice ? side * side * side : n * 1.1) + 16;
    if (kind == CASE_TUNNEL) {
        tunnel_def(&d, n, fraction, drift, &side);
    } else if (lattice) {
        d.gravity_y = -0.03;
        d.restitution = d.wall_restitution = 0.9;
    } else {
        d.boundary_x = d.boundary_y = d.boundary_z = AD_BOUNDARY_PERIODIC;
    }
    ad_world *w = NULL;
    *st = ad_world_create(&d, &w);
    if (st->code) return NULL;
    if (lattice) {
        size_t k = (size_t)side, cnt = k * k * k;
        ad_particle3 *p = malloc(cnt * sizeof *p);
        if (!p) {
            *st = ad_fail(AD_ERR_NO_MEMORY, "", "out of memory");
            ad_world_destroy(w);
            return NULL;
        }
        uint64_t r = 12345;
        for (size_t i = 0; i < cnt; i++) {
            float j[3];
            for (int a = 0; a < 3; a++) {
                r = r * 6364136223846793005ull + 1442695040888963407ull;
                j[a] = (float)(0.005 * (2.0 * (double)(r >> 11) / 9007199254740992.0 - 1.0)); /* 1 % of r */
            }
            p[i] = (ad_particle3){(float)(i % k) + 0.5f + j[0], (float)((i / k) % k) + 0.5f + j[1],
                                  (float)(i / (k * k)) + 0.5f + j[2], 0, 0, 0};
        }
        *st = ad_world_add_particles3(w, p, cnt);
        free(p);
    } else {
        ad_fill_def f = {0, 0, d.x_max, side, fraction, drift, 0.0, 1.0, 42, 0, side, 0.0};
        *st = ad_world_fill(w, &f, NULL);
    }
    if (st->code) {
        ad_world_destroy(w);
        return NULL;
    }
    return w;
}

int main(int argc, char **argv)
{
    bench_args a = {{1e4, 1e5, 1e6}, 3, 0, 0, 3, NULL, NULL};
    double fraction = 0.2, drift = 1.0;
    int cases = 3; /* bit k: case k (gas, lattice, tunnel) */
    ad_backend backend = AD_BACKEND_CPU;
    for (int i = 1; i < argc; i++) {
        if (bench_arg(argc, argv, &i, &a)) continue;
        if (!strcmp(argv[i], "--fraction") && i + 1 < argc) fraction = atof(argv[++i]);
        else if (!strcmp(argv[i], "--drift") && i + 1 < argc) drift = atof(argv[++i]);
        else if (!strcmp(argv[i], "--backend") && i + 1 < argc) {
            const char *b = argv[++i];
            backend = !strcmp(b, "cuda") ? AD_BACKEND_CUDA : AD_BACKEND_CPU;
            if (strcmp(b, "cuda") && strcmp(b, "cpu")) return usage(), 2;
        }
        else if (!strcmp(argv[i], "--case") && i + 1 < argc) {
            const char *c = argv[++i];
            cases = !strcmp(c, "gas")      ? 1
                    : !strcmp(c, "lattice") ? 2
                    : !strcmp(c, "tunnel")  ? 4
                    : !strcmp(c, "both")    ? 3
                    : !strcmp(c, "all")     ? 7
                                            : 0;
            if (!cases) return usage(), 2;
        } else return usage(), strcmp(argv[i], "--help") ? 2 : 0;
    }
    double copy_rate = 0.0;
#if defined(AD_HAVE_CUDA)
    if (backend == AD_BACKEND_CUDA && ad_cuda_device_count() > 0) {
        copy_rate = ad_cuda_copy_rate((size_t)2 << 30, 21);
        printf("device-to-device copy of 2 GiB: %.3g bytes/s (read + written, median of 21)\n", copy_rate);
    }
#endif
    FILE *csv;
    if (!bench_csv("bench_3d", a.csv, "case,backend,spheres,steps,threads,sphere_steps_per_s,ns_per_sphere_step,bytes_per_sphere,"
                   "bin_s,scan_s,scatter_s,interact_s,cells,counter_bits,model_bytes_per_step,copy_bytes_per_s\n", &csv))
        return 1;
    printf("%-8s %-5s %10s %6s %7s %14s %9s %9s  %s\n", "case", "back", "spheres", "steps", "threads", "sphere-steps/s",
           "ns/s-step", "B/sphere", "bin / scan / scatter / interact [%]");
    for (int c = 0; c < CASES; c++) {
        if (!(cases & (1 << c))) continue;
        for (int s = 0; s < a.nsizes; s++) {
            ad_status st;
            ad_world *w = make(c, a.sizes[s], fraction, drift, a.threads, backend, &st);
            if (!w) {
                fprintf(stderr, "bench_3d: %s\n", st.message);
                return 1;
            }
            double n = (double)w->count; /* the tunnel's: as filled (it changes by a few per cent) */
            long steps = a.steps ? a.steps : (long)fmax(10.0, (backend == AD_BACKEND_CUDA ? 1e9 : 1e7) / n);
            st = ad_world_step(w, (uint64_t)a.warmup);
            ad_stats s0, s1;
            ad_world_get_stats(w, &s0);
            double t0 = wall();
            if (!st.code) st = ad_world_step(w, (uint64_t)steps);
            double t = wall() - t0;
            ad_world_get_stats(w, &s1);
            if (st.code) {
                fprintf(stderr, "bench_3d: %s\n", st.message);
                return 1;
            }
            double ph[AD_PHASE_COUNT], tot = 0;
            for (int k = 0; k < AD_PHASE_COUNT; k++) tot += ph[k] = s1.phase_seconds[k] - s0.phase_seconds[k];
            if (!(tot > 0)) tot = 1.0; /* the 3D GPU step is not timed by phase: zeros */
            double rate = n * steps / t, bytes = (double)ad_world_bytes_needed(&w->def) / (double)w->def.capacity;
            const char *name = case_name[c];
            const char *bk = backend == AD_BACKEND_CUDA ? "cuda" : "cpu";
            printf("%-8s %-5s %10.0f %6ld %7d %14.4g %9.2f %9.0f  %.0f / %.0f / %.0f / %.0f\n", name, bk, n, steps,
                   s1.threads, rate, 1e9 / rate, bytes, 100 * ph[0] / tot, 100 * ph[1] / tot, 100 * ph[2] / tot,
                   100 * ph[3] / tot);
            double cells = (double)s1.grid_nx * s1.grid_ny * s1.grid_nz, mb = model_bytes3(cells / n, s1.cell_counter_bits);
            if (copy_rate > 0)
                printf("      modelled traffic %.0f bytes/sphere/step (%.2f cells a sphere, %u-bit counters) -> %.3g "
                       "bytes/s = %.2f of the copy rate; the step takes %.2fx the copy time of that traffic\n",
                       mb, cells / n, s1.cell_counter_bits, mb * rate, mb * rate / copy_rate, copy_rate / (mb * rate));
            if (c == CASE_TUNNEL)
                printf("      free stream: %.0f spheres after the steps (%.0f filled), %.4g entered and %.4g left a step, "
                       "%u waiting, %llu lost\n", (double)w->count, n,
                       (double)(s1.entered - s0.entered) / (double)steps, (double)(s1.left - s0.left) / (double)steps,
                       s1.entries_waiting, (unsigned long long)s1.entries_lost);
            if (csv)
                fprintf(csv, "%s,%s,%.0f,%ld,%d,%.6g,%.4g,%.1f,%.4g,%.4g,%.4g,%.4g,%.0f,%u,%.0f,%.4g\n", name, bk, n, steps,
                        s1.threads, rate, 1e9 / rate, bytes, ph[0], ph[1], ph[2], ph[3], cells, s1.cell_counter_bits, mb,
                        copy_rate);
            ad_world_destroy(w);
        }
    }
    if (csv) fclose(csv);
    return 0;
}
