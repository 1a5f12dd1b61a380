/* One contact per touch (src/physics/segment.h): a disc bouncing on a straight wall made of many collinear
 * segments leaves at its angle of incidence wherever it lands, joints included; a disc dropped onto the tip of a
 * symmetric wedge leaves straight up; two separate outlines each push. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/world_internal.h"
#include "test_util.h"

/* A world without a gas, discs that do not touch each other (disc_contacts 0), periodic along x, open
 * above and below so a disc that bounced leaves; stiff walls (short contacts) resolved in 40 steps. */
static ad_world *make(double x0, double x1)
{
    ad_world_def d = ad_default_world_def();
    d.backend = AD_BACKEND_CPU;
    d.disc_contacts = 0;
    d.capacity = 4096;
    d.x_min = x0;
    d.x_max = x1;
    d.y_min = -10;
    d.y_max = 10;
    d.boundary_x = AD_BOUNDARY_PERIODIC;
    d.boundary_y = AD_BOUNDARY_OPEN;
    d.stiffness = 1e5;
    d.contact_steps = 40;
    d.cell_size = 2.0;
    d.threads = 1;
    ad_world *w;
    REQUIRE_OK(ad_world_create(&d, &w));
    return w;
}

/* Discs launched at the wall y = 0 (made of `nseg` segments over [0, 100], of unequal lengths when
 * `uneven`) at `incidence` degrees from its normal, landing at the points x = 10 + 0.0137 k and at each
 * joint and a radius on either side: the angle they leave at. */
static void collinear(int nseg, int uneven, double incidence)
{
    ad_world *w = make(0, 100);
    ad_segment *s = malloc((size_t)nseg * sizeof *s);
    float *xs = malloc(((size_t)nseg + 1) * sizeof *xs);
    for (int i = 0; i <= nseg; i++) {
        double f = (double)i / nseg;
        if (uneven && i > 0 && i < nseg) f += 0.3 / nseg * sin(7.0 * i); /* joints off the even spacing */
        xs[i] = (float)(100.0 * f);
    }
    for (int i = 0; i < nseg; i++) s[i] = (ad_segment){xs[i], 0.0f, xs[i + 1], 0.0f};
    REQUIRE_OK(ad_world_add_segments(w, s, (size_t)nseg));
    /* landing points: a fine comb, and every joint (and a quarter radius, a radius either side) from
     * x = 20 to 80 */
    enum { MAXP = 3000 };
    ad_particle p[MAXP];
    double land[MAXP];
    size_t n = 0;
    double th = incidence * TU_PI / 180.0, v = 2.0, vx = v * sin(th), vy = -v * cos(th);
    for (int k = 0; k < 400 && n < MAXP; k++) land[n++] = 20.0 + 0.1503 * k;
    for (int i = 1; i < nseg && n + 5 < MAXP; i++) {
        if (xs[i] < 20 || xs[i] > 80) continue;
        const double off[] = {0.0, -0.125, 0.125, -0.5, 0.5};
        for (int k = 0; k < 5; k++) land[n++] = xs[i] + off[k];
    }
    /* each disc starts 3 m above the wall and would meet it (centre a radius up) at its landing point */
    for (size_t i = 0; i < n; i++) {
        double t = (3.0 - 0.5) / -vy;
        p[i] = (ad_particle){(float)(land[i] - vx * t), 3.0f, (float)vx, (float)vy};
    }
    REQUIRE_OK(ad_world_add_particles(w, p, n));
    while (tu_stats(w).time < 2.5) REQUIRE_OK(ad_world_step(w, 500)); /* all bounce within 1.5 s */
    ad_particle q[MAXP];
    size_t got = 0;
    REQUIRE_OK(ad_world_read_particles(w, AD_READ_BY_ID, n, q, NULL, NULL, NULL, &got));
    double worst = 0;
    size_t bounced = 0;
    for (size_t i = 0; i < got; i++) {
        if (!(q[i].vy > 0)) continue;
        bounced++;
        double out = atan2(q[i].vx, q[i].vy) * 180.0 / TU_PI;
        worst = fmax(worst, fabs(out - incidence));
    }
    printf("straight wall of %4d %s segments, incidence %4.1f deg: %zu of %zu discs bounced, worst angle error "
           "%.2e deg\n",
           nseg, uneven ? "uneven" : "equal", incidence, bounced, n, worst);
    ENSURE(bounced == n && got == n);
    ENSURE_LE(worst, 0.1);
    free(s);
    free(xs);
    ad_world_destroy(w);
}

/* The tip of a symmetric wedge (two segments meeting at the top, 2 x 30 degrees), each segment of it
 * in many pieces: a disc dropped straight onto the tip leaves straight up. */
static void apex(void)
{
    ad_world *w = make(-20, 20);
    enum { PIECES = 37 };
    ad_segment s[2 * PIECES];
    double L = 6.0, a = 60.0 * TU_PI / 180.0; /* from the tip down either side, 60 deg from vertical */
    for (int k = 0; k < PIECES; k++) {
        double r0 = L * k / PIECES, r1 = L * (k + 1) / PIECES;
        s[k] = (ad_segment){(float)(-r1 * sin(a)), (float)(-r1 * cos(a)), (float)(-r0 * sin(a)), (float)(-r0 * cos(a))};
        s[PIECES + k] = (ad_segment){(float)(r0 * sin(a)), (float)(-r0 * cos(a)), (float)(r1 * sin(a)), (float)(-r1 * cos(a))};
    }
    REQUIRE_OK(ad_world_add_segments(w, s, 2 * PIECES));
    ad_particle p = {0.0f, 3.0f, 0.0f, -2.0f};
    REQUIRE_OK(ad_world_add_particles(w, &p, 1));
    while (tu_stats(w).time < 2.5) REQUIRE_OK(ad_world_step(w, 500)); /* it meets the tip after 1.25 s */
    ad_particle q;
    tu_read_by_id(w, 1, &q, NULL);
    printf("a disc dropped onto a wedge's tip: leaves with (%.2e, %.6f) m/s\n", q.vx, q.vy);
    ENSURE(q.vy > 1.99f && fabsf(q.vx) < 1e-5f);
    ad_world_destroy(w);
}

/* Two plates that do not touch, a disc between them touching both: each pushes (two outlines, two
 * contacts), and symmetrically. */
static void two_outlines(void)
{
    ad_world *w = make(-20, 20);
    ad_segment s[2] = {{-5, -0.45f, 5, -0.45f}, {-5, 0.45f, 5, 0.45f}};
    REQUIRE_OK(ad_world_add_segments(w, s, 2));
    ENSURE((w->seg.segs[0].flags >> AD_SEG_COMP_SHIFT) != (w->seg.segs[1].flags >> AD_SEG_COMP_SHIFT));
    ad_accum a;
    ad_accum_zero(&a);
    ad_contact_segments(&w->params, &w->seg.grid, 0.0f, 0.0f, 0.0f, 0.0f, &a);
    float k = w->params.k, expect = 2.0f * k * 0.05f;
    printf("a disc between two plates 0.9 m apart: %.3f N pushing, %.3f N net, two contacts' pressure %.3f N\n",
           fabsf(a.fy), a.fy, a.pressure);
    ENSURE(fabsf(a.fy) < 1e-3f * k && fabsf(a.pressure - expect) < 1e-3f * expect);
    ad_world_destroy(w);
}

int main(void)
{
    collinear(100, 0, 30.0);
    collinear(1000, 0, 30.0);
    collinear(1000, 1, 30.0);
    collinear(250, 1, 60.0);
    collinear(250, 1, 5.0);
    apex();
    two_outlines();
    return tu_finish("test_segments");
}
