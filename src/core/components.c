/* Connected components by shared points: the points sorted (by their coordinates, then element and
 * point), equal neighbours joined in a union-find whose roots are each component's first element. */
#include "components.h"

#include <stdlib.h>
#include <string.h>

#include "free_each.h"

typedef struct point_key {
    float c[3]; /* the coordinates; unused ones 0 */
    uint32_t el, pt;
} point_key;

static int same_point(const point_key *u, const point_key *v)
{
    return u->c[0] == v->c[0] && u->c[1] == v->c[1] && u->c[2] == v->c[2];
}

static int key_cmp(const void *a, const void *b)
{
    const point_key *u = a, *v = b;
    for (int d = 0; d < 3; d++)
        if (u->c[d] != v->c[d]) return u->c[d] < v->c[d] ? -1 : 1;
    if (u->el != v->el) return u->el < v->el ? -1 : 1;
    return (int)u->pt - (int)v->pt;
}

static uint32_t root_of(uint32_t *parent, uint32_t i)
{
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
}

ad_status ad_label_components(const float *pts, int dim, int per, size_t n, uint32_t *comp, unsigned char *shared)
{
    if (dim < 1 || dim > 3 || per < 1 || per > 3)
        return ad_fail(AD_ERR_INVALID, "", "components of elements of %d points in %d dimensions", per, dim);
    size_t np = n * (size_t)per;
    point_key *k = malloc((np + 1) * sizeof *k);
    uint32_t *parent = malloc((n + 1) * sizeof *parent), *label = malloc((n + 1) * sizeof *label);
    if (!k || !parent || !label) {
        AD_FREE_EACH(k, parent, label);
        return ad_fail(AD_ERR_NO_MEMORY, "", "out of memory ordering the points of %zu elements", n);
    }
    for (size_t i = 0; i < n; i++) {
        parent[i] = (uint32_t)i;
        for (int j = 0; j < per; j++) {
            point_key *q = &k[i * per + j];
            memset(q->c, 0, sizeof q->c);
            for (int d = 0; d < dim; d++) q->c[d] = pts[(i * per + j) * dim + d];
            q->el = (uint32_t)i;
            q->pt = (uint32_t)j;
        }
    }
    qsort(k, np, sizeof *k, key_cmp);
    if (shared) memset(shared, 0, np);
    for (size_t a = 0; a < np; a++) {
        int first = a == 0 || !same_point(&k[a], &k[a - 1]);
        int last = a + 1 == np || !same_point(&k[a], &k[a + 1]);
        if (shared && !(first && last)) shared[k[a].el * per + k[a].pt] = 1;
        if (!first) { /* the same point as the key before: one component */
            uint32_t u = root_of(parent, k[a].el), v = root_of(parent, k[a - 1].el);
            if (u != v) parent[u > v ? u : v] = u < v ? u : v;
        }
    }
    uint32_t next = 0;
    for (size_t i = 0; i < n; i++) { /* roots are each component's first element */
        uint32_t r = root_of(parent, (uint32_t)i);
        if (r == i) label[i] = next++;
        comp[i] = label[r];
    }
    AD_FREE_EACH(k, parent, label);
    return ad_ok();
}
