/* The wind tunnel: scene errors, checkpoint round trips and refusals, open sides, lift and drag signs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/scene.h"
#include "core/world_internal.h"
#include "physics/fields.h"
#include "test_util.h"

static char g_dir[512];

static const char *write_file(const char *name, const char *text)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    fputs(text, f);
    fclose(f);
    return path;
}

/* A scene error: the code, and every fragment in the message. */
static void expect_scene_error(const char *name, const char *text, ad_code code, const char *frag1,
                               const char *frag2)
{
    const char *path = write_file(name, text);
    ad_scene s;
    ad_scene_defaults(&s);
    ad_status st = ad_scene_load(&s, path);
    if (!st.code) st = ad_scene_finish(&s);
    ENSURE_MSG(st.code == code, "%s: code %d, expected %d (%s)", name, st.code, code, st.message);
    ENSURE_MSG(strstr(st.message, frag1) != NULL, "%s: message '%s' lacks '%s'", name, st.message, frag1);
    if (frag2) ENSURE_MSG(strstr(st.message, frag2) != NULL, "%s: message '%s' lacks '%s'", name, st.message, frag2);
    printf("  %-22s -> %s\n", name, st.message);
}

static void scene_errors(void)
{
    printf("scene errors:\n");
    expect_scene_error("unknown_key.ini", "[gas]\nradius = 0.5\nstifness = 1e4\n", AD_ERR_INVALID,
                       "unknown_key.ini:3:", "stifness");
    expect_scene_error("unknown_section.ini", "[gas]\nradius = 0.5\n\n[gass]\nmass = 1\n", AD_ERR_INVALID,
                       "unknown_section.ini:5:", "[gass]");
    expect_scene_error("not_number.ini", "[tunnel]\nwidth = 12O\n", AD_ERR_INVALID, "not_number.ini:2:",
                       "width = '12O' is not a number");
    expect_scene_error("out_of_range.ini", "; comment\n[gas]\narea_fraction = 0.9\n", AD_ERR_INVALID,
                       "out_of_range.ini:3:", "area_fraction");
    expect_scene_error("negative.ini", "[gas]\nradius = -1\n", AD_ERR_INVALID, "negative.ini:2:", "radius");
    expect_scene_error("bad_enum.ini", "[body]\nshape = airfoil\n", AD_ERR_INVALID, "bad_enum.ini:2:",
                       "none, naca, file, plate, wedge, circle");
    expect_scene_error("syntax.ini", "[gas\nradius = 1\n", AD_ERR_FORMAT, "syntax.ini:1:", NULL);
    expect_scene_error("two_speeds.ini", "[gas]\nvelocity = 3\nmach = 2\n", AD_ERR_INVALID, "two_speeds.ini",
                       "one of velocity");
    expect_scene_error("settle.ini", "[run]\nsteps = 100\nsettle_steps = 100\n", AD_ERR_INVALID, "settle_steps",
                       NULL);
    expect_scene_error("no_file.ini", "[body]\nshape = file\n", AD_ERR_INVALID, "[body] file", NULL);
    {
        ad_scene s;
        ad_scene_defaults(&s);
        char missing[1024];
        snprintf(missing, sizeof missing, "%s/does_not_exist.ini", g_dir);
        ad_status st = ad_scene_load(&s, missing);
        ENSURE(st.code == AD_ERR_IO);
        ENSURE(strstr(st.message, "does_not_exist.ini") != NULL);
        st = ad_scene_set(&s, "gas.stiffness=-3");
        ENSURE(st.code == AD_ERR_INVALID && strstr(st.message, "--set gas.stiffness=-3"));
        st = ad_scene_set(&s, "gas.velocity");
        ENSURE(st.code == AD_ERR_INVALID && strstr(st.message, "section.key=value"));
        st = ad_scene_set(&s, "gas.mach=3");
        ENSURE_OK(st);
        printf("  --set gas.stiffness=-3  -> %s\n", ad_scene_set(&s, "gas.stiffness=-3").message);
    }
    /* a coordinate file that is not an airfoil fails at build time with its line */
    {
        write_file("broken.dat", "broken\n1.0 0.0\n0.5 x\n");
        const char *path = write_file("uses_file.ini", "[body]\nshape = file\nfile = broken.dat\n");
        ad_scene s;
        ad_scene_defaults(&s);
        ad_status st = ad_scene_load(&s, path);
        if (!st.code) st = ad_scene_finish(&s);
        ad_world *w = NULL;
        if (!st.code) st = ad_scene_build(&s, &w);
        ENSURE(st.code == AD_ERR_FORMAT);
        ENSURE_MSG(strstr(st.message, "broken.dat:3") != NULL, "message: %s", st.message);
        ENSURE(w == NULL);
        printf("  %-22s -> %s\n", "uses_file.ini", st.message);
    }
}

/* A small flow scene, fast enough for the suite. */
static void small_scene(ad_scene *s, const char *shape_lines, double aoa)
{
    char text[2048];
    snprintf(text, sizeof text,
             "[tunnel]\nwidth = 64\nheight = 40\nwalls = solid\n"
             "[gas]\narea_fraction = 0.2\nmach = 3\ntemperature = 1\n"
             "[body]\n%s\nchord = 16\naoa = %g\nx = 20\ny = 20\n"
             "[run]\nthreads = 2\nseed = 7\n",
             shape_lines, aoa);
    const char *path = write_file("small.ini", text);
    ad_scene_defaults(s);
    REQUIRE_OK(ad_scene_load(s, path));
    REQUIRE_OK(ad_scene_finish(s));
}

static int same_particles(ad_world *a, ad_world *b)
{
    ad_stats sa = tu_stats(a), sb = tu_stats(b);
    if (sa.count != sb.count) return 0;
    size_t n = sa.count;
    ad_particle *pa = malloc(n * sizeof *pa), *pb = malloc(n * sizeof *pb);
    ad_world_read_particles(a, AD_READ_BY_ID, n, pa, NULL, NULL, NULL, NULL);
    ad_world_read_particles(b, AD_READ_BY_ID, n, pb, NULL, NULL, NULL, NULL);
    int same = memcmp(pa, pb, n * sizeof *pa) == 0 && sa.body_impulse_x == sb.body_impulse_x &&
               sa.body_impulse_y == sb.body_impulse_y && sa.time == sb.time;
    free(pa);
    free(pb);
    return same;
}

static void checkpoints(void)
{
    printf("checkpoints:\n");
    ad_scene s;
    small_scene(&s, "shape = naca\nnaca = 2412", 5);
    ad_world *a, *b;
    REQUIRE_OK(ad_scene_build(&s, &a));
    ad_field_def fd = {16, 10, 0, 0, 64, 40, 5, 0, 0.0, 0.0};
    REQUIRE_OK(ad_world_set_fields(a, &fd));
    REQUIRE_OK(ad_world_step(a, 300));
    char path[1024];
    snprintf(path, sizeof path, "%s/run.ckpt", g_dir);
    const char user[] = "caller block";
    REQUIRE_OK(ad_world_save(a, path, user, sizeof user));
    void *ub = NULL;
    size_t ubn = 0;
    REQUIRE_OK(ad_world_load(path, AD_BACKEND_AUTO, 1, &b, &ub, &ubn));
    ENSURE(ubn == sizeof user && ub && memcmp(ub, user, sizeof user) == 0);
    free(ub);
    ENSURE_MSG(same_particles(a, b), "the loaded world differs from the saved one");
    /* continuing both (the copy on one thread) stays bit-identical */
    REQUIRE_OK(ad_world_step(a, 400));
    REQUIRE_OK(ad_world_step(b, 400));
    ENSURE_MSG(same_particles(a, b), "a resumed run left the uninterrupted one");
    float fa[160], fb[160];
    uint64_t na, nb;
    REQUIRE_OK(ad_world_read_field(a, AD_FIELD_PRESSURE, fa, &na));
    REQUIRE_OK(ad_world_read_field(b, AD_FIELD_PRESSURE, fb, &nb));
    ENSURE(na == nb && na == 140);
    ENSURE(memcmp(fa, fb, sizeof fa) == 0);
    printf("  saved at step 300, resumed to 700 on another thread count: bit-identical\n");
    ad_world_destroy(b);

    /* refusals: corrupt byte, truncation, a foreign file, a missing file; none leaves a world */
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    rewind(f);
    unsigned char *buf = malloc((size_t)size);
    ENSURE(fread(buf, 1, (size_t)size, f) == (size_t)size);
    fclose(f);
    char bad[1100];
    struct {
        const char *name, *expect;
        long cut, flip;
    } cases[] = {{"flipped.ckpt", "corrupt", size, size / 2},
                 {"truncated.ckpt", "corrupt", size - 100, -1},
                 {"tiny.ckpt", "too short", 10, -1}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        snprintf(bad, sizeof bad, "%s/%s", g_dir, cases[k].name);
        f = fopen(bad, "wb");
        if (cases[k].flip >= 0) buf[cases[k].flip] ^= 0x10;
        fwrite(buf, 1, (size_t)cases[k].cut, f);
        if (cases[k].flip >= 0) buf[cases[k].flip] ^= 0x10;
        fclose(f);
        ad_world *w = (ad_world *)1;
        ad_status st = ad_world_load(bad, AD_BACKEND_AUTO, -1, &w, NULL, NULL);
        ENSURE_MSG(st.code == AD_ERR_FORMAT && w == NULL, "%s: code %d", cases[k].name, st.code);
        ENSURE_MSG(strstr(st.message, cases[k].expect) != NULL, "%s: %s", cases[k].name, st.message);
        printf("  %-16s -> %s\n", cases[k].name, st.message);
    }
    const char *foreign = write_file("foreign.ckpt", "this is a scene file, not a checkpoint, honest\n");
    ad_world *w = (ad_world *)1;
    ad_status st = ad_world_load(foreign, AD_BACKEND_AUTO, -1, &w, NULL, NULL);
    ENSURE(st.code == AD_ERR_FORMAT && w == NULL && strstr(st.message, "not an aerodem checkpoint"));
    printf("  %-16s -> %s\n", "foreign.ckpt", st.message);
    snprintf(bad, sizeof bad, "%s/missing.ckpt", g_dir);
    st = ad_world_load(bad, AD_BACKEND_AUTO, -1, &w, NULL, NULL);
    ENSURE(st.code == AD_ERR_IO && w == NULL);
    /* an unwritable target leaves no file and no temporary behind */
    snprintf(bad, sizeof bad, "%s/no/such/dir/x.ckpt", g_dir);
    st = ad_world_save(a, bad, NULL, 0);
    ENSURE(st.code == AD_ERR_IO);
    free(buf);
    ad_world_destroy(a);
}

/* Open sides (src/physics/open.h): discs leave through the outlet and the far field and the free
 * stream enters; the count changes but stays near the stream's own; no disc is ever outside the
 * world's domain (the tunnel and the reservoir's bands around it); the gas just inside the inlet
 * carries the free stream. */
static void inlet(void)
{
    printf("open sides:\n");
    ad_scene s;
    small_scene(&s, "shape = none", 0);
    s.walls = AD_BOUNDARY_OPEN;
    ad_scene_layout l;
    REQUIRE_OK(ad_scene_layout_of(&s, &l));
    ENSURE_MSG(l.reservoir > 0 && l.band[0] >= l.band[1] && l.band[2] > 0, "a dense flow gets a reservoir on every side");
    ad_world *w;
    REQUIRE_OK(ad_scene_build(&s, &w));
    size_t n0 = tu_stats(w).count;
    ad_field_def fd = {8, 1, 0, 8, 64, 32, 10, 0, 0.0, 0.0};
    REQUIRE_OK(ad_world_set_fields(w, &fd));
    REQUIRE_OK(ad_world_step(w, 20000)); /* about 2.6 flow-throughs */
    ad_stats st = tu_stats(w);
    printf("  %zu discs at the start, %zu after 20000 steps: %llu entered, %llu left, the reservoir added %llu and "
           "removed %llu\n",
           n0, st.count, (unsigned long long)st.entered, (unsigned long long)st.left,
           (unsigned long long)st.reservoir_added, (unsigned long long)st.reservoir_removed);
    ENSURE(st.entered > 0 && st.left > 0 && st.reservoir_added > 0);
    ENSURE_REL((double)st.count, (double)n0, 0.05);
    ENSURE(st.entries_lost == 0);
    float ux[8], T[8], n[8];
    REQUIRE_OK(ad_world_read_field(w, AD_FIELD_VELOCITY_X, ux, NULL));
    REQUIRE_OK(ad_world_read_field(w, AD_FIELD_TEMPERATURE, T, NULL));
    REQUIRE_OK(ad_world_read_field(w, AD_FIELD_DENSITY, n, NULL));
    double n_inf = s.area_fraction / (TU_PI * s.radius * s.radius);
    printf("  U = %.4f m/s, kT = 1: first column u = %.4f kT = %.4f n/n_inf = %.4f; last u = %.4f\n", s.velocity, ux[0],
           T[0], n[0] / n_inf, ux[7]);
    /* a short run (the long ones are tests/test_free_stream.c) */
    ENSURE_REL(ux[0], s.velocity, 0.03);
    ENSURE_REL(T[0], s.mass * s.temperature, 0.05);
    ENSURE_REL(n[0], n_inf, 0.05);
    ad_particle *p = malloc(st.count * sizeof *p);
    uint32_t *id = malloc(st.count * sizeof *id);
    size_t got = 0;
    REQUIRE_OK(ad_world_read_particles(w, AD_READ_BY_ID, st.count, p, id, NULL, NULL, &got));
    int inside = got == st.count, ascending = 1;
    for (size_t i = 0; i < got; i++) {
        inside &= p[i].x >= l.x_min && p[i].x < l.x_max && p[i].y >= l.y_min && p[i].y < l.y_max;
        if (i) ascending &= id[i] > id[i - 1];
    }
    ENSURE_MSG(inside, "a disc is outside the world's domain");
    ENSURE_MSG(ascending, "the ids read by id are not unique and ascending");
    free(p);
    free(id);
    ad_world_destroy(w);
}

/* The inflow is uniform although the body leaves a wake: the free stream enters through the open
 * inlet, whatever the outlet sees (with the earlier re-entry of the outlet's discs at the inlet the
 * body sat in its own wake), and never on top of another disc. A circle blocks a third of a
 * periodic channel; the density just inside the inlet, time averaged, must be as high behind the
 * body's height as beside it, and no step may show a deep overlap (a disc dropped onto another). */
static void inlet_profile(void)
{
    printf("inlet profile behind a body:\n");
    char text[1024];
    snprintf(text, sizeof text,
             "[tunnel]\nwidth = 64\nheight = 72\nwalls = periodic\n"
             "[gas]\narea_fraction = 0.05\nmach = 4\ntemperature = 1\n"
             "[body]\nshape = circle\nchord = 24\nx = 38\ny = 36\n"
             "[run]\nthreads = 2\nseed = 11\n");
    ad_scene s;
    ad_scene_defaults(&s);
    REQUIRE_OK(ad_scene_load(&s, write_file("wake.ini", text)));
    REQUIRE_OK(ad_scene_finish(&s));
    ad_world *w;
    REQUIRE_OK(ad_scene_build(&s, &w));
    ad_field_def fd = {1, 9, 0.5, 0, 8.5, 72, 5, 0, 0.0, 0.0};
    REQUIRE_OK(ad_world_set_fields(w, &fd));
    double transit = s.width / s.velocity, worst = 0;
    int phase = 0;
    while (tu_stats(w).time < 5.0 * transit) {
        REQUIRE_OK(ad_world_step(w, 5));
        ad_stats st = tu_stats(w);
        if (st.max_overlap > worst) worst = st.max_overlap;
        if (!phase && st.time > transit) { /* one transit to carry the wake to the outlet */
            REQUIRE_OK(ad_world_reset_fields(w));
            phase = 1;
        }
    }
    float n[9];
    REQUIRE_OK(ad_world_read_field(w, AD_FIELD_DENSITY, n, NULL));
    double behind = 0, beside = 0;
    int nb = 0, ns = 0;
    for (int j = 0; j < 9; j++) {
        double y = 4.0 + 8.0 * j; /* cell centres */
        if (fabs(y - 36.0) < 12.0) behind += n[j], nb++;
        else if (fabs(y - 36.0) > 16.0) beside += n[j], ns++;
    }
    behind /= nb;
    beside /= ns;
    printf("  density at the inlet behind the body %.4f, beside it %.4f (ratio %.4f); deepest overlap %.3f r\n",
           behind, beside, behind / beside, worst);
    /* measured: the plain wrap (the wake re-enters) 0.60; the old re-entry rule 1.04. The gas's own
     * contacts overlap by about 0.25 r here; dropping discs without looking for room, by 2 r. */
    ENSURE_REL(behind / beside, 1.0, 0.08);
    ENSURE_LE(worst, 0.5);
    ad_world_destroy(w);
}

/* Mean lift and drag coefficients with their standard error over interval means. */
static void coefficients(const char *shape, double aoa, int intervals, double *cl, double *cl_se, double *cd)
{
    ad_scene s;
    small_scene(&s, shape, aoa);
    ad_world *w;
    REQUIRE_OK(ad_scene_build(&s, &w));
    ad_flow_numbers f = ad_scene_flow_numbers(&s);
    double q = f.dynamic_pressure * s.chord;
    REQUIRE_OK(ad_world_step(w, 5000)); /* settle */
    tu_coef co = {0};
    ad_stats a = tu_stats(w);
    for (int k = 0; k < intervals; k++) {
        REQUIRE_OK(ad_world_step(w, 500));
        ad_stats b = tu_stats(w);
        tu_coef_add(&co, &a, &b, q, NULL, NULL);
        a = b;
    }
    tu_coef_result(&co, cl, cl_se, cd, NULL);
    ad_world_destroy(w);
}

static void lift_signs(void)
{
    printf("lift and drag signs (flow along +x, lift along +y):\n");
    double cl, se, cd;
    coefficients("shape = naca\nnaca = 0012", 0.0, 40, &cl, &se, &cd);
    printf("  NACA 0012 at  0 deg: CL = %+.4f +- %.4f, CD = %.4f\n", cl, se, cd);
    ENSURE_MSG(fabs(cl) < 3.0 * se, "symmetric airfoil at 0 deg: |CL| = %.4f >= 3 SE = %.4f", fabs(cl), 3 * se);
    ENSURE_MSG(cd > 0, "drag %.4f must push downstream", cd);
    coefficients("shape = naca\nnaca = 0012", 10.0, 40, &cl, &se, &cd);
    printf("  NACA 0012 at 10 deg: CL = %+.4f +- %.4f, CD = %.4f\n", cl, se, cd);
    ENSURE_MSG(cl > 3.0 * se, "positive angle must lift: CL = %.4f, SE = %.4f", cl, se);
    ENSURE(cd > 0);
    coefficients("shape = naca\nnaca = 0012", -10.0, 40, &cl, &se, &cd);
    printf("  NACA 0012 at -10 deg: CL = %+.4f +- %.4f, CD = %.4f\n", cl, se, cd);
    ENSURE_MSG(cl < -3.0 * se, "negative angle must push down: CL = %.4f, SE = %.4f", cl, se);
}

/* disc_contacts = 0: two discs on a head-on course pass through each other untouched,
 * while a wall still bounces them (the free-molecular switch). */
static void free_molecular_switch(void)
{
    for (int on = 0; on < 2; on++) {
        ad_world_def d = ad_default_world_def();
        d.backend = AD_BACKEND_CPU;
        d.disc_contacts = on;
        d.x_max = 40;
        d.y_max = 10;
        ad_world *w;
        REQUIRE_OK(ad_world_create(&d, &w));
        ad_particle p[2] = {{18.0f, 5.0f, 1.0f, 0.0f}, {22.0f, 5.0f, -1.0f, 0.0f}};
        REQUIRE_OK(ad_world_add_particles(w, p, 2));
        REQUIRE_OK(ad_world_step(w, 3000)); /* about 3.3 s: they meet after 1.5 s */
        ad_particle q[2];
        tu_read_by_id(w, 2, q, NULL);
        printf("disc contacts %s: disc 0 ends at x = %.3f with vx = %+.4f\n", on ? "on " : "off", q[0].x, q[0].vx);
        if (on) ENSURE(q[0].vx < -0.99f && q[0].x < 20.0f);                       /* bounced back */
        else ENSURE(q[0].vx == 1.0f && q[1].vx == -1.0f && q[0].x > 20.5f); /* passed through */
        ad_world_destroy(w);
    }
}

/* Every scene shipped in scenes/ parses, builds and steps. */
static void shipped_scenes(void)
{
    const char *names[] = {"default", "flat_plate_rarefied", "bow_shock", "closed_box"};
    printf("shipped scenes:\n");
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/scenes/%s.ini", AD_SOURCE_DIR, names[k]);
        ad_scene s;
        ad_scene_defaults(&s);
        ad_status st = ad_scene_load(&s, path);
        s.backend = AD_BACKEND_CPU;
        if (!st.code) st = ad_scene_finish(&s);
        ad_world *w = NULL;
        if (!st.code) st = ad_scene_build(&s, &w);
        if (!st.code) st = ad_world_step(w, 2);
        ENSURE_MSG(st.code == AD_OK, "%s: %s", path, st.message);
        ad_stats t;
        if (w) {
            ad_world_get_stats(w, &t);
            printf("  %-22s %9zu discs, step %g s\n", names[k], t.count, t.dt);
        }
        ad_world_destroy(w);
    }
}

/* The probe reads a drifting Maxwellian back from the discs moving along its direction: density, velocity
 * and temperature of the whole stream, at speed ratios from a gas at rest to a fast stream, along a
 * direction at 30 degrees; and without a direction, from every disc. Synthetic discs (Box-Muller), no world. */
static void probe_reading(void)
{
    const double ratios[] = {0.0, 0.5, 1.5, 4.0};
    const double ang = 30.0 * 3.14159265358979 / 180.0, sigma = 2.0, area = 10.0;
    const int discs = 400000;
    for (int all = 0; all < 2; all++)
        for (int r = 0; r < 4; r++) {
            double u = ratios[r] * sigma;
            ad_field_grid g = {0};
            g.probe = 1;
            g.probe_all = all;
            g.pdx = (float)cos(ang);
            g.pdy = (float)sin(ang);
            g.px0 = g.py0 = -1e9f;
            g.px1 = g.py1 = 1e9f;
            ad_probe_sums a = {0}, b = {0};
            a.area = b.area = area;
            a.directed = b.directed = !all;
            b.samples = 1;
            uint64_t x = 0x9E3779B97F4A7C15ull + (uint64_t)r;
            for (int k = 0; k < discs; k++) {
                double g2[2];
                for (int h = 0; h < 2; h++) {
                    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                    double u1 = ((x >> 11) + 0.5) * (1.0 / 9007199254740992.0);
                    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                    double u2 = ((x >> 11) + 0.5) * (1.0 / 9007199254740992.0);
                    g2[h] = sqrt(-2.0 * log(u1)) * cos(2.0 * 3.14159265358979 * u2);
                }
                double vp = u + sigma * g2[0], vq = sigma * g2[1]; /* along and across the stream */
                ad_state s = {0};
                s.vx = (float)(vp * cos(ang) - vq * sin(ang));
                s.vy = (float)(vp * sin(ang) + vq * cos(ang));
                if (!ad_in_probe(&g, s)) continue;
                double v[AD_PS_COUNT];
                ad_probe_values(&g, s, v);
                b.count += v[AD_PS_N];
                b.v_par += v[AD_PS_PAR];
                b.v_perp += v[AD_PS_PERP];
                b.v_par2 += v[AD_PS_PAR2];
                b.v_perp2 += v[AD_PS_PERP2];
            }
            ad_probe_stream f = ad_probe_between(&a, &b);
            double n0 = discs / area;
            ENSURE_MSG(fabs(f.density / n0 - 1.0) < 0.01, "probe (%s) at U/sigma %.1f: density %.4f of the true one",
                       all ? "every disc" : "directed", ratios[r], f.density / n0);
            ENSURE_MSG(fabs(f.velocity - u) < 0.01 * sigma, "probe (%s) at U/sigma %.1f: velocity %.4f, true %.4f",
                       all ? "every disc" : "directed", ratios[r], f.velocity, u);
            ENSURE_MSG(fabs(f.temperature / (sigma * sigma) - 1.0) < 0.01,
                       "probe (%s) at U/sigma %.1f: temperature %.4f of the true one", all ? "every disc" : "directed",
                       ratios[r], f.temperature / (sigma * sigma));
        }
}

int main(void)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/aerodem_test_tunnel_%d", (int)getpid());
    char cmd[600];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", g_dir);
    if (system(cmd) != 0) return 1;
    scene_errors();
    probe_reading();
    shipped_scenes();
    free_molecular_switch();
    checkpoints();
    inlet();
    inlet_profile();
    lift_signs();
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
    if (system(cmd) != 0) return 1;
    return tu_finish("test_tunnel");
}
