/* Scene files: one table of keys drives parsing, checking, the resolved INI copy and the reference page. */
#include "scene.h"

#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "airfoil.h"
#include "world_internal.h"

typedef enum { K_DOUBLE, K_U64, K_INT, K_ENUM, K_BOOL, K_STRING } ktype;

typedef struct key {
    const char *section, *name;
    ktype type;
    size_t offset, size;
    double min, max;   /* numbers: allowed range */
    int min_open;      /* 1: min itself is not allowed */
    int allow_auto;    /* K_DOUBLE: "auto" means NaN (chosen by the program) */
    const char *units;
    const char *choices; /* K_ENUM: names separated by '|', in value order */
    const char *doc;
} key;

#define OFF(f) offsetof(ad_scene, f)
#define SZ(f) sizeof(((ad_scene *)0)->f)
#define BIG 1e300

static const key KEYS[] = {
    {"tunnel", "kind", K_ENUM, OFF(kind), 0, 0, 0, 0, 0, "", "flow|box",
     "flow: free stream from the inlet (x = 0) to the outlet (x = width); box: closed box with solid walls all "
     "round and no stream"},
    {"tunnel", "width", K_DOUBLE, OFF(width), 0, 0, BIG, 1, 0, "m", NULL, "length of the tunnel along the stream (x)"},
    {"tunnel", "height", K_DOUBLE, OFF(height), 0, 0, BIG, 1, 0, "m", NULL, "height of the tunnel (y)"},
    {"tunnel", "walls", K_ENUM, OFF(walls), 0, 0, 0, 0, 0, "", "solid|periodic|far_field",
     "top and bottom of a flow tunnel: solid (spring-dashpot walls), periodic (an unbounded cascade) or far_field "
     "(open: gas that leaves is gone and the free stream enters, as beyond the inlet and the outlet)"},
    {"tunnel", "reservoir", K_DOUBLE, OFF(reservoir), 0, 0, BIG, 0, 1, "m", NULL,
     "width of the free-stream reservoir outside each open side (inlet, outlet, far-field walls): a band where "
     "the gas is held at the free stream's density, velocity and temperature, so that a dense gas meets the "
     "free stream's pressure there (docs/ARCHITECTURE.md); 0 = none, the open sides alone; auto = none without "
     "disc-disc collisions or below area fraction 0.02, else the larger of 8 diameters and 2 mean free paths, and upstream at least the distance the stream flows in 8 (Z - 1)/Z collision times (4 at area fraction 0.3: the gas the band adds relaxes there)"},
    {"tunnel", "cell_size", K_DOUBLE, OFF(cell_size), 0, 0, BIG, 0, 0, "m", NULL,
     "contact grid cell edge; 0 = one disc diameter"},
    {"tunnel", "gravity", K_DOUBLE, OFF(gravity), 0, -BIG, BIG, 0, 0, "m/s^2", NULL,
     "uniform acceleration along -y (a settling gas); 0 = none"},

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
    {"gas", "temperature", K_DOUBLE, OFF(temperature), 0, 0, BIG, 0, 0, "m^2/s^2", NULL,
     "free-stream temperature as kT/m, the velocity variance per component"},
    {"gas", "velocity", K_DOUBLE, OFF(velocity), 0, -BIG, BIG, 0, 0, "m/s", NULL,
     "free-stream velocity along +x; give one of velocity, speed_ratio, mach"},
    {"gas", "speed_ratio", K_DOUBLE, OFF(speed_ratio), 0, 0, BIG, 0, 0, "", NULL,
     "free stream as speed ratio S = U / sqrt(2 kT/m); 0 = not given"},
    {"gas", "mach", K_DOUBLE, OFF(mach), 0, 0, BIG, 0, 0, "", NULL,
     "free stream as Mach number M = U / sqrt(2 kT/m) (dilute 2D gas, gamma = 2); 0 = not given. At a "
     "finite area fraction the discs' excluded area raises the sound speed: `aerodem run` also prints the Mach "
     "number of the dense gas (at area fraction 0.3, M = 2 here is 0.99 there)"},

    {"body", "shape", K_ENUM, OFF(shape), 0, 0, 0, 0, 0, "", "none|naca|file|plate|wedge|circle",
     "the body in the stream"},
    {"body", "naca", K_STRING, OFF(naca), SZ(naca), 0, 0, 0, 0, "", NULL,
     "shape = naca: 4 or 5 digits, e.g. 2412 or 23012"},
    {"body", "panels", K_INT, OFF(panels), 0, 8, 5000, 0, 0, "", NULL,
     "naca: points per surface, cosine spaced (dense at the leading and trailing edges); circle: panels around, "
     "uniform"},
    {"body", "trailing_edge", K_ENUM, OFF(closed_te), 0, 0, 0, 0, 0, "", "open|closed",
     "naca: the standard open trailing edge or the closed variant"},
    {"body", "file", K_STRING, OFF(file), SZ(file), 0, 0, 0, 0, "", NULL,
     "shape = file: coordinate file in Selig or Lednicer layout (UIUC database), relative to the scene file"},
    {"body", "chord", K_DOUBLE, OFF(chord), 0, 0, BIG, 1, 0, "m", NULL,
     "chord length (plate, wedge length, circle diameter)"},
    {"body", "aoa", K_DOUBLE, OFF(aoa), 0, -90, 90, 0, 0, "deg", NULL,
     "angle of attack; positive raises the leading edge (nose up)"},
    {"body", "x", K_DOUBLE, OFF(x), 0, -BIG, BIG, 0, 1, "m", NULL,
     "x of the quarter-chord point (the pivot); auto = width/3"},
    {"body", "y", K_DOUBLE, OFF(y), 0, -BIG, BIG, 0, 1, "m", NULL, "y of the quarter-chord point; auto = height/2"},
    {"body", "thickness", K_DOUBLE, OFF(thickness), 0, 0, 0.5, 0, 0, "chord", NULL,
     "plate thickness as a fraction of the chord; 0 = a single line"},
    {"body", "half_angle", K_DOUBLE, OFF(half_angle), 0, 0, 80, 1, 0, "deg", NULL, "wedge half angle"},

    {"run", "steps", K_U64, OFF(steps), 0, 1, 1e15, 0, 0, "", NULL, "steps to run"},
    {"run", "settle_steps", K_U64, OFF(settle_steps), 0, 0, 1e15, 0, 0, "", NULL,
     "steps before averages (forces, fields) start"},
    {"run", "seed", K_U64, OFF(seed), 0, 0, 1.8e19, 0, 0, "", NULL, "random stream of the fill and the inlet"},
    {"run", "backend", K_ENUM, OFF(backend), 0, 0, 0, 0, 0, "", "auto|cpu|cuda",
     "auto picks CUDA when a GPU is present"},
    {"run", "threads", K_INT, OFF(threads), 0, 0, 4096, 0, 0, "", NULL, "CPU threads; 0 = all cores"},
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
     "output folder (relative to the working directory); --out overrides"},
    {"output", "force_interval", K_U64, OFF(force_interval), 0, 1, 1e15, 0, 0, "steps", NULL,
     "steps between rows of forces.csv (each row is the mean over its interval)"},
    {"output", "field_interval", K_U64, OFF(field_interval), 0, 1, 1e15, 0, 0, "steps", NULL,
     "steps between field samples"},
    {"output", "field_cell", K_DOUBLE, OFF(field_cell), 0, 0, BIG, 1, 0, "m", NULL, "edge of a field grid cell"},
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
     "make pressure.mp4 from the frames when ffmpeg is installed"},
};
#define NKEYS (sizeof KEYS / sizeof KEYS[0])
_Static_assert(NKEYS <= sizeof(((ad_scene *)0)->seen), "ad_scene.seen must hold a flag per key");

static const char *SECTIONS = "tunnel, gas, body, run, output";

void ad_scene_defaults(ad_scene *s)
{
    memset(s, 0, sizeof *s);
    s->kind = AD_TUNNEL_FLOW;
    s->width = 240;
    s->height = 120;
    s->walls = AD_BOUNDARY_OPEN;
    s->reservoir = NAN;
    s->radius = 0.5;
    s->mass = 1.0;
    s->stiffness = 1e4;
    s->restitution = 1.0;
    s->wall_restitution = 1.0;
    s->collisions = 1;
    s->area_fraction = 0.1;
    s->temperature = 1.0;
    s->velocity = 3.0;
    s->shape = AD_SHAPE_NACA;
    snprintf(s->naca, sizeof s->naca, "2412");
    s->panels = 60;
    s->chord = 40;
    s->aoa = 4;
    s->x = NAN;
    s->y = NAN;
    s->half_angle = 15;
    s->steps = 20000;
    s->settle_steps = 5000;
    s->seed = 1;
    s->backend = AD_BACKEND_AUTO;
    s->integrator = AD_INTEGRATOR_SYMPLECTIC_EULER;
    s->deterministic = 1;
    s->max_move = 0.1;
    s->contact_steps = 20;
    s->dt_max = 0.01;
    snprintf(s->dir, sizeof s->dir, "out");
    s->force_interval = 100;
    s->field_interval = 10;
    s->field_cell = 2.0;
    s->frame_interval = 2000;
    s->checkpoint_interval = 0;
    s->checkpoint_seconds = 300;
    s->png = 1;
    s->vtk = 1;
    s->video = 1;
}

static const key *find_key(const char *section, const char *name)
{
    for (size_t i = 0; i < NKEYS; i++)
        if (!strcasecmp(KEYS[i].section, section) && !strcasecmp(KEYS[i].name, name)) return &KEYS[i];
    return NULL;
}

static int known_section(const char *section)
{
    for (size_t i = 0; i < NKEYS; i++)
        if (!strcasecmp(KEYS[i].section, section)) return 1;
    return 0;
}

static void keys_of(const char *section, char *buf, size_t n)
{
    buf[0] = 0;
    for (size_t i = 0; i < NKEYS; i++)
        if (!strcasecmp(KEYS[i].section, section)) {
            size_t l = strlen(buf);
            snprintf(buf + l, n - l, "%s%s", l ? ", " : "", KEYS[i].name);
        }
}

/* What a key accepts, in words, for messages and the reference. */
static void allowed(const key *k, char *buf, size_t n)
{
    switch (k->type) {
    case K_ENUM: {
        char c[128];
        snprintf(c, sizeof c, "%s", k->choices);
        char list[160] = "";
        for (char *t = strtok(c, "|"); t; t = strtok(NULL, "|"))
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", list[0] ? ", " : "", t);
        snprintf(buf, n, "one of: %s", list);
        break;
    }
    case K_BOOL: snprintf(buf, n, "yes or no"); break;
    case K_STRING: snprintf(buf, n, "text"); break;
    default: {
        const char *kind = k->type == K_DOUBLE ? "a number" : "a whole number";
        char lo[32] = "", hi[32] = "";
        if (k->min > -BIG) snprintf(lo, sizeof lo, "%s %g", k->min_open ? ">" : ">=", k->min);
        if (k->max < BIG) snprintf(hi, sizeof hi, "<= %g", k->max);
        snprintf(buf, n, "%s%s%s%s%s%s%s%s", kind, lo[0] || hi[0] ? " " : "", lo, lo[0] && hi[0] ? " and " : "", hi,
                 k->units[0] ? " (" : "", k->units, k->units[0] ? ")" : "");
        if (k->allow_auto) snprintf(buf + strlen(buf), n - strlen(buf), ", or auto");
    }
    }
}

/* Parses and stores one value; returns a status naming `where`. */
static ad_status set_value(ad_scene *s, const key *k, const char *value, const char *where)
{
    char *p = (char *)s + k->offset, ok[160];
    allowed(k, ok, sizeof ok);
    const char *v = value;
    while (*v == ' ' || *v == '\t') v++;
    char field[48];
    snprintf(field, sizeof field, "%s.%s", k->section, k->name);
    switch (k->type) {
    case K_STRING:
        if (strlen(v) >= k->size)
            return ad_fail(AD_ERR_INVALID, field, "%s: [%s] %s is longer than %zu characters", where, k->section,
                           k->name, k->size - 1);
        memcpy(p, v, strlen(v) + 1);
        return ad_ok();
    case K_BOOL: {
        int b = -1;
        if (!strcasecmp(v, "yes") || !strcasecmp(v, "true") || !strcasecmp(v, "on") || !strcmp(v, "1")) b = 1;
        if (!strcasecmp(v, "no") || !strcasecmp(v, "false") || !strcasecmp(v, "off") || !strcmp(v, "0")) b = 0;
        if (b < 0)
            return ad_fail(AD_ERR_INVALID, field, "%s: [%s] %s = '%s' is not allowed; expected %s", where, k->section,
                           k->name, v, ok);
        *(int *)p = b;
        return ad_ok();
    }
    case K_ENUM: {
        int idx = 0;
        const char *c = k->choices;
        while (*c) {
            size_t len = strcspn(c, "|");
            if (strlen(v) == len && !strncasecmp(c, v, len)) {
                *(int *)p = idx;
                return ad_ok();
            }
            c += len + (c[len] == '|');
            idx++;
        }
        return ad_fail(AD_ERR_INVALID, field, "%s: [%s] %s = '%s' is not allowed; expected %s", where, k->section,
                       k->name, v, ok);
    }
    default: {
        if (k->allow_auto && !strcasecmp(v, "auto")) {
            *(double *)p = NAN;
            return ad_ok();
        }
        char *end;
        errno = 0;
        double d = strtod(v, &end);
        while (*end == ' ' || *end == '\t') end++;
        if (end == v || *end || errno == ERANGE || !isfinite(d))
            return ad_fail(AD_ERR_INVALID, field, "%s: [%s] %s = '%s' is not a number; expected %s", where,
                           k->section, k->name, v, ok);
        if ((k->type != K_DOUBLE && d != floor(d)) || (k->min_open ? !(d > k->min) : !(d >= k->min)) || d > k->max)
            return ad_fail(AD_ERR_INVALID, field, "%s: [%s] %s = %s is out of range; expected %s", where, k->section,
                           k->name, v, ok);
        if (k->type == K_DOUBLE) *(double *)p = d;
        else if (k->type == K_U64) *(unsigned long long *)p = (unsigned long long)d;
        else *(int *)p = (int)d;
        return ad_ok();
    }
    }
}

typedef struct parse_ctx {
    ad_scene *s;
    const char *name;
    int line;          /* counted by the handler: inih calls it once per key line */
    ad_status first;   /* the first error */
    int failed;
} parse_ctx;

static ad_status apply(ad_scene *s, const char *section, const char *name, const char *value, const char *where)
{
    if (!section[0])
        return ad_fail(AD_ERR_INVALID, name, "%s: key '%s' stands before any [section]; sections: %s", where, name,
                       SECTIONS);
    if (!known_section(section))
        return ad_fail(AD_ERR_INVALID, section, "%s: unknown section [%s]; sections: %s", where, section, SECTIONS);
    const key *k = find_key(section, name);
    if (k) s->seen[k - KEYS] = 1;
    if (!k) {
        char list[512];
        keys_of(section, list, sizeof list);
        return ad_fail(AD_ERR_INVALID, name, "%s: unknown key '%s' in [%s]; keys of [%s]: %s", where, name, section,
                       section, list);
    }
    return set_value(s, k, value, where);
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
    parse_ctx *c = user;
    if (c->failed) return 1;
    char where[AD_PATH_MAX + 64];
    snprintf(where, sizeof where, "%s", c->name);
    ad_status st = apply(c->s, section, name, value, where);
    if (st.code) {
        c->first = st;
        c->failed = 1;
        return 0; /* inih reports this line's number */
    }
    return 1;
}

/* inih gives the line of the first error as its result; put it in the message. */
static ad_status finish_parse(parse_ctx *c, int rc, const char *name)
{
    if (rc == 0) return ad_ok();
    if (c->failed) {
        /* "file: ..." -> "file:LINE: ..." */
        ad_status st = c->first;
        size_t l = strlen(name);
        char msg[sizeof st.message];
        if (!strncmp(st.message, name, l) && st.message[l] == ':')
            snprintf(msg, sizeof msg, "%s:%d%s", name, rc, st.message + l);
        else snprintf(msg, sizeof msg, "%s", st.message);
        snprintf(st.message, sizeof st.message, "%s", msg);
        return st;
    }
    return ad_fail(AD_ERR_FORMAT, "scene", "%s:%d: not INI syntax (expected [section] or key = value)", name, rc);
}

/* Lines that are not INI at all, found before any key is applied (inih would
 * report their line but with the next key's complaint). */
static ad_status syntax_check(const char *text, const char *name)
{
    int line = 1;
    for (const char *p = text; *p; line++) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        while (len && (*p == ' ' || *p == '\t')) p++, len--;
        while (len && (p[len - 1] == ' ' || p[len - 1] == '\t' || p[len - 1] == '\r')) len--;
        if (len && *p != ';' && *p != '#') {
            if (*p == '[') {
                if (!memchr(p, ']', len))
                    return ad_fail(AD_ERR_FORMAT, "scene", "%s:%d: section header '%.*s' lacks its closing ']'", name,
                                   line, (int)len, p);
            } else if (!memchr(p, '=', len) && !memchr(p, ':', len)) {
                return ad_fail(AD_ERR_FORMAT, "scene", "%s:%d: '%.*s' is not 'key = value' or '[section]'", name,
                               line, (int)len, p);
            }
        }
        if (!e) break;
        p = e + 1;
    }
    return ad_ok();
}

ad_status ad_scene_load(ad_scene *s, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return ad_fail(AD_ERR_IO, "scene", "cannot open scene file %s: %s", path, strerror(errno));
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 + 1 > cap) {
            cap = cap ? 2 * cap : 8192;
            char *g = cap > ((size_t)64 << 20) ? NULL : realloc(text, cap);
            if (!g) {
                free(text);
                fclose(f);
                return ad_fail(AD_ERR_FORMAT, "scene", "%s is too large for a scene file (over 64 MiB)", path);
            }
            text = g;
        }
        size_t k = fread(text + len, 1, 4096, f);
        len += k;
        if (k < 4096) break;
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        free(text);
        return ad_fail(AD_ERR_IO, "scene", "cannot read scene file %s", path);
    }
    text[len] = 0;
    if (strlen(text) != len) {
        free(text);
        return ad_fail(AD_ERR_FORMAT, "scene", "%s is not a text file (it holds a NUL byte)", path);
    }
    snprintf(s->source, sizeof s->source, "%s", path);
    ad_status st = ad_scene_load_string(s, text, path);
    free(text);
    return st;
}

ad_status ad_scene_load_string(ad_scene *s, const char *text, const char *name)
{
    if (!s->source[0]) snprintf(s->source, sizeof s->source, "%s", name);
    ad_status st = syntax_check(text, name);
    if (st.code) return st;
    parse_ctx c = {s, name, 0, {0}, 0};
    int rc = ini_parse_string(text, handler, &c);
    return finish_parse(&c, rc, name);
}

ad_status ad_scene_set(ad_scene *s, const char *assignment)
{
    char buf[AD_PATH_MAX + 128];
    snprintf(buf, sizeof buf, "%s", assignment);
    char *eq = strchr(buf, '=');
    char *dot = eq ? memchr(buf, '.', (size_t)(eq - buf)) : NULL;
    if (!eq || !dot)
        return ad_fail(AD_ERR_INVALID, "--set",
                       "--set %s: expected section.key=value, for example --set gas.velocity=4", assignment);
    *eq = 0;
    *dot = 0;
    char *section = buf, *name = dot + 1, *value = eq + 1;
    /* trim the key */
    for (char *e = name + strlen(name); e > name && (e[-1] == ' '); e--) e[-1] = 0;
    char where[AD_PATH_MAX + 160];
    snprintf(where, sizeof where, "--set %s", assignment);
    return apply(s, section, name, value, where);
}

ad_status ad_scene_finish(ad_scene *s)
{
    const char *src = s->source[0] ? s->source : "scene";
    if (s->width < 4 * s->radius || s->height < 4 * s->radius)
        return ad_fail(AD_ERR_INVALID, "tunnel.width", "%s: the tunnel (%g x %g m) must be at least 4 radii each way",
                       src, s->width, s->height);
    int given = (s->speed_ratio > 0) + (s->mach > 0);
    if (given + (s->seen[find_key("gas", "velocity") - KEYS] != 0) > 1)
        return ad_fail(AD_ERR_INVALID, "gas.mach", "%s: give the free stream by one of velocity, speed_ratio or mach",
                       src);
    if (s->speed_ratio > 0) s->velocity = s->speed_ratio * sqrt(2.0 * s->temperature);
    if (s->mach > 0) s->velocity = s->mach * sqrt(2.0 * s->temperature);
    /* from here on the velocity is the free stream: a resolved copy of the scene
     * (scene.ini, a checkpoint) gives it alone and reads back the same */
    if (given) {
        s->speed_ratio = s->mach = 0.0;
        s->seen[find_key("gas", "velocity") - KEYS] = 1;
        s->seen[find_key("gas", "speed_ratio") - KEYS] = s->seen[find_key("gas", "mach") - KEYS] = 0;
    }
    if (s->kind == AD_TUNNEL_BOX) {
        if (given || (s->seen[find_key("gas", "velocity") - KEYS] && s->velocity != 0.0))
            return ad_fail(AD_ERR_INVALID, "gas.velocity", "%s: a box has no stream: [gas] velocity must be 0", src);
        s->velocity = 0.0;
        s->walls = AD_BOUNDARY_SOLID;
    }
    if (s->kind == AD_TUNNEL_FLOW && !(s->velocity > 0.0))
        return ad_fail(AD_ERR_INVALID, "gas.velocity", "%s: a flow tunnel needs a positive [gas] velocity (m/s)", src);
    if (s->shape == AD_SHAPE_FILE && !s->file[0])
        return ad_fail(AD_ERR_INVALID, "body.file", "%s: [body] shape = file needs a [body] file = PATH", src);
    if (s->settle_steps >= s->steps)
        return ad_fail(AD_ERR_INVALID, "run.settle_steps",
                       "%s: [run] settle_steps = %llu must be less than steps = %llu, or nothing is averaged", src,
                       s->settle_steps, s->steps);
    if (s->field_cell < 2 * s->radius)
        return ad_fail(AD_ERR_INVALID, "output.field_cell",
                       "%s: [output] field_cell = %g m is below a disc diameter (%g m)", src, s->field_cell,
                       2 * s->radius);
    if (s->width / s->field_cell > 20000 || s->height / s->field_cell > 20000)
        return ad_fail(AD_ERR_INVALID, "output.field_cell", "%s: [output] field_cell = %g m makes over 20000 cells a side",
                       src, s->field_cell);
    if (isnan(s->x)) s->x = s->width / 3.0;
    if (isnan(s->y)) s->y = s->height / 2.0;
    return ad_ok();
}

char *ad_scene_to_ini(const ad_scene *s)
{
    size_t cap = 16384, len = 0;
    char *out = malloc(cap);
    if (!out) return NULL;
    out[0] = 0;
    const char *sec = "";
    for (size_t i = 0; i < NKEYS; i++) {
        const key *k = &KEYS[i];
        const char *p = (const char *)s + k->offset;
        char val[AD_PATH_MAX + 16];
        switch (k->type) {
        case K_DOUBLE:
            if (isnan(*(const double *)p)) snprintf(val, sizeof val, "auto");
            else snprintf(val, sizeof val, "%.17g", *(const double *)p);
            break;
        case K_U64: snprintf(val, sizeof val, "%llu", *(const unsigned long long *)p); break;
        case K_INT: snprintf(val, sizeof val, "%d", *(const int *)p); break;
        case K_BOOL: snprintf(val, sizeof val, "%s", *(const int *)p ? "yes" : "no"); break;
        case K_STRING: snprintf(val, sizeof val, "%s", p); break;
        case K_ENUM: {
            int idx = *(const int *)p;
            const char *c = k->choices;
            for (int j = 0; j < idx && strchr(c, '|'); j++) c = strchr(c, '|') + 1;
            size_t l = strcspn(c, "|");
            snprintf(val, sizeof val, "%.*s", (int)l, c);
            break;
        }
        }
        char line[AD_PATH_MAX + 128];
        int n = 0;
        if (strcmp(sec, k->section)) {
            n = snprintf(line, sizeof line, "%s[%s]\n%s = %s\n", len ? "\n" : "", k->section, k->name, val);
            sec = k->section;
        } else {
            n = snprintf(line, sizeof line, "%s = %s\n", k->name, val);
        }
        if (len + (size_t)n + 1 > cap) {
            cap *= 2;
            char *g = realloc(out, cap);
            if (!g) {
                free(out);
                return NULL;
            }
            out = g;
        }
        memcpy(out + len, line, (size_t)n + 1);
        len += (size_t)n;
    }
    return out;
}

void ad_scene_write_reference(FILE *f)
{
    ad_scene d;
    ad_scene_defaults(&d);
    char *ini = ad_scene_to_ini(&d);
    fprintf(f, "# Scene file reference\n\n"
               "A scene is an INI file: `[section]` headers, `key = value` lines, comments after `;` or at the\n"
               "start of a line after `#`. Every key is optional; a key that is not given keeps its default.\n"
               "`aerodem run SCENE --set section.key=value` overrides a key with the same checks.\n"
               "Unknown sections and keys, values that are not numbers and values out of range are errors\n"
               "that name the file, the line and the key.\n\n"
               "This page is generated by `aerodem scene-keys`; a test keeps it equal to the program.\n");
    const char *sec = "";
    for (size_t i = 0; i < NKEYS; i++) {
        const key *k = &KEYS[i];
        if (strcmp(sec, k->section)) {
            fprintf(f, "\n## [%s]\n\n| key | default | allowed | meaning |\n|---|---|---|---|\n", k->section);
            sec = k->section;
        }
        /* the default, as the resolved INI writes it */
        char pat[96], def[AD_PATH_MAX + 16] = "";
        snprintf(pat, sizeof pat, "\n%s = ", k->name);
        char sp[48];
        snprintf(sp, sizeof sp, "[%s]", k->section);
        const char *secpos = strstr(ini, sp);
        const char *p = secpos ? strstr(secpos, pat) : NULL;
        if (p) {
            p += strlen(pat);
            size_t l = strcspn(p, "\n");
            snprintf(def, sizeof def, "%.*s", (int)l, p);
        }
        char ok[160];
        allowed(k, ok, sizeof ok);
        fprintf(f, "| `%s` | `%s` | %s | %s |\n", k->name, def[0] ? def : "(empty)", ok, k->doc);
    }
    free(ini);
}
