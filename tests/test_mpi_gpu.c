/* GPU ranks (backend = mpi, rank_backend = cuda) under mpirun; tests/test_mpi_gpu.sh runs it on 1, 2 and 3
 * ranks sharing the machine's GPUs and compares what rank 0 prints. Each case checks on its own, every few
 * hundred steps, that the world read back holds every id once and as many discs as it counts, that every
 * rank reads the same world, and what the physics conserves; it prints one line of figures and a
 * fingerprint of the discs by id (the same bits for a run repeated on as many ranks; one rank the same
 * bits as backend = cuda in one process, AERODEM_TEST_BACKEND=cuda).
 *   crossing: a periodic x between specular walls, elastic gas streaming at 4 m/s, 5000 steps: discs cross
 *             the slabs' edges every step; momentum along x kept to float rounding, the kinetic energy within
 *             1 % (the contacts hold the rest);
 *   body:     the same box with a flat plate at 20 degrees and fields: the body's mean force over the
 *             run's second half and its spread (the script compares the rank counts within their
 *             errors), the density field summed over its cells exactly the discs' count;
 *   resume:   without CHECKPOINT, the crossing run half way and saved; with it, loaded (any number of
 *             ranks) and run to the end: no disc lost, momentum kept;
 *   tunnel:   open sides all round with the reservoir (the stream enters, leaves and is held at the free
 *             stream in the bands outside), a diffuse flat plate at 20 degrees in 4 sampled panels, fields and
 *             a probe, 5000 steps: every 500 the count is the start's plus what entered and the reservoir
 *             added less what left and it removed; the plate's mean force over the second half and its
 *             spread; the panels' impulse over the second half is the body's;
 *   tunnel_resume: the tunnel saved half way (without CHECKPOINT) or loaded and run to the end, the same
 *             balance of discs across the save (its totals continue, whatever the rank counts);
 *   pile:     the load balance: the crossing box 60 m long, a pile of gas in its first fifth (area fraction
 *             0.5) and a thin gas (0.1) in the rest, all streaming at 4 m/s, elastic, 3000 steps (the pile moves
 *             about 13 m along x and spreads): every 100 steps no disc lost, momentum along x kept to float
 *             rounding, the energy (kinetic and the contacts') within 1 %; on more than one rank the slabs'
 *             edges move by step 301 and again later, and the fullest slab, which holds over 1.3 times the even
 *             share of the discs at the start, holds under 1.25 times it from step 1000 on; the line carries the edges' moves (a run repeated
 *             on as many ranks moves them alike: the same bits).
 * Usage: test_mpi_gpu CASE [CHECKPOINT]; exit 0 when the case's own checks pass. */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aerodem/aerodem.h"

#define PI 3.14159265358979323846
#define STEPS 5000
#define CHECK_EVERY 500

static int rank;
static ad_backend backend = AD_BACKEND_MPI; /* AERODEM_TEST_BACKEND=cuda: one process, for comparison */

#include "mpi_test_checks.h"

/* What a read of the world gives: its count, momentum along x, kinetic energy, fingerprint. */
typedef struct look {
    size_t n;
    double px, ke;
    uint64_t hash;
} look;

/* The discs by id: every id once, as many as the count, the same world on every rank. */
static look look_at(ad_world *w)
{
    ad_stats s;
    OK(ad_world_get_stats(w, &s));
    look l = {s.count, 0.0, 0.0, 1469598103934665603ull};
    ad_particle *st = malloc((l.n + 1) * sizeof *st);
    uint32_t *id = malloc((l.n + 1) * sizeof *id);
    CHECK(st && id, "out of memory");
    ad_particle_out out = {0};
    out.state = st;
    out.id = id;
    size_t got = 0;
    OK(ad_world_read(w, AD_READ_BY_ID, l.n, &out, &got));
    CHECK(got == l.n, "read %zu discs of %zu", got, l.n);
    for (size_t i = 1; i < l.n; i++) CHECK(id[i] > id[i - 1], "id %u read twice or out of order", id[i]);
    for (size_t i = 0; i < l.n; i++) {
        l.px += st[i].vx;
        l.ke += 0.5 * ((double)st[i].vx * st[i].vx + (double)st[i].vy * st[i].vy);
    }
    l.hash = fnv(fnv(l.hash, st, l.n * sizeof *st), id, l.n * sizeof *id);
    uint64_t all = l.hash;
    MPI_Bcast(&all, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    CHECK(all == l.hash, "the ranks read different worlds");
    free(st);
    free(id);
    return l;
}

/* The crossing box, `length` m along its periodic x, 40 m across between specular walls, elastic, on GPU ranks. */
static ad_world *box_world(double length)
{
    ad_world_def def = ad_default_world_def();
    def.backend = backend;
    def.rank_backend = AD_BACKEND_CUDA;
    def.x_max = length, def.y_max = 40;
    def.boundary_x = AD_BOUNDARY_PERIODIC;
    def.boundary_y = AD_BOUNDARY_SOLID;
    def.restitution = def.wall_restitution = 1.0;
    def.capacity = 16000;
    ad_world *w;
    OK(ad_world_create(&def, &w));
    return w;
}

static ad_world *box(int with_body)
{
    ad_world *w = box_world(240);
    if (with_body) {
        double a = 20.0 * PI / 180.0, cx = 120, cy = 20, h = 8;
        ad_segment plate = {(float)(cx - h * cos(a)), (float)(cy + h * sin(a)), (float)(cx + h * cos(a)),
                            (float)(cy - h * sin(a))};
        OK(ad_world_add_segments(w, &plate, 1));
    }
    ad_fill_def fill = {0, 0, 240, 40, 0.3, 4.0, 0, 1.0, 7, 0, 0, 0};
    OK(ad_world_fill(w, &fill, NULL));
    if (with_body) {
        ad_field_def f = {0};
        f.nx = 120, f.ny = 20, f.x1 = 240, f.y1 = 40, f.interval = 10;
        OK(ad_world_set_fields(w, &f));
    }
    return w;
}

/* Steps a to b, looking every CHECK_EVERY: the count and the momentum along x kept, the energy bounded. */
static look run_checked(ad_world *w, int a, int b, const look *start)
{
    look l = *start;
    for (int k = a; k < b; k += CHECK_EVERY) {
        OK(ad_world_step(w, (uint64_t)(b - k < CHECK_EVERY ? b - k : CHECK_EVERY)));
        l = look_at(w);
        CHECK(l.n == start->n, "step %d: %zu discs, %zu at the start", k + CHECK_EVERY, l.n, start->n);
        CHECK(fabs(l.px - start->px) <= 2e-5 * fabs(start->px), "step %d: momentum %.9g, %.9g at the start",
              k + CHECK_EVERY, l.px, start->px);
        CHECK(fabs(l.ke - start->ke) <= 1e-2 * start->ke, "step %d: kinetic energy %.9g, %.9g at the start",
              k + CHECK_EVERY, l.ke, start->ke);
    }
    return l;
}

static void print_look(const char *name, const look *l, const ad_stats *s)
{
    if (rank == 0)
        printf("%s [count %zu px %.9g ke %.9g time %.9g hash %016llx]\n", name, l->n, l->px, l->ke, s->time,
               (unsigned long long)l->hash);
}

/* The body case: the plate's mean force over the second half in 10 blocks (impulse over time), and the
 * density field's sum against the count. */
static void body_case(void)
{
    ad_world *w = box(1);
    look l0 = look_at(w);
    OK(ad_world_step(w, STEPS / 2));
    ad_field_def fd;
    OK(ad_world_reset_fields(w));
    double fx[10], fy[10];
    ad_stats s0, s1;
    OK(ad_world_get_stats(w, &s0));
    for (int b = 0; b < 10; b++) {
        OK(ad_world_step(w, STEPS / 20));
        OK(ad_world_get_stats(w, &s1));
        fx[b] = (s1.body_impulse_x - s0.body_impulse_x) / (s1.time - s0.time);
        fy[b] = (s1.body_impulse_y - s0.body_impulse_y) / (s1.time - s0.time);
        s0 = s1;
    }
    look l = look_at(w);
    CHECK(l.n == l0.n, "%zu discs, %zu at the start", l.n, l0.n);
    double mx = 0, my = 0, vx = 0, vy = 0;
    for (int b = 0; b < 10; b++) mx += fx[b] / 10, my += fy[b] / 10;
    for (int b = 0; b < 10; b++) vx += (fx[b] - mx) * (fx[b] - mx) / 9, vy += (fy[b] - my) * (fy[b] - my) / 9;
    /* every disc is in one field cell at every sample: the density (discs per area) summed over the cells
     * times a cell's area is the count */
    OK(ad_world_get_fields(w, &fd));
    size_t cells = (size_t)fd.nx * fd.ny;
    float *v = malloc(cells * sizeof *v);
    CHECK(v != NULL, "out of memory");
    uint64_t samples = 0;
    OK(ad_world_read_field(w, AD_FIELD_DENSITY, v, &samples));
    double sum = 0;
    for (size_t c = 0; c < cells; c++) sum += v[c];
    double area = (fd.x1 - fd.x0) / fd.nx * (fd.y1 - fd.y0) / fd.ny;
    CHECK(samples > 0 && fabs(sum * area - (double)l.n) < 1e-3 * (double)l.n,
          "the density field sums to %.6g discs over %llu samples, the world holds %zu", sum * area,
          (unsigned long long)samples, l.n);
    free(v);
    if (rank == 0)
        printf("body [count %zu fx %.6g fx_se %.4g fy %.6g fy_se %.4g density_discs %.6g]\n", l.n, mx,
               sqrt(vx / 10), my, sqrt(vy / 10), sum * area);
    ad_world_destroy(w);
}

/* The open tunnel: inlet and outlet, far-field top and bottom, the reservoir, a diffuse plate of PANELS panels
 * (sampled), fields and a probe. */
#define PANELS 4
static ad_world *tunnel(void)
{
    ad_world_def def = ad_default_world_def();
    def.backend = backend;
    def.rank_backend = AD_BACKEND_CUDA;
    def.x_max = 240, def.y_max = 60;
    def.boundary_x = def.boundary_y = AD_BOUNDARY_OPEN;
    def.stream_vx = 3.0;
    def.stream_temperature = 1.0;
    def.stream_density = 0.3 / (PI * 0.25);
    def.reservoir = 6.0;
    def.capacity = 40000;
    def.body_surface = (ad_surface){AD_SURFACE_DIFFUSE, 1.0, 1.0}; /* re-emitted at the stream's temperature */
    ad_world *w;
    OK(ad_world_create(&def, &w));
    double a = 20.0 * PI / 180.0, cx = 100, cy = 30, h = 8;
    ad_segment plate[PANELS]; /* the plate in PANELS panels, leading edge first */
    for (int k = 0; k < PANELS; k++) {
        double u0 = -h + 2 * h * k / PANELS, u1 = -h + 2 * h * (k + 1) / PANELS;
        plate[k] = (ad_segment){(float)(cx + u0 * cos(a)), (float)(cy - u0 * sin(a)), (float)(cx + u1 * cos(a)),
                                (float)(cy - u1 * sin(a))};
    }
    OK(ad_world_add_segments(w, plate, PANELS));
    ad_fill_def fill = {0, 0, 200, 60, 0.4, 3.0, 0, 1.0, 3, 0, 0, 0}; /* denser than the stream, the outlet band empty:
                                                                    the reservoir removes and adds */
    OK(ad_world_fill(w, &fill, NULL));
    ad_field_def f = {0};
    f.nx = 120, f.ny = 30, f.x1 = 240, f.y1 = 60, f.interval = 5;
    OK(ad_world_set_fields(w, &f));
    ad_probe_def pr = {0};
    pr.x0 = 10, pr.x1 = 30, pr.y0 = 10, pr.y1 = 50, pr.dir_x = 1;
    OK(ad_world_set_probe(w, &pr));
    return w;
}

/* The discs the world should hold: n0 at the start plus what came less what went since (its totals). */
static long long balance(const ad_stats *s, long long n0)
{
    return n0 + (long long)(s->entered + s->reservoir_added) - (long long)(s->left + s->reservoir_removed);
}

/* The tunnel from step a to b, looking every CHECK_EVERY: every id once, the same world on every rank, the
 * count the balance of what came and went; the plate's force in blocks over [STEPS / 2, STEPS). */
static ad_stats half; /* the statistics where the panels were reset */

static void tunnel_run(ad_world *w, int a, int b, long long n0, double *fx, double *fy)
{
    ad_stats s0, s1;
    OK(ad_world_get_stats(w, &s0));
    for (int k = a; k < b; k += CHECK_EVERY) {
        if (k == STEPS / 2) { /* the averages start: the panels' sums from here, beside the body's impulse */
            OK(ad_world_reset_panels(w));
            half = s0;
        }
        OK(ad_world_step(w, CHECK_EVERY));
        look l = look_at(w);
        OK(ad_world_get_stats(w, &s1));
        CHECK((long long)l.n == balance(&s1, n0), "step %d: %zu discs, the balance of what came and went says %lld",
              k + CHECK_EVERY, l.n, balance(&s1, n0));
        CHECK(s1.entered > s0.entered, "step %d: the stream did not enter", k + CHECK_EVERY);
        int blk = (k - STEPS / 2) / CHECK_EVERY;
        if (k >= STEPS / 2) {
            fx[blk] = (s1.body_impulse_x - s0.body_impulse_x) / (s1.time - s0.time);
            fy[blk] = (s1.body_impulse_y - s0.body_impulse_y) / (s1.time - s0.time);
        }
        s0 = s1;
    }
}

static void tunnel_print(const char *name, ad_world *w, const double *fx, const double *fy)
{
    look l = look_at(w);
    ad_stats s;
    OK(ad_world_get_stats(w, &s));
    ad_probe_sums pr;
    OK(ad_world_read_probe(w, &pr));
    /* the panels: summed, the body's impulse since they were reset (ARCHITECTURE, "Gas-surface models") */
    CHECK(s.left > 0 && s.reservoir_added > 0 && s.reservoir_removed > 0,
          "the stream left (%llu) or the reservoir added (%llu) or removed (%llu) no disc", (unsigned long long)s.left,
          (unsigned long long)s.reservoir_added, (unsigned long long)s.reservoir_removed);
    ad_panel_sums ps[PANELS];
    OK(ad_world_read_panels(w, 0, PANELS, ps));
    double px = 0, py = 0, ix = s.body_impulse_x - half.body_impulse_x, iy = s.body_impulse_y - half.body_impulse_y;
    unsigned long long contacts = 0;
    for (int k = 0; k < PANELS; k++) px += ps[k].impulse[0], py += ps[k].impulse[1], contacts += ps[k].contacts;
    CHECK(contacts > 0 && fabs(px - ix) <= 1e-3 * fabs(ix) && fabs(py - iy) <= 1e-3 * fabs(iy),
          "the panels' impulse (%.9g, %.9g, %llu contacts) is not the body's (%.9g, %.9g) since their reset", px, py,
          contacts, ix, iy);
    enum { B = STEPS / 2 / CHECK_EVERY };
    double mx = 0, my = 0, vx = 0, vy = 0;
    for (int b = 0; b < B; b++) mx += fx[b] / B, my += fy[b] / B;
    for (int b = 0; b < B; b++) vx += (fx[b] - mx) * (fx[b] - mx) / (B - 1), vy += (fy[b] - my) * (fy[b] - my) / (B - 1);
    if (rank == 0)
        printf("%s [count %zu entered %llu left %llu added %llu removed %llu probe_n %.6g contacts %llu fx %.6g fx_se "
               "%.4g fy %.6g fy_se %.4g panel_x %.9g ke %.9g hash %016llx]\n",
               name, l.n, (unsigned long long)s.entered, (unsigned long long)s.left, (unsigned long long)s.reservoir_added,
               (unsigned long long)s.reservoir_removed, pr.count / (double)(pr.samples ? pr.samples : 1), contacts, mx,
               sqrt(vx / B), my, sqrt(vy / B), px, l.ke, (unsigned long long)l.hash);
}

/* tunnel, and tunnel_resume (path: the checkpoint, saved where it is not there, else loaded). */
static void tunnel_case(const char *path)
{
    double fx[STEPS / 2 / CHECK_EVERY] = {0}, fy[STEPS / 2 / CHECK_EVERY] = {0};
    int have = 0;
    if (path) {
        FILE *f = fopen(path, "rb");
        have = f != NULL;
        if (f) fclose(f);
        MPI_Bcast(&have, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    ad_world *w;
    long long n0;
    if (!have) {
        w = tunnel();
        n0 = (long long)look_at(w).n;
        tunnel_run(w, 0, path ? STEPS / 2 : STEPS, n0, fx, fy);
        if (path) {
            OK(ad_world_save(w, path, &n0, sizeof n0));
            if (rank == 0) printf("saved at step %d\n", STEPS / 2);
            ad_world_destroy(w);
            return;
        }
    } else {
        void *user = NULL;
        size_t ub = 0;
        OK(ad_world_load(path, backend, 1, &w, &user, &ub));
        CHECK(ub == sizeof n0, "the checkpoint's user bytes: %zu", ub);
        memcpy(&n0, user, sizeof n0);
        free(user);
        tunnel_run(w, STEPS / 2, STEPS, n0, fx, fy);
    }
    tunnel_print(path ? "tunnel_resumed" : "tunnel", w, fx, fy);
    ad_world_destroy(w);
}

/* The fullest slab's share of the discs over the even share (ranks slabs with edges x; every rank reads the
 * same world). */
static double fullest_slab(ad_world *w, const double *x, int slabs)
{
    ad_stats s;
    OK(ad_world_get_stats(w, &s));
    ad_particle *st = malloc((s.count + 1) * sizeof *st);
    CHECK(st != NULL, "out of memory");
    ad_particle_out out = {0};
    out.state = st;
    size_t got = 0;
    OK(ad_world_read(w, AD_READ_BY_ID, s.count, &out, &got));
    double n[16] = {0}, most = 0.0;
    for (size_t i = 0; i < got; i++) {
        int r = 0;
        while (r + 1 < slabs && st[i].x >= x[r + 1]) r++;
        n[r] += 1.0;
    }
    for (int r = 0; r < slabs; r++) most = n[r] > most ? n[r] : most;
    free(st);
    return got ? most / ((double)got / slabs) : 0.0;
}

/* The pile case (above). */
static void pile_case(void)
{
    ad_world *w = box_world(60);
    ad_fill_def pile = {0, 0, 12, 40, 0.5, 4.0, 0.0, 1.0, 11, 0, 0, 0}, thin = {12, 0, 60, 40, 0.1, 4.0, 0.0, 1.0, 13, 0, 0, 0};
    OK(ad_world_fill(w, &pile, NULL));
    OK(ad_world_fill(w, &thin, NULL));
    look l0 = look_at(w), l = l0;
    int ranks = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    double x[17];
    unsigned long long moves = 0, early = 0;
    int slabs = ad_world_slabs(w, x, 17, &moves);
    double start_share = fullest_slab(w, x, slabs), worst = 0.0;
    ad_stats s;
    OK(ad_world_step(w, 1)); /* the contacts' energy is known after a step */
    OK(ad_world_get_stats(w, &s));
    double e0 = s.kinetic_energy + s.potential_energy;
    const int every = CHECK_EVERY / 5, steps = 3 * STEPS / 5;
    for (int k = 1; k < steps; k += every) {
        int n = k + every <= steps ? every : steps - k;
        OK(ad_world_step(w, (uint64_t)n));
        l = look_at(w);
        CHECK(l.n == l0.n, "step %d: %zu discs, %zu at the start", k + n, l.n, l0.n);
        CHECK(fabs(l.px - l0.px) <= 2e-5 * fabs(l0.px), "step %d: momentum %.9g, %.9g at the start", k + n, l.px,
              l0.px);
        OK(ad_world_get_stats(w, &s));
        double e = s.kinetic_energy + s.potential_energy;
        CHECK(fabs(e - e0) <= 1e-2 * e0, "step %d: energy %.9g, %.9g at the start", k + n, e, e0);
        slabs = ad_world_slabs(w, x, 17, &moves);
        double share = fullest_slab(w, x, slabs);
        if (k + n >= 1000 && share > worst) worst = share;
        if (k + n == 301) early = moves;
    }
    if (backend == AD_BACKEND_MPI && ranks > 1) {
        CHECK(early >= 1 && moves > early, "the edges moved %llu times by step 301 and %llu in all", early, moves);
        CHECK(start_share > 1.3 && worst < 1.25, "the fullest slab held %.3f of the even share at the start, up to "
              "%.3f from step 1000 on (the balance should keep it under 1.25)", start_share, worst);
    }
    if (rank == 0) {
        printf("pile [count %zu px %.9g ke %.9g moves %llu edge %.6g hash %016llx]\n", l.n, l.px, l.ke, moves, x[1],
               (unsigned long long)l.hash);
        printf("pile: the fullest slab %.3f of the even share at the start, at most %.3f from step 1000; measured "
               "imbalance %.3f\n", start_share, worst, s.rank_imbalance);
    }
    ad_world_destroy(w);
}

int main(int argc, char **argv)
{
    OK(ad_parallel_init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *b = getenv("AERODEM_TEST_BACKEND");
    if (b && !strcmp(b, "cuda")) backend = AD_BACKEND_CUDA;
    const char *which = argc > 1 ? argv[1] : "crossing";
    ad_stats s;
    if (!strcmp(which, "crossing")) {
        ad_world *w = box(0);
        look l0 = look_at(w);
        look l = run_checked(w, 0, STEPS, &l0);
        OK(ad_world_get_stats(w, &s));
        print_look("crossing", &l, &s);
        ad_world_destroy(w);
    } else if (!strcmp(which, "body")) {
        body_case();
    } else if (!strcmp(which, "pile")) {
        pile_case();
    } else if (!strcmp(which, "tunnel")) {
        tunnel_case(NULL);
    } else if (!strcmp(which, "tunnel_resume")) {
        CHECK(argc > 2, "tunnel_resume CHECKPOINT");
        tunnel_case(argv[2]);
    } else if (!strcmp(which, "resume")) {
        CHECK(argc > 2, "resume CHECKPOINT");
        const char *path = argv[2];
        ad_world *w;
        void *user = NULL;
        size_t ub = 0;
        FILE *f = fopen(path, "rb");
        int have = f != NULL;
        if (f) fclose(f);
        MPI_Bcast(&have, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (!have) {
            w = box(0);
            look l0 = look_at(w);
            run_checked(w, 0, STEPS / 2, &l0);
            OK(ad_world_save(w, path, &l0, sizeof l0));
            if (rank == 0) printf("saved at step %d\n", STEPS / 2);
        } else {
            OK(ad_world_load(path, backend, 1, &w, &user, &ub));
            CHECK(ub == sizeof(look), "the checkpoint's user bytes: %zu", ub);
            look l0 = *(look *)user;
            look l = run_checked(w, STEPS / 2, STEPS, &l0);
            OK(ad_world_get_stats(w, &s));
            print_look("resumed", &l, &s);
            free(user);
        }
        ad_world_destroy(w);
    } else {
        CHECK(0, "unknown case %s (crossing, body, resume, tunnel, tunnel_resume, pile)", which);
    }
    ad_parallel_finalize();
    return 0;
}
