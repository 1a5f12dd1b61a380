/* backend = mpi in one dimension (included by mpi_world.h with AD_DIM 2, then 3; see physics/dim.h): the
 * particle as the ranks send it, its buffer, and the functions written once for discs and spheres
 * (mpi_exchange_dim.h, mpi_open_dim.h, mpi_fields_dim.h): mpi_ghosts in 2D, mpi_ghosts3 in 3D. No include
 * guard: it is meant to be included once a dimension. */
#include "../physics/dim.h"

#if AD_DIM == 2
#define MPI_ACCEL ad_accel
#else
#define MPI_ACCEL ad_accel3
#endif

/* A particle as the ranks send it (ghosts, migrants, read-back): its whole per-particle state. */
typedef struct AD_D(mpi_disc) {
    AD_STATE state;
    uint32_t id, touch;
    MPI_ACCEL acc;
    float pressure, virial;
} AD_D(mpi_disc);

/* A buffer of particles grown as needed. */
typedef struct AD_D(mpi_discs) {
    AD_D(mpi_disc) *d;
    size_t n, cap;
} AD_D(mpi_discs);

/* mpi_exchange_dim.h */
ad_status AD_D(mpi_discs_reserve)(AD_D(mpi_discs) *b, size_t n);
void AD_D(mpi_discs_free)(AD_D(mpi_discs) *b);
void AD_D(mpi_disc_pack)(const AD_D(ad_plain) *g, size_t s, AD_D(mpi_disc) *d);
void AD_D(mpi_disc_append)(AD_D(ad_plain) *g, const AD_D(mpi_disc) *d);
ad_status AD_D(mpi_ghosts)(ad_world *w, mpi_world *m);
ad_status AD_D(mpi_ghost_states)(ad_world *w, mpi_world *m, AD_STATE *st); /* RK4: a stage's states of the ghosts */
ad_status AD_D(mpi_migrate)(ad_world *w, mpi_world *m);
ad_status AD_D(mpi_gather_all)(const ad_world *w, const mpi_world *m, int by_id, AD_D(mpi_discs) *all);

/* mpi_backend_dim.h: gathered particles into a read's arrays, and into a snapshot (also the GPU ranks') */
void AD_D(mpi_put_out)(const AD_D(mpi_disc) *d, size_t n, const ad_particle_out *out);
ad_status AD_D(mpi_snapshot_of)(const AD_D(mpi_disc) *d, size_t n, ad_snapshot *s);
void AD_D(mpi_sort)(ad_world *w, mpi_world *m);

/* mpi_open_dim.h */
ad_status AD_D(mpi_enter)(ad_world *w, mpi_world *m, float dt, float *vmax2);

/* mpi_fields_dim.h */
ad_status AD_D(mpi_fields_sample)(ad_world *w, mpi_world *m);

#undef MPI_ACCEL
#include "../physics/dim_end.h"
