/* The free stream the body meets: empty tunnels run as a user runs them (the scene keys and their automatic
 * reservoir, the run's probe across the tunnel), long runs of 10 and more flow-through times; the
 * measured density, velocity and temperature within 1 % of the nominal (2 % at area fraction 0.3), each with a
 * statistical error inside that (at most 0.7 of it: batch means of the probe over the run).
 *
 *   test_free_stream [name...]   (only the cases whose names hold one of the names given; ctest runs
 *                                 four in the ordinary suite, free_stream, and the three others under
 *                                 the label long, free_stream_long) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/scene.h"
#include "test_util.h"

typedef struct fs_case {
    const char *name;
    double area_fraction;
    int collisions;
    double speed_ratio;
    int walls;           /* AD_BOUNDARY_* */
    double width, height;
    double flow_throughs; /* averaged, after two of settling */
    double tol;          /* relative */
} fs_case;

typedef struct fs_mean {
    double v[3], se[3]; /* density, velocity, temperature: ratios to the nominal, and their errors */
} fs_mean;

/* The probe's free stream between two reads (ad_probe_between), as ratios to the nominal. */
static void ratios(const ad_probe_sums *a, const ad_probe_sums *b, double n0, double u0, double t0, double *r)
{
    ad_probe_stream f = ad_probe_between(a, b);
    r[0] = f.density / n0;
    r[1] = f.velocity / u0;
    r[2] = f.temperature / t0;
}

static int run_case(const fs_case *c)
{
    ad_scene s;
    ad_scene_defaults(&s);
    s.kind = AD_TUNNEL_FLOW;
    s.width = c->width;
    s.height = c->height;
    s.walls = c->walls;
    s.collisions = c->collisions;
    s.area_fraction = c->area_fraction;
    s.temperature = 1.0;
    s.speed_ratio = c->speed_ratio;
    s.shape = AD_SHAPE_NONE;
    s.threads = 1; /* ctest runs tests side by side */
    s.backend = AD_BACKEND_CPU;
    s.field_cell = 4.0;
    REQUIRE_OK(ad_scene_finish(&s));
    ad_scene_layout l;
    REQUIRE_OK(ad_scene_layout_of(&s, &l));
    ad_world *w;
    REQUIRE_OK(ad_scene_build(&s, &w));
    ad_field_def fd = {(int)ceil(s.width / s.field_cell), (int)ceil(s.height / s.field_cell), 0, 0,
                       ceil(s.width / s.field_cell) * s.field_cell, ceil(s.height / s.field_cell) * s.field_cell, 10,
                       0, 0.0, 0.0};
    REQUIRE_OK(ad_world_set_fields(w, &fd));
    /* the run's probe reaches a quarter of the way down an empty tunnel: here the whole of it, from just
     * inside the inlet to just inside the outlet (the outlet's side too must stay free stream) */
    ad_probe_def pd = {l.probe_x0, l.probe_y0, s.width - l.probe_x0, l.probe_y1, 1.0, 0.0, 0.0, 0.0};
    REQUIRE_OK(ad_world_set_probe(w, &pd));
    double through = s.width / s.velocity, n0 = s.area_fraction / (TU_PI * s.radius * s.radius);
    while (tu_stats(w).time < 2.0 * through) REQUIRE_OK(ad_world_step(w, 100));
    /* 20 batches over the run: their means' spread gives the error of the whole mean */
    enum { B = 20 };
    double r[B][3], batch = c->flow_throughs * through / B;
    ad_probe_sums p0, pa, pb;
    REQUIRE_OK(ad_world_read_probe(w, &p0));
    pa = p0;
    double t0 = tu_stats(w).time;
    for (int b = 0; b < B; b++) {
        while (tu_stats(w).time < t0 + (b + 1) * batch) REQUIRE_OK(ad_world_step(w, 100));
        REQUIRE_OK(ad_world_read_probe(w, &pb));
        ratios(&pa, &pb, n0, s.velocity, s.temperature, r[b]);
        pa = pb;
    }
    double all[3];
    ratios(&p0, &pb, n0, s.velocity, s.temperature, all);
    ad_stats st = tu_stats(w);
    printf("%s: reservoir %g m (%g upstream), probe x [%g, %g] m; %.0f flow-throughs, %zu discs at the end, %llu "
           "entered, %llu waiting for room\n",
           c->name, l.reservoir, l.reservoir_inflow, pd.x0, pd.x1, (st.time - t0) / through, st.count,
           (unsigned long long)st.entered, (unsigned long long)st.entries_waiting);
    const char *what[3] = {"density", "velocity", "temperature"};
    int ok = 1;
    for (int k = 0; k < 3; k++) {
        double m = 0, v = 0;
        for (int b = 0; b < B; b++) m += r[b][k] / B;
        for (int b = 0; b < B; b++) v += (r[b][k] - m) * (r[b][k] - m) / (B - 1);
        double se = sqrt(v / B);
        int good = fabs(all[k] - 1.0) <= c->tol && se <= 0.7 * c->tol;
        printf("    %-11s %.4f +- %.4f of the nominal (tolerance %.0f %%)  %s\n", what[k], all[k], se, 100.0 * c->tol,
               good ? "ok" : "FAIL");
        ENSURE_MSG(good, "%s: %s %.4f +- %.4f", c->name, what[k], all[k], se);
        ok &= good;
    }
    ENSURE(st.entries_lost == 0);
    ad_world_destroy(w);
    return ok;
}

int main(int argc, char **argv)
{
    /* name, area fraction, collisions, S, walls, width, height, flow-throughs, tolerance */
    const fs_case cases[] = {
        {"free-molecular, S 2, far field", 0.3, 0, 2.0, AD_BOUNDARY_OPEN, 80, 40, 15, 0.01},
        {"free-molecular, S 1, far field", 0.3, 0, 1.0, AD_BOUNDARY_OPEN, 80, 40, 15, 0.01},
        {"dilute (area fraction 0.01), S 3, far field", 0.01, 1, 3.0, AD_BOUNDARY_OPEN, 200, 100, 70, 0.01},
        {"area fraction 0.05, S 3, far field", 0.05, 1, 3.0, AD_BOUNDARY_OPEN, 80, 40, 110, 0.01},
        {"area fraction 0.3, S 2, far field", 0.3, 1, 2.0, AD_BOUNDARY_OPEN, 80, 40, 12, 0.02},
        {"area fraction 0.3, S 3, far field", 0.3, 1, 3.0, AD_BOUNDARY_OPEN, 80, 40, 12, 0.02},
        {"area fraction 0.3, S 3, solid walls", 0.3, 1, 3.0, AD_BOUNDARY_SOLID, 80, 40, 12, 0.02},
    };
    int run = 0;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int chosen = argc < 2;
        for (int a = 1; a < argc; a++) chosen |= strstr(cases[k].name, argv[a]) != NULL;
        if (chosen) run_case(&cases[k]), run++;
    }
    ENSURE_MSG(run > 0, "no case's name holds any of the %d names given", argc - 1);
    return tu_finish("test_free_stream");
}
