/* The 3D world (issue 18) through the public API: bad definitions refused by name; head-on
 * sphere-sphere and sphere-triangle collisions (face, edge, corner) against the closed forms; a step's
 * accelerations against a brute-force sum of the same law; momentum in a periodic box; energy for
 * e = 1 with every integrator; 1, 2 and 4 threads bit-identical; backend = reference against cpu, sphere
 * by sphere; no sphere lost or duplicated over 10^4 steps; a checkpoint resumed bit for bit. */
#include "world3_cases.h"


static void refused(ad_world_def d, const char *field)
{
    ad_world *w = NULL;
    ad_status st = ad_world_create(&d, &w);
    ENSURE_MSG(st.code == AD_ERR_INVALID && !strcmp(st.field, field), "expected a refusal naming %s, got %d '%s': %s",
               field, st.code, st.field, st.message);
    ad_world_destroy(w);
}

static void test_refusals(void)
{
    ad_world_def d = def3();
    d.dimensions = 4;
    refused(d, "dimensions");
    d = def3();
    d.z_max = d.z_min;
    refused(d, "z_max");
    d = def3();
    d.z_min = NAN;
    refused(d, "z_min");
    d = def3();
    d.boundary_z = AD_BOUNDARY_OPEN;
    refused(d, "boundary_z");
    d = def3();
    d.reservoir = 2.0; /* the reservoir lines open faces, and none is open */
    refused(d, "reservoir");
    d = def3();
    d.gravity_z = INFINITY;
    refused(d, "gravity_z");
    d = def3();
    d.cell_size = 0.3; /* below half the contact distance */
    refused(d, "cell_size");

    d = def3();
    ad_world *w = NULL;
    REQUIRE_OK(ad_world_create(&d, &w));
    ad_triangle bad[2] = {{{{1, 1, 1}, {2, 1, 1}, {3, 1, 1}}}, {{{1, 1, 1}, {2, 1, 1}, {NAN, 2, 1}}}};
    ad_status st = ad_world_add_triangles(w, bad, 1);
    ENSURE_MSG(st.code == AD_ERR_INVALID && strstr(st.message, "triangle 0") && strstr(st.message, "degenerate"), "%s",
               st.message);
    st = ad_world_add_triangles(w, bad + 1, 1);
    ENSURE_MSG(st.code == AD_ERR_INVALID && strstr(st.message, "not a finite"), "%s", st.message);
    ad_particle3 nan = {1, 1, NAN, 0, 0, 0};
    st = ad_world_add_particles3(w, &nan, 1);
    ENSURE_MSG(st.code == AD_ERR_INVALID && !strcmp(st.field, "particles"), "%s", st.message);
    ad_particle flat = {1, 1, 0, 0};
    st = ad_world_add_particles(w, &flat, 1);
    ENSURE_MSG(st.code == AD_ERR_INVALID && !strcmp(st.field, "dimensions"), "%s", st.message);
    ad_segment seg = {1, 1, 2, 2};
    st = ad_world_add_segments(w, &seg, 1);
    ENSURE_MSG(st.code == AD_ERR_INVALID && !strcmp(st.field, "dimensions"), "%s", st.message);
    ad_field_def fd = {4, 4, 0, 0, 20, 20, 1, 0, 0.0, 0.0}; /* a 2D grid: no depth (tests/test_fields3.c has more) */
    st = ad_world_set_fields(w, &fd);
    ENSURE_MSG(st.code == AD_ERR_INVALID && !strcmp(st.field, "fields.nz"), "%s", st.message);
    ENSURE(w->count == 0 && w->tri.count == 0);
    ad_world_destroy(w);

    ad_world_def d2 = ad_default_world_def();
    d2.backend = AD_BACKEND_CPU;
    REQUIRE_OK(ad_world_create(&d2, &w));
    ad_particle3 sph = {1, 1, 1, 0, 0, 0};
    st = ad_world_add_particles3(w, &sph, 1);
    ENSURE_MSG(st.code == AD_ERR_INVALID && !strcmp(st.field, "dimensions"), "%s", st.message);
    ad_world_destroy(w);
}


/* The accelerations of a step against the same law summed over every pair, triangle and wall. */
static void test_brute_force(void)
{
    ad_world *w = gas(0, 0.9, AD_INTEGRATOR_SYMPLECTIC_EULER, 2, 0.3, 1);
    REQUIRE_OK(ad_world_step(w, 200)); /* contacts everywhere, against the cube and the walls too */
    size_t n = w->count, got;
    ad_particle3 *p = malloc(n * sizeof *p);
    float *acc = malloc(3 * n * sizeof *acc);
    ad_particle_out out = {NULL, NULL, NULL, NULL, NULL, p};
    REQUIRE_OK(ad_world_read(w, AD_READ_BY_ID, n, &out, &got));
    REQUIRE_OK(ad_world_step(w, 1));
    ad_particle_out out2 = {NULL, NULL, NULL, NULL, acc, NULL};
    REQUIRE_OK(ad_world_read(w, AD_READ_BY_ID, n, &out2, &got));
    const ad_params *P = &w->params;
    size_t bad = 0, touching = 0, on_body = 0;
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        ad_accum3 a;
        ad_accum_zero3(&a);
        for (size_t j = 0; j < n; j++)
            if (j != i)
                ad_contact_disc3(P, p[j].x - p[i].x, p[j].y - p[i].y, p[j].z - p[i].z, p[j].vx - p[i].vx,
                                 p[j].vy - p[i].vy, p[j].vz - p[i].vz, &a);
        ad_vec3 c = ad_v3(p[i].x, p[i].y, p[i].z), v = ad_v3(p[i].vx, p[i].vy, p[i].vz);
        float before = a.pressure;
        ad_contact_triangles_all(P, w->tri.tris, (uint32_t)w->tri.count, c, v, &a);
        on_body += a.pressure != before;
        ad_contact_walls3(P, p[i].x, p[i].y, p[i].z, p[i].vx, p[i].vy, p[i].vz, &a);
        double ref[3] = {a.fx * P->inv_mass, a.fy * P->inv_mass, a.fz * P->inv_mass};
        touching += a.pressure > 0;
        for (int k = 0; k < 3; k++) {
            double err = fabs(acc[3 * i + k] - ref[k]), tol = 1e-3 + 1e-4 * fabs(ref[k]);
            worst = fmax(worst, err);
            bad += !(err <= tol);
        }
    }
    printf("brute force: %zu spheres (%zu touching, %zu on the cube), accelerations within %.3g m/s^2 of the pair "
           "sum; %zu components off\n", n, touching, on_body, worst, bad);
    ENSURE(bad == 0);
    ENSURE(touching > n / 8 && on_body >= 3);
    free(p);
    free(acc);
    ad_world_destroy(w);
}


static void test_energy(void)
{
    /* forward Euler gains energy at every contact (it is not symplectic): not among these */
    static const ad_integrator integ[3] = {AD_INTEGRATOR_SYMPLECTIC_EULER, AD_INTEGRATOR_VERLET, AD_INTEGRATOR_RK4};
    static const double bound[3] = {0.005, 0.005, 0.005};
    for (int k = 0; k < 3; k++) {
        ad_world *w = gas(0, 1.0, integ[k], 2, 0.25, 1);
        ad_stats s0, s1;
        REQUIRE_OK(ad_world_step(w, 1));
        REQUIRE_OK(ad_world_get_stats(w, &s0));
        REQUIRE_OK(ad_world_step(w, 1500));
        REQUIRE_OK(ad_world_get_stats(w, &s1));
        double e0 = s0.kinetic_energy + s0.potential_energy, e1 = s1.kinetic_energy + s1.potential_energy;
        printf("e = 1, %s: energy %.6g -> %.6g (%+.3g%%), %llu skin violations\n", ad_integrator_name(integ[k]), e0, e1,
               100 * (e1 / e0 - 1), (unsigned long long)s1.skin_violations);
        ENSURE_LE(fabs(e1 / e0 - 1), bound[k]);
        if (integ[k] == AD_INTEGRATOR_RK4) ENSURE(s1.skin_violations == 0);
        ad_world_destroy(w);
    }
}

static void test_threads(void)
{
    uint64_t h[3];
    int t[3] = {1, 2, 4};
    for (int k = 0; k < 3; k++) {
        ad_world *w = gas(1, 0.9, AD_INTEGRATOR_VERLET, t[k], 0.3, 1);
        REQUIRE_OK(ad_world_step(w, 300));
        h[k] = tu3_hash(w);
        ad_world_destroy(w);
    }
    printf("threads 1, 2, 4: hashes %016llx %016llx %016llx\n", (unsigned long long)h[0], (unsigned long long)h[1],
           (unsigned long long)h[2]);
    ENSURE(h[0] == h[1] && h[1] == h[2]);
}

/* backend = reference (one thread) against backend = cpu (two), sphere by sphere, every integrator, a
 * body and solid walls. */
static void test_reference(void)
{
    const ad_integrator integ[4] = {AD_INTEGRATOR_SYMPLECTIC_EULER, AD_INTEGRATOR_EULER, AD_INTEGRATOR_VERLET,
                                    AD_INTEGRATOR_RK4};
    ad_backend keep = g_backend;
    for (int k = 0; k < 4; k++) {
        uint64_t h[2];
        for (int b = 0; b < 2; b++) {
            g_backend = b ? AD_BACKEND_REFERENCE : AD_BACKEND_CPU;
            ad_world *w = gas(0, 0.9, integ[k], 2, 0.25, 1);
            ad_stats st;
            REQUIRE_OK(ad_world_get_stats(w, &st));
            ENSURE(st.backend == g_backend);
            REQUIRE_OK(ad_world_step(w, 120));
            h[b] = tu3_hash(w);
            ad_world_destroy(w);
        }
        printf("reference and cpu, %s: hashes %016llx %016llx\n", ad_integrator_name(integ[k]),
               (unsigned long long)h[0], (unsigned long long)h[1]);
        ENSURE(h[0] == h[1]);
    }
    g_backend = keep;
}

int main(void)
{
    test_refusals();
    test_pair_collision();
    test_triangle_collisions();
    test_brute_force();
    test_momentum();
    test_energy();
    test_threads();
    test_reference();
    test_no_loss();
    test_checkpoint();
    return tu_finish("test_world3");
}
