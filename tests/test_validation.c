/* Invalid definitions and arguments are rejected with the right code, a NULL world,
 * and a status that names the offending field. */
#include "test_util.h"

/* contact time of two discs at the defaults (k = 1e4, m_eff = 0.5, e = 1) */
#define TC_DEFAULT (TU_PI * sqrt(0.5 / 1e4))

static ad_world *const SENTINEL = (ad_world *)&tu_checks; /* any non-NULL address */

/* Expects ad_world_def_validate and ad_world_create to reject def with AD_ERR_INVALID
 * naming `field` (also in the message) and to leave *out NULL. */
static void expect_invalid(const ad_world_def *def, const char *field, const char *what, int line)
{
    ad_status v = ad_world_def_validate(def);
    ad_world *w = SENTINEL;
    ad_status c = ad_world_create(def, &w);
    const ad_status *sts[2] = {&v, &c};
    const char *fn[2] = {"ad_world_def_validate", "ad_world_create"};
    for (int i = 0; i < 2; i++) {
        const ad_status *s = sts[i];
        ENSURE_MSG(s->code == AD_ERR_INVALID, "line %d (%s): %s returned %s, expected AD_ERR_INVALID (message: %s)",
                   line, what, fn[i], ad_code_name(s->code), s->message);
        ENSURE_MSG(strcmp(s->field, field) == 0, "line %d (%s): %s field '%s', expected '%s'", line, what, fn[i],
                   s->field, field);
        ENSURE_MSG(strstr(s->message, field) != NULL, "line %d (%s): %s message does not name '%s': %s", line, what,
                   fn[i], field, s->message);
        ENSURE_MSG(memchr(s->field, '\0', sizeof s->field) && memchr(s->message, '\0', sizeof s->message),
                   "line %d: status strings not terminated", line);
    }
    ENSURE_MSG(w == NULL, "line %d (%s): *out = %p after a failed create, expected NULL", line, what, (void *)w);
    if (w && w != SENTINEL) ad_world_destroy(w);
}

static void expect_valid(const ad_world_def *def, const char *what, int line)
{
    ad_status v = ad_world_def_validate(def);
    ENSURE_MSG(v.code == AD_OK, "line %d (%s): validate returned %s, field '%s': %s", line, what,
               ad_code_name(v.code), v.field, v.message);
    ENSURE_MSG(v.code != AD_OK || v.field[0] == '\0', "line %d (%s): OK status with field '%s'", line, what,
               v.field);
    ad_world *w = NULL;
    ad_status c = ad_world_create(def, &w);
    ENSURE_MSG(c.code == AD_OK && w != NULL, "line %d (%s): create returned %s, field '%s': %s", line, what,
               ad_code_name(c.code), c.field, c.message);
    if (w) ad_world_destroy(w);
}

#define INVALID(field, what, ...)                                                      \
    do {                                                                               \
        ad_world_def d = tu_def();                                                     \
        __VA_ARGS__;                                                                   \
        expect_invalid(&d, field, what, __LINE__);                                     \
    } while (0)

#define VALID(what, ...)                                                               \
    do {                                                                               \
        ad_world_def d = tu_def();                                                     \
        __VA_ARGS__;                                                                   \
        expect_valid(&d, what, __LINE__);                                              \
    } while (0)

static void definitions(void)
{
    const double nan = NAN, inf = INFINITY;

    VALID("defaults", (void)0);
    VALID("restitution 1, max_move 1, contact_steps 8", d.restitution = 1.0; d.max_move = 1.0; d.contact_steps = 8.0);
    VALID("fixed dt resolving the contact", d.adaptive_dt = 0; d.dt = TC_DEFAULT / 10.0);
    VALID("periodic, small restitution", d.boundary_x = AD_BOUNDARY_PERIODIC; d.restitution = 0.05;
          d.wall_restitution = 0.05);

    INVALID("radius", "radius negative", d.radius = -0.5);
    INVALID("radius", "radius zero", d.radius = 0.0);
    INVALID("radius", "radius NaN", d.radius = nan);
    INVALID("capacity", "capacity 0", d.capacity = 0);
    INVALID("mass", "mass 0", d.mass = 0.0);
    INVALID("mass", "mass negative", d.mass = -1.0);
    INVALID("mass", "mass NaN", d.mass = nan);
    INVALID("stiffness", "stiffness NaN", d.stiffness = nan);
    INVALID("stiffness", "stiffness inf", d.stiffness = inf);
    INVALID("stiffness", "stiffness 0", d.stiffness = 0.0);
    INVALID("restitution", "restitution 0", d.restitution = 0.0);
    INVALID("restitution", "restitution 1.5", d.restitution = 1.5);
    INVALID("restitution", "restitution NaN", d.restitution = nan);
    INVALID("wall_restitution", "wall_restitution 0", d.wall_restitution = 0.0);
    INVALID("wall_restitution", "wall_restitution 1.5", d.wall_restitution = 1.5);
    INVALID("x_max", "x_max == x_min", d.x_max = d.x_min);
    INVALID("x_max", "x_max < x_min", d.x_min = 10.0; d.x_max = 5.0);
    INVALID("y_max", "y_max < y_min", d.y_min = 10.0; d.y_max = -5.0);
    INVALID("dt", "fixed dt of 2/8 contact time", d.adaptive_dt = 0; d.dt = 2.0 * TC_DEFAULT / 8.0);
    INVALID("dt", "fixed dt of a whole contact time", d.adaptive_dt = 0; d.dt = TC_DEFAULT);
    INVALID("dt", "stiff contact, fixed default dt", d.adaptive_dt = 0; d.stiffness = 1e6; d.dt = 1e-3);
    INVALID("contact_steps", "contact_steps 7", d.contact_steps = 7.0);
    INVALID("contact_steps", "contact_steps 0", d.contact_steps = 0.0);
    INVALID("contact_steps", "contact_steps NaN", d.contact_steps = nan);
    INVALID("max_move", "max_move 0", d.max_move = 0.0);
    INVALID("max_move", "max_move 1.5", d.max_move = 1.5);
    INVALID("max_move", "max_move NaN", d.max_move = nan);
    INVALID("internal_cookie", "cookie zeroed", d.internal_cookie = 0);
    INVALID("internal_cookie", "all-zero definition", memset(&d, 0, sizeof d));
}

static void particles(void)
{
    ad_world_def d = tu_def();
    d.capacity = 10;
    d.x_max = d.y_max = 20.0;
    ad_world *w = NULL;
    REQUIRE_OK(ad_world_create(&d, &w));
    ad_particle p[11];
    for (int i = 0; i < 11; i++) p[i] = (ad_particle){1.0f + 1.5f * (float)i, 5.0f, 0.0f, 0.0f};
    ad_stats s;

    ad_status st = ad_world_add_particles(w, p, 11);
    ENSURE_MSG(st.code == AD_ERR_CAPACITY, "adding 11 to capacity 10 returned %s: %s", ad_code_name(st.code),
               st.message);
    s = tu_stats(w);
    ENSURE_MSG(s.count == 0, "a failed add left %zu particles", s.count);
    ENSURE_OK(ad_world_add_particles(w, p, 10));
    st = ad_world_add_particles(w, p + 10, 1);
    ENSURE_MSG(st.code == AD_ERR_CAPACITY, "adding 1 to a full world returned %s: %s", ad_code_name(st.code),
               st.message);
    s = tu_stats(w);
    ENSURE(s.count == 10);
    ad_world_destroy(w);

    w = NULL;
    REQUIRE_OK(ad_world_create(&d, &w));
    ad_particle bad[3] = {{2.0f, 2.0f, 0.0f, 0.0f}, {4.0f, NAN, 0.0f, 0.0f}, {6.0f, 2.0f, 0.0f, 0.0f}};
    st = ad_world_add_particles(w, bad, 3);
    ENSURE_MSG(st.code == AD_ERR_INVALID, "a NaN position returned %s: %s", ad_code_name(st.code), st.message);
    bad[1] = (ad_particle){4.0f, 2.0f, INFINITY, 0.0f};
    st = ad_world_add_particles(w, bad, 3);
    ENSURE_MSG(st.code == AD_ERR_INVALID, "an infinite velocity returned %s: %s", ad_code_name(st.code), st.message);
    s = tu_stats(w);
    ENSURE_MSG(s.count == 0, "failed adds left %zu particles", s.count);

    ad_fill_def f = {0.0, 0.0, 20.0, 20.0, 0.9, 0.0, 0.0, 1.0, 1, 0, 0, 0};
    size_t added = 12345;
    st = ad_world_fill(w, &f, &added);
    ENSURE_MSG(st.code == AD_ERR_INVALID, "fill at area fraction 0.9 returned %s: %s", ad_code_name(st.code),
               st.message);
    ad_world_destroy(w);
}

/* MemAvailable from /proc/meminfo in bytes, or 0 when unknown. */
static double host_bytes_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) return 0.0;
    char line[256];
    double kib = 0.0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lf kB", &kib) == 1) break;
    fclose(f);
    return kib * 1024.0;
}

static void memory(void)
{
    /* beyond what uint32 ids can number: rejected, as invalid or as too big */
    ad_world_def huge = tu_def();
    huge.capacity = (size_t)1 << 45;
    ad_world *w = SENTINEL;
    ad_status st = ad_world_create(&huge, &w);
    ENSURE_MSG(st.code == AD_ERR_NO_MEMORY || st.code == AD_ERR_INVALID, "capacity 2^45 returned %s: %s",
               ad_code_name(st.code), st.message);
    ENSURE_MSG(strcmp(st.field, "capacity") == 0 || st.code == AD_ERR_NO_MEMORY, "capacity 2^45: field '%s'",
               st.field);
    ENSURE_MSG(w == NULL, "*out = %p after a failed create", (void *)w);
    if (w && w != SENTINEL) ad_world_destroy(w);
    printf("capacity 2^45: %s (%s)\n", ad_code_name(st.code), st.message);

    /* the largest capacity ids allow (~4.3e9 discs, hundreds of GiB): no memory */
    ad_world_def d = tu_def();
    d.capacity = (size_t)UINT32_MAX - 1;
    size_t need = ad_world_bytes_needed(&d);
    ENSURE_MSG(need / sizeof(ad_particle) >= d.capacity, "bytes needed %zu for capacity %zu", need, d.capacity);
    double avail = host_bytes_available();
    if (avail > 0.0 && (double)need < avail) {
        printf("NOTE: %.0f bytes available, more than the %zu needed: skipping the AD_ERR_NO_MEMORY check\n", avail,
               need);
    } else {
        w = SENTINEL;
        st = ad_world_create(&d, &w);
        ENSURE_MSG(st.code == AD_ERR_NO_MEMORY, "capacity %zu (%zu bytes) returned %s: %s", d.capacity, need,
                   ad_code_name(st.code), st.message);
        ENSURE_MSG(w == NULL, "*out = %p after a failed create", (void *)w);
        if (w && w != SENTINEL) ad_world_destroy(w);
        ENSURE_MSG(strstr(st.message, "bytes") || strstr(st.message, "GiB") || strstr(st.message, "GB") ||
                       strstr(st.message, "TiB") || strstr(st.message, "TB"),
                   "the message does not say how much memory was needed: %s", st.message);
        printf("capacity %zu: %s (%s)\n", d.capacity, ad_code_name(st.code), st.message);
    }

    /* a small world needs a sensible, nonzero number of bytes */
    ad_world_def small = tu_def();
    small.capacity = 1000;
    size_t need_small = ad_world_bytes_needed(&small);
    ENSURE_MSG(need_small >= 1000 * sizeof(ad_particle) && need_small < need, "bytes needed %zu for 1000 discs",
               need_small);
}

int main(void)
{
    definitions();
    particles();
    memory();
    return tu_finish("test_validation");
}
