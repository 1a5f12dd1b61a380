/* Free-molecular flow (disc-disc contacts off) past a plate, a circle and a wedge against 2D
 * free-molecular theory for frictionless walls with normal restitution e.
 *
 * Theory. The free stream is a drifting 2D Maxwellian, number density n, drift U along +x,
 * thermal speed sigma = sqrt(2 kT/m), speed ratio S = U / sigma. A flat surface element with
 * outward normal nhat sees the stream approach with normal speed U_n = -U nhat.x, s = U_n/sigma.
 * Only the normal velocity marginal matters; it is 1D Gaussian, so the one-sided moments are
 *   incident momentum flux  p_i = n m sigma^2 F(s),
 *   F(s) = s exp(-s^2) / (2 sqrt(pi)) + (1 + 2 s^2) (1 + erf s) / 4.
 * A frictionless linear spring-dashpot returns every disc with normal velocity -e v_n (exactly,
 * independent of speed) and the tangential velocity unchanged, so the wall pressure is
 *   p = (1 + e) p_i,   Cp = p / (rho U^2 / 2) = 2 (1 + e) F(S sin theta) / S^2,
 * no shear. Disc centres meet the body one radius r out: the effective body is the segment
 * outline grown by r (Minkowski sum with a disc). For a convex outline that is its edges moved
 * out plus arcs at the vertices whose normals together sweep one full circle, so the force is
 *   F = - sum_edges L_i p(nhat_i) nhat_i  +  drag of a circle of radius r  (along x only).
 * A convex body neither shadows itself nor is hit twice by a reflected disc.
 * Coefficients: CD = Fx / (q c), CL = Fy / (q c), q = rho U^2 / 2, c the chord.
 *
 * Tunnel caveat (measured here): a disc that leaves through the inlet upstream (x < 0) wraps to
 * the outlet with its velocity unchanged; only discs leaving through the outlet are redrawn.
 * Discs the body throws upstream therefore circulate and hit it again from behind. The test
 * measures inside the window before the first of them can come back (tunnel width minus body
 * length over the fastest backward speed), over several independent runs.
 *
 * At a vertex the spring-dashpot is a soft central force, so the vertex arcs drag a little less than
 * hard ones (see FM_SYS below). tests/validation_fm_sweep.c includes this file with FM_NO_MAIN. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/scene.h"
#include "test_util.h"

/* --------------------------------------------------------------- theory -- */

static double fm_F(double s)
{
    return s * exp(-s * s) / (2.0 * sqrt(TU_PI)) + (1.0 + 2.0 * s * s) * (1.0 + erf(s)) / 4.0;
}

/* Pressure coefficient on a face whose stream inclination has sine sin_t (negative: leeward). */
static double fm_cp(double S, double e, double sin_t) { return 2.0 * (1.0 + e) * fm_F(S * sin_t) / (S * S); }

/* Drag of a circle of radius R per q: R * int Cp(S cos psi) cos psi dpsi (psi from the stagnation point). */
static double fm_circle_drag_per_q(double S, double e, double R)
{
    const int n = 4096; /* periodic, smooth integrand: the midpoint rule converges spectrally */
    double sum = 0;
    for (int i = 0; i < n; i++) {
        double psi = 2.0 * TU_PI * (i + 0.5) / n;
        sum += fm_cp(S, e, cos(psi)) * cos(psi);
    }
    return R * sum * 2.0 * TU_PI / n;
}

/* Theory for a convex outline (xs, ys, np points; np == 2: a single segment, both faces)
 * grown by the disc radius r; force per q returned in *fx, *fy. */
static void fm_theory_outline(const float *xs, const float *ys, size_t np, double S, double e, double r, double *fx,
                              double *fy)
{
    double area = 0;
    for (size_t i = 0; i < np; i++) {
        size_t j = (i + 1) % np;
        area += (double)xs[i] * ys[j] - (double)xs[j] * ys[i];
    }
    double sx = 0, sy = 0;
    for (size_t k = 0; k < np; k++) {
        size_t i = area >= 0 ? k : np - 1 - k, j = area >= 0 ? (k + 1) % np : (2 * np - 2 - k) % np;
        double dx = (double)xs[j] - xs[i], dy = (double)ys[j] - ys[i], L = hypot(dx, dy);
        if (L == 0) continue;
        double nx = dy / L, ny = -dx / L; /* outward for a counter-clockwise outline */
        double cp = fm_cp(S, e, -nx);     /* s = S sin(theta) = -S nhat.x */
        sx -= L * cp * nx;
        sy -= L * cp * ny;
    }
    *fx = sx + fm_circle_drag_per_q(S, e, r);
    *fy = sy;
}

/* ------------------------------------------------------------ simulation -- */

typedef struct fm_case {
    const char *name;
    int shape;          /* AD_SHAPE_PLATE, _CIRCLE, _WEDGE */
    double chord, aoa, half_angle, S, e;
    double width, height, area_fraction, stiffness;
    int runs;           /* independent runs (seeds) */
    int intervals;      /* intervals per run inside the clean window */
    uint64_t seed_base; /* first seed; runs use seed_base + 7919 k */
} fm_case;

typedef struct fm_result {
    double cl, cl_se, cd, cd_se;   /* measured: mean and standard error over all intervals */
    double cl_th, cd_th;           /* theory */
    double cd_vertex_th;           /* the part of cd_th from the vertex arcs (a circle of radius r) */
    double lambda;                 /* penetration scale v sqrt(m/k) / r at v = sqrt(U^2 + 2kT/m) */
    double window_s, settle_s;     /* per run */
    int n;                         /* intervals */
    double *icl, *icd;             /* the interval coefficients, n each (malloc'ed) */
    double seconds;                /* wall clock */
} fm_result;

static void fm_scene(const fm_case *c, uint64_t seed, ad_scene *s)
{
    ad_scene_defaults(s);
    s->kind = AD_TUNNEL_FLOW;
    s->width = c->width;
    s->height = c->height;
    s->walls = AD_BOUNDARY_PERIODIC;
    s->radius = 0.5;
    s->mass = 1.0;
    s->stiffness = c->stiffness;
    s->restitution = 1.0;
    s->wall_restitution = c->e;
    s->collisions = 0;
    s->area_fraction = c->area_fraction;
    s->temperature = 1.0;
    s->velocity = c->S * sqrt(2.0 * s->temperature);
    s->shape = c->shape;
    s->thickness = 0.0;
    s->panels = 60;
    s->chord = c->chord;
    s->aoa = c->aoa;
    s->half_angle = c->half_angle > 0 ? c->half_angle : 15;
    /* the body's centre a chord from the inlet, in the middle across */
    s->x = c->chord * (c->shape == AD_SHAPE_CIRCLE ? 0.75 : 1.0);
    s->y = 0.5 * c->height;
    s->threads = 1; /* one thread a world: robust on a loaded machine; ctest runs tests side by side */
    s->contact_steps = 10; /* on the disc-disc time pi sqrt(m/2k): a disc-segment contact gets 14 steps */
    s->cell_size = 4.0;    /* no disc-disc contacts: a coarse grid only saves binning work */
    s->backend = AD_BACKEND_CPU;
    s->seed = seed;
    s->png = s->vtk = s->video = 0;
    REQUIRE_OK(ad_scene_finish(s));
}

static double fm_time(ad_world *w) { return tu_stats(w).time; }

static void fm_step_until(ad_world *w, double t)
{
    while (fm_time(w) < t) REQUIRE_OK(ad_world_step(w, 10));
}

static fm_result fm_measure(const fm_case *c)
{
    fm_result R;
    memset(&R, 0, sizeof R);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ad_scene s;
    fm_scene(c, 1, &s);
    /* theory from the outline as built */
    float *xs, *ys;
    size_t np;
    int closed;
    REQUIRE_OK(ad_scene_outline(&s, &xs, &ys, &np, &closed));
    double fx, fy;
    fm_theory_outline(xs, ys, np, c->S, c->e, s.radius, &fx, &fy);
    float xmin = xs[0], xmax = xs[0];
    for (size_t i = 0; i < np; i++) {
        xmin = xs[i] < xmin ? xs[i] : xmin;
        xmax = xs[i] > xmax ? xs[i] : xmax;
    }
    free(xs);
    free(ys);
    R.cd_th = fx / c->chord;
    R.cl_th = fy / c->chord;
    R.cd_vertex_th = fm_circle_drag_per_q(c->S, c->e, s.radius) / c->chord;
    R.lambda = sqrt(s.velocity * s.velocity + 2.0 * s.temperature) * sqrt(s.mass / s.stiffness) / s.radius;
    /* the clean window: a disc thrown upstream at t >= 0 needs at least (W - body length - 2r) / v_back to
     * come round the periodic x axis to the body's rear; |v_back| <= |v| <= U + 4.5 sqrt(kT/m) (tail 3e-6) */
    double U = s.velocity, vcap = U + 4.5 * sqrt(s.temperature);
    double window = (s.width - (xmax - xmin) - 2 * s.radius) / vcap;
    double settle = 4.0 * s.radius / U; /* the fill leaves a layer of one radius clear of the body */
    window -= 0.1; /* room for the last chunk of steps to overshoot */
    R.window_s = window - settle;
    R.settle_s = settle;
    tu_coef co = {0};
    R.icl = malloc((size_t)(c->runs * c->intervals) * sizeof(double));
    R.icd = malloc((size_t)(c->runs * c->intervals) * sizeof(double));
    for (int run = 0; run < c->runs; run++) {
        fm_scene(c, (c->seed_base ? c->seed_base : 1000) + 7919 * (uint64_t)run, &s);
        ad_world *w;
        REQUIRE_OK(ad_scene_build(&s, &w));
        double q = ad_scene_flow_numbers(&s).dynamic_pressure * s.chord;
        fm_step_until(w, settle);
        ad_stats a = tu_stats(w);
        double dtw = (window - settle) / c->intervals;
        for (int k = 0; k < c->intervals; k++) {
            fm_step_until(w, settle + (k + 1) * dtw);
            ad_stats b = tu_stats(w);
            if (b.time > window) break; /* the last step overshot the clean window */
            tu_coef_add(&co, &a, &b, q, &R.icl[co.n], &R.icd[co.n]);
            a = b;
        }
        ad_world_destroy(w);
    }
    R.n = co.n;
    tu_coef_result(&co, &R.cl, &R.cl_se, &R.cd, &R.cd_se);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    R.seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    return R;
}

#ifndef FM_NO_MAIN

/* Systematic tolerance (see docs/validation/free_molecular.md): 3% of the theory (float outline, 14 steps
 * a contact, the velocity tail past the clean window) plus, on the drag, the soft-vertex deficit: at a
 * vertex the linear spring is a soft central force, and integrating its trajectories gives a momentum-
 * transfer cross-section (1 - 0.93 lambda) times the hard disc's, lambda = v sqrt(m/k) / r; the test allows
 * lambda times the vertex share of the drag. */
#define FM_SYS 0.03

static int check(const char *what, double m, double se, double th, double extra)
{
    double tol = fmax(3.0 * se, FM_SYS * fabs(th) + extra);
    int ok = fabs(m - th) <= tol;
    tu_checks++;
    if (!ok) tu_failures++;
    printf("    %-3s measured %+.4f +- %.4f  theory %+.4f  diff %+.2f%%  tol %.4f  %s\n", what, m, se, th,
           th != 0 ? 100.0 * (m - th) / fabs(th) : 0.0, tol, ok ? "ok" : "FAIL");
    return ok;
}

int main(void)
{
    /* name, shape, chord, aoa, half angle, S, e, width, height, area fraction, k, runs, intervals, seed.
     * The two 30 deg plates share their seeds on purpose: the same discs arrive, so the ratio of their
     * forces isolates the restitution. */
    const fm_case cases[] = {
        {"plate aoa 10, S 2, e 1", AD_SHAPE_PLATE, 12, 10, 0, 2.0, 1.0, 40, 40, 0.3, 1e4, 150, 3, 1000},
        {"plate aoa 30, S 2, e 1", AD_SHAPE_PLATE, 12, 30, 0, 2.0, 1.0, 40, 40, 0.3, 1e4, 60, 3, 2000},
        {"plate aoa 30, S 2, e 0.5", AD_SHAPE_PLATE, 12, 30, 0, 2.0, 0.5, 40, 40, 0.3, 1e4, 60, 3, 2000},
        {"circle D 12, S 2, e 1", AD_SHAPE_CIRCLE, 12, 0, 0, 2.0, 1.0, 44, 48, 0.3, 1e4, 40, 3, 3000},
        {"wedge 20 deg, S 3, e 1", AD_SHAPE_WEDGE, 12, 0, 20, 3.0, 1.0, 44, 40, 0.3, 1e4, 60, 3, 4000},
    };
    const int nc = (int)(sizeof cases / sizeof cases[0]);
    fm_result res[8];
    double total = 0;
    for (int i = 0; i < nc; i++) {
        res[i] = fm_measure(&cases[i]);
        total += res[i].seconds;
        printf("%s: %d intervals (%d runs x %.1f s window), %.1f s\n", cases[i].name, res[i].n, cases[i].runs,
               res[i].window_s, res[i].seconds);
        check("CD", res[i].cd, res[i].cd_se, res[i].cd_th, res[i].lambda * res[i].cd_vertex_th);
        if (cases[i].shape == AD_SHAPE_PLATE) check("CL", res[i].cl, res[i].cl_se, res[i].cl_th, 0.0);
        else ENSURE_MSG(fabs(res[i].cl) <= fmax(3.0 * res[i].cl_se, 0.01), "symmetric body: CL = %.4f +- %.4f",
                        res[i].cl, res[i].cl_se);
    }
    /* restitution: at e = 0.5 the plate's net normal force is (1 + 0.5)/(1 + 1) of the elastic one on the faces;
     * the measured ratio must resolve that from 1 */
    /* both runs use the same seeds, so the same discs arrive: the ratio's error comes from the paired
     * intervals (delta method on the covariance), far below that of either mean */
    double r_th = res[2].cl_th / res[1].cl_th, r_m = res[2].cl / res[1].cl;
    double r_se = 0;
    {
        int n = res[1].n < res[2].n ? res[1].n : res[2].n;
        double s2 = 0;
        for (int k = 0; k < n; k++) {
            double dk = res[2].icl[k] - r_m * res[1].icl[k];
            s2 += dk * dk;
        }
        r_se = sqrt(s2 / (n - 1) / n) / fabs(res[1].cl);
    }
    printf("CL(e = 0.5) / CL(e = 1) at 30 deg: measured %.4f +- %.4f, theory %.4f\n", r_m, r_se, r_th);
    ENSURE_NEAR(r_m, r_th, fmax(3.0 * r_se, 0.01)); /* vertex contacts: normal turns during a damped contact */
    ENSURE_MSG(fabs(r_m - 1.0) > 5.0 * r_se, "e = 0.5 indistinguishable from e = 1: ratio %.4f +- %.4f", r_m, r_se);
    printf("total %.1f s\n", total);
    for (int i = 0; i < nc; i++) {
        free(res[i].icl);
        free(res[i].icd);
    }
    return tu_finish("test_free_molecular");
}

#endif
