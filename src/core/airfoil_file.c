/* Coordinate files (Selig and Lednicer layouts, as in the UIUC airfoil database) read into outlines.
 *
 * A file is read whole, after checks that bound what reading can cost: a regular file (a device such as
 * /dev/zero or a FIFO never ends or blocks), of at most AD_AIRFOIL_MAX_BYTES, then text lines of bounded length
 * with at most AD_OUTLINE_MAX_POINTS points. Every refusal names the file and, where there is one, the line.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outline_internal.h"
#include "world_internal.h"
#include "free_each.h"
#include "file_kind.h"

/* How far from the rearmost x (the leftmost, for a leading edge) an end of a surface may lie, as a fraction of
 * the chord: a blunt or slanted trailing edge of a real section is well within, a file cut short is not. */
#define AD_AIRFOIL_END_TOL 0.02

/* A body more than this many chords tall is not a section in chord units (and would overflow when scaled). */
#define AD_AIRFOIL_MAX_ASPECT 1000.0

typedef struct pt_buf {
    double *x, *y;
    int *line;  /* source line of each point */
    int *block; /* Lednicer: block of each point (blocks are separated by blank lines) */
    size_t n, cap;
} pt_buf;

static void pt_buf_free(pt_buf *b)
{
    AD_FREE_EACH(b->x, b->y, b->line, b->block);
    memset(b, 0, sizeof *b);
}

static int pt_buf_push(pt_buf *b, double x, double y, int line, int block)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 256;
        double *nx = realloc(b->x, cap * sizeof *nx);
        if (nx) b->x = nx;
        double *ny = realloc(b->y, cap * sizeof *ny);
        if (ny) b->y = ny;
        int *nl = realloc(b->line, cap * sizeof *nl);
        if (nl) b->line = nl;
        int *nb = realloc(b->block, cap * sizeof *nb);
        if (nb) b->block = nb;
        if (!nx || !ny || !nl || !nb) return 0;
        b->cap = cap;
    }
    b->x[b->n] = x;
    b->y[b->n] = y;
    b->line[b->n] = line;
    b->block[b->n] = block;
    b->n++;
    return 1;
}

typedef enum line_kind { LINE_BLANK, LINE_PAIR, LINE_OTHER, LINE_NONFINITE } line_kind;

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

static line_kind parse_line(const char *s, double *x, double *y)
{
    while (is_space(*s))
        s++;
    if (!*s) return LINE_BLANK;
    char *end;
    *x = strtod(s, &end);
    if (end == s) return LINE_OTHER;
    s = end;
    *y = strtod(s, &end);
    if (end == s) return LINE_OTHER;
    s = end;
    while (is_space(*s))
        s++;
    if (*s) return LINE_OTHER;
    if (!isfinite(*x) || !isfinite(*y)) return LINE_NONFINITE; /* strtod takes "nan" and "inf" */
    return LINE_PAIR;
}

/* Two integers >= 2: the point counts of a Lednicer file, not a point in any unit a Selig file uses at its
 * trailing edge (whose y is near 0). Counts above the cap are still taken as counts, to be refused as such. */
static int looks_like_counts(double a, double b)
{
    return a >= 2.0 && b >= 2.0 && a <= 1e6 && b <= 1e6 && floor(a) == a && floor(b) == b;
}

/* A line for messages: trailing newline cut, long lines shortened. */
static void line_excerpt(const char *s, char *out, size_t n)
{
    size_t len = strcspn(s, "\r\n");
    if (len < n) {
        memcpy(out, s, len);
        out[len] = '\0';
    } else {
        memcpy(out, s, n - 4);
        memcpy(out + n - 4, "...", 4);
    }
}

/* Drops points closer than min_len to the one before, and a last point that repeats the first. */
static void drop_repeats(pt_buf *b, double min_len)
{
    size_t k = 0;
    for (size_t i = 0; i < b->n; i++) {
        if (k > 0 && !(hypot(b->x[i] - b->x[k - 1], b->y[i] - b->y[k - 1]) > min_len)) continue;
        b->x[k] = b->x[i];
        b->y[k] = b->y[i];
        b->line[k] = b->line[i];
        b->block[k] = b->block[i];
        k++;
    }
    while (k > 1 && !(hypot(b->x[k - 1] - b->x[0], b->y[k - 1] - b->y[0]) > min_len))
        k--;
    b->n = k;
}

static void pt_swap(pt_buf *b, size_t i, size_t j)
{
    double tx = b->x[i], ty = b->y[i];
    int tl = b->line[i], tb = b->block[i];
    b->x[i] = b->x[j];
    b->y[i] = b->y[j];
    b->line[i] = b->line[j];
    b->block[i] = b->block[j];
    b->x[j] = tx;
    b->y[j] = ty;
    b->line[j] = tl;
    b->block[j] = tb;
}

/* Rotates the points so that point `first` comes first (three reversals: no extra memory). */
static void pt_rotate(pt_buf *b, size_t first)
{
    if (first == 0) return;
    for (size_t i = 0, j = first - 1; i < j; i++, j--)
        pt_swap(b, i, j);
    for (size_t i = first, j = b->n - 1; i < j; i++, j--)
        pt_swap(b, i, j);
    for (size_t i = 0, j = b->n - 1; i < j; i++, j--)
        pt_swap(b, i, j);
}

/* ----------------------------------------------------------------- read -- */


/* Reads at most AD_AIRFOIL_MAX_BYTES + 1 bytes of fd into a malloc'ed *data (not terminated); refuses a file that
 * has more, whatever fstat said (it may grow while it is read). */
static ad_status read_bounded(int fd, const char *path, size_t hint, char **data, size_t *len)
{
    const size_t limit = (size_t)AD_AIRFOIL_MAX_BYTES;
    size_t cap = (hint < limit ? hint : limit) + 1, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (buf && n == cap && cap <= limit) {
            size_t ncap = 2 * cap > limit + 1 ? limit + 1 : 2 * cap;
            char *nb = realloc(buf, ncap);
            if (!nb) free(buf);
            buf = nb;
            cap = ncap;
        }
        if (!buf) return ad_fail(AD_ERR_NO_MEMORY, "path", "%s: no memory to read the file.", path);
        if (n == cap) break; /* limit + 1 bytes read */
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            int e = errno;
            free(buf);
            return ad_fail(AD_ERR_IO, "path", "%s: read error: %s.", path, strerror(e));
        }
        if (got == 0) {
            *data = buf;
            *len = n;
            return ad_ok();
        }
        n += (size_t)got;
    }
    free(buf);
    return ad_fail(AD_ERR_FORMAT, "path",
                   "%s: more than %ld bytes, the most a coordinate file may have (a few kB is usual).", path,
                   (long)AD_AIRFOIL_MAX_BYTES);
}

/* The whole file, refused unless it is a regular file of at most AD_AIRFOIL_MAX_BYTES. O_NONBLOCK: opening a
 * FIFO must not wait for a writer (it has no effect on the regular files that are read). */
static ad_status read_file(const char *path, char **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0) return ad_fail(AD_ERR_IO, "path", "%s: cannot open: %s.", path, strerror(errno));
    struct stat sb;
    ad_status st = ad_ok();
    if (fstat(fd, &sb) != 0)
        st = ad_fail(AD_ERR_IO, "path", "%s: cannot read: %s.", path, strerror(errno));
    else if (!S_ISREG(sb.st_mode))
        st = ad_fail(AD_ERR_FORMAT, "path", "%s: is %s, not a regular file; give an airfoil coordinate file.", path,
                     ad_file_kind(sb.st_mode));
    else if (sb.st_size > AD_AIRFOIL_MAX_BYTES)
        st = ad_fail(AD_ERR_FORMAT, "path",
                     "%s: %lld bytes, more than the %ld a coordinate file may have (a few kB is usual).", path,
                     (long long)sb.st_size, (long)AD_AIRFOIL_MAX_BYTES);
    else
        st = read_bounded(fd, path, (size_t)sb.st_size, data, len);
    close(fd);
    return st;
}

/* The first byte of s[0..n) that is not text (a NUL or another control byte other than white space), or n.
 * Bytes from 0x80 up pass: a name line may be UTF-8. */
static size_t not_text(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c < 0x20 && !(c == '\t' || c == '\r' || c == '\v' || c == '\f')) || c == 0x7f) return i;
    }
    return n;
}

/* ---------------------------------------------------------------- parse -- */

typedef struct load_ctx {
    const char *path;
    pt_buf raw;   /* the points in file order */
    int lines;    /* lines read */
    int lednicer; /* the layout: 1 Lednicer, 0 Selig */
    int counts_line;
    long n_upper, n_lower;
    int block, block_open;
    int data_seen;
} load_ctx;

/* One line (NUL-terminated, no line end) of the file. */
static ad_status take_line(load_ctx *c, const char *buf, int lineno)
{
    char excerpt[48];
    double x = 0, y = 0;
    line_kind kind = parse_line(buf, &x, &y);
    if (lineno == 1 && kind != LINE_PAIR) return ad_ok(); /* the airfoil's name */
    if (kind == LINE_BLANK) {
        if (c->block_open) c->block++;
        c->block_open = 0;
        return ad_ok();
    }
    if (kind != LINE_PAIR) {
        line_excerpt(buf + strspn(buf, " \t"), excerpt, sizeof excerpt);
        if (kind == LINE_NONFINITE)
            return ad_fail(AD_ERR_FORMAT, "path", "%s:%d: \"%s\" holds a number that is not finite.", c->path, lineno,
                           excerpt);
        return ad_fail(AD_ERR_FORMAT, "path", "%s:%d: expected two numbers \"x y\", found \"%s\".", c->path, lineno,
                       excerpt);
    }
    if (!(fabs(x) <= AD_AIRFOIL_MAX_COORD && fabs(y) <= AD_AIRFOIL_MAX_COORD))
        return ad_fail(AD_ERR_FORMAT, "path", "%s:%d: coordinate %g is beyond +-%g; no unit puts a body so far out.",
                       c->path, lineno, fabs(x) > AD_AIRFOIL_MAX_COORD ? x : y, AD_AIRFOIL_MAX_COORD);
    if (!c->data_seen) {
        c->data_seen = 1;
        if (looks_like_counts(x, y)) {
            if (x + y > AD_OUTLINE_MAX_POINTS)
                return ad_fail(AD_ERR_FORMAT, "path",
                               "%s:%d: the Lednicer counts %.0f and %.0f give %.0f points, more than the %d an outline "
                               "may have.",
                               c->path, lineno, x, y, x + y, AD_OUTLINE_MAX_POINTS);
            c->lednicer = 1;
            c->counts_line = lineno;
            c->n_upper = (long)x;
            c->n_lower = (long)y;
            return ad_ok();
        }
    }
    if (c->raw.n >= AD_OUTLINE_MAX_POINTS)
        return ad_fail(AD_ERR_FORMAT, "path", "%s:%d: more than %d points, the most an outline may have.", c->path,
                       lineno, AD_OUTLINE_MAX_POINTS);
    if (!pt_buf_push(&c->raw, x, y, lineno, c->block))
        return ad_fail(AD_ERR_NO_MEMORY, "path", "%s:%d: out of memory reading points.", c->path, lineno);
    c->block_open = 1;
    return ad_ok();
}

/* Splits data into lines, each checked for text and length, and parses them into c->raw. */
static ad_status parse_text(load_ctx *c, const char *data, size_t len)
{
    char buf[AD_AIRFOIL_MAX_LINE + 1];
    if (len > 0 && data[len - 1] == 0x1a) len--; /* a DOS end-of-file mark, as some old database files have */
    size_t pos = 0;
    int lineno = 0;
    while (pos < len) {
        const char *s = data + pos, *nl = memchr(s, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - s) : len - pos;
        lineno++;
        size_t look = n < AD_AIRFOIL_MAX_LINE + 1 ? n : AD_AIRFOIL_MAX_LINE + 1, bad = not_text(s, look);
        if (bad < look)
            return ad_fail(AD_ERR_FORMAT, "path",
                           "%s:%d: byte 0x%02x at column %zu is not text; this is not an airfoil coordinate file.",
                           c->path, lineno, (unsigned char)s[bad], bad + 1);
        if (n > AD_AIRFOIL_MAX_LINE)
            return ad_fail(AD_ERR_FORMAT, "path", "%s:%d: line longer than %d characters.", c->path, lineno,
                           AD_AIRFOIL_MAX_LINE);
        memcpy(buf, s, n);
        buf[n] = '\0';
        ad_status st = take_line(c, buf, lineno);
        if (st.code) return st;
        pos += n + 1;
    }
    c->lines = lineno;
    if (c->raw.n == 0) return ad_fail(AD_ERR_FORMAT, "path", "%s:%d: no coordinates found.", c->path, lineno);
    return ad_ok();
}

/* ------------------------------------------------------------ structure -- */

/* Lednicer: the counts against the blocks; *upper_end is where the lower surface starts in c->raw. */
static ad_status lednicer_split(load_ctx *c, size_t *upper_end)
{
    const pt_buf *r = &c->raw;
    size_t nu = (size_t)c->n_upper, nl = (size_t)c->n_lower;
    int nblocks = r->block[r->n - 1] - r->block[0] + 1;
    if (nblocks > 2) {
        size_t i = 0;
        while (r->block[i] - r->block[0] < 2)
            i++;
        return ad_fail(AD_ERR_FORMAT, "path",
                       "%s:%d: a third block of points; a Lednicer file has two (upper surface, lower surface).",
                       c->path, r->line[i]);
    }
    if (nblocks == 1) {
        /* no blank line between the surfaces: the counts alone split them */
        if (r->n != nu + nl)
            return ad_fail(
                AD_ERR_FORMAT, "path",
                "%s:%d: the Lednicer counts give %zu upper and %zu lower points (%zu in all), but %zu points "
                "follow (lines %d-%d).",
                c->path, c->counts_line, nu, nl, nu + nl, r->n, r->line[0], r->line[r->n - 1]);
        *upper_end = nu;
        return ad_ok();
    }
    size_t ue = 0;
    while (r->block[ue] == r->block[0])
        ue++;
    if (ue != nu)
        return ad_fail(AD_ERR_FORMAT, "path",
                       "%s:%d: the Lednicer counts on line %d give %zu upper-surface points, but the upper block "
                       "(lines %d-%d) has %zu.",
                       c->path, r->line[0], c->counts_line, nu, r->line[0], r->line[ue - 1], ue);
    if (r->n - ue != nl)
        return ad_fail(AD_ERR_FORMAT, "path",
                       "%s:%d: the Lednicer counts on line %d give %zu lower-surface points, but the lower block "
                       "(lines %d-%d) has %zu.",
                       c->path, r->line[ue], c->counts_line, nl, r->line[ue], r->line[r->n - 1], r->n - ue);
    *upper_end = ue;
    return ad_ok();
}

/* The points' x range [*lo, *hi]; refuses a file without a chord or far taller than long. */
static ad_status check_extent(const load_ctx *c, double *lo, double *hi)
{
    const pt_buf *r = &c->raw;
    size_t ylo = 0, yhi = 0;
    *lo = *hi = r->x[0];
    for (size_t i = 1; i < r->n; i++) {
        *lo = fmin(*lo, r->x[i]);
        *hi = fmax(*hi, r->x[i]);
        if (r->y[i] < r->y[ylo]) ylo = i;
        if (r->y[i] > r->y[yhi]) yhi = i;
    }
    double chord = *hi - *lo, height = r->y[yhi] - r->y[ylo];
    if (!(chord > 0.0))
        return ad_fail(AD_ERR_FORMAT, "path", "%s:%d: all %zu points have x = %g: the outline has no chord.", c->path,
                       r->line[r->n - 1], r->n, r->x[0]);
    if (!(height <= AD_AIRFOIL_MAX_ASPECT * chord))
        return ad_fail(AD_ERR_FORMAT, "path",
                       "%s:%d: the points span %g along y but only %g along x (the chord): more than %g chords tall, "
                       "not a body outline.",
                       c->path, r->line[yhi], height, chord, AD_AIRFOIL_MAX_ASPECT);
    return ad_ok();
}

static int near_x(double x, double target, double chord)
{
    return fabs(x - target) <= AD_AIRFOIL_END_TOL * chord;
}

/* A Selig file runs from the trailing edge over the upper surface to the leading edge and back: both ends lie at
 * the trailing edge. A file that stops short of it lost (part of) the lower surface and would load as a sliver. */
static ad_status check_selig_ends(const load_ctx *c, double lo, double hi)
{
    const pt_buf *r = &c->raw;
    double chord = hi - lo;
    size_t last = r->n - 1;
    if (!near_x(r->x[0], hi, chord))
        return ad_fail(
            AD_ERR_FORMAT, "path",
            "%s:%d: the first point is at x = %.6g, not at the trailing edge (x = %.6g): a Selig file starts "
            "at the trailing edge, runs over one surface to the leading edge and back along the other.",
            c->path, r->line[0], r->x[0], hi);
    if (near_x(r->x[last], hi, chord)) return ad_ok();
    if (near_x(r->x[last], lo, chord))
        return ad_fail(AD_ERR_FORMAT, "path",
                       "%s:%d: the lower surface is missing: the points end at the leading edge (x = %.6g) and do not "
                       "return to the trailing edge (x = %.6g).",
                       c->path, r->line[last], r->x[last], hi);
    return ad_fail(AD_ERR_FORMAT, "path",
                   "%s:%d: the outline does not return to the trailing edge: the last point is at x = %.6g, the "
                   "trailing edge at x = %.6g; the file looks cut short in the second surface.",
                   c->path, r->line[last], r->x[last], hi);
}

/* Each Lednicer block runs from the leading edge to the trailing edge. */
static ad_status check_lednicer_ends(const load_ctx *c, size_t upper_end, double lo, double hi)
{
    const pt_buf *r = &c->raw;
    double chord = hi - lo;
    for (int s = 0; s < 2; s++) {
        size_t a = s ? upper_end : 0, b = s ? r->n - 1 : upper_end - 1;
        const char *name = s ? "lower" : "upper";
        if (!near_x(r->x[a], lo, chord))
            return ad_fail(
                AD_ERR_FORMAT, "path",
                "%s:%d: the %s surface (lines %d-%d) starts at x = %.6g, not at the leading edge (x = %.6g): "
                "a Lednicer block runs from the leading to the trailing edge.",
                c->path, r->line[a], name, r->line[a], r->line[b], r->x[a], lo);
        if (!near_x(r->x[b], hi, chord))
            return ad_fail(AD_ERR_FORMAT, "path",
                           "%s:%d: the %s surface (lines %d-%d) ends at x = %.6g, not at the trailing edge (x = %.6g); "
                           "the block looks cut short.",
                           c->path, r->line[b], name, r->line[a], r->line[b], r->x[b], hi);
    }
    return ad_ok();
}

/* The file's points checked as an outline and put in Selig order in *pts (Lednicer: the upper surface reversed,
 * TE -> LE, then the lower surface, LE -> TE). */
static ad_status order_points(load_ctx *c, pt_buf *pts)
{
    double lo, hi;
    ad_status st = check_extent(c, &lo, &hi);
    if (st.code) return st;
    if (!c->lednicer) {
        st = check_selig_ends(c, lo, hi);
        if (st.code) return st;
        *pts = c->raw;
        memset(&c->raw, 0, sizeof c->raw);
        return ad_ok();
    }
    size_t upper_end = 0;
    st = lednicer_split(c, &upper_end);
    if (!st.code) st = check_lednicer_ends(c, upper_end, lo, hi);
    if (st.code) return st;
    const pt_buf *r = &c->raw;
    for (size_t j = 0; j < r->n; j++) {
        size_t i = j < upper_end ? upper_end - 1 - j : j;
        if (!pt_buf_push(pts, r->x[i], r->y[i], r->line[i], r->block[i]))
            return ad_fail(AD_ERR_NO_MEMORY, "path", "%s: out of memory.", c->path);
    }
    return ad_ok();
}

/* Chord units, repeats dropped, counter-clockwise from the trailing edge, checked; moves the points to *out. */
static ad_status finish_outline(const load_ctx *c, pt_buf *pts, ad_outline *out)
{
    /* chord units: leftmost point at the origin, chord 1; a file already close to that is left exactly as typed */
    size_t le = 0;
    double xmax = pts->x[0];
    for (size_t i = 1; i < pts->n; i++) {
        if (pts->x[i] < pts->x[le]) le = i;
        xmax = fmax(xmax, pts->x[i]);
    }
    double chord = xmax - pts->x[le];
    if (!(fabs(pts->x[le]) <= 0.02 && fabs(xmax - 1.0) <= 0.02)) {
        double x0 = pts->x[le], y0 = pts->y[le];
        for (size_t i = 0; i < pts->n; i++) {
            pts->x[i] = (pts->x[i] - x0) / chord;
            pts->y[i] = (pts->y[i] - y0) / chord;
        }
    }
    int last_line = pts->line[pts->n - 1];
    drop_repeats(pts, AD_OUTLINE_MIN_EDGE * ad_outline_size(pts->x, pts->y, pts->n));
    if (pts->n < AD_OUTLINE_MIN_CLOSED)
        return ad_fail(AD_ERR_FORMAT, "path",
                       "%s:%d: too few points: %zu (after dropping repeats), an outline needs %d.", c->path, last_line,
                       pts->n, AD_OUTLINE_MIN_CLOSED);
    /* Selig order runs counter-clockwise from the trailing edge: a file that goes over the lower surface first is
     * turned round, and the points are rotated to start at the rearmost point (the upper one of two), so that the
     * closing edge is the trailing-edge gap */
    if (ad_outline_shoelace(pts->x, pts->y, pts->n) < 0.0)
        for (size_t i = 0, j = pts->n - 1; i < j; i++, j--)
            pt_swap(pts, i, j);
    size_t te = 0;
    for (size_t i = 1; i < pts->n; i++)
        if (pts->x[i] > pts->x[te] || (pts->x[i] == pts->x[te] && pts->y[i] > pts->y[te])) te = i;
    pt_rotate(pts, te);

    ad_outline o = {pts->x, pts->y, pts->n, 1};
    ad_check_result r = ad_outline_check_core(&o);
    if (r.kind == AD_CHECK_CROSS) {
        size_t i1 = (r.i + 1) % pts->n, j1 = (r.j + 1) % pts->n;
        return ad_fail(
            AD_ERR_FORMAT, "path",
            "%s:%d: the outline crosses itself: the edge from line %d to line %d meets the edge from line %d "
            "to line %d.",
            c->path, pts->line[r.i], pts->line[r.i], pts->line[i1], pts->line[r.j], pts->line[j1]);
    }
    if (r.kind != AD_CHECK_OK) {
        /* not expected after parsing and dropping repeats, but keep the file's name in any message */
        ad_status st = ad_outline_check(&o, c->path);
        if (st.code == AD_ERR_INVALID) st.code = AD_ERR_FORMAT;
        snprintf(st.field, sizeof st.field, "path");
        return st;
    }
    out->x = pts->x;
    out->y = pts->y;
    out->n = pts->n;
    out->closed = 1;
    free(pts->line);
    free(pts->block);
    memset(pts, 0, sizeof *pts);
    return ad_ok();
}

ad_status ad_airfoil_load(const char *path, ad_outline *out)
{
    if (!out) return ad_fail(AD_ERR_INVALID, "out", "ad_airfoil_load: no output outline given.");
    memset(out, 0, sizeof *out);
    if (!path || !path[0]) return ad_fail(AD_ERR_INVALID, "path", "ad_airfoil_load: no file name given.");
    char *data = NULL;
    size_t len = 0;
    ad_status st = read_file(path, &data, &len);
    if (st.code) return st;
    load_ctx c;
    memset(&c, 0, sizeof c);
    c.path = path;
    pt_buf pts = {0};
    st = parse_text(&c, data, len);
    free(data);
    if (!st.code) st = order_points(&c, &pts);
    if (!st.code) st = finish_outline(&c, &pts, out);
    pt_buf_free(&c.raw);
    pt_buf_free(&pts);
    return st;
}
