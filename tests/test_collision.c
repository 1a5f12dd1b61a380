/* Single contacts against the closed forms of the linear spring-dashpot:
 *   restitution e and contact time t_c = pi / sqrt(k/m_eff - (gamma/(2 m_eff))^2),
 *   gamma = 2 beta sqrt(m_eff k), beta = -ln e / sqrt(pi^2 + ln^2 e),
 *   m_eff = m/2 disc-disc, m disc-wall and disc-segment.
 * Each contact is resolved in ~200 steps (contact_steps = 200); the contact time is
 * measured from the step-by-step gap, with the crossings interpolated linearly. */
#include "test_util.h"

#define R 0.5
#define MASS 1.0
#define E_TOL 0.01  /* restitution, relative */
#define TC_TOL 0.02 /* contact time, relative */

typedef double (*gap_fn)(const ad_particle *p, const void *ctx);

typedef struct trace {
    int touched, separated;
    double t_in, t_out;
    ad_particle before[2], after[2];
    double min_gap;
    ad_particle at_min[2];
    long steps;
} trace;

/* Steps one at a time until the contact (gap < 0) has started and ended, and
 * three more steps after it ended. */
static trace run_contact(ad_world *w, size_t n, gap_fn gap, const void *ctx, long max_steps)
{
    trace tr;
    memset(&tr, 0, sizeof tr);
    ad_particle p[2];
    if (!tu_read_by_id(w, n, p, NULL)) return tr;
    memcpy(tr.before, p, n * sizeof *p);
    ad_stats s = tu_stats(w);
    double t = s.time, g = gap(p, ctx);
    tr.min_gap = g;
    int after = 0;
    for (long i = 0; i < max_steps; i++) {
        if (!ENSURE_OK(ad_world_step(w, 1))) return tr;
        tr.steps++;
        if (!tu_read_by_id(w, n, p, NULL)) return tr;
        s = tu_stats(w);
        double t1 = s.time, g1 = gap(p, ctx);
        if (!tr.touched && g1 < 0.0) {
            tr.touched = 1;
            tr.t_in = t + g / (g - g1) * (t1 - t);
        }
        if (tr.touched && g1 < tr.min_gap) {
            tr.min_gap = g1;
            memcpy(tr.at_min, p, n * sizeof *p);
        }
        if (tr.touched && !tr.separated && g1 >= 0.0) {
            tr.separated = 1;
            tr.t_out = t + g / (g - g1) * (t1 - t);
        }
        if (tr.separated && ++after >= 3) break;
        t = t1;
        g = g1;
    }
    memcpy(tr.after, p, n * sizeof *p);
    ENSURE_MSG(tr.touched && tr.separated, "contact did not start and end within %ld steps (touched %d)",
               max_steps, tr.touched);
    return tr;
}

static double gap_disc_disc(const ad_particle *p, const void *ctx)
{
    (void)ctx;
    double dx = (double)p[1].x - p[0].x, dy = (double)p[1].y - p[0].y;
    return sqrt(dx * dx + dy * dy) - 2.0 * R;
}

/* gap to a horizontal line y = *(double *)ctx, disc above or below it */
static double gap_hline(const ad_particle *p, const void *ctx)
{
    double y0 = *(const double *)ctx;
    return fabs((double)p[0].y - y0) - R;
}

/* gap to the point *(double[2])ctx */
static double gap_point(const ad_particle *p, const void *ctx)
{
    const double *q = (const double *)ctx;
    double dx = (double)p[0].x - q[0], dy = (double)p[0].y - q[1];
    return sqrt(dx * dx + dy * dy) - R;
}

static ad_world *make_at(double k, double e, double e_wall, double y_min, double contact_steps, ad_integrator integ)
{
    ad_world_def d = tu_discs(tu_def(), R, MASS, k, e);
    d.x_min = -8.0;
    d.x_max = 8.0;
    d.y_min = y_min;
    d.y_max = y_min + 16.0;
    d.wall_restitution = e_wall;
    d.contact_steps = contact_steps;
    d.integrator = integ;
    d.capacity = 2;
    d.threads = 1;
    ad_world *w = NULL;
    REQUIRE_OK(ad_world_create(&d, &w));
    return w;
}

static ad_world *make(double k, double e, double e_wall, double y_min)
{
    return make_at(k, e, e_wall, y_min, 200, AD_INTEGRATOR_SYMPLECTIC_EULER);
}

/* The contact of tr against the closed forms for m_eff: the restitution -vn1 / vn0 from the normal
 * velocities before and after, and the contact time. Prints "<kind> e=.. k=..<note>: ..." (with the
 * steps where steps >= 0), checks both within E_TOL and TC_TOL; returns the measured restitution. */
static double check_contact(const char *kind, const char *note, const trace *tr, double vn0, double vn1, double e,
                            double m_eff, double k, long steps)
{
    double e_meas = -vn1 / vn0;
    double tc_meas = tr->t_out - tr->t_in;
    double tc = tu_contact_time(e, m_eff, k);
    printf("%s e=%.2f k=%.0e%s: restitution %.6f (expected %.6f), contact time %.6g s (expected %.6g, rel err %+.2e)",
           kind, e, k, note, e_meas, e, tc_meas, tc, (tc_meas - tc) / tc);
    if (steps >= 0) printf(", %ld steps", steps);
    printf("\n");
    ENSURE_REL(e_meas, e, E_TOL);
    ENSURE_REL(tc_meas, tc, TC_TOL);
    return e_meas;
}

/* Two discs approaching head-on along x with relative speed 1. */
static void head_on(double e, double k)
{
    ad_world *w = make(k, e, 1.0, -8.0);
    const double gap0 = 0.004;
    ad_particle p[2] = {{(float)(-R - gap0 / 2), 0.0f, 0.5f, 0.0f}, {(float)(R + gap0 / 2), 0.0f, -0.5f, 0.0f}};
    REQUIRE_OK(ad_world_add_particles(w, p, 2));
    ad_stats s = tu_stats(w);
    /* the reported contact time is the damped one, pi/omega_d */
    ENSURE_REL(s.contact_time, tu_contact_time(e, 0.5 * MASS, k), 1e-9);

    trace tr = run_contact(w, 2, gap_disc_disc, NULL, 100000);
    check_contact("disc-disc ", "", &tr, (double)tr.before[1].vx - tr.before[0].vx,
                  (double)tr.after[1].vx - tr.after[0].vx, e, 0.5 * MASS, k, tr.steps);
    /* momentum along x conserved, nothing along y */
    double px0 = (double)tr.before[0].vx + tr.before[1].vx, px1 = (double)tr.after[0].vx + tr.after[1].vx;
    ENSURE_NEAR(px1, px0, 1e-5);
    ENSURE_NEAR(tr.after[0].vy, 0.0, 1e-7);
    ENSURE_NEAR(tr.after[1].vy, 0.0, 1e-7);
    ad_world_destroy(w);
}

/* A disc falling onto the bottom wall (vy = -1) while sliding along it (vx = 0.3). */
static void wall_hit(double e_wall, double k)
{
    const double y_min = -1.0;
    /* disc-disc restitution deliberately different: the wall must use wall_restitution */
    ad_world *w = make(k, 0.7, e_wall, y_min);
    ad_particle p = {0.2f, (float)(y_min + R + 0.003), 0.3f, -1.0f};
    REQUIRE_OK(ad_world_add_particles(w, &p, 1));
    trace tr = run_contact(w, 1, gap_hline, &y_min, 100000);
    double e_meas = check_contact("disc-wall ", "", &tr, tr.before[0].vy, tr.after[0].vy, e_wall, MASS, k, -1);
    ENSURE_REL(tr.after[0].vx, tr.before[0].vx, 1e-5); /* frictionless */
    ad_stats s = tu_stats(w);
    /* the bottom wall received the impulse m (1 + e) |vy| (outward = -y positive) */
    ENSURE_REL(s.wall_impulse[AD_WALL_YMIN], MASS * (1.0 + e_meas) * 1.0, 0.01);
    ad_world_destroy(w);
}

/* A disc falling onto a horizontal segment from above (or rising into it from below). */
static void segment_hit(double e_wall, double k, int from_below)
{
    ad_world *w = make(k, 0.7, e_wall, -8.0);
    ad_segment seg = {-3.0f, 0.0f, 3.0f, 0.0f};
    REQUIRE_OK(ad_world_add_segments(w, &seg, 1));
    const double yline = 0.0;
    float sgn = from_below ? -1.0f : 1.0f;
    ad_particle p = {0.2f, sgn * (float)(R + 0.003), 0.3f, -sgn * 1.0f};
    REQUIRE_OK(ad_world_add_particles(w, &p, 1));
    trace tr = run_contact(w, 1, gap_hline, &yline, 100000);
    double e_meas = check_contact("disc-seg  ", from_below ? " (from below)" : "", &tr, tr.before[0].vy,
                                  tr.after[0].vy, e_wall, MASS, k, -1);
    ENSURE_REL(tr.after[0].vx, tr.before[0].vx, 1e-5);
    ad_stats s = tu_stats(w);
    /* impulse of the disc on the segment: m (1 + e) along the disc's original motion */
    ENSURE_NEAR(s.body_impulse_y, -sgn * MASS * (1.0 + e_meas), 0.01 * (1.0 + e_meas));
    ENSURE_NEAR(s.body_impulse_x, 0.0, 1e-6);
    ad_world_destroy(w);
}

/* A disc hitting the end point of a segment head-on along the segment's direction. */
static void segment_end_hit(double e_wall, double k)
{
    ad_world *w = make(k, 0.7, e_wall, -8.0);
    ad_segment seg = {-3.0f, 0.0f, 3.0f, 0.0f};
    REQUIRE_OK(ad_world_add_segments(w, &seg, 1));
    const double q[2] = {3.0, 0.0};
    ad_particle p = {(float)(3.0 + R + 0.003), 0.0f, -1.0f, 0.0f};
    REQUIRE_OK(ad_world_add_particles(w, &p, 1));
    trace tr = run_contact(w, 1, gap_point, q, 100000);
    check_contact("disc-end  ", "", &tr, tr.before[0].vx, tr.after[0].vx, e_wall, MASS, k, -1);
    ENSURE_NEAR(tr.after[0].vy, 0.0, 1e-6);
    ad_world_destroy(w);
}

/* Two collinear segments sharing a vertex; the disc lands exactly on it. One contact,
 * not two: a doubled force would shorten the contact by sqrt(2). */
static void shared_vertex_hit(double e_wall, double k)
{
    ad_world *w = make(k, 0.7, e_wall, -8.0);
    ad_segment seg[2] = {{-3.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 3.0f, 0.0f}};
    REQUIRE_OK(ad_world_add_segments(w, seg, 2));
    const double yline = 0.0;
    ad_particle p = {0.0f, (float)(R + 0.003), 0.0f, -1.0f};
    REQUIRE_OK(ad_world_add_particles(w, &p, 1));
    trace tr = run_contact(w, 1, gap_hline, &yline, 100000);
    check_contact("disc-vertex", "", &tr, tr.before[0].vy, tr.after[0].vy, e_wall, MASS, k, -1);
    ENSURE_NEAR(tr.after[0].vx, 0.0, 1e-6);
    ad_world_destroy(w);
}

/* Oblique disc-disc hit. Frictionless contacts are central forces, so linear and
 * angular momentum are conserved exactly (up to float rounding). The velocity
 * component perpendicular to the line of centres at closest approach is unchanged
 * up to the small rotation of the normal during the contact (~5e-5 m/s here for
 * e = 1; a tangential force would change it by a fraction of the normal impulse). */
static void oblique(double e, double k)
{
    ad_world *w = make(k, e, 1.0, -8.0);
    ad_particle p[2] = {{-0.45f, -0.25f, 1.0f, 0.2f}, {0.45f, 0.25f, -1.0f, -0.1f}};
    REQUIRE_OK(ad_world_add_particles(w, p, 2));
    trace tr = run_contact(w, 2, gap_disc_disc, NULL, 100000);

    const ad_particle *a = tr.before, *b = tr.after;
    double px0 = MASS * ((double)a[0].vx + a[1].vx), py0 = MASS * ((double)a[0].vy + a[1].vy);
    double px1 = MASS * ((double)b[0].vx + b[1].vx), py1 = MASS * ((double)b[0].vy + b[1].vy);
    double pscale = MASS * (hypot(a[0].vx, a[0].vy) + hypot(a[1].vx, a[1].vy));
    double L0 = 0, L1 = 0, Lscale = 0;
    for (int i = 0; i < 2; i++) {
        L0 += MASS * ((double)a[i].x * a[i].vy - (double)a[i].y * a[i].vx);
        L1 += MASS * ((double)b[i].x * b[i].vy - (double)b[i].y * b[i].vx);
        Lscale += MASS * hypot(a[i].x, a[i].y) * hypot(a[i].vx, a[i].vy);
    }
    printf("oblique    e=%.2f k=%.0e: |dP| = %.3g (scale %.3g), dL = %.3g (scale %.3g)\n", e, k,
           hypot(px1 - px0, py1 - py0), pscale, L1 - L0, Lscale);
    ENSURE_NEAR(px1, px0, 1e-5 * pscale);
    ENSURE_NEAR(py1, py0, 1e-5 * pscale);
    ENSURE_NEAR(L1, L0, 1e-5 * Lscale);

    /* normal and tangent at closest approach */
    const ad_particle *m = tr.at_min;
    double dx = (double)m[1].x - m[0].x, dy = (double)m[1].y - m[0].y, d = hypot(dx, dy);
    double nx = dx / d, ny = dy / d, tx = -ny, ty = nx;
    double vn0 = ((double)a[1].vx - a[0].vx) * nx + ((double)a[1].vy - a[0].vy) * ny;
    double vn1 = ((double)b[1].vx - b[0].vx) * nx + ((double)b[1].vy - b[0].vy) * ny;
    ENSURE_MSG(vn0 < 0.0 && vn1 > 0.0, "normal relative velocity before %.6g, after %.6g", vn0, vn1);
    double vrel = hypot((double)a[1].vx - a[0].vx, (double)a[1].vy - a[0].vy);
    for (int i = 0; i < 2; i++) {
        double t0 = a[i].vx * tx + a[i].vy * ty, t1 = b[i].vx * tx + b[i].vy * ty;
        printf("           disc %d tangential velocity %.7f -> %.7f (change %.3g)\n", i, t0, t1, t1 - t0);
        if (e == 1.0) ENSURE_NEAR(t1, t0, 5e-4 * vrel);
        else ENSURE_NEAR(t1, t0, 5e-3 * vrel);
    }
    if (e == 1.0) {
        double ke0 = 0, ke1 = 0;
        for (int i = 0; i < 2; i++) {
            ke0 += 0.5 * MASS * ((double)a[i].vx * a[i].vx + (double)a[i].vy * a[i].vy);
            ke1 += 0.5 * MASS * ((double)b[i].vx * b[i].vx + (double)b[i].vy * b[i].vy);
        }
        ENSURE_REL(ke1, ke0, 1e-3);
    }
    ad_world_destroy(w);
}

/* ---- The sweep over e and k (ctest validation_contact, docs/VALIDATION.md "Contact mechanics") ----
 *
 * The closed forms are written here from e alone, not from the library's damping coefficient:
 * the overlap x of a contact obeys m_eff x'' + gamma x' + k x = 0 with x(0) = 0, x'(0) = v, so
 * x = (v / w_d) exp(-eta t) sin(w_d t), eta = gamma / (2 m_eff), w_d^2 = k/m_eff - eta^2. The
 * overlap returns to zero at t_c = pi / w_d with speed v exp(-eta t_c): e = exp(-eta pi / w_d).
 * Eliminating eta, w_d^2 (1 + ln^2 e / pi^2) = k / m_eff, so
 *
 *     t_c = sqrt(m_eff / k) sqrt(pi^2 + ln^2 e)
 *
 * (Schaefer, Dippel & Wolf, J. Phys. I France 6, 5 (1996); Luding, Eur. J. Env. Civ. Eng. 12,
 * 785 (2008)). A contact is measured from the step-by-step gap (crossings interpolated) and the
 * normal velocities before and after. */
typedef enum { GEOM_DISC = 0, GEOM_SEGMENT = 1, GEOM_WALL = 2, GEOM_COUNT = 3 } geom;
static const char *const GEOM_NAME[GEOM_COUNT] = {"disc-disc", "disc-segment", "disc-wall"};

static double tc_closed(double e, double m_eff, double k)
{
    double le = log(e);
    return sqrt(m_eff / k) * sqrt(TU_PI * TU_PI + le * le);
}

typedef struct contact_result {
    double e, tc;       /* measured */
    double tc_ref;      /* closed form */
    double steps;       /* steps per contact, t_c / dt */
} contact_result;

/* One contact at normal approach speed 1: two discs head-on, a disc onto a segment's face (sliding
 * along it), or a disc onto the bottom wall (sliding). `phase` in [0, 1) shifts the start of the
 * contact against the step grid: the error of a contact resolved in a few steps depends on it. */
static contact_result measure(geom g, double e, double k, double contact_steps, ad_integrator integ, double phase)
{
    contact_result res;
    memset(&res, 0, sizeof res);
    const double m_eff = g == GEOM_DISC ? 0.5 * MASS : MASS;
    const double dt0 = TU_PI * sqrt(0.5 * MASS / k) / contact_steps; /* the step, unless dt_max is smaller */
    const double gap0 = (2.0 + phase) * dt0;                          /* closed at speed 1 */
    ad_world *w = NULL;
    trace tr;
    double y_min = -1.0, yline = 0.0, vn0, vn1;
    if (g == GEOM_DISC) {
        w = make_at(k, e, 1.0, -8.0, contact_steps, integ);
        ad_particle p[2] = {{(float)(-R - gap0 / 2), 0.0f, 0.5f, 0.0f}, {(float)(R + gap0 / 2), 0.0f, -0.5f, 0.0f}};
        REQUIRE_OK(ad_world_add_particles(w, p, 2));
        tr = run_contact(w, 2, gap_disc_disc, NULL, 100000);
        vn0 = (double)tr.before[1].vx - tr.before[0].vx;
        vn1 = (double)tr.after[1].vx - tr.after[0].vx;
    } else {
        /* disc-disc restitution deliberately different: the wall must use wall_restitution */
        w = make_at(k, 0.7, e, g == GEOM_WALL ? y_min : -8.0, contact_steps, integ);
        double y0 = g == GEOM_WALL ? y_min : yline;
        if (g == GEOM_SEGMENT) {
            ad_segment seg = {-3.0f, 0.0f, 3.0f, 0.0f};
            REQUIRE_OK(ad_world_add_segments(w, &seg, 1));
        }
        ad_particle p = {0.2f, (float)(y0 + R + gap0), 0.3f, -1.0f};
        REQUIRE_OK(ad_world_add_particles(w, &p, 1));
        tr = run_contact(w, 1, gap_hline, &y0, 100000);
        vn0 = tr.before[0].vy;
        vn1 = tr.after[0].vy;
    }
    ad_stats s = tu_stats(w);
    res.e = -vn1 / vn0;
    res.tc = tr.t_out - tr.t_in;
    res.tc_ref = tc_closed(e, m_eff, k);
    res.steps = res.tc_ref / s.dt;
    ad_world_destroy(w);
    return res;
}

#define NPHASE 4
static const double SWEEP_E[10] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};
static const double SWEEP_K[5] = {1e2, 1e3, 1e4, 1e5, 1e6};

static void csv_row(FILE *csv, const char *set, geom g, ad_integrator integ, double e, double k, double cs,
                    double phase, const contact_result *r)
{
    if (!csv) return;
    fprintf(csv, "%s,%s,%s,%.2f,%.0e,%g,%.2f,%.3f,%.7f,%+.4e,%.7g,%.7g,%+.4e\n", set, GEOM_NAME[g],
            ad_integrator_name(integ), e, k, cs, phase, r->steps, r->e, r->e / e - 1.0, r->tc, r->tc_ref,
            r->tc / r->tc_ref - 1.0);
}

/* Steps per contact for the sweep. The dashpot force -gamma v_n does not vanish at zero overlap,
 * so it switches on and off in the middle of a step: the restitution has a first-order error of
 * up to ~3 eta dt (docs/VALIDATION.md), and eta t_c = -ln e. contact_steps (per undamped disc-disc
 * contact; damped and wall contacts take longer) is raised until eta dt <= ETA_DT, never below
 * the default 20. */
#define ETA_DT 0.002
static double resolved_steps(double e) { return fmax(ad_default_world_def().contact_steps, ceil(-log(e) / ETA_DT)); }

/* Every geometry, e and k, NPHASE phases each, with the default integrator (symplectic Euler):
 * resolved (contact_steps from resolved_steps, checked against E_TOL and TC_TOL) or at the
 * default contact_steps = 20 (written to the CSV only). */
static void sweep(FILE *csv, int resolved)
{
    const double cs_default = ad_default_world_def().contact_steps;
    const ad_integrator integ = ad_default_world_def().integrator;
    for (int g = 0; g < GEOM_COUNT; g++) {
        double worst_e = 0, worst_tc = 0;
        for (int ie = 0; ie < 10; ie++) {
            double e = SWEEP_E[ie], cs = resolved ? resolved_steps(e) : cs_default;
            for (int ik = 0; ik < 5; ik++)
                for (int ph = 0; ph < NPHASE; ph++) {
                    double k = SWEEP_K[ik], phase = (double)ph / NPHASE;
                    contact_result r = measure((geom)g, e, k, cs, integ, phase);
                    csv_row(csv, resolved ? "resolved" : "default", (geom)g, integ, e, k, cs, phase, &r);
                    double de = r.e / e - 1.0, dtc = r.tc / r.tc_ref - 1.0;
                    worst_e = fmax(worst_e, fabs(de));
                    worst_tc = fmax(worst_tc, fabs(dtc));
                    if (!resolved) continue;
                    if (!(fabs(de) <= E_TOL) || !(fabs(dtc) <= TC_TOL))
                        printf("  %s e=%.1f k=%.0e phase %.2f: restitution %.6f (%+.3f%%), contact time %.6g s, "
                               "closed form %.6g s (%+.3f%%), %.1f steps\n",
                               GEOM_NAME[g], e, k, phase, r.e, 100 * de, r.tc, r.tc_ref, 100 * dtc, r.steps);
                    ENSURE_REL(r.e, e, E_TOL);
                    ENSURE_REL(r.tc, r.tc_ref, TC_TOL);
                }
        }
        printf("%-12s e 0.1..1.0 x k 1e2..1e6 x %d phases, %s: restitution worst |err| %.3f%%, contact time "
               "worst |err| %.3f%%\n",
               GEOM_NAME[g], NPHASE, resolved ? "eta dt <= 0.002" : "contact_steps 20", 100 * worst_e,
               100 * worst_tc);
    }
}

/* The time-step dependence: disc-disc and disc-wall contacts resolved in 8 .. 200 steps, for each
 * integrator (written to the CSV only; the errors are docs/VALIDATION.md's plot). */
static void sweep_resolution(FILE *csv)
{
    const double css[10] = {8, 10, 14, 20, 30, 50, 100, 200, 500, 1000};
    const double es[4] = {0.1, 0.5, 0.9, 1.0};
    const ad_integrator integs[3] = {AD_INTEGRATOR_SYMPLECTIC_EULER, AD_INTEGRATOR_VERLET, AD_INTEGRATOR_RK4};
    for (int ii = 0; ii < 3; ii++)
        for (int g = 0; g < GEOM_COUNT; g += 2)
            for (int ie = 0; ie < 4; ie++)
                for (int ic = 0; ic < 10; ic++)
                    for (int ph = 0; ph < NPHASE; ph++) {
                        contact_result r = measure((geom)g, es[ie], 1e4, css[ic], integs[ii], (double)ph / NPHASE);
                        csv_row(csv, "resolution", (geom)g, integs[ii], es[ie], 1e4, css[ic], (double)ph / NPHASE, &r);
                    }
}

static void single_contacts(void)
{
    const double es[3] = {1.0, 0.9, 0.5};
    const double ks[3] = {1e3, 1e4, 1e5};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) head_on(es[i], ks[j]);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) wall_hit(es[i], ks[j]);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) segment_hit(es[i], ks[j], 0);
    segment_hit(0.9, 1e4, 1);
    segment_end_hit(1.0, 1e4);
    segment_end_hit(0.5, 1e4);
    shared_vertex_hit(1.0, 1e4);
    shared_vertex_hit(0.7, 1e4);
    oblique(1.0, 1e4);
    oblique(0.5, 1e4);
}

/*   test_collision                  single contacts at 200 steps a contact (ctest collision)
 *   test_collision --sweep          e 0.1..1 x k 1e2..1e6, disc-disc, disc-segment, disc-wall at the
 *                                   default resolution (ctest validation_contact)
 *   test_collision --csv out.csv    the sweep plus the resolution study, written to a CSV */
int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--sweep") == 0) {
        sweep(NULL, 1);
        return tu_finish("validation_contact");
    }
    if (argc > 2 && strcmp(argv[1], "--csv") == 0) {
        FILE *csv = fopen(argv[2], "w");
        if (!csv) {
            fprintf(stderr, "cannot write %s\n", argv[2]);
            return 1;
        }
        fprintf(csv, "set,geometry,integrator,e,k,contact_steps,phase,steps_per_contact,e_meas,e_rel_err,tc_meas,"
                     "tc_closed,tc_rel_err\n");
        sweep(csv, 1);
        sweep(csv, 0);
        sweep_resolution(csv);
        fclose(csv);
        return tu_finish("validation_contact (csv)");
    }
    if (argc > 1) {
        fprintf(stderr, "usage: test_collision [--sweep | --csv out.csv]\n");
        return 2;
    }
    single_contacts();
    return tu_finish("test_collision");
}
