/* The world as the core and the backends see it, and the table of functions a backend provides. */
#ifndef AD_CORE_WORLD_INTERNAL_H
#define AD_CORE_WORLD_INTERNAL_H

#include <math.h>

#include "aerodem/aerodem.h"
#include "status.h"
#include "../physics/fields.h"
#include "../physics/open3.h"
#include "../physics/params.h"
#include "../physics/segment.h"
#include "../physics/state.h"
#include "../physics/step_sums.h"
#include "../physics/bvh.h"
#include "../physics/gather3.h"
#include "leaf_tree.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Sums over a fixed block of discs. Blocks have a fixed size, independent of the
 * thread count, and are combined in block order: reductions are deterministic. */
#define AD_BLOCK 2048
/* Host copy of the static segments and their coarse grid; with the BVH broad phase
 * also a tree over them (tree_nodes holds its arrays, tree is what the gather reads). */
typedef struct ad_segments {
    ad_seg *segs;
    ad_segment *raw;
    size_t count, cap;
    uint32_t *start, *index;
    ad_seg_grid grid;
    ad_leaf_tree tree_nodes; /* its arrays (leaf_tree.h) */
    ad_seg_tree tree;
} ad_segments;

/* The body's panels (segments in 2D, triangles in 3D, in the order added) and their sums since the last
 * reset (surface.c; the backends fold each step's fixed-point sums into them: panel.h). */
typedef struct ad_panels {
    size_t count;
    ad_panel_sums *sums;
    int64_t *fix; /* the step's sums in fixed point, AD_PANEL_WORDS a panel (panel.h); zero between steps */
} ad_panels;

typedef struct ad_accel {
    float ax, ay;
} ad_accel;

typedef struct ad_accel3 {
    float ax, ay, az;
} ad_accel3;

/* 3D: the body's triangles as given and as the kernels read them, and their tree (world3.c): built
 * when triangles are added, and so again when a checkpoint's triangles are added on its load. */
typedef struct ad_triangles {
    ad_triangle *raw;
    ad_tri *tris;
    size_t count;
    ad_leaf_tree3 nodes; /* the tree's arrays (leaf_tree.h) */
    ad_tri_tree tree;    /* what the gathers walk (gather3.h) */
} ad_triangles;

/* What a world carries from step to step besides its discs for its open sides (open.h): the entries
 * owed per side, the entering discs waiting for room, and the next id. Ids count up in the order
 * discs are added or enter (the order of a step's new discs is fixed: it does not depend on the
 * backend, the broad phase or the thread count); a removed disc's id is not given again, until
 * the 32-bit count wraps after 2^32 discs. */
#define AD_WAITING_MAX 4096 /* entering discs that may wait for room at once */
typedef struct ad_open_state {
    double owed[4];        /* entries owed per side (the whole ones enter in a step) */
    uint32_t next_id;      /* the id of the next disc added or entering */
    uint32_t nwaiting;
    ad_entry *waiting;     /* AD_WAITING_MAX entries, in the order they came (2D) */
    ad_entry3 *waiting3;   /* the same in 3D (open3.h) */
    uint32_t res_boxes;    /* the reservoir's boxes (params.res_boxes) */
    double *res_state;     /* their controllers: debt and integral, 2 a box (ad_reservoir_decide) */
} ad_open_state;

/* A world's particle arrays in internal order, as a checkpoint holds them. */
typedef struct ad_snapshot {
    size_t n;
    ad_state *state;     /* 2D */
    ad_state3 *state3;   /* 3D */
    uint32_t *id;
    uint32_t *touch;     /* the contact states (panel.h); NULL: all zero */
    float *pressure, *virial;
    ad_accel *accel;     /* 2D */
    ad_accel3 *accel3;   /* 3D */
    int primed;         /* Verlet: accel holds the forces of this state */
    int owned;          /* the arrays were allocated for the snapshot: free them */
    ad_open_state open;       /* its arrays point into the world, or into open_alloc */
    ad_open_state open_alloc; /* arrays allocated for the snapshot (freed with it) */
} ad_snapshot;

/* Field sums on the host (the CPU backend adds into them directly). */
typedef struct ad_fields {
    int enabled;
    int dims;           /* the world's dimensions: the grid's cells and the sums per cell follow them */
    ad_field_def def;
    ad_field_grid grid;
    double *sums;       /* AD_FS_COUNT (3D AD_FS3_COUNT) per cell, cell-major, then the probe's as many (ad_in_probe) */
    uint64_t samples;
    ad_probe_def probe;
    uint64_t probe_samples; /* samples since the probe was set */
} ad_fields;

/* A field grid's cells in a world of `dims` dimensions: nx ny, times nz in 3D (a 2D grid's nz is ignored). */
static inline size_t ad_field_cells(const ad_field_def *d, int dims)
{
    return (size_t)d->nx * (size_t)d->ny * (dims == 3 ? (size_t)d->nz : 1u);
}

/* The doubles of a field grid's sums: its cells' and the probe's record after them. */
static inline size_t ad_field_sum_count(const ad_field_def *d, int dims)
{
    return (ad_field_cells(d, dims) + 1) * (size_t)AD_FS_COUNT_DIM(dims);
}

/* Where the probe's sums start in a world's field sums. */
static inline double *ad_field_probe_sums(const ad_fields *f)
{
    return f->sums + ad_field_cells(&f->def, f->dims) * (size_t)AD_FS_COUNT_DIM(f->dims);
}

typedef struct ad_backend_ops {
    const char *name;
    ad_status (*create)(ad_world *w);
    void (*destroy)(ad_world *w);
    ad_status (*add_particles)(ad_world *w, const ad_particle *p, size_t n); /* ids follow count (2D) */
    ad_status (*add_particles3)(ad_world *w, const ad_particle3 *p, size_t n); /* 3D */
    ad_status (*set_segments)(ad_world *w);   /* the body changed: w->seg (2D) or w->tri (3D) */
    ad_status (*step)(ad_world *w, uint64_t n);
    ad_status (*read)(const ad_world *w, int flags, size_t max, const ad_particle_out *out, size_t *count);
    ad_status (*export_state)(const ad_world *w, ad_snapshot *s);
    ad_status (*import_state)(ad_world *w, const ad_snapshot *s);
    /* device backends keep field sums on the device: copy them (NULL on the CPU) */
    ad_status (*fields_to_host)(ad_world *w);
    ad_status (*fields_to_device)(ad_world *w);
    /* device backends keep statistics on the device: bring w->stats up to date (NULL on the CPU) */
    ad_status (*pull_stats)(ad_world *w);
    size_t (*bytes_needed)(const ad_world_def *def, const ad_params *p);
    /* device backends keep the panels' sums on the device: copy them to w->panels, clear them (NULL on the CPU) */
    ad_status (*panels_to_host)(ad_world *w);
    ad_status (*panels_reset)(ad_world *w);
    /* backends over several processes (mpi): 1 for the one process that writes a shared file (a
     * checkpoint), and the writer's status given to every process (NULL: one process, it writes) */
    int (*writer)(const ad_world *w);
    ad_status (*agree)(const ad_world *w, ad_status mine);
} ad_backend_ops;

struct ad_world {
    ad_world_def def;
    ad_params params;
    const ad_backend_ops *ops;
    void *impl;            /* the backend's own state */
    void *outer;           /* a backend run inside another (GPU ranks, src/mpi/mpi_gpu.c): the outer one's
                              state; impl is the inner (CUDA) backend's */
    size_t count;          /* particles */
    ad_segments seg;       /* 2D: the body's segments */
    ad_triangles tri;      /* 3D: the body's triangles */
    ad_fields fields;
    ad_panels panels;      /* the body's panels' sums */
    ad_stats stats;        /* kept current by the backend */
    ad_dt_rule dt_rule;    /* how the next step is chosen (step_sums.h); its move is RK4's skin too */
    const volatile int *interrupt; /* stop stepping when nonzero */
    int bvh_shared_stack;  /* CUDA BVH walks: stack in shared memory instead of local (benchmarks set it) */
};

/* Checks a definition and derives the kernels' float parameters (grid included). */
ad_status ad_params_from_def(const ad_world_def *d, ad_params *p);
/* The contact time of two discs without damping, pi sqrt(m_eff / k) [s] (world_def.c). */
double ad_contact_time_undamped(const ad_world_def *d);
/* AD_ERR_INVALID naming `field` unless lo < v (lo <= v when !lo_open) and v <= hi, v finite. */
ad_status ad_check_range(const char *field, double v, double lo, int lo_open, double hi, const char *what);


/* Folds the block sums of one step of length dt into w->stats; vmax2_new: the largest speed squared
 * of discs added after the pass (entered, or added by the reservoir), which the next step must
 * resolve too. */
void ad_stats_fold(ad_world *w, const ad_step_sums *b, size_t nblocks, double dt, float vmax2_new);

/* The open sides' state: allocation (for `res_boxes` reservoir boxes; the waiting list of a world of
 * `dims` dimensions), release. */
ad_status ad_open_state_alloc(ad_open_state *o, uint32_t res_boxes, int dims);
void ad_open_state_free(ad_open_state *o);

/* A step of length dt of the free stream's entries: each open side's owed entries grow by its rate,
 * the whole ones (at most 1e9) go to owe[f]; returns their sum. Every backend's step 5 starts here. */
static inline size_t ad_open_owe(ad_open_state *o, const ad_params *P, float dt, uint32_t owe[4])
{
    size_t total = 0;
    for (int f = 0; f < 4; f++) {
        owe[f] = 0;
        if (!ad_side_open(P, f)) continue;
        o->owed[f] += P->side_rate[f] * (double)dt;
        double k = floor(o->owed[f]);
        o->owed[f] -= k;
        owe[f] = k > 1e9 ? 1000000000u : (uint32_t)k;
        total += owe[f];
    }
    return total;
}

/* 1 when the world has an open side (its disc count may change while it steps). */
static inline int ad_world_open(const ad_world *w) { return w->params.open_x || w->params.open_y; }

void ad_snapshot_free(ad_snapshot *s);

/* Gas-surface models (surface.c): a definition's surfaces at their defaults, their checks (naming the
 * field), the fraction of a surface's contacts that end diffusely; the panels' sums grown to count
 * (new ones zero) and freed. */
void ad_surface_defaults(ad_world_def *d);
/* The surfaces' float parameters of the step (params.h: diffuse fractions, thermal speeds, quanta). */
void ad_surface_params(const ad_world_def *d, ad_params *p);
ad_status ad_surfaces_check(const ad_world_def *d);
/* The first non-specular surface's field name (body_surface, wall_surface[k]), NULL when all are specular. */
const char *ad_surfaces_nonspecular(const ad_world_def *d);
double ad_surface_diffuse_fraction(const ad_surface *s);
ad_status ad_panels_resize(ad_panels *pn, size_t count);
void ad_panels_free(ad_panels *pn);
/* After a step of length dt that sampled the panels: their fixed-point sums into the totals, cleared. */
void ad_panels_fold(ad_world *w, double dt);

/* The order of `slots` slots (s, id) to read `count` discs in: *order NULL where it is slot order
 * (no removed disc among them, and by_id: the ids 0..count-1 in place), else malloc'ed: the slots
 * of the discs (removed ones left out), in slot order or by ascending id. */
ad_status ad_slot_order(const ad_state *s, const uint32_t *id, size_t slots, size_t count, int by_id, uint32_t **order);

/* Writes one particle into out's arrays at place o (those that are not NULL): its position and velocity
 * (dims floats each, into state or state3), id, pressure, virial and acceleration (dims floats). */
void ad_particle_out_put(const ad_particle_out *out, size_t o, int dims, const float *x, const float *v, uint32_t id,
                         float pressure, float virial, const float *acc);

/* A 3D world's spheres from host arrays of n slots (in slot order) into out, by id where flags say so
 * (world3.c; the CPU reads its own arrays, the GPU copies them to the host first). */
ad_status ad_read3_host(const ad_state3 *s, const uint32_t *id, const float *pressure, const float *virial,
                        const ad_accel3 *acc, size_t n, int flags, size_t max, const ad_particle_out *out,
                        size_t *count);

/* Bytes available for a new world on this host (MemAvailable). */
size_t ad_host_bytes_available(void);
void ad_format_bytes(double bytes, char *buf, size_t n);

/* For tests: the BVH of the last step (broad_phase = bvh), as built, copied into
 * caller arrays of n entries (child 2n, parent 2n): sorted codes, nodes, internal
 * boxes, the leaves' centres and ids in leaf order. */
typedef struct ad_bvh_dump {
    size_t n;
    uint32_t *code, *child, *rightmost, *parent, *id;
    ad_bvh_box *box;
    ad_state *point;
} ad_bvh_dump;
ad_status ad_cpu_bvh_dump(const ad_world *w, ad_bvh_dump *out);
#if defined(AD_HAVE_CUDA)
ad_status ad_cuda_bvh_dump(const ad_world *w, ad_bvh_dump *out);
#endif

extern const ad_backend_ops ad_cpu_backend;
#if defined(AD_HAVE_MPI)
extern const ad_backend_ops ad_mpi_backend; /* src/mpi/: the domain over MPI ranks */
int mpi_slab_edges(const ad_world *w, double *x, int max, unsigned long long *moves); /* src/mpi/mpi_balance.c */
#endif
#if defined(AD_HAVE_MPI) && defined(AD_HAVE_CUDA)
extern const ad_backend_ops ad_mpi_gpu_backend; /* src/mpi/mpi_gpu.c: backend = mpi, rank_backend = cuda */
int mpi_gpu_slab_edges(const ad_world *w, double *x, int max, unsigned long long *moves);
#endif
/* 3D worlds on the plain pipeline (src/reference/reference3.c): the CPU backend's, over threads, and the
 * reference's, on one thread. */
extern const ad_backend_ops ad_cpu3_backend;
extern const ad_backend_ops ad_reference3_backend;

/* 3D (world3.c): the fill of a 3D world, the triangles' grid's release. */
ad_status ad_world_fill3(ad_world *w, const ad_fill_def *f, size_t *added);
void ad_triangles_free(ad_triangles *t);
/* The plain reference (src/reference/reference_backend.c): the yardstick of the fast backends. */
extern const ad_backend_ops ad_reference_backend;
#if defined(AD_HAVE_CUDA)
extern const ad_backend_ops ad_cuda_backend;
extern const ad_backend_ops ad_cuda3_backend; /* 3D worlds on the GPU (src/cuda/cuda3.cu) */
int ad_cuda_device_count(void);
double ad_cuda_copy_rate(size_t bytes, int reps);
int ad_cuda_describe(char *buf, size_t n);
#endif

#ifdef __cplusplus
}
#endif
#endif
