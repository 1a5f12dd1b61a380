/* 3D field grids and the 3D probe (physics/fields.h, core/fields.c): the sampled fields of known spheres
 * against a brute-force sum done here; a gas at rest in a periodic box (density, temperature against the
 * fill's kT and the statistics', pressure against n kT plus the statistics' virial); the reference against
 * the cpu and 1 against 4 threads, bit for bit; the probe's free stream of a 3D Maxwellian stream (open x)
 * against the stream's density, velocity and temperature; bad 3D field definitions refused by name; a
 * checkpoint of a 3D world with fields resumed bit for bit, and its field section's nonsense refused. */
#include "test_util.h"

#include <unistd.h>

static ad_world_def def3(ad_backend b, int threads, double side)
{
    ad_world_def d = ad_default_world_def();
    d.dimensions = 3;
    d.backend = b;
    d.threads = threads;
    d.x_max = d.y_max = d.z_max = side;
    d.capacity = 20000;
    return d;
}

static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 11;
}
static double uniform(uint64_t *s) { return (double)lcg(s) / 9007199254740992.0; }

/* ------------------------------------------------------------ brute force -- */

enum { NX = 4, NY = 2, NZ = 4, CELLS = NX * NY * NZ, NSPH = 3000 };

typedef struct cellsum {
    double n, v[3], v2, vir, con, a[3];
} cellsum;

/* The spheres now, as the sample saw them: state, contact force sum, virial, acceleration. */
typedef struct spheres {
    ad_particle3 p[NSPH];
    float pressure[NSPH], virial[NSPH], acc[3 * NSPH];
} spheres;

/* The field cell of a centre, cells of 4 x 8 x 2 m over [0, 16] x [0, 16] x [4, 12]: powers of two, so
 * that the division is exact and a centre's cell is the plain floor. */
static int cell_of(const ad_particle3 *p)
{
    double fx = p->x / 4.0, fy = p->y / 8.0, fz = (p->z - 4.0) / 2.0;
    if (!(fx >= 0 && fy >= 0 && fz >= 0 && fx < NX && fy < NY && fz < NZ)) return -1;
    return ((int)fz * NY + (int)fy) * NX + (int)fx;
}

/* The probe's definition (aerodem.h): along dir, across on the diagonal of e1 and z, the per-component square. */
static void probe_add(const ad_particle3 *p, float dx, float dy, double q[5])
{
    if (!(p->x >= 2.0f && p->x < 14.0f && p->y >= 3.0f && p->y < 13.0f && p->z >= 5.0f && p->z < 11.0f)) return;
    if (!(p->vx * dx + p->vy * dy > 0.0f)) return;
    double a = (double)p->vx * dx + (double)p->vy * dy, b = -(double)p->vx * dy + (double)p->vy * dx;
    q[0] += 1;
    q[1] += a;
    q[2] += (b + p->vz) / sqrt(2.0);
    q[3] += a * a;
    q[4] += 0.5 * (b * b + (double)p->vz * p->vz);
}

/* The field `which` of one cell from its brute-force sums over S samples (aerodem.h's definitions). */
static double expect(ad_field which, const cellsum *c, double S, double m, double vol)
{
    double n = c->n, u[3] = {c->v[0] / n, c->v[1] / n, c->v[2] / n};
    double pec = c->v2 - n * (u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
    switch (which) {
    case AD_FIELD_DENSITY: return n / (S * vol);
    case AD_FIELD_VELOCITY_X: return u[0];
    case AD_FIELD_VELOCITY_Y: return u[1];
    case AD_FIELD_VELOCITY_Z: return u[2];
    case AD_FIELD_TEMPERATURE: return m * pec / (3.0 * n);
    case AD_FIELD_PRESSURE: return (m * pec + c->vir) / (3.0 * vol * S);
    case AD_FIELD_ACCEL_X: return c->a[0] / n;
    case AD_FIELD_ACCEL_Y: return c->a[1] / n;
    case AD_FIELD_ACCEL_Z: return c->a[2] / n;
    case AD_FIELD_CONTACT: return c->con / n;
    default: return NAN;
    }
}

/* 3000 spheres at random (overlapping: contacts off; those near a wall touch it, under gravity along z), three
 * steps sampled each; the engine's ten fields and probe against the sums of what ad_world_read gives after
 * each step. */
static void test_brute_force(void)
{
    ad_world_def d = def3(AD_BACKEND_CPU, 2, 16.0);
    d.disc_contacts = 0;
    d.gravity_z = -2.0;
    d.mass = 1.5;
    ad_world *w;
    REQUIRE_OK(ad_world_create(&d, &w));
    static spheres s;
    uint64_t seed = 12345;
    for (int i = 0; i < NSPH; i++) {
        ad_particle3 *p = &s.p[i];
        *p = (ad_particle3){(float)(0.3 + 15.4 * uniform(&seed)), (float)(0.3 + 15.4 * uniform(&seed)),
                            (float)(0.3 + 15.4 * uniform(&seed)), (float)(2 * uniform(&seed) - 1),
                            (float)(2 * uniform(&seed) - 1), (float)(2 * uniform(&seed) - 1)};
    }
    REQUIRE_OK(ad_world_add_particles3(w, s.p, NSPH));
    ad_field_def fd = {NX, NY, 0, 0, 16, 16, 1, NZ, 4, 12};
    REQUIRE_OK(ad_world_set_fields(w, &fd));
    ad_probe_def pd = {2, 3, 14, 13, 1, 1, 5, 11};
    REQUIRE_OK(ad_world_set_probe(w, &pd));
    float pdir = (float)(1.0 / hypot(1.0, 1.0));
    static cellsum c[CELLS];
    memset(c, 0, sizeof c);
    double q[5] = {0};
    size_t counted = 0, touching = 0;
    for (int step = 0; step < 3; step++) {
        REQUIRE_OK(ad_world_step(w, 1));
        size_t got;
        ad_particle_out out = {NULL, NULL, s.pressure, s.virial, s.acc, s.p};
        REQUIRE_OK(ad_world_read(w, AD_READ_BY_ID, NSPH, &out, &got));
        ENSURE(got == NSPH);
        for (int i = 0; i < NSPH; i++) {
            const ad_particle3 *p = &s.p[i];
            probe_add(p, pdir, pdir, q);
            touching += s.pressure[i] > 0;
            int k = cell_of(p);
            if (k < 0) continue;
            counted++;
            cellsum *e = &c[k];
            e->n += 1;
            const float v[3] = {p->vx, p->vy, p->vz};
            for (int a = 0; a < 3; a++) {
                e->v[a] += v[a];
                e->v2 += (double)v[a] * v[a];
                e->a[a] += s.acc[3 * i + a];
            }
            e->vir += s.virial[i];
            e->con += s.pressure[i];
        }
    }
    static const ad_field all[] = {AD_FIELD_DENSITY,  AD_FIELD_VELOCITY_X, AD_FIELD_VELOCITY_Y, AD_FIELD_VELOCITY_Z,
                                   AD_FIELD_TEMPERATURE, AD_FIELD_PRESSURE, AD_FIELD_ACCEL_X, AD_FIELD_ACCEL_Y,
                                   AD_FIELD_ACCEL_Z,  AD_FIELD_CONTACT};
    double vol = 4.0 * 8.0 * 2.0, worst = 0;
    size_t outside = 0;
    for (size_t f = 0; f < sizeof all / sizeof all[0]; f++) {
        float got[CELLS];
        uint64_t samples;
        REQUIRE_OK(ad_world_read_field(w, all[f], got, &samples));
        ENSURE(samples == 3);
        for (int k = 0; k < CELLS; k++) {
            double e = expect(all[f], &c[k], 3.0, d.mass, vol), tol = 1e-6 + 1e-5 * fabs(e);
            worst = fmax(worst, fabs(got[k] - e) / tol);
            outside += !(fabs(got[k] - e) <= tol);
            if (!(fabs(got[k] - e) <= tol) && outside < 5)
                printf("    %s cell %d: %.9g, brute force %.9g\n", ad_field_name(all[f]), k, got[k], e);
        }
    }
    ad_probe_sums ps;
    REQUIRE_OK(ad_world_read_probe(w, &ps));
    double pw = 0;
    const double pg[5] = {ps.count, ps.v_par, ps.v_perp, ps.v_par2, ps.v_perp2};
    for (int k = 0; k < 5; k++) pw = fmax(pw, fabs(pg[k] - q[k]) / (1e-9 * (1 + fabs(q[k]))));
    printf("brute force: %d spheres, 3 samples, %zu counted in the %d cells (the rest outside z [4, 12]), %zu "
           "touching a wall; 10 fields: worst %.3g of tolerance, %zu outside; probe: %.0f spheres seen (%.0f by "
           "brute force), worst %.3g of tolerance, volume %g m^3\n",
           NSPH, counted, CELLS, touching, worst, outside, ps.count, q[0], pw, ps.area);
    ENSURE(outside == 0 && counted > NSPH && counted < 3 * NSPH && touching > 0);
    ENSURE(pw <= 1.0 && ps.samples == 3 && ps.directed && q[0] > 100);
    ENSURE_REL(ps.area, 12.0 * 10.0 * 6.0, 1e-12);
    ad_field_def back;
    REQUIRE_OK(ad_world_get_fields(w, &back));
    ENSURE(back.nz == NZ && back.z0 == 4 && back.z1 == 12 && back.nx == NX);
    ad_world_destroy(w);
}

/* --------------------------------------------------------- a gas at rest -- */

/* A gas at rest, volume fraction 0.15, in a periodic box of 40 m: sampled every 5 steps over 1000 steps, with
 * the statistics read at each sample. Cells of 20 m: a cell's temperature is that of the motion about its
 * mean velocity over the run, and a cell of ~2300 spheres has a mean near zero (smaller cells over so short a
 * run keep their spheres' mean, a bias of 3 / (spheres a cell) on kT). Stiff contacts: the springs hold
 * little of the energy (at k = 1e4 some 3 % of the kinetic). */
static void test_gas_at_rest(void)
{
    const double side = 40.0, m = 2.0, kT_m = 1.0;
    ad_world_def d = def3(AD_BACKEND_CPU, 2, side);
    d.boundary_x = d.boundary_y = d.boundary_z = AD_BOUNDARY_PERIODIC;
    d.mass = m;
    d.stiffness = 4e4;
    ad_world *w;
    REQUIRE_OK(ad_world_create(&d, &w));
    ad_fill_def fill = {0, 0, side, side, 0.15, 0, 0, kT_m, 2026, 0, side, 0};
    size_t N;
    REQUIRE_OK(ad_world_fill(w, &fill, &N));
    double drawn = 0; /* the fill's own temperature, m <|v|^2> / 3 */
    ad_particle3 *p = malloc(N * sizeof *p);
    ad_particle_out out = {NULL, NULL, NULL, NULL, NULL, p};
    REQUIRE_OK(ad_world_read(w, 0, N, &out, NULL));
    for (size_t i = 0; i < N; i++)
        drawn += m * ((double)p[i].vx * p[i].vx + p[i].vy * p[i].vy + p[i].vz * p[i].vz) / (3.0 * N);
    free(p);
    ad_field_def fd = {2, 2, 0, 0, side, side, 5, 2, 0, side};
    REQUIRE_OK(ad_world_set_fields(w, &fd));
    double ke = 0, vir = 0, pe = 0;
    int S = 0;
    for (int k = 0; k < 200; k++) {
        REQUIRE_OK(ad_world_step(w, 5));
        ad_stats st = tu_stats(w);
        ke += st.kinetic_energy;
        vir += st.contact_virial;
        pe += st.potential_energy;
        S++;
    }
    enum { C = 8 };
    float n[C], T[C], P[C], u[C];
    uint64_t samples;
    REQUIRE_OK(ad_world_read_field(w, AD_FIELD_DENSITY, n, &samples));
    REQUIRE_OK(ad_world_read_field(w, AD_FIELD_TEMPERATURE, T, NULL));
    REQUIRE_OK(ad_world_read_field(w, AD_FIELD_PRESSURE, P, NULL));
    REQUIRE_OK(ad_world_read_field(w, AD_FIELD_VELOCITY_Z, u, NULL));
    double V = side * side * side, nsum = 0, nT = 0, Psum = 0, nmin = 1e30, nmax = 0, umax = 0;
    for (int c = 0; c < C; c++) {
        nsum += n[c];
        nT += n[c] * T[c];
        Psum += P[c];
        nmin = fmin(nmin, n[c]);
        nmax = fmax(nmax, n[c]);
        umax = fmax(umax, fabs(u[c]));
    }
    double dens = nsum / C, Tf = nT / nsum, Pf = Psum / C; /* cells of equal volume covering the box */
    /* energy kept: the kinetic temperature is the draw's less what the springs hold */
    double Tkept = drawn - 2.0 * pe / S / (3.0 * N);
    double Tstat = 2.0 * ke / S / (3.0 * N), Pvir = vir / S / (3.0 * V), Pstat = (2.0 * ke / S) / (3.0 * V) + Pvir;
    printf("gas at rest: %zu spheres, %llu samples: density %.6g (N/V %.6g; cells %.3g to %.3g), temperature %.5g "
           "(m kT/m %.5g, the fill's draw %.5g less the springs' share %.5g, statistics' 2KE/3N %.5g), pressure "
           "%.5g (n kT + virial/3V %.5g, statistics %.5g; the virial's part %.3g), |u_z| at most %.3g\n",
           N, (unsigned long long)samples, dens, N / V, nmin, nmax, Tf, m * kT_m, drawn, Tkept, Tstat, Pf,
           dens * Tf + Pvir, Pstat, Pvir, umax);
    ENSURE(samples == 200 && N > 18000);
    ENSURE_REL(dens, N / V, 1e-6);
    ENSURE(nmin > 0.9 * N / V && nmax < 1.1 * N / V);
    ENSURE_REL(Tf, m * kT_m, 0.02);
    ENSURE_REL(Tf, Tstat, 0.005);
    ENSURE_REL(Tf, Tkept, 0.005);
    ENSURE_REL(Pf, dens * Tf + Pvir, 0.005);
    ENSURE_REL(Pf, Pstat, 0.005);
    ENSURE(Pvir > 0.1 * dens * Tf); /* the contacts' part is measured, not negligible */
    ENSURE(umax < 0.1);
    ad_world_destroy(w);
}

/* ------------------------------------------------ bit for bit across backends -- */

static ad_world *gas_with_fields(ad_backend b, int threads, ad_integrator integ)
{
    ad_world_def d = def3(b, threads, 16.0);
    d.boundary_x = AD_BOUNDARY_PERIODIC;
    d.integrator = integ;
    d.gravity_y = -1.0;
    d.restitution = 0.9;
    ad_world *w;
    REQUIRE_OK(ad_world_create(&d, &w));
    ad_fill_def fill = {0, 0, 16, 16, 0.25, 0.5, 0, 1.0, 99, 0, 16, -0.3};
    REQUIRE_OK(ad_world_fill(w, &fill, NULL));
    ad_field_def fd = {5, 3, -2, 1, 18, 15, 3, 4, 2, 17}; /* partly outside the box */
    REQUIRE_OK(ad_world_set_fields(w, &fd));
    ad_probe_def pd = {4, 2, 12, 14, 1, 0.5, 3, 13};
    REQUIRE_OK(ad_world_set_probe(w, &pd));
    return w;
}

/* Every field of a and b, and their probes, the same bits; *n: the values compared. */
static int same_fields(const ad_world *a, const ad_world *b, size_t *n)
{
    ad_field_def fd;
    REQUIRE_OK(ad_world_get_fields(a, &fd));
    size_t cells = (size_t)fd.nx * fd.ny * fd.nz;
    float *x = malloc(cells * sizeof *x), *y = malloc(cells * sizeof *y);
    int same = 1;
    *n = 0;
    for (int f = 0; f < AD_FIELD_COUNT; f++) {
        uint64_t sa, sb;
        REQUIRE_OK(ad_world_read_field(a, (ad_field)f, x, &sa));
        REQUIRE_OK(ad_world_read_field(b, (ad_field)f, y, &sb));
        same &= sa == sb && !memcmp(x, y, cells * sizeof *x);
        *n += cells;
    }
    ad_probe_sums pa, pb;
    REQUIRE_OK(ad_world_read_probe(a, &pa));
    REQUIRE_OK(ad_world_read_probe(b, &pb));
    same &= pa.samples == pb.samples && pa.count == pb.count && pa.v_par == pb.v_par && pa.v_perp == pb.v_perp &&
            pa.v_par2 == pb.v_par2 && pa.v_perp2 == pb.v_perp2 && pa.area == pb.area && pa.count > 0;
    free(x);
    free(y);
    return same;
}

static void test_backends(void)
{
    const ad_integrator integ[2] = {AD_INTEGRATOR_SYMPLECTIC_EULER, AD_INTEGRATOR_VERLET};
    for (int k = 0; k < 2; k++) {
        ad_world *r = gas_with_fields(AD_BACKEND_REFERENCE, 1, integ[k]);
        ad_world *c1 = gas_with_fields(AD_BACKEND_CPU, 1, integ[k]), *c4 = gas_with_fields(AD_BACKEND_CPU, 4, integ[k]);
        REQUIRE_OK(ad_world_step(r, 30));
        REQUIRE_OK(ad_world_step(c1, 30));
        REQUIRE_OK(ad_world_step(c4, 30));
        size_t n;
        int rc = same_fields(r, c1, &n), t14 = same_fields(c1, c4, &n);
        ENSURE(tu_stats(r).backend == AD_BACKEND_REFERENCE && tu_stats(c4).threads == 4);
        printf("%s, 30 steps, 10 samples, %zu values: reference vs cpu %s, cpu 1 vs 4 threads %s\n",
               ad_integrator_name(integ[k]), n, rc ? "identical" : "DIFFER", t14 ? "identical" : "DIFFER");
        ENSURE(rc && t14);
        ad_world_destroy(r);
        ad_world_destroy(c1);
        ad_world_destroy(c4);
    }
}

/* ------------------------------------------------------- the probe's stream -- */

/* A 3D free-molecular tunnel (x open, y and z periodic, no contacts) filled with the free stream, a drifting
 * Maxwellian, which is what the open sides keep in it (an empty tunnel would take many flow-through times to
 * fill with its slow spheres); the probe over its middle reads it back, directed (the part moving along x)
 * and not. Small spheres: n0 = 1 / m^3 is a volume fraction of 0.004. */
static void test_probe_stream(void)
{
    const double U = 2.0, sigma2 = 1.0, n0 = 1.0, L = 40.0, H = 10.0;
    ad_world_def d = def3(AD_BACKEND_CPU, 2, H);
    d.x_max = L;
    d.boundary_x = AD_BOUNDARY_OPEN;
    d.boundary_y = d.boundary_z = AD_BOUNDARY_PERIODIC;
    d.stream_vx = U;
    d.stream_temperature = sigma2;
    d.stream_density = n0;
    d.disc_contacts = 0;
    d.radius = 0.1;
    d.cell_size = 1.0;
    d.stiffness = 10.0;
    d.adaptive_dt = 0;
    d.dt = 0.05;
    d.capacity = 8000;
    ad_world *w;
    REQUIRE_OK(ad_world_create(&d, &w));
    ad_fill_def fill = {0, 0, L, H, n0 * 4.0 / 3.0 * TU_PI * 1e-3, U, 0, sigma2, 31, 0, H, 0};
    size_t N;
    REQUIRE_OK(ad_world_fill(w, &fill, &N));
    ad_field_def fd = {8, 2, 0, 0, L, H, 2, 2, 0, H};
    REQUIRE_OK(ad_world_set_fields(w, &fd));
    REQUIRE_OK(ad_world_step(w, 100)); /* 5 s: the lattice of the fill mixes */
    REQUIRE_OK(ad_world_reset_fields(w));
    ad_probe_def dirs[2] = {{12, 0, 28, H, 1, 0, 0, H}, {12, 0, 28, H, 0, 0, 0, H}};
    for (int k = 0; k < 2; k++) {
        REQUIRE_OK(ad_world_set_probe(w, &dirs[k]));
        ad_probe_sums a, b;
        REQUIRE_OK(ad_world_read_probe(w, &a));
        REQUIRE_OK(ad_world_step(w, 800));
        REQUIRE_OK(ad_world_read_probe(w, &b));
        ad_probe_stream f = ad_probe_between(&a, &b);
        printf("probe %s: %.0f samples, %.0f spheres: density %.4g (stream %g), velocity %.4g (%g), temperature "
               "%.4g (%g); %zu spheres in the tunnel\n", k ? "without a direction" : "along x", f.samples, f.discs,
               f.density, n0, f.velocity, U, f.temperature, sigma2, tu_stats(w).count);
        ENSURE_REL(f.density, n0, 0.04);
        ENSURE_REL(f.velocity, U, 0.03);
        ENSURE_REL(f.temperature, sigma2, 0.04);
        ENSURE(f.samples == 400);
    }
    float ux[32], uz[32];
    REQUIRE_OK(ad_world_read_field(w, AD_FIELD_VELOCITY_X, ux, NULL));
    REQUIRE_OK(ad_world_read_field(w, AD_FIELD_VELOCITY_Z, uz, NULL));
    double mx = 0, mz = 0;
    for (int c = 0; c < 32; c++) mx += ux[c] / 32, mz = fmax(mz, fabs(uz[c]));
    printf("  the fields over the tunnel: mean velocity_x %.4g, |velocity_z| at most %.3g\n", mx, mz);
    ENSURE_REL(mx, U, 0.03);
    ENSURE(mz < 0.1);
    ad_world_destroy(w);
}

/* --------------------------------------------------------------- refusals -- */

static void refused(ad_status st, const char *field, const char *what)
{
    printf("  %-34s -> %s: %s\n", what, st.field, st.message);
    ENSURE_MSG(st.code == AD_ERR_INVALID && !strcmp(st.field, field), "%s: field %s, expected %s", what, st.field,
               field);
}

static void test_refusals(void)
{
    printf("refusals:\n");
    ad_world_def d = def3(AD_BACKEND_CPU, 1, 16.0);
    ad_world *w;
    REQUIRE_OK(ad_world_create(&d, &w));
    ad_field_def good = {4, 4, 0, 0, 16, 16, 1, 4, 0, 16}, f;
    f = good, f.nz = 0;
    refused(ad_world_set_fields(w, &f), "fields.nz", "nz = 0");
    f = good, f.nz = -3;
    refused(ad_world_set_fields(w, &f), "fields.nz", "nz = -3");
    f = good, f.z1 = f.z0;
    refused(ad_world_set_fields(w, &f), "fields.z1", "z1 = z0");
    f = good, f.z0 = NAN;
    refused(ad_world_set_fields(w, &f), "fields.z1", "z0 NaN");
    f = good, f.nx = f.ny = 1000, f.nz = 1000;
    refused(ad_world_set_fields(w, &f), "fields.nx", "10^9 cells");
    ENSURE(ad_world_get_fields(w, &f).code == AD_ERR_INVALID); /* nothing was set */
    REQUIRE_OK(ad_world_set_fields(w, &good));
    ad_probe_def p = {1, 1, 5, 5, 1, 0, 3, 3};
    refused(ad_world_set_probe(w, &p), "probe.z1", "probe z1 = z0");
    p.z1 = INFINITY;
    refused(ad_world_set_probe(w, &p), "probe.z1", "probe z1 infinite");
    ad_world_destroy(w);
    /* a 2D world: the 3D fields refused, the depth ignored */
    ad_world_def d2 = ad_default_world_def();
    d2.backend = AD_BACKEND_CPU;
    REQUIRE_OK(ad_world_create(&d2, &w));
    ad_field_def f2 = {4, 4, 0, 0, 100, 100, 1, -7, NAN, NAN};
    REQUIRE_OK(ad_world_set_fields(w, &f2));
    REQUIRE_OK(ad_world_get_fields(w, &f));
    ENSURE(f.nz == 0 && f.z0 == 0 && f.z1 == 0);
    float out[16];
    refused(ad_world_read_field(w, AD_FIELD_VELOCITY_Z, out, NULL), "field", "2D world, velocity_z");
    refused(ad_world_read_field(w, AD_FIELD_ACCEL_Z, out, NULL), "field", "2D world, accel_z");
    ENSURE(!strcmp(ad_field_units(AD_FIELD_DENSITY), "1/m^2") && !strcmp(ad_field_units3(AD_FIELD_DENSITY), "1/m^3"));
    ENSURE(!strcmp(ad_field_units(AD_FIELD_PRESSURE), "N/m") && !strcmp(ad_field_units3(AD_FIELD_PRESSURE), "N/m^2"));
    ENSURE(!strcmp(ad_field_name(AD_FIELD_VELOCITY_Z), "velocity_z") &&
           !strcmp(ad_field_units3(AD_FIELD_ACCEL_Z), "m/s^2"));
    ad_world_destroy(w);
}

/* ------------------------------------------------------------- checkpoints -- */

typedef struct file {
    unsigned char *b;
    size_t n;
} file;

static file slurp(const char *path)
{
    file f = {NULL, 0};
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(1);
    }
    fseek(fp, 0, SEEK_END);
    f.n = (size_t)ftell(fp);
    rewind(fp);
    f.b = malloc(f.n);
    ENSURE(fread(f.b, 1, f.n, fp) == f.n);
    fclose(fp);
    return f;
}

/* The checkpoint's CRC-32 (IEEE) of every byte before it, written again after a patch. */
static void fix_crc(file *f)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i + 4 < f->n; i++) {
        c ^= f->b[i];
        for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    }
    c ^= 0xFFFFFFFFu;
    memcpy(f->b + f->n - 4, &c, 4);
}

/* The payload of the section `tag` (0 where it has none). */
static size_t find(const file *f, const char *tag)
{
    for (size_t at = 16; at + 16 <= f->n;) {
        uint64_t len;
        memcpy(&len, f->b + at + 8, 8);
        if (!memcmp(f->b + at, tag, 4)) return at + 16;
        at += 16 + (size_t)len;
    }
    return 0;
}

/* A copy of g with `bytes` at `at` replaced (the checksum fixed), loaded: refused, naming `expect`. */
static void patched(const char *path, const file *g, size_t at, const void *bytes, size_t n, const char *expect)
{
    file f = {malloc(g->n), g->n};
    memcpy(f.b, g->b, g->n);
    memcpy(f.b + at, bytes, n);
    fix_crc(&f);
    FILE *fp = fopen(path, "wb");
    ENSURE(fp && fwrite(f.b, 1, f.n, fp) == f.n);
    if (fp) fclose(fp);
    ad_world *w = NULL;
    ad_status st = ad_world_load(path, AD_BACKEND_CPU, 1, &w, NULL, NULL);
    printf("  %s\n", st.message);
    ENSURE_MSG(st.code == AD_ERR_FORMAT && !w && strstr(st.message, expect), "expected a refusal naming '%s': %s",
               expect, st.message);
    ad_world_destroy(w);
    free(f.b);
}

/* A 3D world with fields and a probe saved after 40 steps, 40 more straight and after a load (on 1 thread
 * instead of 2): the same fields, bit for bit; then the file's field section made nonsense, one way at a time. */
static void test_checkpoint(void)
{
    char path[] = "/tmp/aerodem_fields3_XXXXXX";
    int fd = mkstemp(path);
    ENSURE(fd >= 0);
    close(fd);
    ad_world *a = gas_with_fields(AD_BACKEND_CPU, 2, AD_INTEGRATOR_VERLET), *b = NULL;
    REQUIRE_OK(ad_world_step(a, 40));
    REQUIRE_OK(ad_world_save(a, path, NULL, 0));
    REQUIRE_OK(ad_world_step(a, 40));
    REQUIRE_OK(ad_world_load(path, AD_BACKEND_CPU, 1, &b, NULL, NULL));
    ad_field_def fa, fb;
    REQUIRE_OK(ad_world_get_fields(a, &fa));
    REQUIRE_OK(ad_world_get_fields(b, &fb));
    ENSURE(fb.nz == fa.nz && fb.z0 == fa.z0 && fb.z1 == fa.z1 && fb.nx == fa.nx && fb.interval == fa.interval);
    REQUIRE_OK(ad_world_step(b, 40));
    size_t n;
    int same = same_fields(a, b, &n);
    printf("checkpoint at step 40, resumed to 80 on 1 thread: %zu field values and the probe %s\n", n,
           same ? "identical" : "DIFFER");
    ENSURE(same);
    ad_world_destroy(a);
    ad_world_destroy(b);
    /* the saved file's FLD3: def (64 bytes: nz at 44, z0 48, z1 56), samples, probe flag, zero, probe (64: z0
     * at 48, z1 at 56), probe samples, sums */
    file g = slurp(path);
    size_t s = find(&g, "FLD3");
    ENSURE(s > 0 && find(&g, "FLDS") == 0);
    if (s) {
        printf("a 3D checkpoint's field section made nonsense:\n");
        int zero = 0, three = 3;
        double nan = NAN, lo = 2.0;
        patched(path, &g, s + 44, &zero, 4, "field grid of 5 x 3 x 0 cells is invalid");
        patched(path, &g, s + 44, &three, 4, "does not hold the sums");
        patched(path, &g, s + 56, &nan, 8, "extent along z");
        patched(path, &g, s + 56, &lo, 8, "extent along z");
        patched(path, &g, s + 80 + 56, &lo, 8, "probe along z");
        patched(path, &g, s - 16, "FLDS", 4, "its field");
    }
    free(g.b);
    unlink(path);
}

int main(void)
{
    test_brute_force();
    test_gas_at_rest();
    test_backends();
    test_probe_stream();
    test_refusals();
    test_checkpoint();
    return tu_finish("test_fields3");
}
