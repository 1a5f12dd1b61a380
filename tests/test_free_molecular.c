/* Free-molecular flow (disc-disc contacts off) past a plate, a circle, a wedge and a symmetric airfoil against 2D
 * free-molecular theory for frictionless walls with normal restitution e, in long runs of the tunnel as a user
 * runs it: open far-field sides (src/physics/open.h), the raw coefficients of the run, no corrections.
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
 * A convex body neither shadows itself nor is hit twice by a reflected disc, and with open sides
 * a disc it reflects leaves the tunnel: the body meets the free stream alone, as in theory.
 * Coefficients: CD = Fx / (q c), CL = Fy / (q c), q = rho U^2 / 2, c the chord.
 *
 * At a vertex the spring-dashpot is a soft central force: its momentum-transfer cross-section is
 * (1 - 0.93 lambda) times the hard disc's, lambda = v sqrt(m/k) / r (docs/VALIDATION.md); the
 * cases are stiff enough (k = 1e5) that this stays well inside the tolerance, and is not corrected.
 * tests/validation_fm_sweep.c includes this file with FM_NO_MAIN.
 *
 *   test_free_molecular [name...]   (only the cases whose names hold one of the names given; ctest runs the
 *                                    plates at 45 deg and the circles as free_molecular, the rest as
 *                                    free_molecular_long, label long) */
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
    int shape;             /* AD_SHAPE_PLATE, _CIRCLE, _WEDGE, _NACA */
    const char *naca;      /* shape = naca */
    int panels;            /* circle, naca */
    double chord, aoa, half_angle, S, e;
    double width, height;  /* the tunnel */
    double flow_throughs;  /* averaged (after two of settling) */
    uint64_t seed;
    double stiffness;      /* k_n [N/m] (0: 1e5) */
} fm_case;

typedef struct fm_result {
    double cl, cl_se, cd, cd_se;   /* measured: mean, and standard error from batches of a flow-through */
    double cl_se_plain, cd_se_plain; /* the standard errors treating the intervals as independent */
    double cl_th, cd_th;           /* theory */
    double cd_vertex_th;           /* the part of cd_th from the vertex arcs (a circle of radius r) */
    double lambda;                 /* penetration scale v sqrt(m/k) / r at v = sqrt(U^2 + 2kT/m) */
    double averaged_s;             /* simulated time averaged */
    int n;                         /* intervals */
    double *icl, *icd;             /* the interval coefficients, n each (malloc'ed) */
    double seconds;                /* wall clock */
} fm_result;

static void fm_scene(const fm_case *c, ad_scene *s)
{
    ad_scene_defaults(s);
    s->kind = AD_TUNNEL_FLOW;
    s->width = c->width;
    s->height = c->height;
    s->walls = AD_BOUNDARY_OPEN; /* far field all round: a reflected disc leaves */
    s->radius = 0.5;
    s->mass = 1.0;
    s->stiffness = c->stiffness > 0 ? c->stiffness : 1e5;
    s->restitution = 1.0;
    s->wall_restitution = c->e;
    s->collisions = 0;
    s->area_fraction = 0.3; /* dense for many hits; without collisions the density only scales the forces */
    s->temperature = 1.0;
    s->speed_ratio = c->S;
    s->shape = c->shape;
    if (c->naca) snprintf(s->naca, sizeof s->naca, "%s", c->naca);
    s->thickness = 0.0;
    s->panels = c->panels ? c->panels : 60;
    s->chord = c->chord;
    s->aoa = c->aoa;
    s->half_angle = c->half_angle > 0 ? c->half_angle : 15;
    s->x = 0.5 * c->width - 0.25 * c->chord; /* the body's middle in the middle (x is its quarter-chord point) */
    s->y = 0.5 * c->height;
    s->threads = 1; /* one thread a world: robust on a loaded machine; ctest runs tests side by side */
    s->contact_steps = 10; /* on the disc-disc time pi sqrt(m/2k): a disc-segment contact gets 14 steps */
    s->cell_size = 4.0;    /* no disc-disc contacts: a coarse grid only saves binning work */
    s->backend = AD_BACKEND_CPU;
    s->seed = c->seed;
    s->png = s->vtk = s->video = 0;
    REQUIRE_OK(ad_scene_finish(s));
}

static double fm_time(ad_world *w) { return tu_stats(w).time; }

static void fm_step_until(ad_world *w, double t)
{
    while (fm_time(w) < t) REQUIRE_OK(ad_world_step(w, 20));
}

/* The standard error of the mean of x[0..n) from the means of batches of b consecutive values: the discs
 * near the body stay a while (a chord at the stream's speed, longer for slow ones), so neighbouring
 * intervals may be correlated, and batches of a flow-through take that in (in the cases below they come
 * out 0.8-1.1 times the intervals' plain error: a contact split between two intervals anticorrelates them). */
static double batch_se(const double *x, int n, int b)
{
    int nb = n / b;
    if (nb < 2) return NAN;
    double s = 0, s2 = 0;
    for (int k = 0; k < nb; k++) {
        double m = 0;
        for (int i = 0; i < b; i++) m += x[k * b + i];
        m /= b;
        s += m;
        s2 += m * m;
    }
    double mean = s / nb;
    return sqrt(fmax(s2 / nb - mean * mean, 0.0) / (nb - 1));
}

static fm_result fm_measure(const fm_case *c)
{
    fm_result R;
    memset(&R, 0, sizeof R);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ad_scene s;
    fm_scene(c, &s);
    /* theory from the outline as built */
    float *xs, *ys;
    size_t np;
    int closed;
    REQUIRE_OK(ad_scene_outline(&s, &xs, &ys, &np, &closed));
    double fx, fy;
    fm_theory_outline(xs, ys, np, c->S, c->e, s.radius, &fx, &fy);
    free(xs);
    free(ys);
    R.cd_th = fx / c->chord;
    R.cl_th = fy / c->chord;
    R.cd_vertex_th = fm_circle_drag_per_q(c->S, c->e, s.radius) / c->chord;
    R.lambda = sqrt(s.velocity * s.velocity + 2.0 * s.temperature) * sqrt(s.mass / s.stiffness) / s.radius;
    /* two flow-throughs settle the fill (the gas starts uniform around the body, its shadow empty of
     * nothing); then intervals of a fifth of a flow-through */
    double through = s.width / s.velocity, settle = 2.0 * through;
    int intervals = (int)ceil(5.0 * c->flow_throughs);
    ad_world *w;
    REQUIRE_OK(ad_scene_build(&s, &w));
    double q = ad_scene_flow_numbers(&s).dynamic_pressure * s.chord;
    fm_step_until(w, settle);
    ad_stats a = tu_stats(w);
    tu_coef co = {0};
    R.icl = malloc((size_t)intervals * sizeof(double));
    R.icd = malloc((size_t)intervals * sizeof(double));
    for (int k = 0; k < intervals; k++) {
        fm_step_until(w, settle + (k + 1) * 0.2 * through);
        ad_stats b = tu_stats(w);
        tu_coef_add(&co, &a, &b, q, &R.icl[co.n], &R.icd[co.n]);
        a = b;
    }
    R.averaged_s = a.time - settle;
    ad_world_destroy(w);
    R.n = co.n;
    tu_coef_result(&co, &R.cl, &R.cl_se, &R.cd, &R.cd_se);
    /* batches of a flow-through (5 intervals) */
    R.cl_se_plain = R.cl_se;
    R.cd_se_plain = R.cd_se;
    R.cl_se = batch_se(R.icl, R.n, 5);
    R.cd_se = batch_se(R.icd, R.n, 5);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    R.seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    return R;
}

#ifndef FM_NO_MAIN

/* The raw coefficient within 2 % of the theory (or, for a symmetric body's lift, zero within 2 standard
 * errors); the statistical error must be at most 1 % for the check to mean anything (a 2 % bias would
 * stand out by 2 standard errors). */
static int check(const char *what, double m, double se, double th)
{
    int ok = th != 0.0 ? fabs(m - th) <= 0.02 * fabs(th) && se <= 0.01 * fabs(th) : fabs(m) <= 2.0 * se;
    tu_checks++;
    if (!ok) tu_failures++;
    if (th != 0.0)
        printf("    %-3s measured %+.4f +- %.4f  theory %+.4f  diff %+.2f %%  (tolerance 2 %%)  %s\n", what, m, se, th,
               100.0 * (m - th) / fabs(th), ok ? "ok" : "FAIL");
    else
        printf("    %-3s measured %+.4f +- %.4f  (symmetric body: 0 within 2 standard errors)  %s\n", what, m, se,
               ok ? "ok" : "FAIL");
    return ok;
}

/* 1 when case `name` is chosen: no names given (all), or one of them in its name. */
static int fm_chosen(const char *name, int argc, char **argv)
{
    int chosen = argc < 2;
    for (int a = 1; a < argc; a++) chosen |= strstr(name, argv[a]) != NULL;
    return chosen;
}

int main(int argc, char **argv)
{
    /* name, shape, naca, panels, chord, aoa, half angle, S, e, width, height, flow-throughs, seed, k_n.
     * Contacts are soft: a disc sinks lambda r into a surface, and where the surface turns (a vertex's
     * arc) a soft disc is turned less than a hard one, so the vertex arcs' share of the drag falls
     * with lambda (wedge CD -1.46 % at lambda 0.028, -0.93 % at 0.014; NACA 0012 -1.92 % and -1.12 %;
     * plate at 20 deg -1.38 % at 0.046, -0.43 % at 0.023). The bodies whose drag the vertices carry
     * run at k_n = 4e5 (twice the steps). */
    const fm_case cases[] = {
        {"plate aoa 20, S 5, e 1", AD_SHAPE_PLATE, NULL, 0, 20, 20, 0, 5.0, 1.0, 30, 30, 500, 11, 4e5},
        {"plate aoa 45, S 5, e 1", AD_SHAPE_PLATE, NULL, 0, 20, 45, 0, 5.0, 1.0, 30, 30, 170, 12, 1e5},
        {"plate aoa 45, S 5, e 0.5", AD_SHAPE_PLATE, NULL, 0, 20, 45, 0, 5.0, 0.5, 30, 30, 170, 12, 1e5},
        {"circle D 20, S 2, e 1", AD_SHAPE_CIRCLE, NULL, 200, 20, 0, 0, 2.0, 1.0, 30, 30, 60, 13, 1e5},
        {"circle D 20, S 5, e 1", AD_SHAPE_CIRCLE, NULL, 200, 20, 0, 0, 5.0, 1.0, 30, 30, 100, 14, 1e5},
        {"circle D 20, 1000 panels, S 10, e 1", AD_SHAPE_CIRCLE, NULL, 1000, 20, 0, 0, 10.0, 1.0, 30, 30, 150, 15, 1e5},
        {"wedge 20 deg, S 3, e 1", AD_SHAPE_WEDGE, NULL, 0, 20, 0, 20, 3.0, 1.0, 30, 30, 150, 16, 4e5},
        {"NACA 0012 at 0 deg, S 3, e 1", AD_SHAPE_NACA, "0012", 60, 20, 0, 0, 3.0, 1.0, 30, 30, 480, 17, 4e5},
    };
    const int nc = (int)(sizeof cases / sizeof cases[0]);
    fm_result res[8] = {{0}};
    int ran[8] = {0}, nran = 0;
    double total = 0;
    for (int i = 0; i < nc; i++) {
        if (!fm_chosen(cases[i].name, argc, argv)) continue;
        ran[i] = 1, nran++;
        res[i] = fm_measure(&cases[i]);
        total += res[i].seconds;
        printf("%s: %d intervals over %.0f s (%.0f flow-throughs), lambda %.3f, %.1f s; errors from batches of a "
               "flow-through, %.2f and %.2f times the intervals' (CD, CL)\n",
               cases[i].name, res[i].n, res[i].averaged_s, cases[i].flow_throughs, res[i].lambda, res[i].seconds,
               res[i].cd_se / res[i].cd_se_plain, res[i].cl_se / res[i].cl_se_plain);
        check("CD", res[i].cd, res[i].cd_se, res[i].cd_th);
        check("CL", res[i].cl, res[i].cl_se, cases[i].shape == AD_SHAPE_PLATE ? res[i].cl_th : 0.0);
    }
    /* restitution: at e = 0.5 the plate's net normal force is (1 + 0.5)/(1 + 1) of the elastic one on the faces;
     * both runs use the same seed, so the same discs arrive: the ratio's error comes from the paired
     * intervals (delta method on the covariance), far below that of either mean */
    ENSURE_MSG(nran > 0, "no case's name holds any of the %d names given", argc - 1);
    double r_th = ran[1] && ran[2] ? res[2].cl_th / res[1].cl_th : 0, r_m = ran[1] && ran[2] ? res[2].cl / res[1].cl : 0,
           r_se = 0;
    if (ran[1] && ran[2]) {
        int n = res[1].n < res[2].n ? res[1].n : res[2].n;
        double s2 = 0;
        for (int k = 0; k < n; k++) {
            double dk = res[2].icl[k] - r_m * res[1].icl[k];
            s2 += dk * dk;
        }
        r_se = sqrt(s2 / (n - 1) / n) / fabs(res[1].cl);
        printf("CL(e = 0.5) / CL(e = 1) at 45 deg: measured %.4f +- %.4f, theory %.4f\n", r_m, r_se, r_th);
        ENSURE_NEAR(r_m, r_th, fmax(3.0 * r_se, 0.01)); /* vertex contacts: normal turns during a damped contact */
        ENSURE_MSG(fabs(r_m - 1.0) > 5.0 * r_se, "e = 0.5 indistinguishable from e = 1: ratio %.4f +- %.4f", r_m,
                   r_se);
    }
    printf("total %.1f s\n", total);
    for (int i = 0; i < nc; i++) {
        free(res[i].icl);
        free(res[i].icd);
    }
    return tu_finish("test_free_molecular");
}

#endif
