/* Gas dynamics in the continuum regime: the attached oblique shock on a wedge against the
 * theta-beta-M relation and the Rankine-Hugoniot density jump, and the bow shock stand-off in
 * front of a circle (reported, with the correlations it is usually compared with).
 *
 * Theory. An oblique shock is a normal shock in the frame moving along it: across it the normal
 * velocity u_n changes and the tangential one does not. Mass, normal momentum and energy fluxes
 * are conserved:
 *   n1 u1 = n2 u2,   p1 + m n1 u1^2 = p2 + m n2 u2^2,   h1 + u1^2/2 = h2 + u2^2/2,
 * with h = e + p/(m n) the enthalpy per mass. For discs that do not attract, the internal energy is
 * kinetic only, e = kT/m (two degrees of freedom), and the pressure is p = n kT Z(phi) with
 * Henderson's hard-disc compressibility Z(phi) = (1 + phi^2/8)/(1 - phi)^2, phi = n pi r^2
 * (checked against aerodem in test_validation_eos). Solving the three relations for n2/n1 at a
 * given u1 = U sin(beta), the flow behind turns by theta with tan(beta - theta) = tan(beta) n1/n2.
 * For a dilute gas (Z = 1) this is the textbook theta-beta-M relation with gamma = 2 (a 2D
 * monatomic gas: cp/cv = (f + 2)/f, f = 2), which the test prints next to it: even at
 * phi = 0.05 the Z - 1 = 10 % of excluded area changes beta by several degrees, so the dense-gas
 * relation is the reference and the ideal one is reported.
 *
 * Measurement. The time-averaged number density field; the free stream from a block upstream of
 * the wedge; the shock position in each column of the middle of the wedge as the crossing of the
 * mean of the free-stream and post-shock densities (interpolated between cells), fitted by a
 * straight line, above and below the wedge; the post-shock state from the layer between the wall
 * and the shock. Runs on the CUDA backend (about 2 * 10^5 steps of 2.4 * 10^4 discs and, for the
 * bow shock, 1.4 * 10^5 discs); skips (77) where no GPU is found. `AERODEM_SHOCK_BACKEND=cpu`
 * runs it on the CPU (tens of minutes). With a directory argument the fields and fitted shock
 * points are written there as CSV (docs/validation/plot_shock.py draws them). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/scene.h"
#include "test_util.h"

#define DEG (TU_PI / 180.0)

/* ---------------------------------------------------------------- theory -- */

static double henderson_z(double phi) { return (1.0 + phi * phi / 8.0) / ((1.0 - phi) * (1.0 - phi)); }

/* The energy balance across a normal shock with compression x = n2/n1, for a gas of discs of
 * radius r (mass 1) with upstream number density n1, temperature T1 (kT/m) and normal speed u1:
 * mass and momentum conservation give u2 and p2, the equation of state T2; the residual is the
 * enthalpy flux after minus before. */
static double rh_residual(double x, double n1, double T1, double u1, double r)
{
    double phi1 = n1 * TU_PI * r * r, z1 = henderson_z(phi1), p1 = n1 * T1 * z1, j = n1 * u1;
    double n2 = n1 * x, u2 = u1 / x, z2 = henderson_z(phi1 * x);
    double p2 = p1 + j * u1 - j * u2, T2 = p2 / (n2 * z2);
    return T2 * (1.0 + z2) + 0.5 * u2 * u2 - T1 * (1.0 + z1) - 0.5 * u1 * u1;
}

/* Compression x = n2/n1 of a normal shock (1 when u1 is not supersonic). The residual is
 * positive just above x = 1 for a supersonic u1 and negative near close packing; bisection
 * finds the one physical root. */
static double rh_compression(double n1, double T1, double u1, double r)
{
    double lo = 1.0 + 1e-9, hi = 0.9 / (n1 * TU_PI * r * r);
    if (!(rh_residual(lo, n1, T1, u1, r) > 0.0) || !(rh_residual(hi, n1, T1, u1, r) < 0.0)) return 1.0;
    for (int it = 0; it < 200; it++) {
        double mid = 0.5 * (lo + hi);
        if (rh_residual(mid, n1, T1, u1, r) > 0.0) lo = mid;
        else hi = mid;
    }
    return 0.5 * (lo + hi);
}

/* Deflection of the flow behind an oblique shock at angle beta. */
static double dense_theta(double n1, double T1, double U, double r, double beta)
{
    double x = rh_compression(n1, T1, U * sin(beta), r);
    return beta - atan(tan(beta) / x);
}

/* The weak (attached) shock angle for a wedge of half-angle theta: the smallest beta above the
 * Mach angle whose deflection reaches theta. NAN when the shock is detached. */
typedef double (*deflection_fn)(const double *gas, double beta);

static double dense_defl(const double *g, double beta) { return dense_theta(g[0], g[1], g[2], g[3], beta); }

static double ideal_defl(const double *g, double beta)
{
    double M = g[0], gam = 2.0, s = sin(beta);
    return atan(2.0 / tan(beta) * (M * M * s * s - 1.0) / (M * M * (gam + cos(2.0 * beta)) + 2.0));
}

static double weak_beta(deflection_fn f, const double *gas, double theta)
{
    /* deflection rises from 0 (Mach angle) to its maximum, then falls: scan up, then bisect */
    double prev = 0.01, step = 0.001;
    for (double b = prev + step; b < 0.5 * TU_PI; b += step) {
        if (f(gas, b) >= theta) {
            double lo = prev, hi = b;
            for (int it = 0; it < 60; it++) {
                double mid = 0.5 * (lo + hi);
                if (f(gas, mid) >= theta) hi = mid;
                else lo = mid;
            }
            return 0.5 * (lo + hi);
        }
        prev = b;
    }
    return NAN;
}

/* Sound speed squared of the Henderson gas (isentropic): c^2 = kT/m ((n Z)'/1 + Z^2) for e = kT/m. */
static double dense_sound2(double n, double T, double r)
{
    double a = TU_PI * r * r, phi = n * a, h = 1e-6;
    double dnz = ((phi + h) * henderson_z(phi + h) - (phi - h) * henderson_z(phi - h)) / (2.0 * h);
    double z = henderson_z(phi);
    return T * (dnz + z * z);
}

/* ------------------------------------------------------------- simulation -- */

typedef struct shock_case {
    int shape;               /* AD_SHAPE_WEDGE or AD_SHAPE_CIRCLE */
    double chord;            /* wedge length or circle diameter [m] */
    double half_angle;       /* wedge [deg] */
    double mach;             /* nominal, U / sqrt(2 kT/m) (the scene's gamma = 2 definition) */
    double phi, stiffness;
    double width, height, lead; /* tunnel [m]; body leading edge x [m] */
    double settle_flows, average_flows; /* tunnel transit times U/width */
    double field_cell;       /* m */
} shock_case;

typedef struct field_set {
    int nx, ny;
    double cell, x0, y0;
    float *n, *vx, *vy, *T;
} field_set;

static ad_backend case_backend(void)
{
    const char *b = getenv("AERODEM_SHOCK_BACKEND");
    return b && strcmp(b, "cpu") == 0 ? AD_BACKEND_CPU : AD_BACKEND_CUDA;
}

/* AERODEM_SHOCK_SCALE shrinks every length of a case (a quick look on the CPU; the shock is then
 * thicker relative to the body, so the tolerances are not meant for it). */
static shock_case scaled(shock_case c)
{
    const char *e = getenv("AERODEM_SHOCK_SCALE");
    double k = e ? atof(e) : 1.0;
    if (!(k > 0.0)) k = 1.0;
    c.chord *= k;
    c.width *= k;
    c.height *= k;
    c.lead *= k;
    c.field_cell *= k > 0.5 ? 1.0 : 0.5;
    return c;
}

static void shock_scene(const shock_case *c, ad_scene *s)
{
    ad_scene_defaults(s);
    s->kind = AD_TUNNEL_FLOW;
    s->width = c->width;
    s->height = c->height;
    s->walls = AD_BOUNDARY_OPEN; /* the far field, with the automatic reservoir (a dense gas) */
    s->radius = 0.5;
    s->mass = 1.0;
    s->stiffness = c->stiffness;
    s->restitution = 1.0;      /* an elastic gas: no cooling */
    s->wall_restitution = 1.0; /* a frictionless elastic wall: the inviscid slip wall of gas dynamics */
    s->collisions = 1;
    s->area_fraction = c->phi;
    s->temperature = 1.0;
    s->velocity = c->mach * sqrt(2.0 * s->temperature);
    s->shape = c->shape;
    s->panels = 400;
    s->chord = c->chord;
    s->aoa = 0.0;
    s->half_angle = c->half_angle > 0 ? c->half_angle : 15.0;
    s->x = c->lead + 0.25 * c->chord;
    s->y = 0.5 * c->height;
    s->threads = 0;
    s->backend = case_backend();
    s->seed = 20261130;
    s->png = s->vtk = s->video = 0;
    REQUIRE_OK(ad_scene_finish(s));
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void step_until(ad_world *w, double t)
{
    while (tu_stats(w).time < t) REQUIRE_OK(ad_world_step(w, 500));
}

/* Runs a case and returns its averaged fields; 0 when the backend is missing (skip). */
static int run_case(const shock_case *c, field_set *f, double *seconds)
{
    double t0 = now_s();
    ad_scene s;
    shock_scene(c, &s);
    ad_world *w;
    ad_status st = ad_scene_build(&s, &w);
    if (st.code == AD_ERR_BACKEND) {
        printf("SKIP: %s\n", st.message);
        return 0;
    }
    REQUIRE_OK(st);
    double transit = c->width / s.velocity;
    f->cell = c->field_cell;
    f->nx = (int)lround(c->width / f->cell);
    f->ny = (int)lround(c->height / f->cell);
    f->x0 = f->y0 = 0.0;
    ad_field_def fd = {f->nx, f->ny, 0.0, 0.0, f->nx * f->cell, f->ny * f->cell, 25, 0, 0.0, 0.0};
    REQUIRE_OK(ad_world_set_fields(w, &fd));
    step_until(w, c->settle_flows * transit);
    REQUIRE_OK(ad_world_reset_fields(w));
    step_until(w, (c->settle_flows + c->average_flows) * transit);
    size_t cells = (size_t)f->nx * (size_t)f->ny;
    f->n = malloc(cells * sizeof(float));
    f->vx = malloc(cells * sizeof(float));
    f->vy = malloc(cells * sizeof(float));
    f->T = malloc(cells * sizeof(float));
    REQUIRE_OK(ad_world_read_field(w, AD_FIELD_DENSITY, f->n, NULL));
    REQUIRE_OK(ad_world_read_field(w, AD_FIELD_VELOCITY_X, f->vx, NULL));
    REQUIRE_OK(ad_world_read_field(w, AD_FIELD_VELOCITY_Y, f->vy, NULL));
    REQUIRE_OK(ad_world_read_field(w, AD_FIELD_TEMPERATURE, f->T, NULL));
    ad_stats stt = tu_stats(w);
    printf("  %zu discs, %llu steps, %.0f s simulated, max overlap %.3f r\n", stt.count,
           (unsigned long long)stt.step, stt.time, stt.max_overlap);
    ad_world_destroy(w);
    *seconds = now_s() - t0;
    return 1;
}

static void free_fields(field_set *f)
{
    free(f->n);
    free(f->vx);
    free(f->vy);
    free(f->T);
}

static double cx(const field_set *f, int i) { return f->x0 + (i + 0.5) * f->cell; }
static double cy(const field_set *f, int j) { return f->y0 + (j + 0.5) * f->cell; }
static float at(const float *a, const field_set *f, int i, int j) { return a[(size_t)j * (size_t)f->nx + (size_t)i]; }

/* Mean of a field over the cells whose centres lie in [xa, xb] x [ya, yb] (NaN cells skipped). */
static double block_mean(const float *a, const field_set *f, double xa, double xb, double ya, double yb)
{
    double s = 0;
    int k = 0;
    for (int j = 0; j < f->ny; j++)
        for (int i = 0; i < f->nx; i++) {
            double x = cx(f, i), y = cy(f, j);
            float v = at(a, f, i, j);
            if (x < xa || x > xb || y < ya || y > yb || isnan(v)) continue;
            s += v;
            k++;
        }
    return k ? s / k : NAN;
}

typedef struct free_stream {
    double n, U, T, phi, mach_ideal, mach_dense;
} free_stream;

static free_stream measure_free_stream(const field_set *f, double xa, double xb)
{
    free_stream fs;
    double H = f->ny * f->cell;
    fs.n = block_mean(f->n, f, xa, xb, 0.0, H);
    fs.U = block_mean(f->vx, f, xa, xb, 0.0, H);
    fs.T = block_mean(f->T, f, xa, xb, 0.0, H); /* kT in J, m = 1 */
    fs.phi = fs.n * TU_PI * 0.25;
    fs.mach_ideal = fs.U / sqrt(2.0 * fs.T);
    fs.mach_dense = fs.U / sqrt(dense_sound2(fs.n, fs.T, 0.5));
    return fs;
}

static void print_free_stream(const free_stream *fs, double secs)
{
    printf("  free stream: n %.5f 1/m^2 (phi %.4f), U %.4f m/s, kT/m %.4f; Mach %.3f (gamma = 2 ideal), %.3f "
           "(Henderson gas); %.1f s\n",
           fs->n, fs->phi, fs->U, fs->T, fs->mach_ideal, fs->mach_dense, secs);
}

/* Where a column profile, walked from the far field (index `from`) toward the body (`to`),
 * first reaches `level`: interpolated coordinate, NaN when it never does. */
static double crossing(const field_set *f, int i, int from, int to, double level)
{
    int d = to > from ? 1 : -1;
    for (int j = from; j != to; j += d) {
        double a = at(f->n, f, i, j), b = at(f->n, f, i, j + d);
        if (isnan(a) || isnan(b)) continue;
        if (a < level && b >= level) {
            double t = (level - a) / (b - a);
            return cy(f, j) + d * t * f->cell;
        }
    }
    return NAN;
}

typedef struct line_fit {
    double slope, intercept, slope_se;
    int n;
} line_fit;

static line_fit fit_line(const double *x, const double *y, int n)
{
    line_fit L = {NAN, NAN, NAN, 0};
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (isnan(y[i])) continue;
        sx += x[i];
        sy += y[i];
        sxx += x[i] * x[i];
        sxy += x[i] * y[i];
        k++;
    }
    if (k < 3) return L;
    double mx = sx / k, my = sy / k, vxx = sxx / k - mx * mx, vxy = sxy / k - mx * my;
    L.slope = vxy / vxx;
    L.intercept = my - L.slope * mx;
    double r2 = 0;
    for (int i = 0; i < n; i++) {
        if (isnan(y[i])) continue;
        double e = y[i] - (L.intercept + L.slope * x[i]);
        r2 += e * e;
    }
    L.slope_se = sqrt(r2 / (k - 2) / (vxx * k));
    L.n = k;
    return L;
}

/* ----------------------------------------------------------------- wedge -- */

typedef struct wedge_result {
    free_stream fs;
    double beta_up, beta_dn, beta, beta_se;   /* measured [rad] */
    double beta_dense, beta_ideal;            /* theory [rad] */
    double ratio, ratio_dense, ratio_ideal;   /* n2/n1 */
    double turn;                              /* flow direction behind the shock [rad] */
    double T2;                                /* kT/m behind the shock */
    double T2_dense;
} wedge_result;

/* One side of the wedge (side = +1 above, -1 below): shock points in the columns of
 * [x_tip + a c, x_tip + b c], first with a provisional level, then with the layer's density. */
static line_fit wedge_side(const field_set *f, const shock_case *c, double n1, int side, double *n2_out,
                           double *xs, double *ys, int *np, FILE *pts)
{
    double tip = c->lead, yc = 0.5 * c->height, tn = tan(c->half_angle * DEG);
    double a = 0.3, b = 0.9;
    int jc = (int)floor((yc - f->y0) / f->cell);
    int jfar = side > 0 ? f->ny - 1 : 0;
    /* pass 1: the level halfway to the highest smoothed density of the column's layer */
    int k = 0;
    for (int i = 0; i < f->nx; i++) {
        double x = cx(f, i);
        if (x < tip + a * c->chord || x > tip + b * c->chord) continue;
        double hi = 0;
        for (int j = jc; j != jfar; j += side) {
            double y = cy(f, j), wall = yc + side * (tn * (x - tip) + 0.5 + 2.0 * f->cell);
            if (side * (y - wall) < 0) continue;
            double v = (at(f->n, f, i, j) + at(f->n, f, i, j + side)) * 0.5;
            if (v > hi) hi = v;
        }
        int jw = (int)floor((yc + side * (tn * (x - tip) + 0.5) - f->y0) / f->cell);
        xs[k] = x;
        ys[k] = crossing(f, i, jfar, jw, 0.5 * (n1 + hi));
        k++;
    }
    line_fit L1 = fit_line(xs, ys, k);
    /* the layer between the wall (plus 3 cells) and the provisional shock (minus 4 cells) */
    double s = 0;
    int m = 0;
    for (int i = 0; i < f->nx; i++) {
        double x = cx(f, i);
        if (x < tip + a * c->chord || x > tip + b * c->chord) continue;
        double wall = yc + side * (tn * (x - tip) + 0.5), shock = L1.intercept + L1.slope * x;
        for (int j = 0; j < f->ny; j++) {
            double y = cy(f, j);
            if (side * (y - wall) < 3.0 * f->cell || side * (shock - y) < 4.0 * f->cell) continue;
            float v = at(f->n, f, i, j);
            if (isnan(v)) continue;
            s += v;
            m++;
        }
    }
    double n2 = m ? s / m : NAN;
    k = 0;
    for (int i = 0; i < f->nx; i++) {
        double x = cx(f, i);
        if (x < tip + a * c->chord || x > tip + b * c->chord) continue;
        int jw = (int)floor((yc + side * (tn * (x - tip) + 0.5) - f->y0) / f->cell);
        xs[k] = x;
        ys[k] = crossing(f, i, jfar, jw, 0.5 * (n1 + n2));
        if (pts) fprintf(pts, "%d,%.4f,%.4f\n", side, xs[k], ys[k]);
        k++;
    }
    *np = k;
    *n2_out = n2;
    return fit_line(xs, ys, k);
}

static double layer_mean(const float *a, const field_set *f, const shock_case *c, double beta)
{
    /* both layers, between wall + 3 cells and shock - 4 cells, middle of the wedge */
    double tip = c->lead, yc = 0.5 * c->height, tn = tan(c->half_angle * DEG), tb = tan(beta);
    double s = 0;
    int m = 0;
    for (int j = 0; j < f->ny; j++)
        for (int i = 0; i < f->nx; i++) {
            double x = cx(f, i), y = cy(f, j), d = fabs(y - yc);
            if (x < tip + 0.3 * c->chord || x > tip + 0.9 * c->chord) continue;
            double wall = tn * (x - tip) + 0.5, shock = tb * (x - tip);
            if (d - wall < 3.0 * f->cell || shock - d < 4.0 * f->cell) continue;
            float v = at(a, f, i, j);
            if (y < yc && a == f->vy) v = -v; /* the lower layer turns downward */
            if (isnan(v)) continue;
            s += v;
            m++;
        }
    return m ? s / m : NAN;
}

/* dir/file opened for writing, or NULL with a message on stderr. */
static FILE *open_out(const char *dir, const char *file)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *o = fopen(path, "w");
    if (!o) fprintf(stderr, "cannot write %s\n", path);
    return o;
}

static void write_fields(const char *dir, const char *name, const field_set *f)
{
    char file[256];
    snprintf(file, sizeof file, "%s_field.csv", name);
    FILE *o = open_out(dir, file);
    if (!o) return;
    fprintf(o, "x,y,n,vx,vy,kT\n");
    for (int j = 0; j < f->ny; j++)
        for (int i = 0; i < f->nx; i++)
            fprintf(o, "%.3f,%.3f,%.6g,%.6g,%.6g,%.6g\n", cx(f, i), cy(f, j), at(f->n, f, i, j), at(f->vx, f, i, j),
                    at(f->vy, f, i, j), at(f->T, f, i, j));
    fclose(o);
}

static int wedge(const shock_case *c, const char *dir, wedge_result *R)
{
    field_set f;
    double secs;
    printf("wedge, half-angle %.0f deg, chord %.0f m, nominal M %.1f, phi %.2f:\n", c->half_angle, c->chord,
           c->mach, c->phi);
    if (!run_case(c, &f, &secs)) return 0;
    R->fs = measure_free_stream(&f, 0.25 * c->lead, 0.75 * c->lead);
    int cap = f.nx;
    double *xs = malloc((size_t)cap * sizeof(double)), *ys = malloc((size_t)cap * sizeof(double));
    FILE *pts = NULL;
    if (dir) {
        pts = open_out(dir, "wedge_shock_points.csv");
        if (pts) fprintf(pts, "side,x,y\n");
        write_fields(dir, "wedge", &f);
    }
    int np;
    double n2u, n2d;
    line_fit up = wedge_side(&f, c, R->fs.n, +1, &n2u, xs, ys, &np, pts);
    line_fit dn = wedge_side(&f, c, R->fs.n, -1, &n2d, xs, ys, &np, pts);
    if (pts) fclose(pts);
    R->beta_up = atan(up.slope);
    R->beta_dn = atan(-dn.slope);
    R->beta = 0.5 * (R->beta_up + R->beta_dn);
    /* the fit errors underestimate (neighbouring columns share fluctuations); the two sides are
     * independent measurements, so their half difference is added */
    R->beta_se = sqrt(0.25 * (up.slope_se * up.slope_se + dn.slope_se * dn.slope_se) / pow(1 + up.slope * up.slope, 2) +
                      0.25 * pow(R->beta_up - R->beta_dn, 2));
    double gas[4] = {R->fs.n, R->fs.T, R->fs.U, 0.5}, mi[1] = {R->fs.mach_ideal};
    double th = c->half_angle * DEG;
    R->beta_dense = weak_beta(dense_defl, gas, th);
    R->beta_ideal = weak_beta(ideal_defl, mi, th);
    R->ratio = 0.5 * (n2u + n2d) / R->fs.n;
    R->ratio_dense = rh_compression(R->fs.n, R->fs.T, R->fs.U * sin(R->beta_dense), 0.5);
    double Mn = R->fs.mach_ideal * sin(R->beta_ideal);
    R->ratio_ideal = 3.0 * Mn * Mn / (Mn * Mn + 2.0);
    double vx2 = layer_mean(f.vx, &f, c, R->beta), vy2 = layer_mean(f.vy, &f, c, R->beta);
    R->turn = atan2(vy2, vx2);
    R->T2 = layer_mean(f.T, &f, c, R->beta);
    {
        /* temperature behind the shock from the same conservation laws */
        double x = R->ratio_dense, n1 = R->fs.n, u1 = R->fs.U * sin(R->beta_dense), u2 = u1 / x;
        double p1 = n1 * R->fs.T * henderson_z(R->fs.phi);
        double p2 = p1 + n1 * u1 * (u1 - u2);
        R->T2_dense = p2 / (n1 * x * henderson_z(R->fs.phi * x));
    }
    print_free_stream(&R->fs, secs);
    printf("  shock angle: above %.2f, below %.2f, mean %.2f +- %.2f deg (%d columns a side)\n", R->beta_up / DEG,
           R->beta_dn / DEG, R->beta / DEG, R->beta_se / DEG, up.n);
    printf("  theory: Henderson-gas Rankine-Hugoniot %.2f deg, ideal gamma = 2 %.2f deg\n", R->beta_dense / DEG,
           R->beta_ideal / DEG);
    printf("  density jump n2/n1: measured %.4f (above %.4f, below %.4f), theory %.4f (Henderson), %.4f (ideal)\n",
           R->ratio, n2u / R->fs.n, n2d / R->fs.n, R->ratio_dense, R->ratio_ideal);
    printf("  flow turned by %.2f deg (wedge %.1f); kT/m behind %.4f, theory %.4f\n", R->turn / DEG, c->half_angle,
           R->T2, R->T2_dense);
    if (dir) {
        FILE *o = open_out(dir, "wedge_summary.csv");
        if (o) {
            fprintf(o, "half_angle_deg,n1,U1,kT1,phi1,mach_ideal,mach_dense,beta_up_deg,beta_down_deg,beta_deg,"
                       "beta_se_deg,beta_dense_deg,beta_ideal_deg,ratio,ratio_dense,ratio_ideal,turn_deg,kT2,"
                       "kT2_dense,x_tip,y_axis,chord\n");
            fprintf(o, "%g,%.6g,%.6g,%.6g,%.6g,%.5g,%.5g,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.5f,%.5f,%.5f,%.4f,%.5f,%.5f,%g,%g,%g\n",
                    c->half_angle, R->fs.n, R->fs.U, R->fs.T, R->fs.phi, R->fs.mach_ideal, R->fs.mach_dense,
                    R->beta_up / DEG, R->beta_dn / DEG, R->beta / DEG, R->beta_se / DEG, R->beta_dense / DEG,
                    R->beta_ideal / DEG, R->ratio, R->ratio_dense, R->ratio_ideal, R->turn / DEG, R->T2, R->T2_dense,
                    c->lead, 0.5 * c->height, c->chord);
            fclose(o);
        }
    }
    free(xs);
    free(ys);
    free_fields(&f);
    return 1;
}

/* ------------------------------------------------------------- bow shock -- */

typedef struct bow_result {
    free_stream fs;
    double standoff;      /* from the effective nose (body + r) to the shock [m] */
    double ratio_normal;  /* n2/n1 of the normal shock (Henderson gas) */
    double billig_dense, billig_ideal; /* Billig's cylinder correlation at the two Mach numbers [R] */
} bow_result;

static int bow(const shock_case *c, const char *dir, bow_result *B)
{
    field_set f;
    double secs;
    printf("bow shock, circle of diameter %.0f m, nominal M %.1f, phi %.2f:\n", c->chord, c->mach, c->phi);
    if (!run_case(c, &f, &secs)) return 0;
    if (dir) write_fields(dir, "bow", &f);
    B->fs = measure_free_stream(&f, 0.2 * c->lead, 0.5 * c->lead);
    double R = 0.5 * c->chord, yc = 0.5 * c->height, nose = c->lead - 0.5;
    /* the stagnation line: the mean of the two rows either side of the axis */
    int j0 = (int)floor((yc - f.y0) / f.cell) - 1;
    B->ratio_normal = rh_compression(B->fs.n, B->fs.T, B->fs.U, 0.5);
    double level = 0.5 * B->fs.n * (1.0 + B->ratio_normal), xs = NAN;
    for (int i = 0; i + 1 < f.nx && cx(&f, i + 1) < nose; i++) {
        double a = 0.5 * (at(f.n, &f, i, j0) + at(f.n, &f, i, j0 + 1));
        double b = 0.5 * (at(f.n, &f, i + 1, j0) + at(f.n, &f, i + 1, j0 + 1));
        if (a < level && b >= level) {
            xs = cx(&f, i) + (level - a) / (b - a) * f.cell;
            break;
        }
    }
    B->standoff = nose - xs;
    B->billig_dense = 0.386 * exp(4.67 / (B->fs.mach_dense * B->fs.mach_dense));
    B->billig_ideal = 0.386 * exp(4.67 / (B->fs.mach_ideal * B->fs.mach_ideal));
    print_free_stream(&B->fs, secs);
    printf("  normal-shock compression %.4f (Henderson gas); shock at x = %.1f m, nose + r at %.1f m\n",
           B->ratio_normal, xs, nose);
    printf("  stand-off %.2f m = %.4f R = %.3f R n1/n2; Billig (cylinder, air) %.4f R at the Henderson Mach, "
           "%.4f R at the ideal one\n",
           B->standoff, B->standoff / R, B->standoff / R * B->ratio_normal, B->billig_dense, B->billig_ideal);
    if (dir) {
        FILE *o = open_out(dir, "bow_summary.csv");
        if (o) {
            fprintf(o, "diameter,n1,U1,kT1,phi1,mach_ideal,mach_dense,ratio_normal,x_shock,x_nose_r,standoff,"
                       "standoff_over_R,billig_dense,billig_ideal,y_axis\n");
            fprintf(o, "%g,%.6g,%.6g,%.6g,%.6g,%.5g,%.5g,%.5f,%.3f,%.3f,%.3f,%.5f,%.5f,%.5f,%g\n", c->chord, B->fs.n,
                    B->fs.U, B->fs.T, B->fs.phi, B->fs.mach_ideal, B->fs.mach_dense, B->ratio_normal, xs, nose,
                    B->standoff, B->standoff / R, B->billig_dense, B->billig_ideal, yc);
            fclose(o);
        }
    }
    free_fields(&f);
    return 1;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : NULL;
    const shock_case w15 = scaled((shock_case){AD_SHAPE_WEDGE, 400, 15, 4.0, 0.05, 1e4, 600, 640, 80, 2.0, 2.0, 4.0});
    wedge_result R;
    if (!wedge(&w15, dir, &R)) return 77;
    /* Tolerances. The shock angle: 1 degree, the shift a 2 % error of the soft discs' compressibility
     * makes here (Z - 1 = 10 % moves beta by 3.5 degrees; test_validation_eos finds Z within 2-4 %);
     * the ideal gamma = 2 relation is 3.5 degrees away and fails. Density and temperature jumps: 4 %,
     * the same compressibility error. The turn: 0.5 degree, the wall is frictionless and flat. */
    ENSURE_NEAR(R.beta / DEG, R.beta_dense / DEG, 1.0);
    ENSURE_NEAR(R.ratio, R.ratio_dense, 0.04 * R.ratio_dense);
    ENSURE_NEAR(R.turn / DEG, w15.half_angle, 0.5);
    ENSURE_NEAR(R.T2, R.T2_dense, 0.04 * R.T2_dense);
    if (getenv("AERODEM_SHOCK_WEDGE_ONLY")) return tu_finish("test_validation_shock");
    /* a tall tunnel (far field; the older periodic cascade, a quarter blocked, pushed the shock out to 1.5 R) */
    const shock_case c300 = scaled((shock_case){AD_SHAPE_CIRCLE, 300, 0, 4.0, 0.05, 1e4, 1200, 2400, 450, 2.0, 1.5, 8.0});
    bow_result B;
    if (!bow(&c300, dir, &B)) return 77;
    /* reported, not compared with a tolerance (no correlation exists for this gas): a detached shock
     * in front of the body, at the distance of the order of the radius that blunt bodies show */
    double Rc = 0.5 * c300.chord;
    ENSURE_MSG(B.standoff > 0.2 * Rc && B.standoff < 2.0 * Rc, "bow shock stand-off %.1f m, radius %.0f m", B.standoff,
               Rc);
    return tu_finish("test_validation_shock");
}
