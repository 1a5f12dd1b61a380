/* backend = mpi: the field sums over the ranks (mpi_world.h), in both dimensions (the sample written once:
 * mpi_fields_dim.h, included for 2D and 3D). Each column group keeps its own sums over the field columns
 * its particles can reach (every field row: y, and z in 3D) and its own probe record; a sample adds a
 * group's particles in the cell order of a fresh sort; the world's sums are the groups' added in group
 * order, gathered on every rank when read (fields_to_host). A field cell's sum is so the same whichever rank holds its groups.
 * Sums loaded into the world (a checkpoint, a reset) go to the first group that covers the cell. */
#include <stdlib.h>
#include <string.h>

#include "mpi_world.h"

/* A field cell's sums (AD_FS_COUNT in 2D, AD_FS3_COUNT in 3D), and the field grid's rows (y, then z). */
#define NF AD_FS_COUNT_DIM(w->fields.dims)
static size_t field_rows(const ad_field_grid *fg) { return (size_t)fg->ny * (size_t)fg->nz; }

static size_t group_doubles(const ad_world *w, const mpi_field_group *q)
{
    return ((size_t)(q->fb - q->fa + 1) * field_rows(&w->fields.grid) + 1) * (size_t)NF;
}

void mpi_fields_free(mpi_world *m)
{
    for (int k = 0; k < MPI_GROUPS_MAX; k++) {
        free(m->fg[k].sums);
        m->fg[k].sums = NULL;
    }
    m->fg_ready = 0;
}

/* Group k's field columns: those of its columns' x range, a grid cell wider each side (a disc binned
 * in the group moved less than a cell), one field column more each side; the first and last groups
 * reach the field grid's ends. */
static void group_cover(const ad_params *P, const ad_field_grid *fg, const mpi_world *m, int k, int *fa, int *fb)
{
    double x0 = P->origin_x + (double)P->cell_x * (m->group_col[k] - 1);
    double x1 = P->origin_x + (double)P->cell_x * (m->group_col[k + 1] + 1);
    double a = (x0 - fg->x0) * fg->inv_dx - 1.0, b = (x1 - fg->x0) * fg->inv_dx + 1.0;
    int ia = a < 0.0 ? 0 : a > fg->nx - 1 ? fg->nx - 1 : (int)a;
    int ib = b < 0.0 ? 0 : b > fg->nx - 1 ? fg->nx - 1 : (int)b;
    if (k == 0) ia = 0;
    if (k == m->ngroups - 1) ib = fg->nx - 1;
    *fa = ia;
    *fb = ib;
}

size_t mpi_field_group_doubles(const ad_world *w, const mpi_world *m, int k, int *fa, int *fb)
{
    mpi_field_group q;
    group_cover(&w->params, &w->fields.grid, m, k, &q.fa, &q.fb);
    *fa = q.fa, *fb = q.fb;
    return group_doubles(w, &q);
}

/* The own groups' sums laid out for the world's field grid (all zero). */
static ad_status layout(ad_world *w, mpi_world *m)
{
    mpi_fields_free(m);
    const ad_field_grid *fg = &w->fields.grid;
    for (int k = m->g_lo; k < m->g_hi; k++) {
        mpi_field_group *q = &m->fg[k];
        group_cover(&w->params, fg, m, k, &q->fa, &q->fb);
        q->sums = calloc(group_doubles(w, q), sizeof(double));
        if (!q->sums) return ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory for the field sums of rank %d", m->rank);
    }
    m->fg_def = w->fields.def;
    m->fg_ready = 1;
    return ad_ok();
}

ad_status mpi_fields_to_device(ad_world *w)
{
    mpi_world *m = w->impl;
    if (!w->fields.enabled) return ad_ok();
    ad_status st = layout(w, m);
    AD_TRY(mpi_check(m, st));
    const ad_field_grid *fg = &w->fields.grid;
    int fa_all[MPI_GROUPS_MAX], fb_all[MPI_GROUPS_MAX];
    for (int k = 0; k < m->ngroups; k++) group_cover(&w->params, fg, m, k, &fa_all[k], &fb_all[k]);
    for (size_t fy = 0; fy < field_rows(fg); fy++)
        for (int fx = 0; fx < fg->nx; fx++) {
            int k = 0;
            while (k < m->ngroups - 1 && !(fx >= fa_all[k] && fx <= fb_all[k])) k++;
            if (k < m->g_lo || k >= m->g_hi) continue;
            mpi_field_group *q = &m->fg[k];
            const double *src = w->fields.sums + (fy * (size_t)fg->nx + (size_t)fx) * NF;
            memcpy(q->sums + (fy * (size_t)(q->fb - q->fa + 1) + (size_t)(fx - q->fa)) * NF, src,
                   NF * sizeof(double));
        }
    if (m->g_lo == 0) {
        mpi_field_group *q = &m->fg[0];
        memcpy(q->sums + group_doubles(w, q) - NF, ad_field_probe_sums(&w->fields), NF * sizeof(double));
    }
    return ad_ok();
}

ad_status mpi_fields_to_host(ad_world *w)
{
    mpi_world *m = w->impl;
    if (!w->fields.enabled) return ad_ok();
    if (!m->fg_ready) AD_TRY(mpi_fields_to_device(w));
    const ad_field_grid *fg = &w->fields.grid;
    size_t mine = 0, total = 0;
    int fa_all[MPI_GROUPS_MAX], fb_all[MPI_GROUPS_MAX];
    size_t at[MPI_GROUPS_MAX + 1];
    at[0] = 0;
    for (int k = 0; k < m->ngroups; k++) {
        group_cover(&w->params, fg, m, k, &fa_all[k], &fb_all[k]);
        mpi_field_group q = {fa_all[k], fb_all[k], NULL};
        at[k + 1] = at[k] + group_doubles(w, &q);
        if (k >= m->g_lo && k < m->g_hi) mine += group_doubles(w, &q);
    }
    total = at[m->ngroups];
    double *all = malloc((total + 1) * sizeof *all), *out = malloc((mine + 1) * sizeof *out);
    int *counts = malloc((size_t)m->ranks * sizeof *counts), *displs = malloc((size_t)m->ranks * sizeof *displs);
    ad_status st = all && out && counts && displs && total < 2147483647u
                       ? ad_ok()
                       : ad_fail(AD_ERR_NO_MEMORY, "", "out of host memory gathering %zu field sums", total);
    st = mpi_check(m, st);
    if (!st.code) {
        for (int k = m->g_lo; k < m->g_hi; k++)
            memcpy(out + at[k] - at[m->g_lo], m->fg[k].sums, (at[k + 1] - at[k]) * sizeof(double));
        for (int r = 0; r < m->ranks; r++) {
            displs[r] = (int)at[m->rank_group[r]];
            counts[r] = (int)(at[m->rank_group[r + 1]] - at[m->rank_group[r]]);
        }
        MPI_Allgatherv(out, (int)mine, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, m->comm);
        size_t cells = (size_t)fg->nx * field_rows(fg);
        memset(w->fields.sums, 0, (cells + 1) * NF * sizeof(double));
        for (int k = 0; k < m->ngroups; k++) { /* in group order */
            const double *src = all + at[k];
            int wdt = fb_all[k] - fa_all[k] + 1;
            for (size_t fy = 0; fy < field_rows(fg); fy++)
                for (int fx = fa_all[k]; fx <= fb_all[k]; fx++) {
                    double *dst = w->fields.sums + (fy * (size_t)fg->nx + (size_t)fx) * NF;
                    const double *v = src + (fy * (size_t)wdt + (size_t)(fx - fa_all[k])) * NF;
                    for (int j = 0; j < NF; j++) dst[j] += v[j];
                }
            const double *pv = src + (size_t)wdt * field_rows(fg) * NF;
            double *probe = ad_field_probe_sums(&w->fields);
            for (int j = 0; j < NF; j++) probe[j] += pv[j];
        }
    }
    free(all);
    free(out);
    free(counts);
    free(displs);
    return st;
}

#define AD_DIM 2
#include "mpi_fields_dim.h"
#undef AD_DIM
#define AD_DIM 3
#include "mpi_fields_dim.h"
#undef AD_DIM
