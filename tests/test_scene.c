/* The scene parser and the values it accepts (issue 16): libinih's line limit, text that is not a scene,
 * values that would not read back the same, paths that would be cut or point at the root, values that
 * make a run meaningless (each refused with its key named), accepted edge values that build a world
 * that steps with a finite state, and the fuzzer's dictionary holding every key. */
#include "core/scene.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#include "core/world_internal.h"

static ad_status load(ad_scene *s, const char *text)
{
    ad_scene_defaults(s);
    return ad_scene_load_string(s, text, "t.ini");
}

/* The text (and the --set overrides, NULL-ended) are refused, by the load or by ad_scene_finish, with
 * `field` in st.field and every `want` in the message. */
static void refused_at(int line, const char *text, const char *const *sets, const char *field, const char *want,
                       const char *want2)
{
    ad_scene s;
    ad_status st = load(&s, text);
    /* a set that starts with '[' is a second scene text on top, else a --set */
    for (int i = 0; sets && sets[i] && !st.code; i++)
        st = sets[i][0] == '[' ? ad_scene_load_string(&s, sets[i], "t2.ini") : ad_scene_set(&s, sets[i]);
    if (!st.code) st = ad_scene_finish(&s);
    tu_checks++;
    int ok = st.code != AD_OK && (!field || !strcmp(st.field, field)) && (!want || strstr(st.message, want)) &&
             (!want2 || strstr(st.message, want2));
    if (!ok) {
        tu_failures++;
        fprintf(stderr, "%s:%d: FAIL: expected a refusal (field '%s', '%s', '%s'); got %s, field '%s': %s\n", __FILE__,
                line, field ? field : "", want ? want : "", want2 ? want2 : "", ad_code_name(st.code), st.field,
                st.message);
    }
}
#define REFUSED(text, field, want, want2) refused_at(__LINE__, text, NULL, field, want, want2)
#define REFUSED_SET(text, set, field, want, want2)                                                                    \
    do {                                                                                                              \
        const char *sets_[] = {set, NULL};                                                                            \
        refused_at(__LINE__, text, sets_, field, want, want2);                                                        \
    } while (0)

static char *repeat(char c, size_t n)
{
    char *t = malloc(n + 1);
    memset(t, c, n);
    t[n] = 0;
    return t;
}

/* libinih reads 198 characters of a line whole; longer comment lines and inline comments are fine,
 * longer key lines are refused with their own line number. */
static void test_long_lines(void)
{
    char text[2048], *x = repeat('x', 400);
    ad_scene s;
    /* the tail of a long comment (past libinih's 199 bytes) would set mass = 7 */
    snprintf(text, sizeof text, "[gas]\n;%.198s mass = 7\nradius = 0.25\n", x);
    ENSURE_OK(load(&s, text));
    ENSURE(s.mass == 1.0 && s.radius == 0.25);
    snprintf(text, sizeof text, "[gas]\n   #%s\n   radius = 0.25 ; %s\nwarp = 1\n", x, x);
    ad_status st = load(&s, text);
    ENSURE_MSG(st.code && strstr(st.message, "t.ini:4:") && strstr(st.message, "warp"), "%s", st.message);
    snprintf(text, sizeof text, "[gas]\nradius = 0.25 ; %s\n", x);
    ENSURE_OK(load(&s, text));
    ENSURE(s.radius == 0.25);
    snprintf(text, sizeof text, "[body]\n; fine\nfile = %.250s\n", x);
    st = load(&s, text);
    ENSURE_MSG(st.code == AD_ERR_FORMAT && strstr(st.message, "t.ini:3: line is 257 characters long; at most 198"),
               "%s", st.message);
    st = load(&s, "[gas]\n[run] steps = 5 ; a comment\n");
    ENSURE_MSG(st.code == AD_ERR_FORMAT && strstr(st.message, "t.ini:2: 'steps = 5' follows the section header '[run]'"),
               "%s", st.message);
    ENSURE_OK(load(&s, "[run] ; a comment\nsteps = 5\n"));
    st = load(&s, "[gas]\nvelocity = 3\n[run]\nsteps = 5\n[GAS]\nVelocity = 4\n");
    ENSURE_MSG(st.code && strstr(st.message, "t.ini:6: [gas] velocity is given twice"), "%s", st.message);
    /* an indented line is a line of its own, not the continuation of the key before it */
    ENSURE_OK(load(&s, "[body]\nfile = a.dat\n    chord = 2\n"));
    ENSURE(!strcmp(s.file, "a.dat") && s.chord == 2.0);
    free(x);
}

static void test_not_scene_text(void)
{
    ad_scene s;
    ENSURE_OK(load(&s, "\xEF\xBB\xBF[gas]\r\nradius = 0.25\r\n\r\n[run]\r\nsteps = 30 ; crlf\r\n"));
    ENSURE(s.radius == 0.25 && s.steps == 30);
    ad_status st = load(&s, "[gas]\r\nradius = 0.25\r\nwarp = 1\r\n");
    ENSURE_MSG(st.code && strstr(st.message, "t.ini:3:"), "%s", st.message);
    st = load(&s, "[gas]\nradius = 0.5\x01\n");
    ENSURE_MSG(st.code == AD_ERR_FORMAT && strstr(st.message, "t.ini:2:") && strstr(st.message, "not text"), "%s",
               st.message);
    st = load(&s, "[gas]\rradius = 0.5\r");
    ENSURE_MSG(st.code == AD_ERR_FORMAT && strstr(st.message, "not text"), "%s", st.message);
    /* a NUL byte and a file too large, through the file loader */
    char path[] = "/tmp/aerodem_test_scene_XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!f) {
        fprintf(stderr, "cannot make a temporary file\n");
        exit(1);
    }
    fwrite("[gas]\nradius = 0\0.5\n", 1, 20, f);
    fclose(f);
    ad_scene_defaults(&s);
    st = ad_scene_load(&s, path);
    ENSURE_MSG(st.code == AD_ERR_FORMAT && strstr(st.message, ":2: a NUL byte"), "%s", st.message);
    f = fopen(path, "wb");
    char *comment = repeat('c', 1000);
    for (int i = 0; i < 1200; i++) fprintf(f, ";%s\n", comment);
    fclose(f);
    ad_scene_defaults(&s);
    st = ad_scene_load(&s, path);
    ENSURE_MSG(st.code == AD_ERR_FORMAT && strstr(st.message, "at most 1048576"), "%s", st.message);
    remove(path);
    free(comment);
    char *huge = repeat('\n', (1u << 20) + 1);
    st = load(&s, huge);
    ENSURE_MSG(st.code == AD_ERR_FORMAT && strstr(st.message, "at most"), "%s", st.message);
    free(huge);
}

/* The resolved copy (ad_scene_to_ini) parses to the same scene. */
static void ensure_round_trip(const ad_scene *s, const char *what)
{
    char *a = ad_scene_to_ini(s), *b = NULL;
    ad_scene t;
    ad_scene_defaults(&t);
    ad_status st = ad_scene_load_string(&t, a, "copy.ini");
    if (!st.code) st = ad_scene_finish(&t);
    if (!st.code) b = ad_scene_to_ini(&t);
    ENSURE_MSG(!st.code && b && !strcmp(a, b), "%s: the copy reads back %s: %s", what, b ? "differently" : "refused",
               st.message);
    free(a);
    free(b);
}

static void test_round_trip(void)
{
    REFUSED("[body]\nnaca =; 2412\n", "body.naca", "';'", NULL);
    REFUSED("[body]\nfile = a;b.dat\n", "body.file", "';'", NULL);
    REFUSED_SET("", "body.naca= ; 2412", "body.naca", "';'", NULL);
    REFUSED_SET("", "body.file=a\nwidth = 3", "body.file", "control character", NULL);
    ad_scene s;
    ENSURE_OK(load(&s, ""));
    ENSURE_OK(ad_scene_set(&s, "body.file =  a b#c.dat  "));
    ENSURE(!strcmp(s.file, "a b#c.dat"));
    ENSURE_OK(ad_scene_set(&s, "run.seed=18446744073709551615"));
    ENSURE(s.seed == 18446744073709551615ull);
    ENSURE_OK(ad_scene_set(&s, "run.seed = 12345678901234567891 "));
    ENSURE(s.seed == 12345678901234567891ull);
    REFUSED_SET("", "run.seed=1.2345678901234567e19", "run.seed", "plain digits", NULL);
    REFUSED_SET("", "run.seed=18446744073709551616", "run.seed", "out of range", NULL);
    ENSURE_OK(ad_scene_finish(&s));
    ensure_round_trip(&s, "seed and file");
    /* a cold stream (gas.temperature = 0) past specular surfaces: their temperatures stay auto in the copy,
     * since 0 is no value the key takes (a fuzzer's finding) */
    ENSURE_OK(load(&s, "[gas]\ntemperature = 0\narea_fraction = 0.01\n"));
    ENSURE_OK(ad_scene_finish(&s));
    ensure_round_trip(&s, "a cold stream");
    REFUSED("[gas]\ntemperature = 0\narea_fraction = 0.01\n[body]\nsurface = diffuse\n", "body.wall_temperature",
            "above 0", NULL);
    const char *shipped[] = {"default", "closed_box", "bow_shock", "flat_plate_rarefied"};
    for (size_t i = 0; i < sizeof shipped / sizeof *shipped; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/scenes/%s.ini", AD_SOURCE_DIR, shipped[i]);
        ad_scene_defaults(&s);
        if (ENSURE_OK(ad_scene_load(&s, path)) && ENSURE_OK(ad_scene_finish(&s))) ensure_round_trip(&s, path);
    }
}

static void test_paths(void)
{
    REFUSED("[output]\ndir =\n", "output.dir", "file-system root", NULL);
    REFUSED("[output]\ndir =    \t \n", "output.dir", "file-system root", NULL);
    REFUSED_SET("", "output.dir=  ", "output.dir", "file-system root", NULL);
    char set[2200], *x = repeat('d', 2000);
    snprintf(set, sizeof set, "output.dir=%.193s", x);
    REFUSED_SET("", set, "output.dir", "193 characters long; at most 192", NULL);
    snprintf(set, sizeof set, "body.file=%.192s", x);
    REFUSED_SET("", set, "body.file", "192 characters long; at most 191", NULL);
    snprintf(set, sizeof set, "body.file=%s", x);
    REFUSED_SET("", set, "body.file", "2000 characters long", NULL);
    ad_scene s;
    snprintf(set, sizeof set, "output.dir=%.192s", x);
    ENSURE_OK(load(&s, ""));
    ENSURE_OK(ad_scene_set(&s, set));
    ENSURE(strlen(s.dir) == 192);
    ENSURE_OK(ad_scene_finish(&s));
    ensure_round_trip(&s, "a 192-character dir");
    snprintf(set, sizeof set, "/tmp/%s.ini", x);
    ad_scene_defaults(&s);
    ad_status st = ad_scene_load(&s, set);
    ENSURE_MSG(st.code == AD_ERR_INVALID && strstr(st.message, "at most 1023"), "%s", st.message);
    free(x);
}

static void test_numbers(void)
{
    REFUSED_SET("", "run.steps=1e400", "run.steps", "not a number", NULL);
    REFUSED_SET("", "run.steps=nan", "run.steps", "not a number", NULL);
    REFUSED_SET("", "gas.mass=inf", "gas.mass", "not a number", NULL);
    REFUSED_SET("", "gas.mass=1e-400", "gas.mass", "not a number", NULL);
    REFUSED_SET("", "run.steps=12abc", "run.steps", "not a number", NULL);
    REFUSED_SET("", "run.steps=-3", "run.steps", "out of range", NULL);
    REFUSED_SET("", "run.steps=2.5", "run.steps", "out of range", NULL);
    REFUSED_SET("", "gas.warp=1", "warp", "unknown key", NULL);
    REFUSED_SET("", "gas.radius", "--set", "section.key=value", NULL);
}

/* A small flow tunnel and a small box to vary. */
static const char *FLOW = "[tunnel]\nwidth = 40\nheight = 20\nwalls = periodic\nreservoir = 0\n[gas]\n"
                          "area_fraction = 0.05\n[body]\nshape = none\n[run]\nsteps = 100\nsettle_steps = 10\nthreads = 1\n"
                          "backend = cpu\n[output]\nfield_cell = 2\n";
static const char *BOX = "[tunnel]\nkind = box\nwidth = 20\nheight = 20\n[gas]\narea_fraction = 0.2\n[body]\n"
                         "shape = none\n[run]\nsteps = 100\nsettle_steps = 10\nthreads = 1\nbackend = cpu\n";

static void test_meaningless_values(void)
{
    REFUSED_SET(BOX, "gas.area_fraction=1e-6", "gas.area_fraction", "no disc", "smallest that gives one is 0.000981749");
    REFUSED_SET(FLOW, "gas.mass=1e299", "gas.mass", NULL, NULL);
    REFUSED_SET(FLOW, "gas.mass=1e-300", "gas.mass", NULL, NULL);
    REFUSED_SET(BOX, "tunnel.gravity=1e30", "tunnel.gravity", "falls", NULL);
    REFUSED_SET(BOX, "tunnel.gravity=2000", "tunnel.gravity", "weight", NULL);
    REFUSED_SET(FLOW, "gas.temperature=3e38", "gas.temperature", "beyond a float", NULL);
    REFUSED_SET(FLOW, "gas.mach=1e20", "gas.mach", "beyond a float", NULL);
    REFUSED_SET(FLOW, "[gas]\ntemperature = 0\nmach = 2\n", "gas.mach", "temperature", NULL);
    REFUSED_SET(FLOW, "run.dt_max=1e-300", "run.dt_max", "would not move", NULL);
    REFUSED_SET(FLOW, "run.contact_steps=1e9", "run.contact_steps", "would not move", NULL);
    REFUSED_SET(FLOW, "tunnel.width=1e9", "tunnel.width", "cannot be resolved in float", NULL);
    REFUSED_SET(FLOW, "tunnel.height=1e9", "tunnel.height", "cannot be resolved in float", NULL);
    REFUSED_SET(FLOW, "[tunnel]\nwalls = far_field\nreservoir = 1e12\n",
            "tunnel.reservoir", "cannot be resolved in float", NULL);
    REFUSED_SET(FLOW, "[tunnel]\nwalls = far_field\nreservoir = auto\n[gas]\ntemperature = 0\narea_fraction = 0.3\n",
                "tunnel.reservoir", "temperature 0", NULL);
    REFUSED_SET(FLOW, "gas.stiffness=1e39", "gas.stiffness", "float", NULL);
    REFUSED_SET(FLOW, "gas.radius=1e-30", "gas.radius", "float", NULL);
    REFUSED_SET(BOX, "gas.temperature=0", "gas.temperature", "nothing would happen", NULL);
    REFUSED_SET(BOX, "gas.temperature=1e-300", "gas.temperature", "would not move", NULL);
    REFUSED_SET(FLOW, "[gas]\ntemperature = 0\nvelocity = 1e-200\n", "gas.velocity",
            "would not move", NULL);
    REFUSED_SET(BOX, "run.max_move=1e-9", "run.max_move", "cannot be resolved in float", NULL);
    REFUSED_SET(BOX, "output.field_cell=1e300", "output.field_cell", "does not fit", NULL);
    /* a reservoir band rounded up to whole cells of a huge cell_size */
    REFUSED_SET(FLOW, "[tunnel]\nwalls = far_field\nreservoir = 4\ncell_size = 1e7\n",
            "tunnel.cell_size", NULL, NULL);
    REFUSED_SET(FLOW, "[tunnel]\nwidth = 1e6\nheight = 1e6\n[gas]\nradius = 5\nstiffness = 1\n"
                   "area_fraction = 0.5\n[run]\ndt_max = 1\n[output]\nfield_cell = 100\n",
            "tunnel.width", "32-bit indices", NULL);
}

/* The scene builds a world that steps a few steps with a finite state. */
static void steps_finite(int line, const char *text, const char *set, const char *set2)
{
    ad_scene s;
    ad_status st = load(&s, text);
    if (!st.code && set) st = ad_scene_set(&s, set);
    if (!st.code && set2) st = ad_scene_set(&s, set2);
    if (!st.code) st = ad_scene_finish(&s);
    ad_world *w = NULL;
    if (!st.code) st = ad_scene_build(&s, &w);
    if (!st.code) st = ad_world_step(w, 20);
    ad_stats t;
    memset(&t, 0, sizeof t);
    if (!st.code) st = ad_world_get_stats(w, &t);
    tu_checks++;
    if (st.code || t.step != 20 || !(t.time > 0) || !isfinite(t.kinetic_energy) || t.count == 0) {
        tu_failures++;
        fprintf(stderr, "%s:%d: FAIL: %s %s: %s (step %llu, time %g, KE %g, %zu discs)\n", __FILE__, line,
                set ? set : "", set2 ? set2 : "", st.code ? st.message : "ran", (unsigned long long)t.step, t.time,
                t.kinetic_energy, (size_t)t.count);
    }
    ad_world_destroy(w);
}

static void test_edges_step(void)
{
    steps_finite(__LINE__, BOX, "gas.area_fraction=0.00098175", NULL); /* the smallest that gives a disc */
    steps_finite(__LINE__, BOX, "tunnel.gravity=-13", NULL);          /* the weight check allows 13.1 */
    steps_finite(__LINE__, BOX, "gas.mass=1e-30", "gas.stiffness=1e-26");
    steps_finite(__LINE__, FLOW, "gas.velocity=1e9", NULL);
    steps_finite(__LINE__, FLOW, "run.dt_max=1e-5", NULL);
    /* the float check allows a flow of 3 m/s to reach 32768 m with the default step */
    steps_finite(__LINE__, FLOW, "tunnel.width=32000", "gas.area_fraction=0.0001");
    REFUSED_SET(FLOW, "tunnel.width=33000", "run.contact_steps", "or the tunnel smaller", NULL);
    REFUSED_SET(FLOW, "tunnel.width=200000", "tunnel.width", "or the tunnel smaller", NULL);
}

/* A box whose one disc the body takes is refused when it is built (its clock would stand still). */
static void test_empty_box(void)
{
    ad_scene s;
    ad_status st = load(&s, BOX);
    if (!st.code) st = ad_scene_set(&s, "gas.area_fraction=0.00098175");
    if (!st.code) st = ad_scene_load_string(&s, "[body]\nshape = circle\nchord = 16\nx = 6\ny = 10\n", "t.ini");
    if (!st.code) st = ad_scene_finish(&s);
    ad_world *w = NULL;
    if (ENSURE_OK(st)) st = ad_scene_build(&s, &w);
    ENSURE_MSG(st.code == AD_ERR_INVALID && !strcmp(st.field, "gas.area_fraction") && w == NULL, "%s (%s)",
               st.message, st.field);
    ad_world_destroy(w);
}

/* A 3D run builds its body once (app/tunnel.c: out3_prepare's mesh into ad_scene_layout_with and
 * ad_scene_build_with): the world takes the mesh it is given, not one built again; without one,
 * ad_scene_build builds the scene's. */
static void test_body_once(void)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/scenes/sphere3d.ini", AD_SOURCE_DIR);
    ad_scene s;
    ad_scene_defaults(&s);
    REQUIRE_OK(ad_scene_load(&s, path));
    REQUIRE_OK(ad_scene_finish(&s));
    ad_mesh m;
    REQUIRE_OK(ad_scene_body_mesh(&s, &m, NULL));
    size_t full = m.n;
    ad_scene_layout l1, l2;
    REQUIRE_OK(ad_scene_layout_of(&s, &l1));
    REQUIRE_OK(ad_scene_layout_with(&s, &m, &l2));
    ad_world *a = NULL, *b = NULL;
    REQUIRE_OK(ad_scene_build(&s, &a));
    m.n = full / 2; /* half the surface: a mesh the scene would not build */
    REQUIRE_OK(ad_scene_build_with(&s, &m, &b));
    printf("body once: the scene's mesh %zu triangles, built %zu; given %zu, built %zu; probe to %.3f / %.3f m\n", full,
           a->tri.count, m.n, b->tri.count, l1.probe_x1, l2.probe_x1);
    ENSURE(full > 0 && a->tri.count == full && b->tri.count == m.n);
    ENSURE(l1.probe_x1 == l2.probe_x1 && l1.probe_x0 == l2.probe_x0 && l1.x_max == l2.x_max);
    m.n = full;
    ad_mesh_free(&m);
    ad_world_destroy(a);
    ad_world_destroy(b);
}

/* The world definition's own checks, for library users who bypass scenes. */
static void test_world_def(void)
{
    struct {
        const char *field;
        ad_world_def d;
    } c[8];
    int n = 0;
    for (int i = 0; i < 6; i++) c[i].d = tu_def();
    c[n].field = "mass", c[n++].d.mass = 1e299;
    c[n].field = "stiffness", c[n++].d.stiffness = 1e39;
    c[n].field = "x_max", c[n++].d.x_max = 1e9;
    c[n].field = "gravity_y", c[n++].d.gravity_y = -1e30;
    c[n].field = "stream_vx", c[n++].d.stream_temperature = 3e38;
    c[n].field = "radius", c[n++].d.radius = 1e-30;
    for (int i = 0; i < n; i++) {
        ad_status st = ad_world_def_validate(&c[i].d);
        ENSURE_MSG(st.code == AD_ERR_INVALID && !strcmp(st.field, c[i].field), "%s: %s (%s)", c[i].field,
                   st.message, st.field);
    }
    ad_world_def d = tu_def();
    d.x_max = d.y_max = 20;
    ad_world *w;
    REQUIRE_OK(ad_world_create(&d, &w));
    ad_fill_def f = {1, 1, 19, 19, 0.2, 0, 0, 1e300, 1, 0, 0, 0};
    ad_status st = ad_world_fill(w, &f, NULL);
    ENSURE_MSG(st.code == AD_ERR_INVALID && !strcmp(st.field, "fill.velocity"), "%s", st.message);
    ad_world_destroy(w);
}

/* fuzz/scene.dict holds every section, key and enum choice of the table (read off the reference). */
static void test_dictionary(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/fuzz/scene.dict", AD_SOURCE_DIR);
    FILE *f = fopen(path, "rb");
    ENSURE_MSG(f != NULL, "cannot open %s", path);
    if (!f) return;
    static char dict[1 << 16];
    size_t len = fread(dict, 1, sizeof dict - 1, f);
    dict[len] = 0;
    fclose(f);
    FILE *r = tmpfile();
    ad_scene_write_reference(r);
    rewind(r);
    char line[4096], want[160];
    int keys = 0;
    while (fgets(line, sizeof line, r)) {
        char name[128];
        if (sscanf(line, "## [%127[^]]]", name) == 1) {
            snprintf(want, sizeof want, "\"[%s]\"", name);
            ENSURE_MSG(strstr(dict, want), "fuzz/scene.dict lacks %s", want);
        }
        if (sscanf(line, "| `%127[^`]`", name) != 1) continue;
        keys++;
        snprintf(want, sizeof want, "\"%s\"", name);
        ENSURE_MSG(strstr(dict, want), "fuzz/scene.dict lacks the key %s", want);
        const char *one = strstr(line, "one of: ");
        if (!one) continue;
        char choices[256];
        if (sscanf(one + 8, "%255[^|]", choices) != 1) continue;
        for (char *t = strtok(choices, ", "); t; t = strtok(NULL, ", ")) {
            snprintf(want, sizeof want, "\"%s\"", t);
            ENSURE_MSG(strstr(dict, want), "fuzz/scene.dict lacks the choice %s of %s", want, name);
        }
    }
    fclose(r);
    ENSURE_MSG(keys >= 40, "read %d keys off the reference", keys);
}

int main(void)
{
    test_long_lines();
    test_not_scene_text();
    test_round_trip();
    test_paths();
    test_numbers();
    test_meaningless_values();
    test_edges_step();
    test_empty_box();
    test_world_def();
    test_body_once();
    test_dictionary();
    return tu_finish("test_scene");
}
