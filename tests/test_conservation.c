/* 10^4 steps of a gas falling through a closed square obstacle (solid walls in x,
 * periodic in y, gravity -1): no disc is lost or duplicated, every id 0..n-1 is
 * present once, every position is finite and inside the domain, and no disc
 * crosses the obstacle's outline (those inside stay inside, those outside stay out). */
#include "test_util.h"

#define N_TARGET 2000
#define FRACTION 0.3
#define STEPS 10000
#define R 0.5

/* the closed square obstacle, centred in the domain */
static double sq_x0, sq_x1, sq_y0, sq_y1;

/* +1: centre inside the square by more than a radius; -1: outside by more than a
 * radius; 0: within a radius of the outline (in contact with it). */
static int side(const ad_particle *p)
{
    double x = p->x, y = p->y;
    double dx = fmax(sq_x0 - x, x - sq_x1), dy = fmax(sq_y0 - y, y - sq_y1);
    if (dx < -R && dy < -R) return 1;
    if (dx > 0.0 || dy > 0.0) {
        double ox = fmax(dx, 0.0), oy = fmax(dy, 0.0);
        if (hypot(ox, oy) > R) return -1;
    }
    return 0;
}

/* Three resting discs added in the reverse of the grid's cell order: after steps
 * that reorder the particles internally, each id still reads its own disc. */
static void ids_follow_particles(void)
{
    ad_world_def d = tu_def();
    d.x_max = d.y_max = 20.0;
    d.threads = 1;
    ad_world *w = NULL;
    REQUIRE_OK(ad_world_create(&d, &w));
    const ad_particle p[3] = {{15.5f, 15.5f, 0.0f, 0.0f}, {10.5f, 10.5f, 0.0f, 0.0f}, {5.5f, 5.5f, 0.0f, 0.0f}};
    REQUIRE_OK(ad_world_add_particles(w, p, 3));
    REQUIRE_OK(ad_world_step(w, 3));
    ad_particle q[3], r[3];
    uint32_t id[3];
    if (tu_read_by_id(w, 3, q, NULL))
        for (int i = 0; i < 3; i++)
            ENSURE_MSG(memcmp(&q[i], &p[i], sizeof p[i]) == 0,
                       "by id: disc %d added at (%.2f, %.2f) reads at (%.2f, %.2f) after 3 steps at rest", i, p[i].x,
                       p[i].y, q[i].x, q[i].y);
    size_t c = 0;
    ENSURE_OK(ad_world_read_particles(w, 0, 3, r, id, NULL, NULL, &c));
    for (size_t i = 0; i < c && i < 3; i++)
        ENSURE_MSG(id[i] < 3 && memcmp(&r[i], &p[id[i]], sizeof r[i]) == 0,
                   "internal order: slot %zu has id %u at (%.2f, %.2f)", i, id[i], r[i].x, r[i].y);
    ad_world_destroy(w);
}

int main(void)
{
    ids_follow_particles();

    const double L = sqrt(N_TARGET * TU_PI * R * R / FRACTION);
    ad_world_def d = tu_def();
    d.x_min = 0.0;
    d.x_max = L;
    d.y_min = -0.5 * L;
    d.y_max = 0.5 * L;
    d.boundary_x = AD_BOUNDARY_SOLID;
    d.boundary_y = AD_BOUNDARY_PERIODIC;
    d.gravity_y = -1.0;
    d.restitution = 0.9;
    d.wall_restitution = 0.9;
    d.threads = 1; /* the long run; test_threads covers thread counts */
    ad_world *w = NULL;
    REQUIRE_OK(ad_world_create(&d, &w));

    const double half = 6.0, cx = 0.5 * L, cy = 0.0;
    sq_x0 = cx - half;
    sq_x1 = cx + half;
    sq_y0 = cy - half;
    sq_y1 = cy + half;
    const ad_segment sq[4] = {
        {(float)sq_x0, (float)sq_y0, (float)sq_x1, (float)sq_y0},
        {(float)sq_x1, (float)sq_y0, (float)sq_x1, (float)sq_y1},
        {(float)sq_x1, (float)sq_y1, (float)sq_x0, (float)sq_y1},
        {(float)sq_x0, (float)sq_y1, (float)sq_x0, (float)sq_y0},
    };
    REQUIRE_OK(ad_world_add_segments(w, sq, 4));
    ad_fill_def f = {d.x_min + R, d.y_min + R, d.x_max - R, d.y_max - R, FRACTION, 0.0, 0.0, 1.0, 31337, 0, 0, 0};
    size_t n = 0;
    REQUIRE_OK(ad_world_fill(w, &f, &n));
    ENSURE_MSG(n > N_TARGET / 2, "fill added %zu discs", n);

    ad_particle *p0 = malloc(n * sizeof *p0), *p = malloc(n * sizeof *p);
    uint32_t *id = malloc(n * sizeof *id);
    unsigned char *seen = calloc(n, 1);
    tu_read_by_id(w, n, p0, NULL);
    size_t inside0 = 0, touching0 = 0;
    for (size_t i = 0; i < n; i++) {
        int s = side(&p0[i]);
        inside0 += s == 1;
        touching0 += s == 0;
    }
    ENSURE_MSG(touching0 == 0, "%zu discs placed touching the obstacle", touching0);

    REQUIRE_OK(ad_world_step(w, STEPS));
    ad_stats s = tu_stats(w);
    ENSURE(s.count == n);
    ENSURE(s.step == STEPS);

    /* ids in internal order: a permutation of 0..n-1 */
    size_t count = 0;
    ENSURE_OK(ad_world_read_particles(w, 0, n, p, id, NULL, NULL, &count));
    ENSURE(count == n);
    size_t bad_id = 0, dup_id = 0;
    for (size_t i = 0; i < count; i++) {
        if (id[i] >= n) bad_id++;
        else if (seen[id[i]]++) dup_id++;
    }
    ENSURE_MSG(bad_id == 0 && dup_id == 0, "%zu ids out of range, %zu duplicated", bad_id, dup_id);

    /* ids by id: exactly 0..n-1 in order */
    count = 0;
    ENSURE_OK(ad_world_read_particles(w, AD_READ_BY_ID, n, p, id, NULL, NULL, &count));
    ENSURE(count == n);
    size_t misordered = 0;
    for (size_t i = 0; i < count; i++) misordered += id[i] != (uint32_t)i;
    ENSURE_MSG(misordered == 0, "%zu ids out of place when read by id", misordered);

    size_t nonfinite = 0, outside = 0, crossed = 0, deep_wall = 0;
    double min_wall_gap = 1e30;
    for (size_t i = 0; i < count; i++) {
        if (!(isfinite(p[i].x) && isfinite(p[i].y) && isfinite(p[i].vx) && isfinite(p[i].vy))) {
            nonfinite++;
            continue;
        }
        if (!(p[i].x >= d.x_min && p[i].x <= d.x_max && p[i].y >= d.y_min && p[i].y <= d.y_max)) {
            if (outside < 5)
                fprintf(stderr, "disc %zu outside the domain at (%.9g, %.9g)\n", i, p[i].x, p[i].y);
            outside++;
        }
        double gap = fmin(p[i].x - d.x_min, d.x_max - p[i].x);
        if (gap < min_wall_gap) min_wall_gap = gap;
        if (gap < 0.5 * R) deep_wall++; /* a wall overlap of more than half a radius */
        int s0 = side(&p0[i]), s1 = side(&p[i]);
        if ((s0 == 1 && s1 == -1) || (s0 == -1 && s1 == 1)) {
            if (crossed < 5)
                fprintf(stderr, "disc %zu crossed the obstacle: (%.6g, %.6g) -> (%.6g, %.6g)\n", i, p0[i].x,
                        p0[i].y, p[i].x, p[i].y);
            crossed++;
        }
    }
    printf("%zu discs (%zu inside the obstacle), %d steps, t = %.3f s: %zu non-finite, %zu outside the domain, "
           "%zu crossed the obstacle, closest centre to a wall %.4f (radius %.2f), max overlap %.3f r, KE %.1f\n",
           n, inside0, STEPS, s.time, nonfinite, outside, crossed, min_wall_gap, R, s.max_overlap,
           s.kinetic_energy);
    ENSURE(nonfinite == 0);
    ENSURE(outside == 0);
    ENSURE(crossed == 0);
    ENSURE_MSG(deep_wall == 0, "%zu discs overlap a wall by more than half a radius (closest centre %.4f)", deep_wall,
               min_wall_gap);
    ENSURE_MSG(s.outside_grid == 0, "%llu discs outside the grid", (unsigned long long)s.outside_grid);
    ENSURE(isfinite(s.kinetic_energy));
    free(p0);
    free(p);
    free(id);
    free(seen);
    ad_world_destroy(w);
    return tu_finish("test_conservation");
}
