/* The job's processes (include/aerodem/aerodem.h, "parallel runs"): MPI's start and end, this process's
 * rank, the job's size, rank 0's choice shared, the job's abort. Built always: without MPI (AD_HAVE_MPI
 * unset) a job is this one process. */
#include <stdlib.h>

#include "aerodem/aerodem.h"
#include "../core/status.h"

#if defined(AD_HAVE_MPI)
#include <mpi.h>
#endif

#if defined(AD_HAVE_MPI)
static int started_here; /* ad_parallel_init called MPI_Init: ad_parallel_finalize ends it */
#endif

int ad_parallel_available(void)
{
#if defined(AD_HAVE_MPI)
    return 1;
#else
    return 0;
#endif
}

int ad_parallel_launched(void)
{
    static const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"};
    for (size_t k = 0; k < sizeof vars / sizeof vars[0]; k++)
        if (getenv(vars[k])) return 1;
    return 0;
}

ad_status ad_parallel_init(int *argc, char ***argv)
{
#if defined(AD_HAVE_MPI)
    int on = 0;
    MPI_Initialized(&on);
    if (on) return ad_ok();
    if (MPI_Init(argc, argv) != MPI_SUCCESS)
        return ad_fail(AD_ERR_BACKEND, "mpi", "MPI_Init failed: the job's processes could not start MPI");
    started_here = 1;
    return ad_ok();
#else
    (void)argc;
    (void)argv;
    return ad_fail(AD_ERR_BACKEND, "mpi",
                   "this build of aerodem has no MPI (libopenmpi-dev was not found at build time): it runs as one "
                   "process; install libopenmpi-dev and openmpi-bin and build again for mpirun");
#endif
}

void ad_parallel_finalize(void)
{
#if defined(AD_HAVE_MPI)
    int done = 0;
    MPI_Finalized(&done);
    if (started_here && !done) MPI_Finalize();
    started_here = 0;
#endif
}

#if defined(AD_HAVE_MPI)
static int mpi_on(void)
{
    int on = 0, done = 0;
    MPI_Initialized(&on);
    MPI_Finalized(&done);
    return on && !done;
}
#endif

int ad_parallel_rank(void)
{
#if defined(AD_HAVE_MPI)
    int r = 0;
    if (mpi_on()) MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
#else
    return 0;
#endif
}

int ad_parallel_ranks(void)
{
#if defined(AD_HAVE_MPI)
    int n = 1;
    if (mpi_on()) MPI_Comm_size(MPI_COMM_WORLD, &n);
    return n;
#else
    return 1;
#endif
}

int ad_parallel_agree(int value)
{
#if defined(AD_HAVE_MPI)
    if (mpi_on()) MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD);
#endif
    return value;
}

int ad_parallel_or(int bits)
{
#if defined(AD_HAVE_MPI)
    if (mpi_on()) {
        int all = 0;
        MPI_Allreduce(&bits, &all, 1, MPI_INT, MPI_BOR, MPI_COMM_WORLD);
        return all;
    }
#endif
    return bits;
}

void ad_parallel_abort(int code)
{
#if defined(AD_HAVE_MPI)
    if (mpi_on()) MPI_Abort(MPI_COMM_WORLD, code);
#else
    (void)code;
#endif
}
