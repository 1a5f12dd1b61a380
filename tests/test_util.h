/* Tiny helpers shared by the aerodem test programs: checks that count failures
 * and print file:line with the measured value, the expected value and the tolerance. */
#ifndef AERODEM_TEST_UTIL_H
#define AERODEM_TEST_UTIL_H

#include <aerodem/aerodem.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TU_PI 3.14159265358979323846

static int tu_failures = 0;
static int tu_checks = 0;

/* ENSURE(cond): a boolean check. */
#define ENSURE(cond)                                                                   \
    do {                                                                               \
        tu_checks++;                                                                   \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "%s:%d: FAIL: %s\n", __FILE__, __LINE__, #cond);            \
            tu_failures++;                                                             \
        }                                                                              \
    } while (0)

/* ENSURE_MSG(cond, fmt, ...): a boolean check with a printf-style explanation. */
#define ENSURE_MSG(cond, ...)                                                          \
    do {                                                                               \
        tu_checks++;                                                                   \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "%s:%d: FAIL: %s: ", __FILE__, __LINE__, #cond);            \
            fprintf(stderr, __VA_ARGS__);                                              \
            fputc('\n', stderr);                                                       \
            tu_failures++;                                                             \
        }                                                                              \
    } while (0)

/* ENSURE_NEAR(measured, expected, tol): |measured - expected| <= tol (NaN fails). */
#define ENSURE_NEAR(measured, expected, tol)                                           \
    tu_near((double)(measured), (double)(expected), (double)(tol), #measured, #expected, \
            __FILE__, __LINE__)

/* ENSURE_REL(measured, expected, rtol): relative to |expected|. */
#define ENSURE_REL(measured, expected, rtol)                                           \
    tu_near((double)(measured), (double)(expected), (double)(rtol) * fabs((double)(expected)), \
            #measured, #expected, __FILE__, __LINE__)

/* ENSURE_LE(measured, bound): measured <= bound (NaN fails). */
#define ENSURE_LE(measured, bound)                                                     \
    tu_le((double)(measured), (double)(bound), #measured, #bound, __FILE__, __LINE__)

/* ENSURE_OK(status): the call returned AD_OK; prints its message otherwise.
 * Evaluates to 1 when OK, 0 otherwise. */
#define ENSURE_OK(status_expr) tu_ok((status_expr), #status_expr, __FILE__, __LINE__)

/* REQUIRE_OK(status): like ENSURE_OK but ends the program (exit 1) on failure. */
#define REQUIRE_OK(status_expr)                                                        \
    do {                                                                               \
        if (!tu_ok((status_expr), #status_expr, __FILE__, __LINE__)) {                  \
            fprintf(stderr, "%s:%d: cannot continue\n", __FILE__, __LINE__);            \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

static inline int tu_near(double m, double e, double tol, const char *ms, const char *es,
                          const char *file, int line)
{
    tu_checks++;
    double diff = fabs(m - e);
    if (!(diff <= tol)) {
        fprintf(stderr, "%s:%d: FAIL: %s = %.10g, expected %s = %.10g, |diff| = %.4g > tol %.4g\n",
                file, line, ms, m, es, e, diff, tol);
        tu_failures++;
        return 0;
    }
    return 1;
}

static inline int tu_le(double m, double b, const char *ms, const char *bs, const char *file, int line)
{
    tu_checks++;
    if (!(m <= b)) {
        fprintf(stderr, "%s:%d: FAIL: %s = %.10g exceeds bound %s = %.10g\n", file, line, ms, m, bs, b);
        tu_failures++;
        return 0;
    }
    return 1;
}

static inline int tu_ok(ad_status st, const char *expr, const char *file, int line)
{
    tu_checks++;
    if (st.code != AD_OK) {
        fprintf(stderr, "%s:%d: FAIL: %s returned %s (%d), field '%s': %s\n", file, line, expr,
                ad_code_name(st.code), (int)st.code, st.field, st.message);
        tu_failures++;
        return 0;
    }
    return 1;
}

/* Prints the summary line; returns the exit code for main. */
static inline int tu_finish(const char *name)
{
    if (tu_failures) {
        fprintf(stderr, "%s: FAILED %d of %d checks\n", name, tu_failures, tu_checks);
        return 1;
    }
    printf("%s: all %d checks passed\n", name, tu_checks);
    return 0;
}

/* The default definition with the backend the tests run on: the CPU reference
 * backend, unless AERODEM_TEST_BACKEND is "auto" or "cuda". */
static inline ad_world_def tu_def(void)
{
    ad_world_def d = ad_default_world_def();
    d.backend = AD_BACKEND_CPU;
    const char *b = getenv("AERODEM_TEST_BACKEND");
    if (b && strcmp(b, "auto") == 0) d.backend = AD_BACKEND_AUTO;
    if (b && strcmp(b, "cuda") == 0) d.backend = AD_BACKEND_CUDA;
    return d;
}

/* d with the square [0, side]^2 as its domain, all four sides of kind `sides`. */
static inline ad_world_def tu_square(ad_world_def d, double side, ad_boundary sides)
{
    d.x_min = d.y_min = 0.0;
    d.x_max = d.y_max = side;
    d.boundary_x = d.boundary_y = sides;
    return d;
}

/* d with discs of radius r and mass m, their contacts of stiffness k and restitution e. */
static inline ad_world_def tu_discs(ad_world_def d, double r, double m, double k, double e)
{
    d.radius = r;
    d.mass = m;
    d.stiffness = k;
    d.restitution = e;
    return d;
}

/* d as a channel up to (x_max, y_max) for `capacity` discs, open at the inlet and the outlet, its free
 * stream moving at vx with `density` discs a square metre. */
static inline ad_world_def tu_channel(ad_world_def d, size_t capacity, double x_max, double y_max, double vx,
                                      double density)
{
    d.capacity = capacity;
    d.x_max = x_max;
    d.y_max = y_max;
    d.boundary_x = AD_BOUNDARY_OPEN;
    d.stream_vx = vx;
    d.stream_density = density;
    return d;
}

/* Reads all n particles ordered by id; checks the count and that ids are 0..n-1
 * in order when id is given. Returns 1 on success. */
static inline int tu_read_by_id(const ad_world *w, size_t n, ad_particle *p, uint32_t *id)
{
    size_t count = (size_t)-1;
    if (!ENSURE_OK(ad_world_read_particles(w, AD_READ_BY_ID, n, p, id, NULL, NULL, &count))) return 0;
    if (count != n) {
        tu_checks++;
        tu_failures++;
        fprintf(stderr, "%s:%d: FAIL: read %zu particles, expected %zu\n", __FILE__, __LINE__, count, n);
        return 0;
    }
    return 1;
}

static inline ad_stats tu_stats(const ad_world *w)
{
    ad_stats s;
    memset(&s, 0, sizeof s);
    ENSURE_OK(ad_world_get_stats(w, &s));
    return s;
}

/* Parameters of the damped linear contact, double precision reference. */
static inline double tu_gamma(double e, double m_eff, double k)
{
    double le = log(e);
    double beta = -le / sqrt(TU_PI * TU_PI + le * le);
    return 2.0 * beta * sqrt(m_eff * k);
}

static inline double tu_contact_time(double e, double m_eff, double k)
{
    double g = tu_gamma(e, m_eff, k);
    double eta = g / (2.0 * m_eff);
    return TU_PI / sqrt(k / m_eff - eta * eta);
}

/* Lift and drag coefficients averaged over intervals: each interval's mean force comes
 * from the body impulse between two statistics snapshots, divided by q = dynamic
 * pressure x chord; the standard error is over the interval means. */
typedef struct tu_coef {
    double sl, sl2, sd, sd2;
    int n;
} tu_coef;

/* Adds the interval from a to b; *cl and *cd (may be NULL) receive its coefficients. */
static inline void tu_coef_add(tu_coef *c, const ad_stats *a, const ad_stats *b, double q, double *cl, double *cd)
{
    double dt = b->time - a->time;
    double l = (b->body_impulse_y - a->body_impulse_y) / dt / q, d = (b->body_impulse_x - a->body_impulse_x) / dt / q;
    c->sl += l;
    c->sl2 += l * l;
    c->sd += d;
    c->sd2 += d * d;
    c->n++;
    if (cl) *cl = l;
    if (cd) *cd = d;
}

static inline void tu_coef_result(const tu_coef *c, double *cl, double *cl_se, double *cd, double *cd_se)
{
    double n = c->n, ml = c->sl / n, md = c->sd / n;
    if (cl) *cl = ml;
    if (cd) *cd = md;
    if (cl_se) *cl_se = sqrt(fmax(c->sl2 / n - ml * ml, 0) / (n - 1));
    if (cd_se) *cd_se = sqrt(fmax(c->sd2 / n - md * md, 0) / (n - 1));
}

#endif
