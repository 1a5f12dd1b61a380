/* backend = mpi under mpirun (tests/test_mpi_world.sh runs it on 1, 2, 3 and 4 ranks and compares what
 * the ranks print): each case runs a world decomposed over the job's ranks and prints, on rank 0, one
 * line of fingerprints of everything a user reads (the discs by id, the statistics, the body's force,
 * the field sums), which must be the same for any number of ranks. It checks on its own, every few steps,
 * that no disc is lost or duplicated (the ids read back are each seen once, as many as the count) and
 * that every rank reads the same world.
 *   crossing: a periodic box of fast gas, 10^4 steps, discs crossing the slabs' edges every step;
 *   tunnel:   open inlet and outlet with the reservoir, a flat plate at 20 degrees, fields and a probe;
 *   verlet:   the tunnel with velocity Verlet (its prime and its drift before the ghosts);
 *   rk4:      the tunnel with RK4 (the ghosts' states exchanged after each of its first three stages);
 *   pile:     a closed box with its gas piled against one wall: the load balance moves the slabs' edges
 *             (checked on 2 ranks and more), the results the same bits wherever they are;
 *   narrow:   a periodic box a few cells wide, so that on two ranks each is both neighbours of the other
 *             and a slab is as narrow as the ranks allow (no disc may come twice as a ghost);
 *   resume:   without CHECKPOINT, the tunnel run half way and saved there; with it, loaded (the same file
 *             on every rank, any number of ranks) and run to the end: its
 *             discs and statistics those of the uninterrupted run bit for bit; its field sums, reloaded
 *             into the column groups, differ from the uninterrupted run's in rounding only (the line's
 *             density, the sum of the density field, agrees to 9 digits).
 * and in 3D (spheres; slabs along x, y and z whole on every rank):
 *   crossing3: a box of fast spheres, periodic along x and z, solid along y, 2000 steps, spheres crossing
 *             the slabs' edges every step;
 *   tunnel3:  open inlet and outlet with the reservoir, an octahedron of 8 triangles in the stream, fields
 *             and a probe (3D grids); verlet3 and rk43: the same with velocity Verlet and with RK4;
 *   resume3:  the resume case on tunnel3.
 * Usage: test_mpi_world CASE [STEPS] [CHECKPOINT]; exit 0 when the case's own checks pass. */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aerodem/aerodem.h"

#define PI 3.14159265358979323846
#define MPI_GROUPS 256 /* the most slabs a world reports here */

static int rank;
static ad_backend backend = AD_BACKEND_MPI; /* AERODEM_TEST_BACKEND=cpu: one process, for comparison */
static ad_integrator integrator;           /* the default's (symplectic Euler); case verlet: velocity Verlet */
static int three;                          /* the case's world is 3D (spheres) */

#include "mpi_test_checks.h"

/* The discs by id: every id once, as many as the count; their fingerprint, the same on every rank. */
static uint64_t discs_print(ad_world *w)
{
    ad_stats s;
    OK(ad_world_get_stats(w, &s));
    size_t n = s.count, got = 0;
    ad_particle *st = malloc((n + 1) * sizeof *st);
    ad_particle3 *st3 = malloc((n + 1) * sizeof *st3);
    uint32_t *id = malloc((n + 1) * sizeof *id);
    CHECK(st && st3 && id, "out of memory");
    ad_particle_out out = {0};
    if (three) out.state3 = st3;
    else out.state = st;
    out.id = id;
    OK(ad_world_read(w, AD_READ_BY_ID, n, &out, &got));
    CHECK(got == n, "read %zu discs of %zu", got, n);
    for (size_t i = 1; i < n; i++) CHECK(id[i] > id[i - 1], "id %u read twice or out of order", id[i]);
    uint64_t h = three ? fnv(1469598103934665603ull, st3, n * sizeof *st3)
                       : fnv(1469598103934665603ull, st, n * sizeof *st);
    h = fnv(h, id, n * sizeof *id);
    uint64_t all = h;
    MPI_Bcast(&all, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    CHECK(all == h, "the ranks read different worlds");
    free(st);
    free(st3);
    free(id);
    return h;
}

static uint64_t stats_print(ad_world *w, ad_stats *s)
{
    OK(ad_world_get_stats(w, s));
    double v[] = {s->time, s->dt, s->kinetic_energy, s->body_force_x, s->body_force_y, s->body_impulse_x, s->body_impulse_y, (double)s->count, (double)s->entered,
                  (double)s->left, (double)s->reservoir_added, (double)s->reservoir_removed};
    uint64_t h = fnv(1469598103934665603ull, v, sizeof v);
    double v3[] = {s->body_force_z, s->body_impulse_z, s->body_torque_x, s->body_torque_y, s->body_torque_z};
    return three ? fnv(h, v3, sizeof v3) : h;
}

static uint64_t fields_print(ad_world *w, double *density)
{
    *density = 0.0;
    ad_field_def d;
    if (ad_world_get_fields(w, &d).code) return 0;
    size_t cells = (size_t)d.nx * (size_t)d.ny * (size_t)(three ? d.nz : 1);
    float *v = malloc((cells + 1) * sizeof *v);
    CHECK(v != NULL, "out of memory");
    uint64_t h = 1469598103934665603ull;
    for (int f = AD_FIELD_DENSITY; f <= AD_FIELD_VELOCITY_Y; f++) {
        uint64_t samples;
        OK(ad_world_read_field(w, (ad_field)f, v, &samples));
        h = fnv(h, v, cells * sizeof *v);
    }
    ad_probe_sums p; /* its bytes are hashed: ad_world_read_probe writes every one, its padding too */
    if (!ad_world_read_probe(w, &p).code) h = fnv(h, &p, sizeof p);
    *density = 0.0;
    OK(ad_world_read_field(w, AD_FIELD_DENSITY, v, NULL));
    for (size_t c = 0; c < cells; c++)
        if (v[c] == v[c]) *density += v[c];
    free(v);
    return h;
}

static ad_world *crossing(void)
{
    ad_world_def def = ad_default_world_def();
    def.backend = backend;
    def.x_max = 80, def.y_max = 20;
    def.boundary_x = AD_BOUNDARY_PERIODIC;
    def.capacity = 4000;
    ad_world *w;
    OK(ad_world_create(&def, &w));
    ad_fill_def fill = {0, 0, 80, 20, 0.35, 4.0, 0.5, 2.0, 7, 0, 0, 0};
    OK(ad_world_fill(w, &fill, NULL));
    return w;
}

static ad_world *tunnel(void)
{
    ad_world_def def = ad_default_world_def();
    def.backend = backend;
    def.x_max = 120, def.y_max = 60;
    if (integrator) def.integrator = integrator;
    def.boundary_x = AD_BOUNDARY_OPEN;
    def.boundary_y = AD_BOUNDARY_SOLID;
    def.stream_vx = 3.0;
    def.stream_temperature = 1.0;
    def.stream_density = 0.3 / (PI * 0.25);
    def.reservoir = 6.0;
    def.capacity = 12000;
    ad_world *w;
    OK(ad_world_create(&def, &w));
    double a = 20.0 * PI / 180.0, cx = 45, cy = 30, h = 8;
    ad_segment plate = {(float)(cx - h * cos(a)), (float)(cy + h * sin(a)), (float)(cx + h * cos(a)), (float)(cy - h * sin(a))};
    OK(ad_world_add_segments(w, &plate, 1));
    ad_fill_def fill = {0, 0, 120, 60, 0.3, 3.0, 0, 1.0, 3, 0, 0, 0};
    OK(ad_world_fill(w, &fill, NULL));
    ad_field_def f = {0};
    f.nx = 60, f.ny = 30, f.x1 = 120, f.y1 = 60, f.interval = 5;
    OK(ad_world_set_fields(w, &f));
    ad_probe_def pr = {0};
    pr.x0 = 10, pr.x1 = 25, pr.y0 = 10, pr.y1 = 50, pr.dir_x = 1;
    OK(ad_world_set_probe(w, &pr));
    return w;
}

/* A closed box whose gas is piled against its left wall (dense there, dilute elsewhere, gravity along -x):
 * even slabs leave the first rank most of the work, and the load balance moves the edges. */
static ad_world *pile(void)
{
    ad_world_def def = ad_default_world_def();
    def.backend = backend;
    def.x_max = 160, def.y_max = 30;
    def.gravity_x = -2.0;
    def.restitution = 0.8;
    def.capacity = 8000;
    ad_world *w;
    OK(ad_world_create(&def, &w));
    ad_fill_def dense = {0, 0, 40, 30, 0.45, 0, 0, 0.5, 11, 0, 0, 0};
    ad_fill_def dilute = {40, 0, 160, 30, 0.03, 0, 0, 0.5, 12, 0, 0, 0};
    OK(ad_world_fill(w, &dense, NULL));
    OK(ad_world_fill(w, &dilute, NULL));
    ad_field_def f = {0};
    f.nx = 80, f.ny = 15, f.x1 = 160, f.y1 = 30, f.interval = 10;
    OK(ad_world_set_fields(w, &f));
    return w;
}

/* A periodic box `width` cells wide: on two ranks each is the other's left and right neighbour, and a slab
 * must hold both ghost layers (two columns); five columns split 2 | 3. */
static ad_world *narrow_box(double width, ad_status *refused)
{
    ad_world_def def = ad_default_world_def();
    def.backend = backend;
    def.x_max = width, def.y_max = 40;
    def.boundary_x = AD_BOUNDARY_PERIODIC;
    def.capacity = 1000;
    ad_world *w = NULL;
    if (refused) {
        *refused = ad_world_create(&def, &w);
        return w;
    }
    OK(ad_world_create(&def, &w));
    ad_fill_def fill = {0, 0, width, 40, 0.4, 2.0, 0.3, 1.0, 5, 0, 0, 0};
    OK(ad_world_fill(w, &fill, NULL));
    return w;
}

/* 3D: a box of x by y by z m on the case's backend, its capacity cap. */
static ad_world_def box3(double x, double y, double z, size_t cap)
{
    ad_world_def def = ad_default_world_def();
    def.dimensions = 3;
    def.backend = backend;
    def.x_max = x, def.y_max = y, def.z_max = z;
    def.capacity = cap;
    if (integrator) def.integrator = integrator;
    return def;
}

/* 3D: a box of fast spheres, periodic along x and z, solid along y: spheres cross the slabs' edges
 * every step. */
static ad_world *crossing3(void)
{
    ad_world_def def = box3(24, 6, 6, 2000);
    ad_world *w;
    OK(ad_world_create(&def, &w));
    ad_fill_def fill = {0, 0, 24, 6, 0.2, 4.0, 0.5, 2.0, 7, 0, 6, -0.3};
    OK(ad_world_fill(w, &fill, NULL));
    return w;
}

/* 3D: open inlet and outlet along x with the reservoir, solid walls along y, periodic along z, an
 * octahedron (8 triangles) in the stream, fields and a probe. */
static ad_world *tunnel3(void)
{
    ad_world_def def = box3(24, 10, 6, 6000);
    def.boundary_x = AD_BOUNDARY_OPEN;
    def.boundary_y = AD_BOUNDARY_SOLID;
    def.boundary_z = AD_BOUNDARY_PERIODIC;
    def.stream_vx = 3.0;
    def.stream_temperature = 1.0;
    def.stream_density = 0.15 / (4.0 / 3.0 * PI * 0.125);
    def.reservoir = 3.0;
    ad_world *w;
    OK(ad_world_create(&def, &w));
    const float c[3] = {9, 5, 3}, h = 2;
    ad_triangle oct[8];
    for (int k = 0; k < 8; k++) { /* the face of octant k: the vertices on its three half axes */
        float sx = k & 1 ? h : -h, sy = k & 2 ? h : -h, sz = k & 4 ? h : -h;
        float v[3][3] = {{c[0] + sx, c[1], c[2]}, {c[0], c[1] + sy, c[2]}, {c[0], c[1], c[2] + sz}};
        memcpy(oct[k].v, v, sizeof v);
    }
    OK(ad_world_add_triangles(w, oct, 8));
    ad_fill_def fill = {0, 0, 24, 10, 0.15, 3.0, 0, 1.0, 3, 0, 6, 0};
    OK(ad_world_fill(w, &fill, NULL));
    ad_field_def f = {0};
    f.nx = 12, f.ny = 5, f.nz = 3, f.x1 = 24, f.y1 = 10, f.z1 = 6, f.interval = 5;
    OK(ad_world_set_fields(w, &f));
    ad_probe_def pr = {0};
    pr.x0 = 3, pr.x1 = 6, pr.y0 = 2, pr.y1 = 8, pr.z0 = 0, pr.z1 = 6, pr.dir_x = 1;
    OK(ad_world_set_probe(w, &pr));
    return w;
}

/* Steps in chunks, checking the discs after each; the fingerprints at the end. */
static void run(ad_world *w, uint64_t steps, uint64_t chunk, const char *name);

/* run, in a closed box: the count the same at the end. */
static void run_closed(ad_world *w, uint64_t steps, uint64_t chunk, const char *name)
{
    ad_stats s0;
    OK(ad_world_get_stats(w, &s0));
    run(w, steps, chunk, name);
    ad_stats s1;
    OK(ad_world_get_stats(w, &s1));
    CHECK(s1.count == s0.count, "%s: a closed box went from %zu to %zu particles", name, s0.count, s1.count);
}

static void run(ad_world *w, uint64_t steps, uint64_t chunk, const char *name)
{
    for (uint64_t done = 0; done < steps; done += chunk) {
        OK(ad_world_step(w, chunk < steps - done ? chunk : steps - done));
        (void)discs_print(w);
    }
    ad_stats s;
    double density;
    uint64_t hs = stats_print(w, &s), hd = discs_print(w), hf = fields_print(w, &density);
    if (rank == 0)
        printf("%s [%s]: step %llu count %zu Jx %.17g Jy %.17g ke %.17g entered %llu left %llu | stats %016llx discs %016llx "
               "fields %016llx density %.9e\n",
               name, ad_backend_name(s.backend), (unsigned long long)s.step, s.count, s.body_impulse_x, s.body_impulse_y, s.kinetic_energy,
               (unsigned long long)s.entered, (unsigned long long)s.left, (unsigned long long)hs, (unsigned long long)hd,
               (unsigned long long)hf, density);
}

int main(int argc, char **argv)
{
    OK(ad_parallel_init(&argc, &argv));
    rank = ad_parallel_rank();
    const char *b = getenv("AERODEM_TEST_BACKEND");
    if (b && !strcmp(b, "cpu")) backend = AD_BACKEND_CPU;
    const char *which = argc > 1 ? argv[1] : "crossing";
    uint64_t steps = argc > 2 ? strtoull(argv[2], NULL, 10) : 0;
    ad_world *w = NULL;
    if (!strcmp(which, "crossing")) {
        w = crossing();
        run_closed(w, steps ? steps : 10000, 500, which);
    } else if (!strcmp(which, "tunnel")) {
        w = tunnel();
        run(w, steps ? steps : 3000, 250, which);
        ad_stats s;
        OK(ad_world_get_stats(w, &s));
        CHECK(s.entered + s.reservoir_added > 0 && s.left > 0, "the stream neither entered nor left");
    } else if (!strcmp(which, "verlet")) {
        integrator = AD_INTEGRATOR_VERLET; /* the tunnel with velocity Verlet: its prime and drift over the ranks */
        w = tunnel();
        run(w, steps ? steps : 2000, 250, which);
    } else if (!strcmp(which, "rk4")) {
        integrator = AD_INTEGRATOR_RK4; /* the tunnel with RK4: four gathers, the ghosts at each stage */
        w = tunnel();
        run(w, steps ? steps : 1000, 250, which);
    } else if (!strcmp(which, "pile")) {
        w = pile();
        run(w, steps ? steps : 3000, 500, which);
        double x[MPI_GROUPS + 1];
        unsigned long long moves = 0;
        int n = ad_world_slabs(w, x, MPI_GROUPS + 1, &moves);
        CHECK(n == ad_parallel_ranks(), "%d slabs for %d ranks", n, ad_parallel_ranks());
        if (rank == 0 && n > 1) {
            printf("pile slabs:");
            for (int k = 0; k <= n; k++) printf(" %g", x[k]);
            printf(" (moved %llu times)\n", moves);
        }
        /* the gas piled on the left: the first edge moves left of the even split */
        if (n > 1) CHECK(moves > 0 && x[1] < x[0] + (x[n] - x[0]) / n, "the slabs did not follow the pile: first edge "
                         "at %g m after %llu moves", x[1], moves);
    } else if (!strcmp(which, "narrow")) {
        w = narrow_box(5, NULL);
        run(w, steps ? steps : 3000, 500, which);
        if (ad_parallel_ranks() == 2 && backend == AD_BACKEND_MPI) { /* three columns: a slab of one, refused */
            ad_status st;
            ad_world *bad = narrow_box(3, &st);
            CHECK(!bad && st.code != AD_OK && !strcmp(st.field, "ranks") && strstr(st.message, "at least 2 columns"),
                  "two ranks on a periodic box three columns wide: %s (%s)", st.message, st.field);
        }
    } else if (!strcmp(which, "crossing3")) {
        three = 1;
        w = crossing3();
        run_closed(w, steps ? steps : 2000, 250, which);
    } else if (!strcmp(which, "tunnel3") || !strcmp(which, "verlet3") || !strcmp(which, "rk43")) {
        three = 1; /* symplectic Euler, velocity Verlet or RK4 */
        integrator = which[0] == 'v' ? AD_INTEGRATOR_VERLET : which[0] == 'r' ? AD_INTEGRATOR_RK4 : integrator;
        w = tunnel3();
        run(w, steps ? steps : which[0] == 't' ? 1500 : which[0] == 'v' ? 1000 : 500, 250, which);
        ad_stats s;
        OK(ad_world_get_stats(w, &s));
        CHECK(s.entered + s.reservoir_added > 0 && s.left > 0, "the stream neither entered nor left");
        CHECK(s.body_impulse_x > 0.0, "the stream pushed the body upstream: %g N s", s.body_impulse_x);
    } else if (!strcmp(which, "resume") || !strcmp(which, "resume3")) {
        three = which[6] == '3';
        const char *path = argc > 3 ? argv[3] : "test_mpi_world.ckpt";
        uint64_t total = steps ? steps : three ? 1500 : 3000, half = total / 2;
        FILE *f = fopen(path, "rb");
        int saved = f != NULL;
        if (f) fclose(f);
        MPI_Barrier(MPI_COMM_WORLD);
        if (!saved) { /* the first run: half way, saved */
            w = three ? tunnel3() : tunnel();
            OK(ad_world_step(w, half));
            OK(ad_world_save(w, path, NULL, 0));
        } else { /* the second (any number of ranks): loaded, to the end */
            void *user = NULL;
            size_t ub = 0;
            OK(ad_world_load(path, AD_BACKEND_MPI, 1, &w, &user, &ub));
            free(user);
            ad_stats s;
            OK(ad_world_get_stats(w, &s));
            CHECK(s.step == half, "the checkpoint holds step %llu, not %llu", (unsigned long long)s.step,
                  (unsigned long long)half);
            run(w, total - half, 250, three ? "tunnel3" : "tunnel");
        }
    } else {
        CHECK(0, "unknown case %s (crossing, tunnel, verlet, rk4, pile, narrow, resume; crossing3, tunnel3, verlet3, "
                 "rk43, resume3)", which);
    }
    ad_world_destroy(w);
    ad_parallel_finalize();
    return 0;
}
