/* The reference uniform grid in two or three dimensions: counting sort and stencil search (grid3.h). */
#include "grid3.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

ad_status ad_grid3_init(ad_grid3 *g)
{
    static const char axis[3] = {'x', 'y', 'z'};
    if (g->dims != 2 && g->dims != 3) return ad_fail(AD_ERR_INVALID, "dimensions", "dimensions %d: 2 or 3", g->dims);
    if (!(g->cell > 0) || !isfinite(g->cell))
        return ad_fail(AD_ERR_INVALID, "cell", "cell %g: a positive length", g->cell);
    double cells = 1;
    for (int d = 0; d < 3; d++) {
        if (d >= g->dims) {
            g->n[d] = 1;
            g->origin[d] = g->inv_cell[d] = g->len[d] = g->half[d] = 0;
            g->periodic[d] = 0;
            continue;
        }
        double len = g->hi[d] - g->lo[d];
        if (!isfinite(g->lo[d]) || !isfinite(g->hi[d]) || !(len > 0))
            return ad_fail(AD_ERR_INVALID, "domain", "the domain along %c, [%g, %g], is empty or not finite", axis[d],
                           g->lo[d], g->hi[d]);
        double k = floor(len / g->cell); /* cells at least `cell` wide, tiling the length */
        if (k < 1) k = 1;
        if (g->periodic[d] && k < 3)
            return ad_fail(AD_ERR_INVALID, "domain", "a periodic %c of %g holds %g cells of %g: at least 3 are needed",
                           axis[d], len, k, g->cell);
        cells *= k;
        if (cells > (double)(1u << 28)) return ad_fail(AD_ERR_INVALID, "cell", "more than 2^28 cells of %g", g->cell);
        g->n[d] = (int)k;
        g->origin[d] = (float)g->lo[d];
        g->inv_cell[d] = (float)(k / len);
        g->len[d] = (float)len;
        g->half[d] = (float)(0.5 * len);
    }
    ad_stencil_make(1, g->dims == 3 ? 1 : 0, &g->stencil);
    return ad_ok();
}

uint32_t ad_grid3_cells(const ad_grid3 *g) { return (uint32_t)g->n[0] * (uint32_t)g->n[1] * (uint32_t)g->n[2]; }

static void coords(const ad_grid3 *g, const float *p, int c[3])
{
    for (int d = 0; d < 3; d++) c[d] = d < g->dims ? ad_cell_coord(p[d], g->origin[d], g->inv_cell[d], g->n[d]) : 0;
}

static uint32_t index_of(const ad_grid3 *g, const int c[3])
{
    return ((uint32_t)c[2] * (uint32_t)g->n[1] + (uint32_t)c[1]) * (uint32_t)g->n[0] + (uint32_t)c[0];
}

uint32_t ad_grid3_cell_of(const ad_grid3 *g, const float *p)
{
    int c[3];
    coords(g, p, c);
    return index_of(g, c);
}

ad_status ad_grid3_sort(const ad_grid3 *g, const float *p, size_t n, uint32_t *start, uint32_t *order)
{
    uint32_t cells = ad_grid3_cells(g);
    uint32_t *cell = malloc((n + 1) * sizeof *cell), *cursor = calloc((size_t)cells + 1, sizeof *cursor);
    if (!cell || !cursor) {
        free(cell);
        free(cursor);
        return ad_fail(AD_ERR_NO_MEMORY, "", "out of memory sorting %zu points into %u cells", n, cells);
    }
    for (size_t i = 0; i < n; i++) { /* bin */
        cell[i] = ad_grid3_cell_of(g, p + 3 * i);
        cursor[cell[i]]++;
    }
    uint32_t run = 0; /* scan: the exclusive prefix sum */
    for (uint32_t c = 0; c < cells; c++) {
        uint32_t k = cursor[c];
        start[c] = cursor[c] = run;
        run += k;
    }
    start[cells] = run;
    for (size_t i = 0; i < n; i++) order[cursor[cell[i]]++] = (uint32_t)i; /* scatter, stable */
    free(cell);
    free(cursor);
    return ad_ok();
}

void ad_grid3_pairs(const ad_grid3 *g, const float *p, size_t n, const uint32_t *start, const uint32_t *order,
                    float r, void (*pair)(uint32_t i, uint32_t j, void *ctx), void *ctx)
{
    const ad_stencil *st = &g->stencil;
    for (size_t k = 0; k < n; k++) {
        uint32_t i = order[k];
        const float *a = p + 3 * i;
        int c[3], lo[2], hi[2];
        coords(g, a, c);
        int runs = ad_neighbour_runs(c[0], 1, g->n[0], g->periodic[0], lo, hi);
        for (int s = 0; s < st->rows; s++) {
            int y = ad_neighbour_row(c[1], st->dy[s], g->n[1], g->periodic[1]);
            int z = ad_neighbour_row(c[2], st->dz[s], g->n[2], g->periodic[2]);
            if (y < 0 || z < 0) continue;
            int row[3] = {0, y, z};
            uint32_t base = index_of(g, row);
            for (int q = 0; q < runs; q++)
                for (uint32_t m = start[base + (uint32_t)lo[q]]; m < start[base + (uint32_t)hi[q] + 1]; m++) {
                    uint32_t j = order[m];
                    if (j <= i) continue; /* each pair once, from its lower index */
                    const float *b = p + 3 * j;
                    float d2 = 0;
                    for (int d = 0; d < g->dims; d++) {
                        float e = ad_min_image(b[d] - a[d], g->periodic[d], g->len[d], g->half[d]);
                        d2 += e * e;
                    }
                    if (d2 < r * r) pair(i, j, ctx);
                }
        }
    }
}
