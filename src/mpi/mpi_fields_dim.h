/* backend = mpi in one dimension (included by mpi_fields.c with AD_DIM 2, then 3; see physics/dim.h): a
 * field sample over the rank's column groups (mpi_fields.c says how), written once for discs and spheres.
 * No include guard: it is meant to be included once a dimension. */
#include "../physics/dim.h"

#if AD_DIM == 2
#define MPI_WHAT "discs"
#else
#define MPI_WHAT "spheres"
#endif

/* One sample: the rank's particles, sorted afresh (every cell by id), group by group, row by row. */
ad_status AD_D(mpi_fields_sample)(ad_world *w, mpi_world *m)
{
    ad_fields *f = &w->fields;
    if (!m->fg_ready || memcmp(&m->fg_def, &f->def, sizeof f->def)) AD_TRY(mpi_check(m, mpi_fields_to_device(w)));
    AD_D(mpi_sort)(w, m);
    const ad_params *P = &w->params;
    const AD_D(ad_plain) *g = &m->AD_D(g);
    uint64_t lost = 0;
    for (int k = m->g_lo; k < m->g_hi; k++) {
        mpi_field_group *q = &m->fg[k];
        int wdt = q->fb - q->fa + 1;
        double *probe = q->sums + (size_t)wdt * field_rows(&f->grid) * NF;
        for (int cy = 0; cy < mpi_rows(P); cy++) {
            uint32_t row = (uint32_t)cy * (uint32_t)P->nx;
            for (uint32_t s = g->start[row + (uint32_t)m->group_col[k]]; s < g->start[row + (uint32_t)m->group_col[k + 1]];
                 s++) {
                double v[AD_FS_COUNT_DIM(AD_DIM)];
                int cell = AD_D(ad_plain_sample_slot)(&f->grid, g, s, probe, v);
                if (cell < 0) continue;
                int fx = cell % f->grid.nx, fy = cell / f->grid.nx;
                if (fx < q->fa || fx > q->fb) {
                    lost++;
                    continue;
                }
                double *dst = q->sums + ((size_t)fy * (size_t)wdt + (size_t)(fx - q->fa)) * NF;
                for (int j = 0; j < NF; j++) dst[j] += v[j];
            }
        }
    }
    f->samples++;
    if (f->grid.probe) f->probe_samples++;
    ad_status st = lost ? ad_fail(AD_ERR_BACKEND, "fields",
                                  "rank %d: %llu " MPI_WHAT " fell outside their column group's field columns (an internal "
                                  "error of backend = mpi)",
                                  m->rank, (unsigned long long)lost)
                        : ad_ok();
    return mpi_check(m, st);
}

#undef MPI_WHAT
#include "../physics/dim_end.h"
