/* What the tests under mpirun share (test_mpi_world.c, test_mpi_gpu.c): a failed check ends the whole job
 * with the failing rank's message (MPI_Abort: a rank that returned would leave the others waiting), and the
 * FNV-1a fingerprint of bytes. The including file defines `rank` (this process's) before it. */
#ifndef AD_TESTS_MPI_TEST_CHECKS_H
#define AD_TESTS_MPI_TEST_CHECKS_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "rank %d: FAIL %s:%d: ", rank, __FILE__, __LINE__);                                       \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fprintf(stderr, "\n");                                                                                     \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                                              \
        }                                                                                                              \
    } while (0)

#define OK(expr)                                                                                                       \
    do {                                                                                                               \
        ad_status st_ = (expr);                                                                                        \
        CHECK(st_.code == AD_OK, "%s: %s (%s)", #expr, st_.message, st_.field);                                        \
    } while (0)

static inline uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

#endif
