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
#include "number_text.h"
#include "world_internal.h"

#include "scene_text.h"

#include "scene_keys.h"

static const char *SECTIONS = "tunnel, gas, body, run, output";

void ad_scene_defaults(ad_scene *s)
{
    /* what the library's definition already holds is taken from it: each default lives once */
    const ad_world_def d = ad_default_world_def();
    memset(s, 0, sizeof *s);
#define FROM_DEF(sf, df) s->sf = d.df;
    AD_SCENE_DEF_FIELDS(FROM_DEF)
#undef FROM_DEF
    s->kind = AD_TUNNEL_FLOW;
    s->dimensions = 2;
    s->depth = 40;
    s->span_walls = AD_BOUNDARY_PERIODIC;
    s->volume_fraction = 0.05;
    s->section = AD_SECTION_NACA;
    s->span = NAN;
    s->z = NAN;
    s->scale = 1;
    s->subdivisions = 3;
    s->ref_area = NAN;
    s->ref_length = NAN;
    s->surface = AD_SURFACE_SPECULAR;
    s->accommodation = NAN;
    s->surface_temperature = NAN;
    s->wall_surface = AD_SURFACE_SPECULAR;
    s->wall_accommodation = NAN;
    s->wall_temperature = NAN;
    s->slice_x = NAN;
    s->slice_z = NAN;
    s->width = 240;
    s->height = 120;
    s->walls = AD_BOUNDARY_OPEN;
    s->reservoir = NAN;
    s->area_fraction = 0.1;
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
    s->surface_out = AD_SURFACE_OUT_AUTO;
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

/* A text value as the scene keeps it: it must read back the same from the resolved INI copy, so no ';'
 * (after a blank it starts a comment), no control character (a newline would start another line),
 * and it must fit on a line libinih reads whole. */
static ad_status set_string(const key *k, char *p, const char *v, const char *where, const char *field)
{
    size_t n = strlen(v), most = INI_LINE - strlen(k->name) - 3; /* "name = value" */
    if (most > k->size - 1) most = k->size - 1;
    if (n > most)
        return ad_fail(AD_ERR_INVALID, field, "%s: [%s] %s is %zu characters long; at most %zu", where, k->section,
                       k->name, n, most);
    for (const char *c = v; *c; c++)
        if (*c == ';' || (unsigned char)*c < 0x20 || *c == 0x7f)
            return ad_fail(AD_ERR_INVALID, field,
                           "%s: [%s] %s = '%.80s': %s is not allowed in a value (it would not read back the same)",
                           where, k->section, k->name, v, *c == ';' ? "';' (it starts a comment)" : "a control character");
    if (!strcmp(k->name, "dir") && !n)
        return ad_fail(AD_ERR_INVALID, field,
                       "%s: [output] dir is empty: the outputs would go to the file-system root; give a folder ('.' "
                       "for the working directory)",
                       where);
    memcpy(p, v, n + 1);
    return ad_ok();
}

/* A whole number: plain digits read exactly (a seed above 2^53 keeps every digit), else as a number
 * that must be whole. Returns 0 when it is not a number, -1 when it is not whole. */
static int parse_whole(const char *v, double *d, unsigned long long *u)
{
    char *end;
    errno = 0;
    if (*v >= '0' && *v <= '9' && v[strspn(v, "0123456789")] == 0) {
        *u = strtoull(v, &end, 10);
        *d = errno == ERANGE ? INFINITY : (double)*u; /* out of range below */
        return 1;
    }
    *d = strtod(v, &end);
    if (end == v || *end || errno == ERANGE || !isfinite(*d)) return 0;
    if (*d != floor(*d) || *d < 0 || *d >= 9007199254740992.0) return *d < 0 ? 1 : -1; /* 2^53 */
    *u = (unsigned long long)*d;
    return 1;
}

/* Parses and stores one value; returns a status naming `where`. Blanks around the value do not count,
 * as libinih strips them from a line of the file. */
static ad_status set_value(ad_scene *s, const key *k, const char *value, const char *where)
{
    char *p = (char *)s + k->offset, ok[160];
    allowed(k, ok, sizeof ok);
    char field[48];
    snprintf(field, sizeof field, "%s.%s", k->section, k->name);
    while (*value == ' ' || *value == '\t') value++;
    size_t n = strlen(value);
    while (n && (value[n - 1] == ' ' || value[n - 1] == '\t')) n--;
    char buf[AD_PATH_MAX + 8];
    if (n >= sizeof buf)
        return ad_fail(AD_ERR_INVALID, field, "%s: [%s] %s: the value is %zu characters long; at most %zu", where,
                       k->section, k->name, n, sizeof buf - 1);
    memcpy(buf, value, n);
    buf[n] = 0;
    const char *v = buf;
    switch (k->type) {
    case K_STRING: return set_string(k, p, v, where, field);
    case K_BOOL: {
        int b = -1;
        if (!strcasecmp(v, "yes") || !strcasecmp(v, "true") || !strcasecmp(v, "on") || !strcmp(v, "1")) b = 1;
        if (!strcasecmp(v, "no") || !strcasecmp(v, "false") || !strcasecmp(v, "off") || !strcmp(v, "0")) b = 0;
        if (b < 0)
            return ad_fail(AD_ERR_INVALID, field, "%s: [%s] %s = '%.80s' is not allowed; expected %s", where, k->section,
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
        return ad_fail(AD_ERR_INVALID, field, "%s: [%s] %s = '%.80s' is not allowed; expected %s", where, k->section,
                       k->name, v, ok);
    }
    default: {
        if (k->allow_auto && !strcasecmp(v, "auto")) {
            *(double *)p = NAN;
            return ad_ok();
        }
        double d;
        unsigned long long u = 0;
        int whole = 1;
        if (k->type == K_DOUBLE) {
            char *end;
            errno = 0;
            d = strtod(v, &end);
            whole = !(end == v || *end || errno == ERANGE || !isfinite(d));
        } else {
            whole = parse_whole(v, &d, &u);
        }
        if (!whole)
            return ad_fail(AD_ERR_INVALID, field, "%s: [%s] %s = '%.80s' is not a number; expected %s", where,
                           k->section, k->name, v, ok);
        if (whole < 0 && k->type == K_U64 && d >= 9007199254740992.0)
            return ad_fail(AD_ERR_INVALID, field, "%s: [%s] %s = %.80s: write a whole number above 2^53 in plain digits",
                           where, k->section, k->name, v);
        if (whole < 0 || (k->min_open ? !(d > k->min) : !(d >= k->min)) || d > k->max)
            return ad_fail(AD_ERR_INVALID, field, "%s: [%s] %s = %.80s is out of range; expected %s", where, k->section,
                           k->name, v, ok);
        if (k->type == K_DOUBLE) *(double *)p = d;
        else if (k->type == K_U64) *(unsigned long long *)p = u;
        else *(int *)p = (int)d;
        return ad_ok();
    }
    }
}

typedef struct parse_ctx {
    ad_scene *s;
    const char *name;
    ad_status first;   /* the first error */
    int failed;
    unsigned char given[sizeof(((ad_scene *)0)->seen)]; /* keys this text gave: a second line for one would override it unseen */
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
    const key *k = find_key(section, name);
    ad_status st = ad_ok();
    if (k && c->given[k - KEYS]) {
        char field[48];
        snprintf(field, sizeof field, "%s.%s", k->section, k->name);
        st = ad_fail(AD_ERR_INVALID, field, "%s: [%s] %s is given twice; give each key once", where, k->section,
                     k->name);
    }
    if (k) c->given[k - KEYS] = 1;
    if (!st.code) st = apply(c->s, section, name, value, where);
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


ad_status ad_scene_load(ad_scene *s, const char *path)
{
    if (strlen(path) >= sizeof s->source)
        return ad_fail(AD_ERR_INVALID, "scene", "the scene path is %zu characters long; at most %zu", strlen(path),
                       sizeof s->source - 1);
    FILE *f = fopen(path, "rb");
    if (!f) return ad_fail(AD_ERR_IO, "scene", "cannot open scene file %s: %s", path, strerror(errno));
    /* one byte more than a scene may hold tells a file that is too large */
    char *text = malloc(SCENE_MAX_BYTES + 2);
    if (!text) {
        fclose(f);
        return ad_fail(AD_ERR_NO_MEMORY, "scene", "out of memory reading %s", path);
    }
    size_t len = fread(text, 1, SCENE_MAX_BYTES + 1, f);
    int err = ferror(f);
    fclose(f);
    if (err) {
        free(text);
        return ad_fail(AD_ERR_IO, "scene", "cannot read scene file %s", path);
    }
    text[len] = 0;
    if (len > SCENE_MAX_BYTES) {
        free(text);
        return ad_fail(AD_ERR_FORMAT, "scene", "%s is over %zu bytes long; a scene file holds at most %zu", path,
                       SCENE_MAX_BYTES, SCENE_MAX_BYTES);
    }
    const char *nul = memchr(text, 0, len);
    if (nul) {
        int line = 1;
        for (const char *q = text; q < nul; q++) line += *q == '\n';
        free(text);
        return ad_fail(AD_ERR_FORMAT, "scene", "%s:%d: a NUL byte: this is not a text file", path, line);
    }
    snprintf(s->source, sizeof s->source, "%s", path);
    ad_status st = ad_scene_load_string(s, text, path);
    free(text);
    return st;
}

ad_status ad_scene_load_string(ad_scene *s, const char *text, const char *name)
{
    if (!s->source[0]) {
        if (strlen(name) >= sizeof s->source)
            return ad_fail(AD_ERR_INVALID, "scene", "the scene name is %zu characters long; at most %zu", strlen(name),
                           sizeof s->source - 1);
        snprintf(s->source, sizeof s->source, "%s", name);
    }
    char *clean;
    ad_status st = ad_scene_text_prepare(text, name, &clean);
    if (!st.code) st = ad_scene_text_syntax(clean, name);
    if (st.code) {
        free(clean);
        return st;
    }
    parse_ctx c = {s, name, {0}, 0, {0}};
    int rc = ini_parse_string(clean, handler, &c);
    free(clean);
    return finish_parse(&c, rc, name);
}

static char *trim(char *t)
{
    while (*t == ' ' || *t == '\t') t++;
    for (char *e = t + strlen(t); e > t && (e[-1] == ' ' || e[-1] == '\t'); e--) e[-1] = 0;
    return t;
}

/* The free stream is given by one of gas.velocity, gas.speed_ratio and gas.mach: one set on the
 * command line replaces the scene's, whichever of the three that gave it (a scene with mach = 3
 * and --set gas.velocity=2 runs at 2 m/s; so does the resolved scene.ini, which gives the velocity,
 * with --set gas.mach=5 at Mach 5). */
static void replace_stream(ad_scene *s, const char *section, const char *name)
{
    static const char *const stream[] = {"velocity", "speed_ratio", "mach"};
    int set = -1;
    for (int k = 0; k < 3; k++)
        if (!strcasecmp(section, "gas") && !strcasecmp(name, stream[k])) set = k;
    if (set < 0) return;
    for (int k = 0; k < 3; k++) {
        if (k == set) continue;
        *ad_scene_seen(s, "gas", stream[k]) = 0;
        if (k == 1) s->speed_ratio = 0.0;
        if (k == 2) s->mach = 0.0;
    }
}

ad_status ad_scene_set(ad_scene *s, const char *assignment)
{
    /* a copy of any length: a value cut to a buffer would be set silently to its first part */
    char *buf = malloc(strlen(assignment) + 1);
    if (!buf) return ad_fail(AD_ERR_NO_MEMORY, "--set", "out of memory for --set");
    memcpy(buf, assignment, strlen(assignment) + 1);
    char *eq = strchr(buf, '=');
    char *dot = eq ? memchr(buf, '.', (size_t)(eq - buf)) : NULL;
    ad_status st;
    if (!eq || !dot) {
        st = ad_fail(AD_ERR_INVALID, "--set", "--set %s: expected section.key=value, for example --set gas.velocity=4",
                     assignment);
    } else {
        *eq = 0;
        *dot = 0;
        char where[AD_PATH_MAX + 160];
        /* a long value is shown by its start and its length */
        if (strlen(assignment) > 100) snprintf(where, sizeof where, "--set %.60s... (%zu characters)", assignment,
                                               strlen(assignment));
        else snprintf(where, sizeof where, "--set %s", assignment);
        st = apply(s, trim(buf), trim(dot + 1), eq + 1, where);
        if (!st.code) replace_stream(s, trim(buf), trim(dot + 1));
    }
    free(buf);
    return st;
}

unsigned char *ad_scene_seen(ad_scene *s, const char *section, const char *name)
{
    const key *k = find_key(section, name);
    return k ? &s->seen[k - KEYS] : NULL;
}

/* 0 where a key belongs to the other dimension's scenes (the resolved copy leaves it out: a 2D run's copy
 * lists 2D's keys, a 3D run's gives its gas by volume_fraction alone). */
static int key_applies(const key *k, const ad_scene *s)
{
    static const char *const only3[] = {"tunnel.depth", "tunnel.span_walls", "gas.volume_fraction", "body.section",
                                        "body.span", "body.sweep", "body.z", "body.scale", "body.rotate_x",
                                        "body.rotate_y", "body.rotate_z", "body.subdivisions", "body.ref_area",
                                        "body.ref_length", "output.slice_x", "output.slice_z"};
    char name[64];
    snprintf(name, sizeof name, "%s.%s", k->section, k->name);
    if (!strcmp(name, "gas.area_fraction")) return s->dimensions != 3;
    for (size_t i = 0; i < sizeof only3 / sizeof only3[0]; i++)
        if (!strcmp(name, only3[i])) return s->dimensions == 3;
    return 1;
}

static char *to_ini(const ad_scene *s, int all);

char *ad_scene_to_ini(const ad_scene *s) { return to_ini(s, 0); }

static char *to_ini(const ad_scene *s, int all)
{
    size_t cap = 16384, len = 0;
    char *out = malloc(cap);
    if (!out) return NULL;
    out[0] = 0;
    const char *sec = "";
    for (size_t i = 0; i < NKEYS; i++) {
        const key *k = &KEYS[i];
        if (!all && !key_applies(k, s)) continue;
        const char *p = (const char *)s + k->offset;
        char val[AD_PATH_MAX + 16];
        switch (k->type) {
        case K_DOUBLE:
            if (isnan(*(const double *)p)) snprintf(val, sizeof val, "auto");
            else ad_format_double(val, sizeof val, *(const double *)p);
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
    char *ini = to_ini(&d, 1);
    fprintf(f, "# Scene file reference\n\n"
               "A scene is an INI file: `[section]` headers, `key = value` lines, comments after `;` or at the\n"
               "start of a line after `#`. Every key is optional; a key that is not given keeps its default.\n"
               "`aerodem run SCENE --set section.key=value` overrides a key with the same checks.\n"
               "Unknown sections and keys, values that are not numbers and values out of range are errors\n"
               "that name the file, the line and the key.\n\n"
               "This page is generated by `aerodem scene-keys`; a test keeps it equal to the program.\n\n"
               "A scene file is text of at most 1 MiB (a UTF-8 byte-order mark and CRLF line endings are read);\n"
               "an indented line is a line of its own; a key given twice in a file and text after a section\n"
               "header's `]` are refused. libinih reads at most %d characters of a line: comment\n"
               "lines and comments after ` ;` may be longer, a longer key line is refused. Text values (paths,\n"
               "the NACA digits) hold no `;` and no control character, so that the resolved copy (`scene.ini`,\n"
               "the checkpoint's) reads back the same; `[output] dir` must not be empty.\n\n"
               "Beyond each key's range, values that together would make the run meaningless are refused with\n"
               "the key named:\n\n"
               "- the discs' state is float: the mass and its inverse, the contact force over a diameter of\n"
               "  overlap and its acceleration, the squared diameter, the squared largest speed\n"
               "  (|U| + 10 sqrt(kT/m)) and its kinetic energy must be floats;\n"
               "- a step must move the gas: the float spacing of positions at the domain's farthest coordinate\n"
               "  must be at most a step's largest move (max_move x radius) and at most what a disc at the\n"
               "  typical speed (the larger of |U| and sqrt(2 kT/m)) travels in the first step (the least of\n"
               "  dt_max, the contact time over contact_steps and max_move x radius over the largest speed);\n"
               "- a disc falls at most max_move x radius in a step, and on a solid floor the gas's weight\n"
               "  presses the lowest discs together by at most a tenth of the radius;\n"
               "- the tunnel's fill gives at least one disc, the domain's discs fit 32-bit indices, and a box\n"
               "  at temperature 0 without gravity (where nothing would move) is refused.\n",
            INI_LINE);
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
