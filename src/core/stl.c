/* STL files read into triangle meshes: binary (streamed in records) and ASCII (read whole, then parsed).
 *
 * What a read can cost is bounded before reading: a regular file (a device such as /dev/zero or a FIFO never
 * ends or blocks) of at most AD_STL_MAX_BYTES with at most AD_STL_MAX_TRIANGLES triangles. A binary file is
 * recognised by its size, 84 + 50 x the header's count, not by its first word: many binary files start with
 * "solid" as ASCII ones do. Every refusal names the file and the line (ASCII) or the triangle (binary).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stl.h"
#include "file_kind.h"

#define STL_PREFIX_BYTES (AD_STL_HEADER_BYTES + 4)
/* Binary records decoded at a time. */
#define STL_CHUNK_RECORDS 4096

/* ------------------------------------------------------------ the parts -- */

typedef struct tri_buf {
    ad_triangle *t;
    size_t n, cap;
} tri_buf;

static int tri_buf_grow(tri_buf *b)
{
    size_t cap = b->cap ? 2 * b->cap : 1024;
    if (cap > (size_t)AD_STL_MAX_TRIANGLES) cap = (size_t)AD_STL_MAX_TRIANGLES;
    ad_triangle *t = realloc(b->t, cap * sizeof *t);
    if (!t) return 0;
    b->t = t;
    b->cap = cap;
    return 1;
}


static int is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

static int is_text(unsigned char c)
{
    return !((c < 0x20 && !is_space(c)) || c == 0x7f);
}

/* The first byte of d[0..n) that is not text (a NUL or another control byte other than white space), or n.
 * Bytes from 0x80 up pass: a solid's name may be UTF-8. */
static size_t not_text(const unsigned char *d, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!is_text(d[i])) return i;
    return n;
}

/* Skips a UTF-8 byte order mark. */
static size_t bom(const unsigned char *d, size_t n)
{
    return n >= 3 && d[0] == 0xef && d[1] == 0xbb && d[2] == 0xbf ? 3 : 0;
}

/* 1 where d starts (after white space) with the word "solid", in any case. */
static int starts_with_solid(const unsigned char *d, size_t n)
{
    size_t i = bom(d, n);
    while (i < n && is_space(d[i]))
        i++;
    static const char w[] = "solid";
    for (size_t k = 0; k < 5; k++, i++)
        if (i >= n || (d[i] | 0x20) != w[k]) return 0;
    return i == n || is_space(d[i]);
}

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static double le_float(const unsigned char *p)
{
    uint32_t u = le32(p);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* 0 when the coordinates c of vertex k (1-based) are finite and within AD_STL_MAX_COORD, else 1 and what is
 * wrong in buf. */
static int coord_problem(const double c[3], int k, char *buf, size_t n)
{
    static const char axis[3] = {'x', 'y', 'z'};
    for (int d = 0; d < 3; d++) {
        if (isnan(c[d])) {
            snprintf(buf, n, "vertex %d is NaN (its %c)", k, axis[d]);
            return 1;
        }
        if (isinf(c[d])) {
            snprintf(buf, n, "vertex %d is %sinfinite (its %c)", k, c[d] < 0 ? "minus " : "", axis[d]);
            return 1;
        }
        if (fabs(c[d]) > AD_STL_MAX_COORD) {
            snprintf(buf, n, "vertex %d's %c = %g is beyond +-%g (no unit puts a body so far out)", k, axis[d], c[d],
                     AD_STL_MAX_COORD);
            return 1;
        }
    }
    return 0;
}

/* ----------------------------------------------------------------- read -- */

/* Reads up to n bytes of fd into buf; *got < n only at the end of the file. */
static ad_status read_exact(int fd, const char *path, void *buf, size_t n, size_t *got)
{
    *got = 0;
    while (*got < n) {
        ssize_t r = read(fd, (char *)buf + *got, n - *got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return ad_fail(AD_ERR_IO, "path", "%s: read error: %s.", path, strerror(errno));
        if (r == 0) break;
        *got += (size_t)r;
    }
    return ad_ok();
}

/* The whole of fd from its start into a malloc'd, NUL-terminated *data; refuses more than AD_STL_MAX_BYTES,
 * whatever fstat said (the file may grow while it is read). */
static ad_status read_all(int fd, const char *path, size_t hint, unsigned char **data, size_t *len)
{
    const size_t limit = (size_t)AD_STL_MAX_BYTES;
    *data = NULL;
    *len = 0;
    if (lseek(fd, 0, SEEK_SET) != 0) return ad_fail(AD_ERR_IO, "path", "%s: cannot read: %s.", path, strerror(errno));
    size_t cap = (hint < limit ? hint : limit) + 1, n = 0;
    unsigned char *buf = NULL;
    for (;;) {
        unsigned char *nb = realloc(buf, cap + 1);
        if (!nb) {
            free(buf);
            return ad_fail(AD_ERR_NO_MEMORY, "path", "%s: no memory to read %zu bytes.", path, cap);
        }
        buf = nb;
        size_t got;
        ad_status st = read_exact(fd, path, buf + n, cap - n, &got);
        if (st.code) {
            free(buf);
            return st;
        }
        n += got;
        if (n < cap) break;
        if (n > limit) {
            free(buf);
            return ad_fail(AD_ERR_FORMAT, "path", "%s: grew past %ld bytes, the most an STL file may have.", path,
                           (long)AD_STL_MAX_BYTES);
        }
        cap = 2 * cap > limit + 1 ? limit + 1 : 2 * cap;
    }
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return ad_ok();
}

/* --------------------------------------------------------------- binary -- */

/* Records [i, i + k) of count from rec into t; refuses a coordinate by its triangle. */
static ad_status decode_records(const char *path, const unsigned char *rec, size_t i, size_t k, size_t count,
                                ad_triangle *t)
{
    char why[160];
    for (size_t r = 0; r < k; r++, rec += AD_STL_RECORD_BYTES) {
        for (int j = 0; j < 3; j++) {
            double c[3];
            for (int d = 0; d < 3; d++)
                c[d] = le_float(rec + 12 + 12 * j + 4 * d); /* after the normal's 12 bytes */
            if (coord_problem(c, j + 1, why, sizeof why))
                return ad_fail(AD_ERR_FORMAT, "path", "%s: triangle %zu of %zu: %s.", path, i + r + 1, count, why);
            for (int d = 0; d < 3; d++)
                t[i + r].v[j][d] = (float)c[d];
        }
    }
    return ad_ok();
}

/* The count triangles after the 84 bytes of header and count; the file's size was checked to match. */
static ad_status load_binary(int fd, const char *path, size_t count, ad_mesh *out)
{
    if (count == 0)
        return ad_fail(AD_ERR_FORMAT, "path", "%s: a binary STL file with no triangles (its count is 0).", path);
    if (count > (size_t)AD_STL_MAX_TRIANGLES)
        return ad_fail(AD_ERR_FORMAT, "path", "%s: %zu triangles, more than the %ld an STL file may have.", path, count,
                       (long)AD_STL_MAX_TRIANGLES);
    if (lseek(fd, STL_PREFIX_BYTES, SEEK_SET) != STL_PREFIX_BYTES)
        return ad_fail(AD_ERR_IO, "path", "%s: cannot read: %s.", path, strerror(errno));
    ad_triangle *t = malloc(count * sizeof *t);
    unsigned char *rec = malloc((size_t)STL_CHUNK_RECORDS * AD_STL_RECORD_BYTES);
    ad_status st = ad_ok();
    if (!t || !rec) st = ad_fail(AD_ERR_NO_MEMORY, "path", "%s: no memory for %zu triangles.", path, count);
    for (size_t i = 0; i < count && !st.code;) {
        size_t k = count - i < STL_CHUNK_RECORDS ? count - i : STL_CHUNK_RECORDS, got;
        st = read_exact(fd, path, rec, k * AD_STL_RECORD_BYTES, &got);
        if (!st.code && got < k * AD_STL_RECORD_BYTES)
            st = ad_fail(AD_ERR_FORMAT, "path", "%s: truncated while it was read: it ends inside triangle %zu of %zu.",
                         path, i + got / AD_STL_RECORD_BYTES + 1, count);
        if (!st.code) st = decode_records(path, rec, i, k, count, t);
        i += k;
    }
    size_t extra = 0;
    if (!st.code) st = read_exact(fd, path, rec, 1, &extra);
    if (!st.code && extra)
        st = ad_fail(AD_ERR_FORMAT, "path", "%s: grew while it was read (past its %zu triangles).", path, count);
    free(rec);
    if (st.code) {
        free(t);
        return st;
    }
    out->t = t;
    out->n = count;
    return ad_ok();
}

/* What is wrong with d[0..len) as a binary STL (it was not taken as one: its size does not match). */
static void binary_problem(const unsigned char *d, size_t len, char *buf, size_t n)
{
    if (len < STL_PREFIX_BYTES) {
        snprintf(buf, n, "%zu bytes are fewer than the %d of a binary STL's header and count", len, STL_PREFIX_BYTES);
        return;
    }
    unsigned long long count = le32(d + AD_STL_HEADER_BYTES), need = STL_PREFIX_BYTES + AD_STL_RECORD_BYTES * count;
    size_t body = len - STL_PREFIX_BYTES;
    char fits[80] = "";
    if (body % AD_STL_RECORD_BYTES == 0)
        snprintf(fits, sizeof fits, " (the size fits %zu triangles)", body / AD_STL_RECORD_BYTES);
    char where[64];
    if (body == 0)
        snprintf(where, sizeof where, "no triangle follows the header");
    else if (body % AD_STL_RECORD_BYTES)
        snprintf(where, sizeof where, "it ends inside triangle %zu", body / AD_STL_RECORD_BYTES + 1);
    else
        snprintf(where, sizeof where, "it ends after triangle %zu", body / AD_STL_RECORD_BYTES);
    if (len < need)
        snprintf(buf, n,
                 "its header's count of %llu triangles needs %llu bytes but the file has %zu: truncated (%s), or "
                 "the count is wrong%s",
                 count, need, len, where, fits);
    else
        snprintf(buf, n,
                 "its header's count of %llu triangles needs %llu bytes but the file has %zu, %llu more: the count "
                 "is wrong%s",
                 count, need, len, (unsigned long long)len - need, fits[0] ? fits : " or bytes follow the triangles");
}

/* A file that is neither: not text, and not the size of a binary STL. The message leads with the reading the
 * file most looks like: ASCII where it starts with "solid" and has only a stray non-text byte or two. */
static ad_status not_stl(const char *path, const unsigned char *d, size_t len, size_t bad)
{
    long line = 1;
    size_t line_start = 0, nontext = 0;
    for (size_t i = 0; i < bad; i++)
        if (d[i] == '\n') line++, line_start = i + 1;
    for (size_t i = 0; i < len; i++)
        nontext += !is_text(d[i]);
    char what[32], bin[240];
    if (d[bad] == 0)
        snprintf(what, sizeof what, "a NUL byte");
    else
        snprintf(what, sizeof what, "byte 0x%02x", d[bad]);
    binary_problem(d, len, bin, sizeof bin);
    if (starts_with_solid(d, len) && nontext <= 2 + len / 1000)
        return ad_fail(AD_ERR_FORMAT, "path",
                       "%s:%ld: %s at column %zu is not text, so not an ASCII STL file; nor a binary one: %s.", path,
                       line, what, bad - line_start + 1, bin);
    return ad_fail(AD_ERR_FORMAT, "path",
                   "%s: not a valid binary STL file: %s; nor an ASCII one (%s on line %ld, column %zu, is not text).",
                   path, bin, what, line, bad - line_start + 1);
}

/* ---------------------------------------------------------------- ASCII -- */

typedef struct lexer {
    const char *path;
    const char *p, *end;
    long line;
    tri_buf tris;
} lexer;

/* A run of non-space bytes; n = 0 at the end of the text. */
typedef struct token {
    const char *s;
    size_t n;
    long line;
} token;

static int next_token(lexer *lx, token *t)
{
    while (lx->p < lx->end && is_space((unsigned char)*lx->p)) {
        if (*lx->p == '\n') lx->line++;
        lx->p++;
    }
    t->s = lx->p;
    t->line = lx->line;
    while (lx->p < lx->end && !is_space((unsigned char)*lx->p))
        lx->p++;
    t->n = (size_t)(lx->p - t->s);
    return t->n > 0;
}

/* The rest of the line (a solid's name). */
static void skip_line(lexer *lx)
{
    while (lx->p < lx->end && *lx->p != '\n')
        lx->p++;
}

/* t is the keyword kw (lower case), in any case. */
static int is_kw(const token *t, const char *kw)
{
    size_t n = strlen(kw);
    if (t->n != n) return 0;
    for (size_t i = 0; i < n; i++) {
        char c = t->s[i];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != kw[i]) return 0;
    }
    return 1;
}

/* t for a message: 'vertx', long tokens cut, or "the end of the file". */
static const char *shown(const token *t, char *buf, size_t n)
{
    if (!t->n) return "the end of the file";
    if (t->n + 3 <= n)
        snprintf(buf, n, "'%.*s'", (int)t->n, t->s);
    else
        snprintf(buf, n, "'%.*s...'", (int)(n - 6), t->s);
    return buf;
}

/* The next token must be kw; facet_line: where the facet began (0: not in a facet). */
static ad_status expect(lexer *lx, const char *kw, long facet_line)
{
    token t;
    next_token(lx, &t);
    if (is_kw(&t, kw)) return ad_ok();
    char b[40], in[96] = "";
    if (facet_line)
        snprintf(in, sizeof in, " (in the facet that began on line %ld%s)", facet_line,
                 is_kw(&t, "vertex") ? "; a facet has three vertices" : "");
    return ad_fail(AD_ERR_FORMAT, "path", "%s:%ld: expected '%s', found %s%s.", lx->path, t.line, kw,
                   shown(&t, b, sizeof b), in);
}

/* The three numbers after keyword kw ('normal' or 'vertex'). */
static ad_status numbers3(lexer *lx, const token *kw, double v[3])
{
    static const char axis[3] = {'x', 'y', 'z'};
    for (int k = 0; k < 3; k++) {
        token t;
        int have = next_token(lx, &t);
        char num[128], *e = num;
        if (have && t.n < sizeof num) {
            memcpy(num, t.s, t.n);
            num[t.n] = '\0';
            v[k] = strtod(num, &e); /* takes "nan" and "inf" too: refused as coordinates by the caller */
            if (e == num + t.n) continue;
        }
        char b[40];
        if (!have || t.line != kw->line)
            return ad_fail(AD_ERR_FORMAT, "path", "%s:%ld: '%.*s' has %d number%s, expected 3 (x y z); found %s%s.",
                           lx->path, kw->line, (int)kw->n, kw->s, k, k == 1 ? "" : "s", shown(&t, b, sizeof b),
                           have ? " on the next line" : "");
        return ad_fail(AD_ERR_FORMAT, "path", "%s:%ld: expected a number (the %c after '%.*s'), found %s.", lx->path,
                       t.line, axis[k], (int)kw->n, kw->s, shown(&t, b, sizeof b));
    }
    return ad_ok();
}

/* One facet after its keyword: "normal n n n outer loop vertex x y z (x3) endloop endfacet". */
static ad_status parse_facet(lexer *lx, const token *facet)
{
    tri_buf *b = &lx->tris;
    if (b->n >= (size_t)AD_STL_MAX_TRIANGLES)
        return ad_fail(AD_ERR_FORMAT, "path", "%s:%ld: more than %ld triangles, the most an STL file may have.",
                       lx->path, facet->line, (long)AD_STL_MAX_TRIANGLES);
    if (b->n == b->cap && !tri_buf_grow(b))
        return ad_fail(AD_ERR_NO_MEMORY, "path", "%s:%ld: no memory for %zu triangles.", lx->path, facet->line,
                       b->n + 1);
    double c[3];
    AD_TRY(expect(lx, "normal", facet->line));
    token t = {"normal", 6, lx->line}; /* the keyword just read, for the numbers' messages */
    AD_TRY(numbers3(lx, &t, c));       /* ignored: the vertices' order gives the orientation */
    AD_TRY(expect(lx, "outer", facet->line));
    AD_TRY(expect(lx, "loop", facet->line));
    for (int j = 0; j < 3; j++) {
        AD_TRY(expect(lx, "vertex", facet->line));
        t.s = "vertex";
        t.line = lx->line;
        AD_TRY(numbers3(lx, &t, c));
        char why[160];
        if (coord_problem(c, j + 1, why, sizeof why))
            return ad_fail(AD_ERR_FORMAT, "path", "%s:%ld: triangle %zu: %s.", lx->path, t.line, b->n + 1, why);
        for (int d = 0; d < 3; d++)
            b->t[b->n].v[j][d] = (float)c[d];
    }
    AD_TRY(expect(lx, "endloop", facet->line));
    AD_TRY(expect(lx, "endfacet", facet->line));
    b->n++;
    return ad_ok();
}

/* Solids until the end of the text: "solid name", facets, "endsolid name". */
static ad_status parse_solids(lexer *lx)
{
    token t;
    char b[40];
    int solids = 0;
    while (next_token(lx, &t)) {
        if (!is_kw(&t, "solid"))
            return ad_fail(AD_ERR_FORMAT, "path", "%s:%ld: expected 'solid'%s, found %s.", lx->path, t.line,
                           solids ? " or the end of the file" : " (an ASCII STL file starts with it)",
                           shown(&t, b, sizeof b));
        long solid_line = t.line;
        solids++;
        skip_line(lx);
        for (;;) {
            next_token(lx, &t);
            if (is_kw(&t, "endsolid")) break;
            if (!is_kw(&t, "facet"))
                return ad_fail(AD_ERR_FORMAT, "path",
                               "%s:%ld: expected 'facet' or 'endsolid', found %s (in the solid that began on line "
                               "%ld).",
                               lx->path, t.line, shown(&t, b, sizeof b), solid_line);
            AD_TRY(parse_facet(lx, &t));
        }
        skip_line(lx);
    }
    if (!solids) return ad_fail(AD_ERR_FORMAT, "path", "%s: only white space; not an STL file.", lx->path);
    if (!lx->tris.n)
        return ad_fail(AD_ERR_FORMAT, "path", "%s:%ld: no triangles (no facet in %d solid%s).", lx->path, lx->line,
                       solids, solids == 1 ? "" : "s");
    return ad_ok();
}

static ad_status parse_ascii(const char *path, const unsigned char *d, size_t len, ad_mesh *out)
{
    lexer lx;
    memset(&lx, 0, sizeof lx);
    lx.path = path;
    lx.p = (const char *)d + bom(d, len);
    lx.end = (const char *)d + len;
    lx.line = 1;
    ad_status st = parse_solids(&lx);
    if (st.code) {
        free(lx.tris.t);
        return st;
    }
    out->t = lx.tris.t;
    out->n = lx.tris.n;
    return ad_ok();
}

/* ------------------------------------------------------------ the file -- */

/* Binary when the size matches the header's count, unless the start is the text of an ASCII file (a binary
 * record holds bytes that are not text: zeros of the attribute and the floats). */
static ad_status load_fd(int fd, const char *path, size_t size, ad_mesh *out)
{
    unsigned char head[STL_PREFIX_BYTES + AD_STL_RECORD_BYTES];
    size_t hn = size < sizeof head ? size : sizeof head, got;
    AD_TRY(read_exact(fd, path, head, hn, &got));
    if (got < hn) return ad_fail(AD_ERR_FORMAT, "path", "%s: shrank while it was read.", path);
    int text_start = not_text(head, hn) == hn && starts_with_solid(head, hn);
    if (size >= STL_PREFIX_BYTES && !text_start) {
        uint32_t count = le32(head + AD_STL_HEADER_BYTES);
        if ((uint64_t)STL_PREFIX_BYTES + (uint64_t)AD_STL_RECORD_BYTES * count == (uint64_t)size)
            return load_binary(fd, path, count, out);
    }
    unsigned char *data;
    size_t len;
    AD_TRY(read_all(fd, path, size, &data, &len));
    ad_status st;
    size_t bad = not_text(data, len);
    if (len == 0)
        st = ad_fail(AD_ERR_FORMAT, "path", "%s: empty (0 bytes); not an STL file.", path);
    else if (bad < len)
        st = not_stl(path, data, len, bad);
    else
        st = parse_ascii(path, data, len, out);
    free(data);
    return st;
}

ad_status ad_stl_load(const char *path, ad_mesh *out)
{
    if (!out) return ad_fail(AD_ERR_INVALID, "out", "ad_stl_load: no output mesh given.");
    memset(out, 0, sizeof *out);
    if (!path || !path[0]) return ad_fail(AD_ERR_INVALID, "path", "ad_stl_load: no file name given.");
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return ad_fail(AD_ERR_IO, "path", "%s: cannot open: %s.", path, strerror(errno));
    struct stat sb;
    ad_status st;
    if (fstat(fd, &sb) != 0)
        st = ad_fail(AD_ERR_IO, "path", "%s: cannot read: %s.", path, strerror(errno));
    else if (!S_ISREG(sb.st_mode))
        st = ad_fail(AD_ERR_FORMAT, "path", "%s: is %s, not a regular file; give an STL file.", path,
                     ad_file_kind(sb.st_mode));
    else if (sb.st_size > AD_STL_MAX_BYTES)
        st = ad_fail(AD_ERR_FORMAT, "path", "%s: %lld bytes, more than the %ld an STL file may have.", path,
                     (long long)sb.st_size, (long)AD_STL_MAX_BYTES);
    else if (sb.st_size == 0)
        st = ad_fail(AD_ERR_FORMAT, "path", "%s: empty (0 bytes); not an STL file.", path);
    else
        st = load_fd(fd, path, (size_t)sb.st_size, out);
    close(fd);
    if (st.code) memset(out, 0, sizeof *out);
    return st;
}
