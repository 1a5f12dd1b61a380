/* Part of test_airfoil.c (included once, after its helpers): the outline check's sweep against its plain
 * reference, its time, and coordinate files that must be refused (issue 16: hangs, caps, files cut short,
 * numbers that would give NaN geometry), each with the file and line in the message. */
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/outline_internal.h"

/* ------------------------------------------------- check vs reference -- */

static uint64_t g_rng = 0x2545F4914F6CDD1Dull;
static uint32_t rnd(uint32_t n)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (uint32_t)((g_rng >> 11) % n);
}

/* Closed segments a-b, c-d meet: an independent test for the pair the sweep reports. */
static double or2(double ax, double ay, double bx, double by, double cx, double cy)
{
    return (bx - ax) * (cy - ay) - (by - ay) * (cx - ax);
}
static int on_seg(double ax, double ay, double bx, double by, double cx, double cy)
{
    return or2(ax, ay, bx, by, cx, cy) == 0 && fmin(ax, bx) <= cx && cx <= fmax(ax, bx) && fmin(ay, by) <= cy &&
           cy <= fmax(ay, by);
}
static int pair_meets(const ad_outline *o, size_t e, size_t g)
{
    size_t e1 = (e + 1) % o->n, g1 = (g + 1) % o->n;
    double ax = o->x[e], ay = o->y[e], bx = o->x[e1], by = o->y[e1];
    double cx = o->x[g], cy = o->y[g], dx = o->x[g1], dy = o->y[g1];
    double d1 = or2(cx, cy, dx, dy, ax, ay), d2 = or2(cx, cy, dx, dy, bx, by);
    double d3 = or2(ax, ay, bx, by, cx, cy), d4 = or2(ax, ay, bx, by, dx, dy);
    if (((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0))) return 1;
    return on_seg(cx, cy, dx, dy, ax, ay) || on_seg(cx, cy, dx, dy, bx, by) || on_seg(ax, ay, bx, by, cx, cy) ||
           on_seg(ax, ay, bx, by, dx, dy);
}

/* The sweep and the reference agree on the verdict; a crossing the sweep reports is a real, non-neighbour one. */
static int compare_checks(const ad_outline *o, const char *what, int k)
{
    ad_check_result f = ad_outline_check_core(o), r = ad_outline_check_reference(o);
    size_t m = o->closed ? o->n : o->n - 1;
    int ok = f.kind == r.kind;
    if (ok && f.kind == AD_CHECK_CROSS && !(f.i == r.i && f.j == r.j)) {
        int neighbours = f.j == f.i + 1 || (o->closed && f.i == 0 && f.j == m - 1);
        ok = f.i < f.j && f.j < m && !neighbours && pair_meets(o, f.i, f.j);
    } else if (ok && f.kind != AD_CHECK_OK) {
        ok = f.i == r.i;
    }
    ENSURE_MSG(ok, "%s #%d (n %zu, closed %d): sweep says kind %d (%zu, %zu), reference kind %d (%zu, %zu)", what, k,
               o->n, o->closed, (int)f.kind, f.i, f.j, (int)r.kind, r.i, r.j);
    return f.kind == AD_CHECK_CROSS;
}

/* A star-shaped polygon (valid) with n points of random radius, on a grid of `grid` steps when grid > 0. */
static void star(double *x, double *y, size_t n, int grid)
{
    for (size_t i = 0; i < n; i++) {
        double a = 2 * TU_PI * (double)i / (double)n, r = 0.3 + 0.7 * rnd(1000) / 1000.0;
        x[i] = r * cos(a);
        y[i] = r * sin(a);
        if (grid) {
            x[i] = round(x[i] * grid);
            y[i] = round(y[i] * grid);
        }
    }
}

/* A comb: horizontal teeth joined alternately at x = 0.1 and x = 1, closed by a spine at x = 0.05; every edge
 * overlaps every other in x, which made the old sweep quadratic. Returns the points written. */
static size_t comb(double *x, double *y, size_t n)
{
    size_t teeth = (n - 2) / 2, j = 0;
    for (size_t i = 0; i < teeth; i++) {
        double yy = (double)i / (double)teeth, a = i % 2 ? 0.1 : 1.0, b = i % 2 ? 1.0 : 0.1;
        x[j] = a, y[j++] = yy;
        x[j] = b, y[j++] = yy;
    }
    x[j] = 0.05, y[j++] = 1.1;
    x[j] = 0.05, y[j++] = -0.1;
    return j;
}

static void test_check_vs_reference(void)
{
    enum { N = 160 };
    double x[N], y[N];
    int crossed = 0, total = 0;
    for (int k = 0; k < 4000; k++, total++) {
        size_t n = 8 + rnd(N - 8);
        ad_outline o = {x, y, n, k % 5 != 0};
        switch (k % 4) {
        case 0: /* random points on a coarse grid: collinear runs, shared vertices, touching */
            for (size_t i = 0; i < n; i++)
                x[i] = rnd(7), y[i] = rnd(7);
            break;
        case 1: /* a star, one vertex moved onto another vertex or onto an edge's midpoint (touching) */
            star(x, y, n, 64);
            {
                size_t a = rnd((uint32_t)n), b = rnd((uint32_t)n), b1 = (b + 1) % n;
                if (k % 8 == 1)
                    x[a] = x[b], y[a] = y[b];
                else
                    x[a] = 0.5 * (x[b] + x[b1]), y[a] = 0.5 * (y[b] + y[b1]);
            }
            break;
        case 2: /* a star in floating point, valid unless one vertex jumps */
            star(x, y, n, 0);
            if (k % 8 == 2) x[rnd((uint32_t)n)] *= 3;
            break;
        default: /* a comb, one tooth end moved across its neighbours or onto one */
            o.n = comb(x, y, n);
            if (o.n >= 8 && k % 8 == 3) x[rnd((uint32_t)o.n)] = 0.1 * rnd(12);
            if (o.n >= 8 && k % 8 == 7) y[rnd((uint32_t)o.n)] = y[rnd((uint32_t)o.n)];
        }
        crossed += compare_checks(&o, "random outline", k);
    }
    /* both verdicts must be well represented for the comparison to mean anything */
    ENSURE_MSG(crossed > total / 5 && crossed < total * 4 / 5, "%d of %d random outlines cross", crossed, total);
    printf("  check: sweep = reference on %d outlines (%d crossing)\n", total, crossed);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The check at 1e3, 1e4 and the cap on an airfoil-like ellipse, a comb and random points; the old sweep took 3 s
 * for the comb at the cap (quadratic), this one takes milliseconds. Beyond the cap: refused at once. */
static void test_check_time(void)
{
    const size_t sizes[3] = {1000, 10000, AD_OUTLINE_MAX_POINTS};
    double *x = malloc((AD_OUTLINE_MAX_POINTS + 1) * sizeof *x), *y = malloc((AD_OUTLINE_MAX_POINTS + 1) * sizeof *y);
    ENSURE(x && y);
    if (!x || !y) {
        free(x);
        free(y);
        return;
    }
    for (int s = 0; s < 3; s++) {
        size_t n = sizes[s];
        for (int shape = 0; shape < 3; shape++) {
            ad_outline o = {x, y, n, 1};
            for (size_t i = 0; i < n; i++) {
                double a = 2 * TU_PI * (double)i / (double)n;
                x[i] = shape == 2 ? rnd(1u << 20) : 0.5 + 0.5 * cos(a);
                y[i] = shape == 2 ? rnd(1u << 20) : 0.06 * sin(a);
            }
            if (shape == 1) o.n = comb(x, y, n);
            double t0 = now_s();
            ad_status st = ad_outline_check(&o, "timed");
            double t = now_s() - t0;
            ENSURE_MSG((st.code == AD_OK) == (shape != 2), "%s", st.message);
            ENSURE_MSG(t < 1.0, "check of %zu points (shape %d) took %.3f s", o.n, shape, t);
            printf("  check: %-7s n = %5zu: %.4f s\n", shape == 0 ? "ellipse" : shape == 1 ? "comb" : "random", o.n, t);
        }
    }
    /* the sweep against the reference on the large valid shapes too (the reference is slow: only 1e4) */
    ad_outline big = {x, y, comb(x, y, 10000), 1};
    compare_checks(&big, "comb 1e4", 0);
    y[5000] = y[7000]; /* a tooth end moved onto another tooth's height: crosses */
    compare_checks(&big, "comb 1e4 touched", 1);
    ad_outline over = {x, y, AD_OUTLINE_MAX_POINTS + 1, 1};
    ad_status st = ad_outline_check(&over, "huge");
    ENSURE_MSG(st.code == AD_ERR_INVALID && contains(st.message, "20001") && contains(st.message, "20000"), "%s",
               st.message);
    free(x);
    free(y);
}

/* ------------------------------------------------------ refused files -- */

/* A file that cannot end or blocks (/dev/zero, a FIFO) must be refused, not read: a hang here kills the test. */
static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "test_airfoil: FAIL: loading a file hung (alarm)\n";
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
    _exit(1);
}

/* Loading `path` fails with AD_ERR_FORMAT and each needle (up to three) in the message. */
static void expect_refused(const char *path, const char *n1, const char *n2, const char *n3)
{
    ad_outline o = {(double *)1, (double *)1, 3, 1}; /* junk: must come back zeroed */
    ad_status st = ad_airfoil_load(path, &o);
    ENSURE_MSG(st.code == AD_ERR_FORMAT && strcmp(st.field, "path") == 0, "%s: code %s, field %s: %s", path,
               ad_code_name(st.code), st.field, st.message);
    failed_load(path, strrchr(path, '/') ? strrchr(path, '/') + 1 : path, st, &o, n1, n2, n3);
}

/* Writes an ellipse of n points (Selig order) to path, one point a line. */
static int write_points(const char *path, size_t n)
{
    FILE *f = fopen(path, "w");
    if (!f) return 0;
    fprintf(f, "ellipse of %zu points\n", n);
    for (size_t i = 0; i < n; i++) {
        double a = 2 * TU_PI * (double)i / (double)n;
        fprintf(f, "%.9f %.9f\n", 0.5 + 0.5 * cos(a), 0.06 * sin(a));
    }
    return fclose(f) == 0;
}

static void test_load_refused(void)
{
    signal(SIGALRM, on_alarm);
    alarm(20);
    /* devices and other files that are not regular files: refused before a byte is read */
    expect_refused("/dev/zero", "/dev/zero:", "character device", NULL);
    expect_refused("/dev/urandom", "/dev/urandom:", "character device", NULL);
    expect_refused(src_path("tests/data/airfoils"), "directory", NULL, NULL);
    char dir[] = "/tmp/test_airfoil_XXXXXX", path[64];
    char *made = mkdtemp(dir);
    ENSURE(made != NULL);
    if (made) {
        snprintf(path, sizeof path, "%s/fifo.dat", dir);
        if (mkfifo(path, 0600) == 0) {
            expect_refused(path, "fifo.dat:", "FIFO", NULL); /* no writer: must not wait for one */
            unlink(path);
        }
        /* a regular file over the size cap, refused before it is read (sparse: costs no disk) */
        snprintf(path, sizeof path, "%s/big.dat", dir);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0 && ftruncate(fd, AD_AIRFOIL_MAX_BYTES + 1) == 0)
            expect_refused(path, "big.dat:", "4194305", "bytes");
        if (fd >= 0) close(fd);
        unlink(path);
        /* the point cap: one point more than an outline may have; the cap itself loads */
        snprintf(path, sizeof path, "%s/many.dat", dir);
        int wrote = write_points(path, AD_OUTLINE_MAX_POINTS + 1);
        ENSURE(wrote);
        if (wrote) expect_refused(path, "many.dat:20002:", "more than 20000 points", NULL);
        ad_outline o;
        if (write_points(path, AD_OUTLINE_MAX_POINTS) && ENSURE_OK(ad_airfoil_load(path, &o))) {
            ENSURE(o.n == AD_OUTLINE_MAX_POINTS);
            ad_outline_free(&o);
        }
        FILE *f = fopen(path, "w");
        if (f) {
            fprintf(f, "too many\n30000. 30000.\n");
            fclose(f);
            expect_refused(path, "many.dat:2:", "60000 points", "20000");
        }
        unlink(path);
        rmdir(dir);
    }
    alarm(0);
}

static void test_load_refused_data(void)
{
#define DATA(name) src_path("tests/data/airfoils/" name)
    expect_refused(DATA("nul_bytes.dat"), "nul_bytes.dat:3:", "0x00", "not text");
    expect_refused(DATA("long_line.dat"), "long_line.dat:5:", "longer than 1022", NULL);
    expect_refused(DATA("name_only.dat"), "name_only.dat:1:", "no coordinates", NULL);
    /* Selig files cut short, and one that does not start at the trailing edge */
    expect_refused(DATA("upper_only.dat"), "upper_only.dat:19:", "lower surface is missing", NULL);
    expect_refused(DATA("cut_lower.dat"), "cut_lower.dat:28:", "does not return to the trailing edge", "x = 0.3,");
    expect_refused(DATA("starts_mid.dat"), "starts_mid.dat:2:", "not at the trailing edge", NULL);
    expect_refused(DATA("figure8.dat"), "figure8.dat:9:", "does not return to the trailing edge", NULL);
    /* a Lednicer file whose counts agree with its blocks, but the lower block stops at x = 0.3 */
    expect_refused(DATA("lednicer_cut.dat"), "lednicer_cut.dat:32:", "lower surface (lines 23-32)", "trailing edge");
    /* numbers that would give inf or NaN geometry */
    expect_refused(DATA("huge.dat"), "huge.dat:7:", "1e+308", NULL);
    expect_refused(DATA("zero_chord.dat"), "zero_chord.dat:", "no chord", NULL);
    expect_refused(DATA("duplicates.dat"), "duplicates.dat:", "all 20 points", "no chord");
    expect_refused(DATA("tall.dat"), "tall.dat:", "chords tall", NULL);
    /* the crossing message still names the lines when the file returns to the trailing edge */
    expect_refused(DATA("figure8_te.dat"), "crosses itself", "line 4 to line 5", "line 7 to line 8");
#undef DATA
}
