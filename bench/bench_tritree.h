/* bench_tritree's GPU half (bench_tritree_cuda.cu): the same queries through the triangle tree and the brute
 * force on the device, timed with CUDA events, a row each in the table and the CSV. */
#ifndef AERODEM_BENCH_TRITREE_H
#define AERODEM_BENCH_TRITREE_H

#include <stdio.h>

#include "core/world_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* q: nq queries of 6 floats (centre, velocity); host_tree: the CPU tree's forces of the first host_done. */
#ifdef AD_HAVE_CUDA
void bench_tritree_cuda(const ad_world *w, const float *q, size_t nq, const char *set, const ad_accum3 *host_tree,
                        size_t host_done, FILE *csv);
#else
static inline void bench_tritree_cuda(const ad_world *w, const float *q, size_t nq, const char *set,
                                      const ad_accum3 *host_tree, size_t host_done, FILE *csv)
{
    (void)w, (void)q, (void)nq, (void)set, (void)host_tree, (void)host_done, (void)csv;
    fprintf(stderr, "bench_tritree: --cuda: this build has no CUDA\n");
}
#endif

#ifdef __cplusplus
}
#endif

#endif
