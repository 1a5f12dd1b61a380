/* Scene files: the INI description of a wind-tunnel run, its checks, and building a world from it. */
#ifndef AD_CORE_SCENE_H
#define AD_CORE_SCENE_H

#include <stdio.h>

#include "aerodem/aerodem.h"
#include "airfoil.h"
#include "mesh.h"

typedef enum ad_shape {
    AD_SHAPE_NONE = 0, /* an empty tunnel or box */
    AD_SHAPE_NACA,     /* NACA 4- or 5-digit generator */
    AD_SHAPE_FILE,     /* Selig or Lednicer coordinate file */
    AD_SHAPE_PLATE,
    AD_SHAPE_WEDGE,
    AD_SHAPE_CIRCLE,
    AD_SHAPE_SPHERE,   /* 3D: an icosphere */
    AD_SHAPE_CYLINDER, /* 3D: a circular cylinder across the span (axis along z) */
    AD_SHAPE_WING,     /* 3D: a 2D section (NACA or a coordinate file) extruded along the span */
    AD_SHAPE_STL,      /* 3D: a triangle mesh from an STL file */
} ad_shape;

/* Which 2D section a wing is made from. */
typedef enum { AD_SECTION_NACA = 0, AD_SECTION_FILE = 1 } ad_section;

typedef enum ad_tunnel_kind {
    AD_TUNNEL_FLOW = 0, /* inlet and outlet along x */
    AD_TUNNEL_BOX = 1,  /* closed box: solid walls all round, no stream */
} ad_tunnel_kind;

#define AD_PATH_MAX 1024

/* What colours the discs of the particle frames ([output] frames). */
typedef enum {
    AD_FRAME_SPEED = 0,    /* |v|, on one fixed scale for the run: 0 to |U| + 3 sigma of the stream */
    AD_FRAME_PRESSURE = 1, /* the sum of contact force magnitudes, on the scale of the run's first frame */
} ad_frame_colour;

/* Whether a run writes the body's surface outputs ([output] surface). */
typedef enum {
    AD_SURFACE_OUT_AUTO = 0, /* yes for a body whose surface is not specular (its panels are sampled anyway), else no */
    AD_SURFACE_OUT_YES = 1,
    AD_SURFACE_OUT_NO = 2,
} ad_surface_out;

typedef struct ad_scene {
    char source[AD_PATH_MAX];  /* the scene file, for messages and relative paths */

    /* [tunnel] */
    int kind;                  /* ad_tunnel_kind */
    int dimensions;            /* 2 (discs) or 3 (spheres) */
    double width, height;      /* m */
    double depth;              /* m, 3D: the span (z) */
    int span_walls;            /* 3D: the z sides, AD_BOUNDARY_SOLID or _PERIODIC */
    int walls;                 /* top and bottom: AD_BOUNDARY_SOLID, _PERIODIC or _OPEN (far field) */
    double reservoir;          /* m, the free-stream reservoir outside open sides; NaN = auto */
    double cell_size;          /* m, 0 = one diameter */
    double gravity;            /* m/s^2 along -y */
    int wall_surface;          /* the solid walls' gas-surface model: ad_surface_model */
    double wall_accommodation; /* their diffuse fraction (maxwell); NaN = auto */
    double wall_temperature;   /* their kT/m [m^2/s^2]; NaN = auto (the stream's temperature) */

    /* [gas] */
    double radius, mass, stiffness, restitution, wall_restitution;
    int collisions;            /* disc-disc contacts on */
    double area_fraction;
    double volume_fraction;    /* 3D: sphere volume per tunnel volume (ad_scene_fraction picks the dimension's) */
    double temperature;        /* kT/m, m^2/s^2 */
    double velocity;           /* m/s along +x; resolved from speed_ratio or mach if given */
    double speed_ratio, mach;  /* 0 = not given */

    /* [body] */
    int shape;                 /* ad_shape */
    char naca[16];
    int panels;
    int closed_te;
    char file[AD_PATH_MAX];    /* as written; resolved against the scene's folder */
    double chord, aoa, x, y;   /* m, degrees, quarter-chord position in m (NaN = default) */
    double thickness;          /* plate, fraction of chord */
    double half_angle;         /* wedge, degrees */
    int section;               /* wing: ad_section */
    double span;               /* m, wing span or cylinder length; NaN = auto (the tunnel's depth) */
    double sweep;              /* wing, degrees */
    double z;                  /* m, 3D: the body's pivot (quarter chord) or centre along the span; NaN = depth/2 */
    double scale;              /* stl: factor on the file's coordinates */
    double rotate[3];          /* stl: degrees about x, y, z (in that order, before the angle of attack) */
    int subdivisions;          /* sphere: icosphere subdivisions */
    double ref_area, ref_length; /* m^2, m: the coefficients' reference; NaN = auto */
    int surface;               /* the body's gas-surface model: ad_surface_model */
    double accommodation;      /* its diffuse fraction (maxwell); NaN = auto (specular 0, diffuse 1) */
    double surface_temperature; /* its kT/m [m^2/s^2]; NaN = auto (the stream's temperature) */

    /* [run] */
    unsigned long long steps, settle_steps, seed;
    int backend, threads, integrator, deterministic;
    int rank_backend;          /* backend = mpi: what each rank runs (ad_world_def.rank_backend) */
    int broad_phase, bvh_traversal; /* ad_broad_phase, ad_bvh_traversal */
    double max_move, contact_steps, dt_max;

    /* [output] */
    char dir[AD_PATH_MAX];
    unsigned long long force_interval, field_interval, frame_interval, checkpoint_interval;
    double field_cell;         /* m */
    double slice_x, slice_z;   /* m, 3D: where the heat maps cut the fields across the stream and along it;
                                  NaN = through the body's pivot (the middle of the tunnel without one) */
    double checkpoint_seconds; /* wall clock between checkpoints; 0 = off */
    int png, vtk, video;       /* booleans; video: 1 = make an MP4 when ffmpeg is there */
    int frame_colour;          /* ad_frame_colour: what colours the discs of the frames */
    int surface_out;           /* ad_surface_out: the body's panels sampled after the settling (surface.csv, cp.png) */

    unsigned char seen[128];    /* keys given explicitly, by key table index */
} ad_scene;

/* The keys that are fields of the world's definition, as (scene field, ad_world_def field): the
 * scene's defaults come from ad_default_world_def() through this list (each default lives once,
 * in the library), and the definition a scene makes takes them back (scene_build.c). */
#define AD_SCENE_DEF_FIELDS(X)                                                                                    \
    X(radius, radius) X(mass, mass) X(stiffness, stiffness) X(restitution, restitution)                          \
    X(wall_restitution, wall_restitution) X(collisions, disc_contacts) X(temperature, stream_temperature)        \
    X(cell_size, cell_size) X(seed, seed) X(backend, backend) X(threads, threads) X(integrator, integrator)     \
    X(deterministic, deterministic) X(broad_phase, broad_phase) X(bvh_traversal, bvh_traversal)                 \
    X(max_move, max_move) X(contact_steps, contact_steps) X(dt_max, dt)                   \
    X(rank_backend, rank_backend)

/* Defaults for every key. */
void ad_scene_defaults(ad_scene *s);

/* Parses a scene file on top of the current values. Errors name the file, the
 * line, the key and what is allowed. */
ad_status ad_scene_load(ad_scene *s, const char *path);
/* The same from text (a checkpoint's copy); `name` stands in for the file name. */
ad_status ad_scene_load_string(ad_scene *s, const char *text, const char *name);

/* One override "section.key=value", checked like a line of the file. */
ad_status ad_scene_set(ad_scene *s, const char *assignment);

/* Cross-key checks and derived values (the stream velocity from S or M), and the checks of values that
 * together would make a run meaningless: quantities the step keeps in float, a step that moves the
 * discs and resolves gravity, a fill that gives a disc (docs/SCENES.md lists them). */
ad_status ad_scene_finish(ad_scene *s);

/* The flag "given explicitly" of a key (NULL for a key that does not exist). */
unsigned char *ad_scene_seen(ad_scene *s, const char *section, const char *name);

/* The scene as INI text with every key, resolved (malloc'ed). */
char *ad_scene_to_ini(const ad_scene *s);

/* Free-stream numbers the program prints at the start. */
typedef struct ad_flow_numbers {
    double number_density;  /* 1/m^2 */
    double mass_density;    /* kg/m^2 */
    double thermal_speed;   /* sqrt(2 kT/m), m/s */
    double sound_speed;     /* sqrt(gamma kT/m), gamma = 2 (2D monatomic), m/s */
    double speed_ratio;     /* S = U / sqrt(2 kT/m) */
    double mach;            /* M = U / c */
    double compressibility; /* Z = P / (n kT) of hard discs at the area fraction (Henderson) */
    double sound_speed_dense; /* of that dense gas: c^2 = kT/m ((phi Z)' + Z^2), m/s */
    double mach_dense;      /* U over it: the Mach number the flow actually has */
    double mean_free_path;  /* 1/(sqrt(2) n d), dilute hard discs, m */
    double collision_rate;  /* collisions a disc has per second, n d sqrt(pi kT/m) chi (Henderson's contact value
                               chi = (1 - 7 phi/16)/(1 - phi)^2), 1/s */
    double knudsen;         /* mean free path / chord */
    double dynamic_pressure;/* rho U^2 / 2, N/m */
} ad_flow_numbers;
ad_flow_numbers ad_scene_flow_numbers(const ad_scene *s);

/* The body outline in world coordinates (closed: last point joins the first).
 * *n = 0 for no body. Arrays are malloc'ed. */
ad_status ad_scene_outline(const ad_scene *s, float **x, float **y, size_t *n, int *closed);

/* Where a scene's world lies: the tunnel [0, width] x [0, height], and outside its open sides the
 * free-stream reservoir (whole cells of the grid); the probe region where the run measures the free
 * stream that reaches the body. */
typedef struct ad_scene_layout {
    double x_min, x_max, y_min, y_max; /* the world's domain [m] */
    double reservoir;                  /* the reservoir's width as resolved [m]; 0 = none */
    double reservoir_inflow;           /* its width upstream, where the stream enters [m] */
    double band[4];                    /* the bands outside the tunnel at x = 0, x = width, y = 0, y = height
                                          [m], whole cells */
    double probe_x0, probe_x1, probe_y0, probe_y1; /* [m]; probe_x1 <= probe_x0: no probe */
    double z_min, z_max;               /* 3D: the world's depth [m] (0, 0 in 2D) */
    double probe_z0, probe_z1;         /* 3D: the probe's extent along the span [m] */
} ad_scene_layout;
ad_status ad_scene_layout_of(const ad_scene *s, ad_scene_layout *out);
/* The same with a 3D scene's body as the caller built it (ad_scene_body_mesh; NULL: no body's front),
 * so that a run builds its mesh once. */
ad_status ad_scene_layout_with(const ad_scene *s, const ad_mesh *body, ad_scene_layout *out);

/* The reservoir's width (scene key, or its automatic value) [m]; *inflow (may be NULL) receives its
 * width upstream. */
double ad_scene_reservoir(const ad_scene *s, double *inflow);

/* Creates the world: tunnel, reservoir, body segments, and the gas filled at the area
 * fraction with the free-stream velocity (none inside the body). */
ad_status ad_scene_build(const ad_scene *s, ad_world **out);
/* The same with a 3D scene's body as the caller built it (ad_scene_body_mesh; NULL: built here), so that a
 * run builds its mesh once (app/tunnel.c: out3_prepare's mesh). */
ad_status ad_scene_build_with(const ad_scene *s, const ad_mesh *body, ad_world **out);

/* A file named in the scene, relative to the scene file's folder (absolute paths as they are), into buf. */
void ad_scene_path(const ad_scene *s, const char *file, char *buf, size_t n);

/* The 2D outline in chord units of the scene's shape (2D shapes; a wing's section); zeroed for other shapes. */
ad_status ad_scene_section(const ad_scene *s, ad_outline *o);

/* ---- 3D (scene3.c) ---- */

/* The free stream's fraction of the tunnel the particles fill: area (2D) or volume (3D). */
double ad_scene_fraction(const ad_scene *s);
/* One particle's area (2D, pi r^2) or volume (3D, 4/3 pi r^3) [m^2 or m^3]. */
double ad_scene_particle_size(const ad_scene *s);

/* What the coefficients of a 3D body are made with: the reference area and length, and the moment's pivot. */
typedef struct ad_body_reference {
    double area;      /* m^2 */
    double length;    /* m */
    double pivot[3];  /* m: the wing's mid-span quarter chord, the other bodies' centre */
} ad_body_reference;

/* The 3D body as the world takes it, placed in the tunnel (an empty mesh for shape = none), checked
 * (a closed surface, inside the tunnel); *ref (may be NULL) receives its reference quantities. */
ad_status ad_scene_body_mesh(const ad_scene *s, ad_mesh *out, ad_body_reference *ref);

/* 3D scenes' cross-key checks (ad_scene_finish calls it). */
ad_status ad_scene_finish3(ad_scene *s);

/* ---- gas-surface models (scene_surface.c) ---- */

/* The body's and the walls' models checked, their accommodation and temperature resolved from auto
 * (ad_scene_finish calls it). */
ad_status ad_scene_finish_surfaces(ad_scene *s);
/* The scene's surfaces into the world's definition (a specular one keeps the definition's default). */
void ad_scene_surfaces_to_def(const ad_scene *s, ad_world_def *d);

/* Writes the key reference (Markdown) that docs/SCENES.md holds. */
void ad_scene_write_reference(FILE *f);

#endif
