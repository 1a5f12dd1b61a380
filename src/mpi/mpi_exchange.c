/* backend = mpi: what moves between ranks (mpi_world.h): a status agreed by all ranks, and, written once
 * for both dimensions (mpi_exchange_dim.h, included for 2D and 3D), the ghost layer, the migrants, the
 * whole world gathered for a read or a checkpoint, and the rank's sort, whose cell order is the same for
 * any number of ranks. */
#include <stdlib.h>
#include <string.h>

#include "mpi_world.h"

enum { TAG_COUNT_L = 11, TAG_COUNT_R, TAG_DATA_L, TAG_DATA_R };

ad_status mpi_agree_on(MPI_Comm comm, ad_status mine)
{
    int rank, ranks;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &ranks);
    int me = mine.code ? rank : ranks, first;
    MPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, comm);
    if (first == ranks) return ad_ok();
    ad_status st = mine;
    MPI_Bcast(&st, (int)sizeof st, MPI_BYTE, first, comm);
    return st;
}

ad_status mpi_check(const mpi_world *m, ad_status mine) { return mpi_agree_on(m->comm, mine); }

/* The rank-independent order of a read: by cell (the grid's order), then id; or by id. */
static const ad_params *cmp_params;

#define AD_DIM 2
#include "mpi_exchange_dim.h"
#undef AD_DIM
#define AD_DIM 3
#include "mpi_exchange_dim.h"
#undef AD_DIM

ad_status mpi_migrate_any(ad_world *w, mpi_world *m)
{
    return m->dims == 3 ? mpi_migrate3(w, m) : mpi_migrate(w, m);
}
