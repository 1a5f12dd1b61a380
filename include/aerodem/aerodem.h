/* aerodem public API: a gas of equal discs (2D) or spheres (3D), DEM, advanced on the CPU or a GPU. */
#ifndef AERODEM_AERODEM_H
#define AERODEM_AERODEM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AD_VERSION_MAJOR 0
#define AD_VERSION_MINOR 1
#define AD_VERSION_PATCH 0

/* Units: SI throughout (m, kg, s, N). The library works for any consistent unit
 * system; the field comments name the SI unit each value is read in. */

/* ---------------------------------------------------------------- status -- */

typedef enum ad_code {
    AD_OK = 0,
    AD_ERR_INVALID = 1,     /* a definition field or argument is out of range */
    AD_ERR_NO_MEMORY = 2,   /* the world does not fit in host or device memory */
    AD_ERR_CAPACITY = 3,    /* more particles than the capacity given at creation */
    AD_ERR_BACKEND = 4,     /* backend unavailable or failed (CUDA error, no GPU) */
    AD_ERR_UNSTABLE = 5,    /* the state became non-finite during a step */
    AD_ERR_IO = 6,          /* a file could not be read or written */
    AD_ERR_FORMAT = 7,      /* a file is corrupt, foreign or of another version */
} ad_code;

/* Every call that can fail returns one of these. `field` names the definition
 * field or argument at fault (empty when none); `message` is a full sentence. */
typedef struct ad_status {
    ad_code code;
    char field[48];
    char message[400];
} ad_status;

/* ------------------------------------------------------------ world def -- */

typedef enum ad_boundary {
    AD_BOUNDARY_SOLID = 0,    /* two walls with spring-dashpot contacts */
    AD_BOUNDARY_PERIODIC = 1, /* the axis wraps around */
    AD_BOUNDARY_OPEN = 2,     /* the far field of a wind tunnel: a disc whose centre leaves through a side of
                                 the axis is removed, and the free stream (stream_* below) enters through it
                                 with its one-way Maxwellian flux, as kinetic theory gives it (number,
                                 velocities, entry points; counter-based, reproducible from `seed`). The
                                 number of discs then changes from step to step, within the capacity. In a
                                 gas with disc-disc contacts an entering disc waits for room where its spot
                                 is taken (src/physics/open.h). With `reservoir` the gas is also held at
                                 the free stream in a band along the open sides. */
} ad_boundary;

typedef enum ad_integrator {
    AD_INTEGRATOR_SYMPLECTIC_EULER = 0, /* v += a dt; x += v dt (default) */
    AD_INTEGRATOR_EULER = 1,            /* x += v dt; v += a dt (forward Euler) */
    AD_INTEGRATOR_VERLET = 2,           /* velocity Verlet, synchronized velocities */
    AD_INTEGRATOR_RK4 = 3,              /* classical 4-stage Runge-Kutta */
} ad_integrator;

typedef enum ad_backend {
    AD_BACKEND_AUTO = 0,      /* CUDA if a GPU is present, else CPU */
    AD_BACKEND_CPU = 1,       /* OpenMP threads, SIMD: the optimised CPU backend */
    AD_BACKEND_CUDA = 2,      /* one NVIDIA GPU */
    AD_BACKEND_REFERENCE = 3, /* one thread, the grid pipeline written plainly: the yardstick the fast
                                 backends are tested against (slow on purpose; no BVH) */
    AD_BACKEND_MPI = 4,       /* the domain decomposed over MPI ranks (ad_parallel_*): slabs of grid columns
                                 along x, a ghost layer, migration; each rank runs the plain grid pipeline
                                 (rank_backend = cuda: a GPU each, ad_world_def.rank_backend says what runs).
                                 Every call on such a world is collective (all ranks, in the same order);
                                 reads return the whole world on every rank, in a rank-independent order,
                                 and on CPU ranks its results are bit-identical for any number of ranks
                                 (2D and 3D; the grid broad phase) */
} ad_backend;

typedef enum ad_broad_phase {
    AD_BROAD_PHASE_GRID = 0, /* uniform grid, a counting sort by cell (default) */
    AD_BROAD_PHASE_BVH = 1,  /* Morton-code linear BVH (Karras 2012), rebuilt every step; suits very
                                uneven densities, where a grid has many empty or crowded cells */
} ad_broad_phase;

typedef enum ad_bvh_traversal {
    AD_BVH_GATHER = 0,    /* every disc walks the tree for its own contacts and writes only itself:
                             no atomics, deterministic (default) */
    AD_BVH_REFLEXIVE = 1, /* each pair is found once, from its lower leaf, and its force added to both
                             discs with float atomics: half the walks, not bit-reproducible; CUDA only */
} ad_bvh_traversal;

/* How a gas-surface contact ends (docs/ARCHITECTURE.md, "Gas-surface models"). While a disc overlaps a
 * surface the contact is the spring-dashpot of every model; a diffuse re-emission happens at the contact's
 * end, the first force evaluation at which the disc no longer overlaps the surface it touched. */
typedef enum ad_surface_model {
    AD_SURFACE_SPECULAR = 0, /* today's contact: the spring-dashpot with wall_restitution (default) */
    AD_SURFACE_DIFFUSE = 1,  /* re-emitted from the half-range Maxwellian at the surface temperature */
    AD_SURFACE_MAXWELL = 2,  /* diffuse with probability `accommodation`, else specular */
} ad_surface_model;

typedef struct ad_surface {
    ad_surface_model model;
    double accommodation; /* MAXWELL: the diffuse fraction, in [0, 1] (diffuse = 1, specular = 0) */
    double temperature;   /* the surface's kT/m [m^2/s^2], the unit of stream_temperature; > 0 unless specular */
} ad_surface;

/* How a world is made. Get one from ad_default_world_def(), change fields, pass
 * it to ad_world_create(). Every field lists its unit and default. */
typedef struct ad_world_def {
    uint32_t internal_cookie; /* set by ad_default_world_def(); do not touch */
    int dimensions;          /* 2 (discs in the plane, default) or 3 (spheres in a box). In 3D "disc" in these
                                comments means a sphere, areas are volumes ([1/m^3] densities), the domain has
                                a depth z_min..z_max with its own boundary, and the body is triangles
                                (ad_world_add_triangles). 3D runs on every backend, its free stream (x or y
                                open, along x and y only) and reservoir too; the BVH is 2D for now */

    size_t capacity;         /* most particles the world can hold [-]; default 65536 */
    double radius;           /* disc radius [m]; default 0.5 */
    double mass;             /* disc mass [kg]; default 1 */
    double stiffness;        /* normal spring constant k_n [N/m]; default 1e4 */
    double restitution;      /* disc-disc restitution e in (0, 1]; default 1 */
    double wall_restitution; /* disc-wall and disc-segment restitution in (0, 1]; default 1 */
    int disc_contacts;       /* 1: discs collide with each other (default); 0: only with the
                                walls and segments (free-molecular flow, for validation) */

    double x_min, x_max;     /* domain along x [m]; default 0, 100 */
    double y_min, y_max;     /* domain along y [m]; default 0, 100 */
    ad_boundary boundary_x;  /* left/right: solid walls, periodic or open; default solid */
    ad_boundary boundary_y;  /* bottom/top: solid walls, periodic or open; default solid */
    double z_min, z_max;     /* 3D: domain along z [m]; default 0, 100 (ignored in 2D) */
    ad_boundary boundary_z;  /* 3D: back/front: solid walls or periodic; default solid */
    double gravity_x;        /* uniform body acceleration [m/s^2]; default 0 */
    double gravity_y;        /* uniform body acceleration [m/s^2]; default 0 */
    double gravity_z;        /* 3D: uniform body acceleration [m/s^2]; default 0 */
    /* The free stream beyond open sides (AD_BOUNDARY_OPEN), a drifting Maxwellian: */
    double stream_vx;        /* velocity [m/s]; default 0 */
    double stream_vy;        /* velocity [m/s]; default 0 */
    double stream_temperature; /* velocity variance per component kT/m [m^2/s^2]; default 1 */
    double stream_density;   /* number density [1/m^2; 3D 1/m^3]; default 0 (a vacuum: discs only leave) */
    double reservoir;        /* width of the free-stream reservoir along each open side, inside the domain
                                [m], rounded up to whole grid cells: there every disc gets a fresh
                                free-stream velocity at the rate reservoir_rate (a thermostat with the
                                stream's drift) and boxes of cells are held at stream_density by removing and
                                adding discs at the same rate, so that a dense gas meets the free stream's
                                density, velocity, temperature and pressure at the band's inner edge
                                (src/physics/open.h). 3D: bands along the open faces of x and y through the
                                depth, boxes of cells along z too (every backend). 0 = none (default);
                                needs an open axis */
    double reservoir_inflow; /* the band's width on the sides where the stream enters [m]: the gas the band adds
                                there, all that enters the tunnel, needs room to relax; 0 = reservoir (default) */
    double reservoir_rate;   /* the reservoir's rate nu [1/s]; 0 = auto (default): 4 (|U| + sqrt(2) sigma)
                                over the band's width, so that a disc crossing it is caught about 4 times */
    uint64_t seed;           /* random stream of the open sides and the reservoir; default 1 */

    double cell_size;        /* grid cell edge [m]; 0 = one diameter (default) */
    ad_broad_phase broad_phase; /* how contacts are found: grid (default) or BVH. With the BVH the grid
                                   diagnostics (max_cell_occupancy, cell_overflow) stay 0 */
    ad_bvh_traversal bvh_traversal; /* BVH: gather (default) or reflexive */

    ad_integrator integrator; /* default AD_INTEGRATOR_SYMPLECTIC_EULER */
    int adaptive_dt;         /* 1: dt chosen every step (default); 0: dt fixed */
    double dt;               /* fixed step, or the largest adaptive step [s]; default 1e-2 */
    double max_move;         /* adaptive: most a particle may travel in a step, as a
                                fraction of the radius [-]; default 0.1, range (0, 1] */
    double contact_steps;    /* adaptive: steps per contact time pi*sqrt(m_eff/k_n) [-];
                                default 20, at least 8. A fixed dt must also resolve the
                                contact time in at least 8 steps. */

    int threads;             /* CPU worker threads; 0 (default) = up to all cores, fewer
                                while fewer steps a second come from them (cores shared
                                with other work; unless OMP_NUM_THREADS is set): the
                                results are the same bits for any count */
    int deterministic;       /* 1: bit-identical runs (default 1). The CPU backend is
                                always deterministic; on the GPU this costs a stable sort. */
    int diagnostics;         /* 1: track cell occupancy (default 1). Free on the CPU. */
    uint32_t cell_capacity;  /* occupancy above which a cell counts as overflowing [-];
                                0 = the most discs that fit in a cell without overlap (default) */
    ad_backend backend;      /* default AD_BACKEND_AUTO */

    /* Gas-surface models (default: specular, accommodation 0, temperature 1), on every backend. */
    ad_surface body_surface;    /* every body panel (segment in 2D, triangle in 3D) */
    ad_surface wall_surface[6]; /* the solid walls, AD_WALL_* order (2D uses the first 4) */

    /* backend = mpi: what each rank runs. AD_BACKEND_CPU (default): the plain grid pipeline on the rank's
     * cores, bit-identical for any number of ranks. AD_BACKEND_CUDA: one GPU per rank (the ranks of a host
     * share its GPUs in turn), the halo packed on the GPU and sent through pinned host buffers; the same
     * physics, not the same bits for every rank count (2D, grid, symplectic or Euler, closed or periodic
     * sides, specular surfaces for now). AD_BACKEND_AUTO: CUDA where this build and host have a GPU. */
    ad_backend rank_backend;
} ad_world_def;

/* A definition with every field at its default. */
ad_world_def ad_default_world_def(void);

/* Checks a definition without creating anything. */
ad_status ad_world_def_validate(const ad_world_def *def);

/* ------------------------------------------------------------ particles -- */

/* Hot particle state: position [m] and velocity [m/s]. 16 bytes. */
typedef struct ad_particle {
    float x, y, vx, vy;
} ad_particle;

/* 3D: a sphere's position [m] and velocity [m/s]. */
typedef struct ad_particle3 {
    float x, y, z, vx, vy, vz;
} ad_particle3;

/* 3D: a static triangle, its three vertices [m]; spheres collide with it. */
typedef struct ad_triangle {
    float v[3][3];
} ad_triangle;

/* A static line segment from (x0, y0) to (x1, y1) [m]; discs collide with it. */
typedef struct ad_segment {
    float x0, y0, x1, y1;
} ad_segment;

/* ----------------------------------------------------------- statistics -- */

typedef enum ad_phase {
    AD_PHASE_BIN = 0,      /* cell index per particle, counts per cell */
    AD_PHASE_SCAN = 1,     /* exclusive prefix sum of counts into start */
    AD_PHASE_SCATTER = 2,  /* slot per particle, reorder into cell order */
    AD_PHASE_INTERACT = 3, /* contacts gathered, integration, reductions */
    AD_PHASE_COUNT = 4,
} ad_phase;

/* Indices into ad_stats.wall_impulse. */
enum { AD_WALL_XMIN = 0, AD_WALL_XMAX = 1, AD_WALL_YMIN = 2, AD_WALL_YMAX = 3, AD_WALL_ZMIN = 4, AD_WALL_ZMAX = 5 };

typedef struct ad_stats {
    uint64_t step;           /* steps taken since creation */
    double time;             /* simulated time [s] */
    double dt;               /* step the next ad_world_step will take [s] */
    size_t count;            /* particles in the world */

    /* Open sides (AD_BOUNDARY_OPEN) and the reservoir, since creation. */
    uint64_t entered;        /* discs of the free stream that entered through open sides */
    uint64_t left;           /* discs removed past open sides */
    uint64_t reservoir_added;   /* discs the reservoir added (boxes below the stream's density) */
    uint64_t reservoir_removed; /* discs the reservoir removed (boxes above it) */
    uint64_t entries_lost;   /* entering discs dropped because too many were waiting for room */
    uint32_t entries_waiting; /* entering discs waiting for room at the end of the last step */

    /* Instantaneous, at the end of the last step. */
    double kinetic_energy;   /* sum m v^2 / 2 [J] */
    double potential_energy; /* elastic energy stored in springs, k delta^2 / 2 [J] */
    double momentum_x;       /* sum m vx [kg m/s] */
    double momentum_y;       /* sum m vy [kg m/s] */
    double momentum_z;       /* 3D: sum m vz [kg m/s] */
    double contact_virial;   /* sum over disc pairs of r_ij . F_ij [N m]; the virial pressure is
                                (2 KE + contact_virial) / (2 area) in 2D, / (3 volume) in 3D */
    double max_overlap;      /* largest overlap of any contact / radius [-] */
    double body_force_x;     /* force of the discs on the segments [N] */
    double body_force_y;
    double body_force_z;     /* 3D */
    double body_torque_x;    /* 3D: torque of the spheres on the triangles about the origin [N m] */
    double body_torque_y;
    double body_torque_z;

    /* Time integrals since creation: differences over an interval divided by
     * the interval give mean forces without per-step host round trips. */
    double body_impulse_x;   /* integral of body_force_x dt [N s] */
    double body_impulse_y;
    double body_impulse_z;   /* 3D */
    double body_angular_impulse_x; /* 3D: integral of body_torque dt [N m s] */
    double body_angular_impulse_y;
    double body_angular_impulse_z;
    double wall_impulse[6];  /* normal impulse of the discs on each wall [N s],
                                outward positive, AD_WALL_* order (the z walls in 3D) */
    double kinetic_energy_integral; /* integral of kinetic_energy dt [J s] */
    double contact_virial_integral; /* integral of contact_virial dt [N m s] */

    /* Grid diagnostics of the last step. */
    uint32_t max_cell_occupancy; /* largest number of discs in one cell */
    uint64_t cell_overflow;      /* discs beyond cell_capacity, summed over cells */
    uint64_t outside_grid;       /* discs whose centre lay outside the domain (clamped) */
    uint32_t cell_capacity;      /* the capacity used for cell_overflow */
    uint32_t cell_counter_bits;  /* width of a cell's counter: 8 on the CPU (a wrapped one is
                                    caught and the cells counted again in 32 bits); 8, 16 or 32
                                    on the GPU, from the cell's size (docs/ARCHITECTURE.md) */
    uint64_t skin_violations;    /* RK4: discs that moved further than the grid's skin in a
                                    step, summed over steps (contacts may have been missed) */
    uint32_t grid_nx, grid_ny, grid_nz; /* cells along x, y and z (1 in 2D) */
    double cell_size_x, cell_size_y, cell_size_z; /* actual cell edges [m] */
    int dimensions;              /* 2 or 3 */

    double phase_seconds[AD_PHASE_COUNT]; /* wall-clock time per phase since creation [s] */
    double contact_time;         /* duration of a disc-disc contact pi/omega_d [s]: with damping
                                    omega_d^2 = k_n/m_eff - (gamma/2m_eff)^2; pi*sqrt(m_eff/k_n)
                                    when elastic (src/physics/contact.h) */
    int threads;                 /* worker threads the last step ran on (CPU backend) */
    ad_backend backend;          /* the backend that runs the world */
    double panel_time;           /* simulated time since the panels' sums were reset (ad_world_reset_panels) [s] */
    int ranks;                   /* MPI ranks the world is decomposed over (1 otherwise) */
    double rank_imbalance;       /* backend = mpi: the slowest rank's busy time (its sort and its pass, the
                                    work its discs set; not the waits) over the ranks' mean, summed over
                                    the steps since creation (1 = balanced) */
} ad_stats;

/* ---------------------------------------------------------------- world -- */

typedef struct ad_world ad_world;

/* Creates a world. On failure *out is NULL and the status says why; a world
 * that does not fit in memory fails here with the number of bytes it needed. */
ad_status ad_world_create(const ad_world_def *def, ad_world **out);
void ad_world_destroy(ad_world *w);

/* Appends particles; each gets a new id (ids are unique among the world's particles and below its
 * capacity; without open sides they are 0, 1, 2, ... in the order added). */
ad_status ad_world_add_particles(ad_world *w, const ad_particle *p, size_t n);
/* The same for a 3D world's spheres (a 2D world refuses these, and a 3D world ad_world_add_particles). */
ad_status ad_world_add_particles3(ad_world *w, const ad_particle3 *p, size_t n);

/* 3D: adds static triangles (a body's surface). Each is checked (finite vertices, not degenerate:
 * refused by index and reason). Triangles that share vertices (equal coordinates) form one connected
 * surface, and a sphere touching it feels one contact, from its closest point on the whole surface
 * (face, edge or vertex), whatever the triangulation (src/physics/triangle.h). Each call labels the
 * surfaces and builds the triangle tree the contacts are found through anew over all the world's
 * triangles (on the host, O(n log n): 2.5 s for 10^6), so add a body in one call. */
ad_status ad_world_add_triangles(ad_world *w, const ad_triangle *t, size_t n);

/* Adds static segments (an outline, a plate). Segments that share end points (equal
 * coordinates) form one connected outline, and a disc touching it feels one contact, from
 * its closest point on the whole outline, whatever the panelling (src/physics/segment.h). */
ad_status ad_world_add_segments(ad_world *w, const ad_segment *s, size_t n);

/* Fills the rectangle [x0,x1]x[y0,y1] with discs at the given area fraction on a
 * jittered lattice (no overlaps, none touching a segment), with Maxwellian
 * velocities of the given temperature (kT/m [m^2/s^2] per component) around
 * (vx, vy). Reproducible from the seed. */
typedef struct ad_fill_def {
    double x0, y0, x1, y1;   /* region [m] */
    double area_fraction;    /* disc area / region area [-], (0, 0.78]; 3D: sphere volume / region volume,
                                (0, 0.5] on a jittered simple cubic lattice */
    double vx, vy;           /* mean velocity [m/s] */
    double temperature;      /* velocity variance per component kT/m [m^2/s^2] */
    uint64_t seed;           /* random stream */
    double z0, z1;           /* 3D: the region along z [m] */
    double vz;               /* 3D: mean velocity [m/s] */
} ad_fill_def;
ad_status ad_world_fill(ad_world *w, const ad_fill_def *fill, size_t *added);

/* Advances n steps. Nothing is copied to the host in between. A closed world without discs is
 * refused (AD_ERR_INVALID, field "count"): nothing would move and its clock would stand still. */
ad_status ad_world_step(ad_world *w, uint64_t n);

/* While *flag is nonzero, ad_world_step returns after the step in progress (so a
 * Ctrl-C handler can set it and the caller can checkpoint). The step that ends a call
 * writes the per-disc observables (pressure, virial, acceleration), which the other steps
 * skip: a flag set during a step that does not write them takes one step more (on the GPU,
 * the steps already queued, at most 64, run first). NULL clears it. */
void ad_world_set_interrupt(ad_world *w, const volatile int *flag);

ad_status ad_world_get_stats(const ad_world *w, ad_stats *out);

enum {
    AD_READ_BY_ID = 1, /* return particles in ascending order of id (else in internal cell order) */
};

/* Copies out up to max particles; any output pointer may be NULL.
 * pressure: sum of contact force magnitudes on the disc [N];
 * virial: the disc's half of sum_j r_ij . F_ij over its disc contacts [N m]. */
ad_status ad_world_read_particles(const ad_world *w, int flags, size_t max, ad_particle *state,
                                  uint32_t *id, float *pressure, float *virial, size_t *count);

/* Everything that can be copied out per disc; a NULL pointer skips that array. */
typedef struct ad_particle_out {
    ad_particle *state; /* position and velocity (2D) */
    uint32_t *id;
    float *pressure;    /* sum of contact force magnitudes [N] */
    float *virial;      /* the disc's half of sum_j r_ij . F_ij [N m] */
    float *accel;       /* acceleration of the last force evaluation, 2 floats a disc (3 in 3D) [m/s^2] */
    ad_particle3 *state3; /* position and velocity (3D; state is for 2D worlds) */
} ad_particle_out;
ad_status ad_world_read(const ad_world *w, int flags, size_t max, const ad_particle_out *out, size_t *count);

/* --------------------------------------------------------------- panels -- */

/* Per panel of the body (segment in 2D, triangle in 3D, in the order added), sums since the panels were
 * last reset (ad_world_reset_panels). Sampling costs the fast paths, so it starts where the panels are
 * first asked for (the first ad_world_reset_panels or ad_world_read_panels; at creation where a surface is
 * not specular): sums and panel_time count from then, and the first read of a world never sampled returns
 * zeros. Summed over all panels, impulse equals the body's impulse (ad_stats.body_impulse_*) over
 * panel_time, to rounding (docs/ARCHITECTURE.md, "Gas-surface models and panels"). */
typedef struct ad_panel_sums {
    double impulse[3]; /* time integral of the force of the gas on the panel [N s]; [2] = 0 in 2D */
    double energy;     /* energy the gas gave the panel [J]: the work of the contact forces on the
                          discs, with sign flipped, plus the energy a re-emission takes away */
    uint64_t contacts; /* contacts begun on the panel */
} ad_panel_sums;

/* Copies the sums of panels first .. first+n-1 (AD_ERR_INVALID past the body's panels). */
ad_status ad_world_read_panels(const ad_world *w, size_t first, size_t n, ad_panel_sums *out);
/* Clears every panel's sums and ad_stats.panel_time (at the start of an averaging window). */
ad_status ad_world_reset_panels(ad_world *w);

/* ---------------------------------------------------------------- fields -- */

/* Time-averaged fields on a coarse grid. The backend samples the discs every
 * `interval` steps inside ad_world_step (on the device for CUDA) and keeps sums;
 * reading divides them out. A disc counts in the cell its centre lies in.
 * 3D: the grid is a volume of nx x ny x nz cells over [x0, x1] x [y0, y1] x [z0, z1], the same
 * sampling on every backend (src/physics/fields.h). */
typedef struct ad_field_def {
    int nx, ny;               /* cells */
    double x0, y0, x1, y1;    /* extent [m] */
    uint32_t interval;        /* steps between samples, >= 1 */
    int nz;                   /* 3D: cells along z, >= 1 (refused by name, "fields.nz", below 1); ignored in 2D,
                                 where ad_world_get_fields gives 0 */
    double z0, z1;            /* 3D: the extent along z [m], z1 > z0 ("fields.z1"); ignored in 2D (0 there) */
} ad_field_def;

/* The fields. Units in 2D / 3D (ad_field_units, ad_field_units3): densities per area / per volume,
 * pressures per length / per area; the others the same in both. */
typedef enum ad_field {
    AD_FIELD_DENSITY = 0,     /* number density [1/m^2; 3D 1/m^3] (times mass: mass per area, per volume) */
    AD_FIELD_VELOCITY_X = 1,  /* mean velocity [m/s] */
    AD_FIELD_VELOCITY_Y = 2,
    AD_FIELD_TEMPERATURE = 3, /* kT = m <|v - u|^2> / 2 [J] (2 degrees of freedom); 3D: m <|v - u|^2> / 3 (3) */
    AD_FIELD_PRESSURE = 4,    /* (m sum |v - u|^2 + sum virial) / (2 A) [N/m]: kinetic + contact, over the cell's
                                 area A and the samples; 3D: / (3 V) over its volume [N/m^2] */
    AD_FIELD_ACCEL_X = 5,     /* mean acceleration [m/s^2] */
    AD_FIELD_ACCEL_Y = 6,
    AD_FIELD_CONTACT = 7,     /* mean per-disc contact force magnitude sum [N] */
    AD_FIELD_VELOCITY_Z = 8,  /* 3D: mean velocity along z [m/s]; a 2D world refuses it (AD_ERR_INVALID, "field") */
    AD_FIELD_ACCEL_Z = 9,     /* 3D: mean acceleration along z [m/s^2]; refused in 2D likewise */
    AD_FIELD_COUNT = 10,
    AD_FIELD_COUNT_2D = 8,    /* a 2D world's fields: the first eight (a loop over a 2D world's fields ends here) */
} ad_field;

/* The free stream as it reaches a body: running sums over the discs whose centres lie in a rectangle and
 * that move along a direction (v . dir > 0: the stream as it comes, not what the body throws back),
 * taken with the field samples (so after ad_world_set_fields) and kept from ad_world_set_probe on:
 * ad_world_reset_fields does not clear them (differences of two reads give an interval's means).
 * Velocities are split along dir (parallel) and across it (perpendicular, dir turned +90 degrees).
 * 3D: a box (z0, z1 added), the direction in the xy plane (the stream has no z component); a sphere has
 * two across components, e1 (dir turned +90 degrees in the xy plane) and z, and the across sums are
 * per component: v_perp sums the velocity along their diagonal (e1 + z) / sqrt 2, v_perp2 half the
 * squared across speed (the mean square of one across component), so that ad_probe_between's across
 * variance is one component's, the mean of the two (exactly so when either across mean is zero, as
 * the z one is in a tunnel's stream; otherwise off by the product of the two means). */
typedef struct ad_probe_def {
    double x0, y0, x1, y1; /* the rectangle [m] */
    double dir_x, dir_y;   /* the stream's direction (normalised when set; 0, 0 = every disc counts, along x) */
    double z0, z1;         /* 3D: the box along z [m], z1 > z0 ("probe.z1"); ignored in 2D */
} ad_probe_def;

typedef struct ad_probe_sums {
    uint64_t samples; /* field samples taken since the probe was set */
    double count;     /* discs seen, summed over the samples */
    double v_par, v_perp;   /* their velocities along and across dir, summed [m/s] (3D: across per component, above) */
    double v_par2, v_perp2; /* the squares, summed [m^2/s^2] (3D: the across square per component) */
    double area;      /* the rectangle's area [m^2]; 3D: the box's volume [m^3] */
    int directed;     /* only discs moving along the direction were counted (a direction was given) */
} ad_probe_sums;

/* Sets the probe (clears its sums); needs the field grid. */
ad_status ad_world_set_probe(ad_world *w, const ad_probe_def *def);
ad_status ad_world_read_probe(const ad_world *w, ad_probe_sums *out);

/* The free stream the probe saw between two reads (a earlier, b later), as a drifting Maxwellian: its
 * number density [1/m^2; 3D 1/m^3], its velocity along the probe's direction [m/s] and its temperature kT/m
 * [m^2/s^2]. The probe counts the discs moving along its direction, the part of a Maxwellian of velocity
 * U and variance sigma^2 with v_par > 0: a fraction Phi(U/sigma) of its density, mean velocity
 * U + sigma phi(U/sigma)/Phi(U/sigma); sigma^2 is the variance across the direction. Without a
 * direction every disc counts: the plain means (temperature from both components: the mean of the
 * variance along x and the across one, an isotropic gas's kT/m in 3D too). NaN where the probe saw no disc. */
typedef struct ad_probe_stream {
    double density, velocity, temperature;
    double samples, discs; /* field samples, and discs counted over them */
} ad_probe_stream;
ad_probe_stream ad_probe_between(const ad_probe_sums *a, const ad_probe_sums *b);

/* Sets (or replaces) the field grid and clears its sums. */
ad_status ad_world_set_fields(ad_world *w, const ad_field_def *def);
/* The field grid in use (a loaded checkpoint's, say); AD_ERR_INVALID when the world samples none. */
ad_status ad_world_get_fields(const ad_world *w, ad_field_def *out);
/* Clears the sums (after a settling period). */
ad_status ad_world_reset_fields(ad_world *w);
/* Time average of one field, nx*ny floats, row 0 at y0; NaN where no disc was seen. 3D: nx*ny*nz floats,
 * cell (i, j, k) at (k*ny + j)*nx + i, k along z from z0. A 2D world refuses the 3D fields
 * (AD_FIELD_VELOCITY_Z, AD_FIELD_ACCEL_Z). *samples receives the number of samples averaged (may be NULL). */
ad_status ad_world_read_field(const ad_world *w, ad_field which, float *out, uint64_t *samples);
const char *ad_field_name(ad_field f);
/* The units of a field in a 2D world (ad_field_units) and in a 3D one (ad_field_units3): "1/m^2" and
 * "1/m^3" for the density, "N/m" and "N/m^2" for the pressure, the others the same in both. */
const char *ad_field_units(ad_field f);
const char *ad_field_units3(ad_field f);

/* ------------------------------------------------------------ checkpoint -- */

/* Writes the whole world (definition, segments, particles in their internal order,
 * statistics, field sums) and an opaque caller block (at most 1 GiB) to a versioned file
 * with a checksum. The file is written under a temporary name of this process
 * (PATH.HOST-PID.tmp), flushed to disk and renamed, so a crash or a full disk never leaves
 * half a file and keeps the previous one; a save removes the temporary files that dead
 * processes of this host left. Resuming continues bit-identically on the same backend. */
ad_status ad_world_save(const ad_world *w, const char *path, const void *user, size_t user_bytes);

/* Recreates a saved world. `backend` and `threads` override the saved ones when
 * not AD_BACKEND_AUTO / not negative. *user (malloc'ed, may be NULL) receives the
 * caller block. A corrupt, truncated or foreign file is refused with AD_ERR_FORMAT, and so is
 * an intact one whose contents are not a sane world (every field is checked: counts against
 * the file's length, the definition as a new world's, discs inside the domain with finite
 * speeds, unique ids, the field grid, the statistics), with the field and value named. */
ad_status ad_world_load(const char *path, ad_backend backend, int threads, ad_world **out, void **user,
                        size_t *user_bytes);

/* Bytes the world's buffers take (host or device), for a definition. */
size_t ad_world_bytes_needed(const ad_world_def *def);

const char *ad_backend_name(ad_backend b);

/* ------------------------------------------------------- parallel runs (MPI) -- */
/* Runs over several processes (`mpirun -np N aerodem run scene.ini`) use backend = mpi. Without MPI at
 * build time these report one rank and ad_parallel_available() is 0. */
int ad_parallel_available(void);     /* 1 when this build has MPI */
/* backend = mpi: the slabs' edges along x, ranks + 1 of them into x (at most max), and how many times the
 * load balance moved them (*moves, may be NULL); returns the number of slabs. A world of another backend
 * is one slab, its grid's x range. 0 where w or x is NULL or max < 2. Not collective. */
int ad_world_slabs(const ad_world *w, double *x, int max, unsigned long long *moves);
int ad_parallel_launched(void);      /* 1 when an MPI launcher started this process (its environment says) */
ad_status ad_parallel_init(int *argc, char ***argv); /* MPI_Init unless done; refuses without MPI */
void ad_parallel_finalize(void);     /* MPI_Finalize where ad_parallel_init started MPI */
int ad_parallel_rank(void);          /* this process's rank, 0 without MPI or before init */
int ad_parallel_ranks(void);         /* the ranks of the job, 1 without MPI or before init */
int ad_parallel_agree(int value);    /* collective: rank 0's value on every rank (value without MPI) */
int ad_parallel_or(int bits);        /* collective: the bitwise OR of every rank's bits (bits without MPI) */
void ad_parallel_abort(int code);    /* ends every rank of the job (MPI_Abort, a caller's choice after a rank's
                                        failure the others cannot see); returns without MPI */
/* What a backend is on this machine, as text into buf (n bytes): for CUDA a line per GPU. Returns the
 * number of devices it found (the CPU: 1), 0 when it is built in but finds none, -1 when this build
 * lacks it (CUDA without nvcc at build time). */
int ad_backend_describe(ad_backend b, char *buf, size_t n);
const char *ad_integrator_name(ad_integrator i);
const char *ad_code_name(ad_code c);

#ifdef __cplusplus
}
#endif
#endif
