/* The keys of a scene file, in the order the resolved copy and the reference list them. */
#include "scene_keys.h"

#include <stddef.h>

#define OFF(f) offsetof(ad_scene, f)
#define SZ(f) sizeof(((ad_scene *)0)->f)

const key KEYS[] = {
    {"tunnel", "kind", K_ENUM, OFF(kind), 0, 0, 0, 0, 0, "", "flow|box",
     "flow: free stream from the inlet (x = 0) to the outlet (x = width); box: closed box with solid walls all "
     "round and no stream"},
    {"tunnel", "dimensions", K_INT, OFF(dimensions), 0, 2, 3, 0, 0, "", NULL,
     "2: discs in the plane (x along the stream, y across); 3: spheres in a box that also has a depth (z, the span)"},
    {"tunnel", "width", K_DOUBLE, OFF(width), 0, 0, BIG, 1, 0, "m", NULL, "length of the tunnel along the stream (x)"},
    {"tunnel", "height", K_DOUBLE, OFF(height), 0, 0, BIG, 1, 0, "m", NULL, "height of the tunnel (y)"},
    {"tunnel", "depth", K_DOUBLE, OFF(depth), 0, 0, BIG, 1, 0, "m", NULL,
     "dimensions = 3: the tunnel's extent along the span (z)"},
    {"tunnel", "walls", K_ENUM, OFF(walls), 0, 0, 0, 0, 0, "", "solid|periodic|far_field",
     "top and bottom of a flow tunnel: solid (spring-dashpot walls), periodic (an unbounded cascade) or far_field "
     "(open: gas that leaves is gone and the free stream enters, as beyond the inlet and the outlet)"},
    {"tunnel", "span_walls", K_ENUM, OFF(span_walls), 0, 0, 0, 0, 0, "", "solid|periodic",
     "dimensions = 3: the two sides along the span (z = 0 and z = depth): solid walls, or periodic (a wing that spans "
     "the tunnel is then an infinite wing, the 2D section's flow)"},
    {"tunnel", "reservoir", K_DOUBLE, OFF(reservoir), 0, 0, BIG, 0, 1, "m", NULL,
     "width of the free-stream reservoir outside each open side (inlet, outlet, far-field walls): a band where "
     "the gas is held at the free stream's density, velocity and temperature, so that a dense gas meets the "
     "free stream's pressure there (docs/ARCHITECTURE.md); 0 = none, the open sides alone; auto = none without "
     "disc-disc collisions or below area fraction 0.02, else the larger of 8 diameters and 2 mean free paths, and upstream at least the distance the stream flows in 8 (Z - 1)/Z collision times (4 at area fraction 0.3: the gas the band adds relaxes there)"},
    {"tunnel", "cell_size", K_DOUBLE, OFF(cell_size), 0, 0, BIG, 0, 0, "m", NULL,
     "contact grid cell edge; 0 = one disc diameter"},
    {"tunnel", "gravity", K_DOUBLE, OFF(gravity), 0, -BIG, BIG, 0, 0, "m/s^2", NULL,
     "uniform acceleration along -y (a settling gas); 0 = none"},
    {"tunnel", "wall_surface", K_ENUM, OFF(wall_surface), 0, 0, 0, 0, 0, "", "specular|diffuse|maxwell",
     "how discs leave the solid walls (walls = solid, span_walls = solid, a box's walls): specular (the spring-dashpot "
     "contact alone, with wall_restitution), diffuse (re-emitted at the contact's end from the half-range Maxwellian "
     "at wall_temperature) or maxwell (diffuse with probability wall_accommodation, else specular); "
     "docs/ARCHITECTURE.md"},
    {"tunnel", "wall_accommodation", K_DOUBLE, OFF(wall_accommodation), 0, 0, 1, 0, 1, "", NULL,
     "wall_surface = maxwell: the fraction of contacts that end diffuse; auto = 0 (specular), 1 (diffuse); maxwell "
     "needs it given"},
    {"tunnel", "wall_temperature", K_DOUBLE, OFF(wall_temperature), 0, 0, BIG, 1, 1, "m^2/s^2", NULL,
     "the solid walls' temperature as kT/m, the unit of gas.temperature (diffuse and maxwell walls); auto = "
     "gas.temperature (the resolved scene.ini gives the value)"},

    {"gas", "radius", K_DOUBLE, OFF(radius), 0, 0, BIG, 1, 0, "m", NULL, "disc radius"},
    {"gas", "mass", K_DOUBLE, OFF(mass), 0, 0, BIG, 1, 0, "kg", NULL, "disc mass"},
    {"gas", "stiffness", K_DOUBLE, OFF(stiffness), 0, 0, BIG, 1, 0, "N/m", NULL,
     "normal contact spring k_n; the contact time is pi*sqrt(m/(2 k_n))"},
    {"gas", "restitution", K_DOUBLE, OFF(restitution), 0, 0, 1, 1, 0, "", NULL,
     "disc-disc coefficient of restitution (1 = elastic)"},
    {"gas", "wall_restitution", K_DOUBLE, OFF(wall_restitution), 0, 0, 1, 1, 0, "", NULL,
     "restitution of discs against the body and the walls"},
    {"gas", "collisions", K_BOOL, OFF(collisions), 0, 0, 1, 0, 0, "", NULL,
     "discs collide with each other; no = free-molecular flow (only the body and the walls)"},
    {"gas", "area_fraction", K_DOUBLE, OFF(area_fraction), 0, 0, 0.7, 1, 0, "", NULL,
     "free-stream area fraction: disc area per tunnel area"},
    {"gas", "volume_fraction", K_DOUBLE, OFF(volume_fraction), 0, 0, 0.5, 1, 0, "", NULL,
     "dimensions = 3: the free stream's volume fraction, sphere volume per tunnel volume (area_fraction is 2D's)"},
    {"gas", "temperature", K_DOUBLE, OFF(temperature), 0, 0, BIG, 0, 0, "m^2/s^2", NULL,
     "free-stream temperature as kT/m, the velocity variance per component"},
    {"gas", "velocity", K_DOUBLE, OFF(velocity), 0, -BIG, BIG, 0, 0, "m/s", NULL,
     "free-stream velocity along +x; give one of velocity, speed_ratio, mach"},
    {"gas", "speed_ratio", K_DOUBLE, OFF(speed_ratio), 0, 0, BIG, 0, 0, "", NULL,
     "free stream as speed ratio S = U / sqrt(2 kT/m); 0 = not given"},
    {"gas", "mach", K_DOUBLE, OFF(mach), 0, 0, BIG, 0, 0, "", NULL,
     "free stream as Mach number M = U / sqrt(gamma kT/m) (a dilute monatomic gas: gamma = 2 in 2D, 5/3 in 3D); 0 = not given. At a "
     "finite area fraction the discs' excluded area raises the sound speed: `aerodem run` also prints the Mach "
     "number of the dense gas (at area fraction 0.3, M = 2 here is 0.99 there; in 3D the spheres' excluded volume, Carnahan-Starling)"},

    {"body", "shape", K_ENUM, OFF(shape), 0, 0, 0, 0, 0, "", "none|naca|file|plate|wedge|circle|sphere|cylinder|wing|stl",
     "the body in the stream; 2D: naca, file, plate, wedge, circle; 3D: sphere, cylinder (across the span), wing (a section extruded along the span) or stl (a triangle mesh)"},
    {"body", "naca", K_STRING, OFF(naca), SZ(naca), 0, 0, 0, 0, "", NULL,
     "shape = naca: 4 or 5 digits, e.g. 2412 or 23012"},
    {"body", "panels", K_INT, OFF(panels), 0, 8, 5000, 0, 0, "", NULL,
     "naca: points per surface, cosine spaced (dense at the leading and trailing edges); circle: panels around, "
     "uniform"},
    {"body", "trailing_edge", K_ENUM, OFF(closed_te), 0, 0, 0, 0, 0, "", "open|closed",
     "naca: the standard open trailing edge or the closed variant"},
    {"body", "file", K_STRING, OFF(file), SZ(file), 0, 0, 0, 0, "", NULL,
     "shape = file (or a wing of section = file): coordinate file in Selig or Lednicer layout (UIUC database); shape = stl: an STL file, ASCII or binary, a closed surface; relative to the scene file"},
    {"body", "chord", K_DOUBLE, OFF(chord), 0, 0, BIG, 1, 0, "m", NULL,
     "chord length (plate, wedge length, circle, sphere and cylinder diameter)"},
    {"body", "aoa", K_DOUBLE, OFF(aoa), 0, -90, 90, 0, 0, "deg", NULL,
     "angle of attack; positive raises the leading edge (nose up)"},
    {"body", "x", K_DOUBLE, OFF(x), 0, -BIG, BIG, 0, 1, "m", NULL,
     "x of the quarter-chord point (the pivot); auto = width/3"},
    {"body", "y", K_DOUBLE, OFF(y), 0, -BIG, BIG, 0, 1, "m", NULL, "y of the quarter-chord point; auto = height/2"},
    {"body", "thickness", K_DOUBLE, OFF(thickness), 0, 0, 0.5, 0, 0, "chord", NULL,
     "plate thickness as a fraction of the chord; 0 = a single line"},
    {"body", "half_angle", K_DOUBLE, OFF(half_angle), 0, 0, 80, 1, 0, "deg", NULL, "wedge half angle"},
    {"body", "section", K_ENUM, OFF(section), 0, 0, 0, 0, 0, "", "naca|file",
     "shape = wing: its section, from the naca digits (with panels and trailing_edge) or from the coordinate file"},
    {"body", "span", K_DOUBLE, OFF(span), 0, 0, BIG, 1, 1, "m", NULL,
     "wing span, cylinder length; auto = the tunnel's depth (across a periodic span: an infinite wing or cylinder)"},
    {"body", "sweep", K_DOUBLE, OFF(sweep), 0, -60, 60, 0, 0, "deg", NULL,
     "wing sweep: the leading edge runs back by span x tan(sweep) from root (z - span/2) to tip"},
    {"body", "z", K_DOUBLE, OFF(z), 0, -BIG, BIG, 0, 1, "m", NULL,
     "dimensions = 3: z of the body's pivot (the wing's mid-span quarter chord, the centre of the others); auto = depth/2"},
    {"body", "scale", K_DOUBLE, OFF(scale), 0, 0, BIG, 1, 0, "", NULL, "shape = stl: factor on the file's coordinates"},
    {"body", "rotate_x", K_DOUBLE, OFF(rotate), 0, -360, 360, 0, 0, "deg", NULL,
     "shape = stl: rotation about x (roll), first; right-handed"},
    {"body", "rotate_y", K_DOUBLE, OFF(rotate) + sizeof(double), 0, -360, 360, 0, 0, "deg", NULL,
     "shape = stl: rotation about y (yaw), second"},
    {"body", "rotate_z", K_DOUBLE, OFF(rotate) + 2 * sizeof(double), 0, -360, 360, 0, 0, "deg", NULL,
     "shape = stl: rotation about z, third; then aoa pitches the body nose up about its centre (every 3D shape)"},
    {"body", "subdivisions", K_INT, OFF(subdivisions), 0, 0, 7, 0, 0, "", NULL,
     "shape = sphere: icosphere subdivisions (20 x 4^n triangles; 3 = 1280)"},
    {"body", "ref_area", K_DOUBLE, OFF(ref_area), 0, 0, BIG, 1, 1, "m^2", NULL,
     "dimensions = 3: the coefficients' reference area; auto = span x chord (wing), the frontal area (the others)"},
    {"body", "ref_length", K_DOUBLE, OFF(ref_length), 0, 0, BIG, 1, 1, "m", NULL,
     "dimensions = 3: the pitching moment's reference length; auto = the chord (wing), the diameter (sphere, "
     "cylinder), the mesh's length along the stream (stl)"},
    {"body", "surface", K_ENUM, OFF(surface), 0, 0, 0, 0, 0, "", "specular|diffuse|maxwell",
     "how discs leave the body: specular (the spring-dashpot contact alone, with gas.wall_restitution), diffuse "
     "(re-emitted at the contact's end from the half-range Maxwellian at wall_temperature) or maxwell (diffuse with "
     "probability accommodation, else specular); docs/ARCHITECTURE.md"},
    {"body", "accommodation", K_DOUBLE, OFF(accommodation), 0, 0, 1, 0, 1, "", NULL,
     "surface = maxwell: the fraction of contacts that end diffuse; auto = 0 (specular), 1 (diffuse); maxwell needs "
     "it given"},
    {"body", "wall_temperature", K_DOUBLE, OFF(surface_temperature), 0, 0, BIG, 1, 1, "m^2/s^2", NULL,
     "the body's surface temperature as kT/m, the unit of gas.temperature (diffuse and maxwell surfaces); auto = "
     "gas.temperature (the resolved scene.ini gives the value)"},

    {"run", "steps", K_U64, OFF(steps), 0, 1, 1e15, 0, 0, "", NULL,
     "steps to run (at most 1e15: below 2^52, the clock, a double, moves at every step)"},
    {"run", "settle_steps", K_U64, OFF(settle_steps), 0, 0, 1e15, 0, 0, "", NULL,
     "steps before averages (forces, fields) start"},
    {"run", "seed", K_U64, OFF(seed), 0, 0, 18446744073709551615.0, 0, 0, "", NULL, "random stream of the fill and the inlet"},
    {"run", "backend", K_ENUM, OFF(backend), 0, 0, 0, 0, 0, "", "auto|cpu|cuda|reference|mpi",
     "auto picks CUDA when a GPU is present (mpi under mpirun -np N, N > 1); reference: the plain one-thread "
     "yardstick of the others (slow); mpi: the domain cut into slabs along the stream over the job's processes "
     "(2D and 3D; mpirun -np N aerodem run SCENE.ini)"},
    {"run", "rank_backend", K_ENUM, OFF(rank_backend), 0, 0, 0, 0, 0, "", "auto|cpu|cuda",
     "backend = mpi: what each rank runs. cpu (default): the plain pipeline on its cores, the same bits for any "
     "number of ranks; cuda: a GPU per rank (the ranks of a host share its GPUs in turn), the halo through pinned "
     "host buffers (2D, grid, symplectic or Euler; open sides, the reservoir and every surface model too); auto: "
     "cuda where a GPU is found"},
    {"run", "threads", K_INT, OFF(threads), 0, 0, 4096, 0, 0, "", NULL, "CPU threads; 0 = the cores free of other work when the run starts (all of them: then fewer while the cores are shared, measured as it runs)"},
    {"run", "integrator", K_ENUM, OFF(integrator), 0, 0, 0, 0, 0, "", "symplectic_euler|euler|verlet|rk4",
     "time integration scheme"},
    {"run", "deterministic", K_BOOL, OFF(deterministic), 0, 0, 1, 0, 0, "", NULL,
     "bit-identical runs (costs a stable sort on the GPU)"},
    {"run", "broad_phase", K_ENUM, OFF(broad_phase), 0, 0, 0, 0, 0, "", "grid|bvh",
     "how contacts are found: a uniform grid of one-diameter cells, or a Morton-code BVH rebuilt every step "
     "(for very uneven densities; docs/PERFORMANCE.md compares them)"},
    {"run", "bvh_traversal", K_ENUM, OFF(bvh_traversal), 0, 0, 0, 0, 0, "", "gather|reflexive",
     "broad_phase = bvh: gather (each disc sums its own contacts; deterministic) or reflexive (each pair once, "
     "forces added to both discs with atomics; CUDA only)"},
    {"run", "max_move", K_DOUBLE, OFF(max_move), 0, 0, 1, 1, 0, "radius", NULL,
     "adaptive step: the most a disc may travel in a step"},
    {"run", "contact_steps", K_DOUBLE, OFF(contact_steps), 0, 8, 1e9, 0, 0, "", NULL,
     "adaptive step: steps per contact time"},
    {"run", "dt_max", K_DOUBLE, OFF(dt_max), 0, 0, BIG, 1, 0, "s", NULL, "ceiling of the adaptive step"},

    {"output", "dir", K_STRING, OFF(dir), SZ(dir), 0, 0, 0, 0, "", NULL,
     "output folder (relative to the working directory), not empty; --out overrides"},
    {"output", "force_interval", K_U64, OFF(force_interval), 0, 1, 1e15, 0, 0, "steps", NULL,
     "steps between rows of forces.csv (each row is the mean over its interval)"},
    {"output", "field_interval", K_U64, OFF(field_interval), 0, 1, 1e15, 0, 0, "steps", NULL,
     "steps between field samples"},
    {"output", "field_cell", K_DOUBLE, OFF(field_cell), 0, 0, BIG, 1, 0, "m", NULL, "edge of a field grid cell"},
    {"output", "slice_x", K_DOUBLE, OFF(slice_x), 0, -BIG, BIG, 0, 1, "m", NULL,
     "dimensions = 3: x of the heat maps' plane across the stream (*_x.png); auto = the body's pivot"},
    {"output", "slice_z", K_DOUBLE, OFF(slice_z), 0, -BIG, BIG, 0, 1, "m", NULL,
     "dimensions = 3: z of the heat maps' and frames' plane along the stream (*.png, frames); auto = the body's pivot"},
    {"output", "frame_interval", K_U64, OFF(frame_interval), 0, 0, 1e15, 0, 0, "steps", NULL,
     "steps between particle frames (PNG, .vtp) and field snapshots; 0 = only at the end"},
    {"output", "checkpoint_interval", K_U64, OFF(checkpoint_interval), 0, 0, 1e15, 0, 0, "steps", NULL,
     "steps between checkpoints; 0 = only at the end, on Ctrl-C and every checkpoint_seconds"},
    {"output", "checkpoint_seconds", K_DOUBLE, OFF(checkpoint_seconds), 0, 0, 1e9, 0, 0, "s", NULL,
     "wall-clock seconds between checkpoints (a kill or a batch system's time limit loses at most this much); "
     "0 = off"},
    {"output", "png", K_BOOL, OFF(png), 0, 0, 1, 0, 0, "", NULL, "write PNG pictures"},
    {"output", "vtk", K_BOOL, OFF(vtk), 0, 0, 1, 0, 0, "", NULL, "write ParaView files (.vtp, .vti, .pvd)"},
    {"output", "video", K_BOOL, OFF(video), 0, 0, 1, 0, 0, "", NULL,
     "make a video (speed.mp4 or pressure.mp4, after frames) from the frames when ffmpeg is installed"},
    {"output", "surface", K_ENUM, OFF(surface_out), 0, 0, 0, 0, 0, "", "auto|yes|no",
     "sample the body's panels after the settling and write surface.csv, cp.png and body.vtp's cell data (Cp, Cf, "
     "Ch, contact rate); auto = yes where body.surface is not specular (its panels are sampled anyway), no for a "
     "specular body, whose sampling costs the CPU's fastest pass (about 2x the CPU time of a 2D step)"},
    {"output", "frames", K_ENUM, OFF(frame_colour), 0, 0, 0, 0, 0, "", "speed|pressure",
     "what colours the discs of the frames: their speed (one scale for the whole run, 0 to |U| + 3 sigma of the "
     "stream) or their pressure (the first frame's scale, kept)"},
};
#define NKEYS_HERE (sizeof KEYS / sizeof KEYS[0])
_Static_assert(NKEYS_HERE <= sizeof(((ad_scene *)0)->seen), "ad_scene.seen must hold a flag per key");
const size_t NKEYS = NKEYS_HERE;

