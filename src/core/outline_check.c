/* The outline check: sizes, finite points, zero-length edges, and no self-crossing.
 *
 * Self-crossing is the costly part. Testing every pair of edges is O(n^2): 2 s at 20 000 points, and the sweep
 * that only paired edges whose x extents overlap was no better on outlines whose edges all overlap in x (a comb, a
 * spiral) or that cross everywhere (random points). The check here is the Shamos-Hoey sweep, O(n log n) for
 * any outline: edges enter a tree ordered by height at the sweep line at their left end and leave it at their
 * right end, and only edges that become neighbours in the tree are tested. Before the first meeting point the
 * edges in the tree do not cross, so their order is consistent and the two edges that meet there are neighbours
 * in the tree just before it: some meeting pair is always tested. The pair test is the reference's, so a
 * reported crossing is one the reference sees; ad_outline_check_reference keeps the plain pair loop for tests.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "outline_internal.h"
#include "world_internal.h"

static double orient(double ax, double ay, double bx, double by, double cx, double cy)
{
    return (bx - ax) * (cy - ay) - (by - ay) * (cx - ax);
}

static int sgn(double v)
{
    return (v > 0) - (v < 0);
}

/* c lies within the bounding box of a-b (used only when a, b, c are collinear) */
static int within(double ax, double ay, double bx, double by, double cx, double cy)
{
    return fmin(ax, bx) <= cx && cx <= fmax(ax, bx) && fmin(ay, by) <= cy && cy <= fmax(ay, by);
}

/* Closed segments a-b and c-d share at least one point (touching counts). */
static int segments_meet(double ax, double ay, double bx, double by, double cx, double cy, double dx, double dy)
{
    int d1 = sgn(orient(cx, cy, dx, dy, ax, ay));
    int d2 = sgn(orient(cx, cy, dx, dy, bx, by));
    int d3 = sgn(orient(ax, ay, bx, by, cx, cy));
    int d4 = sgn(orient(ax, ay, bx, by, dx, dy));
    if (d1 * d2 < 0 && d3 * d4 < 0) return 1;
    if (d1 == 0 && within(cx, cy, dx, dy, ax, ay)) return 1;
    if (d2 == 0 && within(cx, cy, dx, dy, bx, by)) return 1;
    if (d3 == 0 && within(ax, ay, bx, by, cx, cy)) return 1;
    if (d4 == 0 && within(ax, ay, bx, by, dx, dy)) return 1;
    return 0;
}

/* Edges e < g meet: the one pair test both checks use, with the points in the same order. */
static int edges_meet(const ad_outline *o, size_t e, size_t g)
{
    const double *x = o->x, *y = o->y;
    size_t e1 = (e + 1) % o->n, g1 = (g + 1) % o->n;
    return segments_meet(x[e], y[e], x[e1], y[e1], x[g], y[g], x[g1], y[g1]);
}

/* Edges that share a point by construction: consecutive ones, and the last and first of a closed outline. */
static int adjacent(const ad_outline *o, size_t m, size_t e, size_t g)
{
    size_t lo = e < g ? e : g, hi = e < g ? g : e;
    return hi == lo + 1 || (o->closed && lo == 0 && hi == m - 1);
}

double ad_outline_size(const double *x, const double *y, size_t n)
{
    if (n == 0) return 0.0;
    double x0 = x[0], x1 = x[0], y0 = y[0], y1 = y[0];
    for (size_t i = 1; i < n; i++) {
        x0 = fmin(x0, x[i]);
        x1 = fmax(x1, x[i]);
        y0 = fmin(y0, y[i]);
        y1 = fmax(y1, y[i]);
    }
    return fmax(x1 - x0, y1 - y0);
}

/* Everything but the crossing test, in linear time; kind AD_CHECK_OK when the crossing test is next. */
static ad_check_result check_pre(const ad_outline *o)
{
    ad_check_result r = {AD_CHECK_OK, 0, 0};
    if ((o->n > 0 && (!o->x || !o->y)) || (o->closed != 0 && o->closed != 1)) {
        r.kind = AD_CHECK_NULL;
        return r;
    }
    size_t n = o->n;
    if (n < (o->closed ? (size_t)AD_OUTLINE_MIN_CLOSED : 2)) {
        r.kind = AD_CHECK_FEW;
        return r;
    }
    if (n > AD_OUTLINE_MAX_POINTS) {
        r.kind = AD_CHECK_MANY;
        return r;
    }
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(o->x[i]) || !isfinite(o->y[i])) {
            r.kind = AD_CHECK_NONFINITE;
            r.i = i;
            return r;
        }
    }
    const double *x = o->x, *y = o->y;
    size_t m = o->closed ? n : n - 1; /* edges */
    double min_len = AD_OUTLINE_MIN_EDGE * ad_outline_size(x, y, n);
    for (size_t e = 0; e < m; e++) {
        size_t f = (e + 1) % n;
        if (!(hypot(x[f] - x[e], y[f] - y[e]) > min_len)) {
            r.kind = AD_CHECK_SHORT;
            r.i = e;
            return r;
        }
    }
    /* Neighbouring edges share a point by construction; they only overlap if the outline folds straight back.
     * The crossing tests skip neighbours, so this is where such a fold is caught. */
    size_t joints = o->closed ? n : n - 2; /* vertices with an edge on each side */
    for (size_t e = 0; e < joints; e++) {
        size_t a = e, b = (e + 1) % n, c = (e + 2) % n;
        double cr = orient(x[a], y[a], x[b], y[b], x[c], y[c]);
        double dot = (x[b] - x[a]) * (x[c] - x[b]) + (y[b] - y[a]) * (y[c] - y[b]);
        if (cr == 0.0 && dot < 0.0) {
            r.kind = AD_CHECK_CROSS;
            r.i = e;
            r.j = (e + 1) % m;
            if (r.i > r.j) {
                size_t t = r.i;
                r.i = r.j;
                r.j = t;
            }
            return r;
        }
    }
    return r;
}

ad_check_result ad_outline_check_reference(const ad_outline *o)
{
    ad_check_result r = check_pre(o);
    if (r.kind != AD_CHECK_OK) return r;
    size_t m = o->closed ? o->n : o->n - 1;
    for (size_t e = 0; e < m; e++) {
        for (size_t g = e + 2; g < m; g++) {
            if (adjacent(o, m, e, g)) continue;
            if (edges_meet(o, e, g)) {
                r.kind = AD_CHECK_CROSS;
                r.i = e;
                r.j = g;
                return r;
            }
        }
    }
    return r;
}

/* ---------------------------------------------------------------- sweep -- */

#define SW_NIL SIZE_MAX

/* An edge in the sweep: its ends in (x, y) order, and its node in the tree (a treap: a binary search tree by
 * height with heap-ordered random priorities, expected depth O(log n) whatever the order of insertion) and in
 * the in-order list that gives its neighbours. */
typedef struct sw_edge {
    double lx, ly, rx, ry;
    size_t l, r, p, prev, next;
    uint32_t pri;
} sw_edge;

typedef struct sw_event {
    double x, y;
    size_t e;
    int leave; /* 0: the edge's left end (enters), 1: its right end (leaves) */
} sw_event;

typedef struct sweep {
    const ad_outline *o;
    size_t m, root;
    sw_edge *t;
    int found;
    size_t fi, fj;
} sweep;

/* (x, y) order: a vertical edge runs bottom to top, as if the sweep line leaned a little. At one point, edges
 * enter before any leaves, so that edges that only touch at an end are in the tree together and tested. */
static int event_cmp(const void *pa, const void *pb)
{
    const sw_event *a = pa, *b = pb;
    if (a->x != b->x) return a->x < b->x ? -1 : 1;
    if (a->y != b->y) return a->y < b->y ? -1 : 1;
    if (a->leave != b->leave) return a->leave - b->leave;
    return (a->e > b->e) - (a->e < b->e); /* qsort is not stable; the sweep should be reproducible */
}

/* Tests edges e and g (either may be SW_NIL); records the pair and returns 1 if they meet and are not
 * neighbours. */
static int sw_test(sweep *s, size_t e, size_t g)
{
    if (e == SW_NIL || g == SW_NIL || adjacent(s->o, s->m, e, g)) return 0;
    size_t lo = e < g ? e : g, hi = e < g ? g : e;
    if (!edges_meet(s->o, lo, hi)) return 0;
    s->found = 1;
    s->fi = lo;
    s->fj = hi;
    return 1;
}

/* Side of edge b (entering at its left end) against edge a in the tree: +1 above, -1 below. An end of b on a's
 * line is a tie that the other end breaks; a tie may also be a meeting, tested at once (the neighbour tests after the
 * insertion would find it too, a little later). */
static int sw_side(sweep *s, size_t a, size_t b)
{
    const sw_edge *ea = &s->t[a], *eb = &s->t[b];
    int d = sgn(orient(ea->lx, ea->ly, ea->rx, ea->ry, eb->lx, eb->ly));
    if (d != 0) return d;
    if (sw_test(s, a, b)) return 0;
    d = sgn(orient(ea->lx, ea->ly, ea->rx, ea->ry, eb->rx, eb->ry));
    if (d != 0) return d;
    return b > a ? 1 : -1; /* collinear neighbours cannot overlap (check_pre); any order will do */
}

/* Node c takes old's place under old's parent p (the root where p is SW_NIL). */
static void sw_relink(sweep *s, size_t p, size_t old, size_t c)
{
    sw_edge *t = s->t;
    if (p == SW_NIL)
        s->root = c;
    else if (t[p].l == old)
        t[p].l = c;
    else
        t[p].r = c;
}

/* Puts node x in its parent's place (one rotation), keeping the in-order sequence. */
static void sw_rotate_up(sweep *s, size_t x)
{
    sw_edge *t = s->t;
    size_t p = t[x].p, g = t[p].p;
    if (t[p].l == x) {
        t[p].l = t[x].r;
        if (t[x].r != SW_NIL) t[t[x].r].p = p;
        t[x].r = p;
    } else {
        t[p].r = t[x].l;
        if (t[x].l != SW_NIL) t[t[x].l].p = p;
        t[x].l = p;
    }
    t[p].p = x;
    t[x].p = g;
    sw_relink(s, g, p, x);
}

/* Edge b enters; returns 1 if a meeting was found. */
static int sw_insert(sweep *s, size_t b)
{
    sw_edge *t = s->t;
    size_t cur = s->root, parent = SW_NIL, pred = SW_NIL, succ = SW_NIL;
    int went_left = 0;
    while (cur != SW_NIL) {
        int d = sw_side(s, cur, b);
        if (s->found) return 1;
        parent = cur;
        went_left = d < 0;
        if (went_left) {
            succ = cur;
            cur = t[cur].l;
        } else {
            pred = cur;
            cur = t[cur].r;
        }
    }
    t[b].l = t[b].r = SW_NIL;
    t[b].p = parent;
    if (parent == SW_NIL)
        s->root = b;
    else if (went_left)
        t[parent].l = b;
    else
        t[parent].r = b;
    t[b].prev = pred;
    t[b].next = succ;
    if (pred != SW_NIL) t[pred].next = b;
    if (succ != SW_NIL) t[succ].prev = b;
    while (t[b].p != SW_NIL && t[t[b].p].pri < t[b].pri)
        sw_rotate_up(s, b);
    return sw_test(s, b, pred) || sw_test(s, b, succ);
}

/* Edge a leaves; its two neighbours become neighbours. Returns 1 if they meet. */
static int sw_remove(sweep *s, size_t a)
{
    sw_edge *t = s->t;
    while (t[a].l != SW_NIL && t[a].r != SW_NIL)
        sw_rotate_up(s, t[t[a].l].pri > t[t[a].r].pri ? t[a].l : t[a].r);
    size_t c = t[a].l != SW_NIL ? t[a].l : t[a].r, p = t[a].p;
    if (c != SW_NIL) t[c].p = p;
    sw_relink(s, p, a, c);
    size_t pv = t[a].prev, nx = t[a].next;
    if (pv != SW_NIL) t[pv].next = nx;
    if (nx != SW_NIL) t[nx].prev = pv;
    return sw_test(s, pv, nx);
}

/* A fixed hash of the edge index: reproducible priorities that do not follow the outline's order. */
static uint32_t sw_priority(size_t e)
{
    uint64_t z = (uint64_t)e + 0x9E3779B97F4A7C15u;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return (uint32_t)((z ^ (z >> 31)) >> 32);
}

static void sw_setup(sweep *s, sw_event *ev)
{
    const double *x = s->o->x, *y = s->o->y;
    for (size_t e = 0; e < s->m; e++) {
        size_t f = (e + 1) % s->o->n;
        int fwd = x[e] < x[f] || (x[e] == x[f] && y[e] < y[f]);
        size_t a = fwd ? e : f, b = fwd ? f : e;
        s->t[e] = (sw_edge){x[a], y[a], x[b], y[b], SW_NIL, SW_NIL, SW_NIL, SW_NIL, SW_NIL, sw_priority(e)};
        ev[2 * e] = (sw_event){x[a], y[a], e, 0};
        ev[2 * e + 1] = (sw_event){x[b], y[b], e, 1};
    }
    qsort(ev, 2 * s->m, sizeof *ev, event_cmp);
}

ad_check_result ad_outline_check_core(const ad_outline *o)
{
    ad_check_result r = check_pre(o);
    if (r.kind != AD_CHECK_OK) return r;
    sweep s = {o, o->closed ? o->n : o->n - 1, SW_NIL, NULL, 0, 0, 0};
    s.t = malloc(s.m * sizeof *s.t);
    sw_event *ev = malloc(2 * s.m * sizeof *ev);
    if (!s.t || !ev) {
        free(s.t);
        free(ev);
        r.kind = AD_CHECK_NO_MEMORY;
        return r;
    }
    sw_setup(&s, ev);
    for (size_t k = 0; k < 2 * s.m; k++)
        if (ev[k].leave ? sw_remove(&s, ev[k].e) : sw_insert(&s, ev[k].e)) break;
    free(s.t);
    free(ev);
    if (s.found) {
        r.kind = AD_CHECK_CROSS;
        r.i = s.fi;
        r.j = s.fj;
    }
    return r;
}

ad_status ad_outline_check(const ad_outline *o, const char *what)
{
    const char *w = what && what[0] ? what : "outline";
    if (!o) return ad_fail(AD_ERR_INVALID, "body", "%s: no outline given.", w);
    ad_check_result r = ad_outline_check_core(o);
    size_t n = o->n;
    switch (r.kind) {
    case AD_CHECK_OK:
        return ad_ok();
    case AD_CHECK_NULL:
        return ad_fail(AD_ERR_INVALID, "body",
                       "%s: the outline has no point arrays or its closed flag is %d, not 0 or 1.", w, o->closed);
    case AD_CHECK_FEW:
        return ad_fail(AD_ERR_INVALID, "body", "%s: %s outline has %zu points, at least %d are needed.", w,
                       o->closed ? "a closed" : "an open", n, o->closed ? AD_OUTLINE_MIN_CLOSED : 2);
    case AD_CHECK_MANY:
        return ad_fail(AD_ERR_INVALID, "body", "%s: the outline has %zu points, more than the %d an outline may have.",
                       w, n, AD_OUTLINE_MAX_POINTS);
    case AD_CHECK_NONFINITE:
        return ad_fail(AD_ERR_INVALID, "body", "%s: point %zu is not finite (%g, %g).", w, r.i, o->x[r.i], o->y[r.i]);
    case AD_CHECK_SHORT:
        return ad_fail(AD_ERR_INVALID, "body", "%s: the edge from point %zu (%.9g, %.9g) to point %zu has zero length.",
                       w, r.i, o->x[r.i], o->y[r.i], (r.i + 1) % n);
    case AD_CHECK_CROSS:
        return ad_fail(AD_ERR_INVALID, "body",
                       "%s: the outline crosses itself: the edge from point %zu to %zu meets the edge from point %zu "
                       "to %zu near (%.6g, %.6g).",
                       w, r.i, (r.i + 1) % n, r.j, (r.j + 1) % n, o->x[r.j], o->y[r.j]);
    case AD_CHECK_NO_MEMORY:
        return ad_fail(AD_ERR_NO_MEMORY, "body", "%s: no memory to check an outline of %zu points.", w, n);
    }
    return ad_fail(AD_ERR_INVALID, "body", "%s: invalid outline.", w);
}
