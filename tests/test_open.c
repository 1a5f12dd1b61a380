/* Open sides and the free-stream reservoir (src/physics/open.h) on the CPU: the entering discs' speeds against
 * kinetic theory, the entry rate, every disc accounted for, ids, thread counts, checkpoints, the capacity. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/world_internal.h"
#include "physics/open.h"
#include "physics/room.h"
#include "test_gpu_tunnel.h"
#include "test_util.h"

/* The moments of the flux-weighted normal speed, density x phi(x - a) on x > 0, by quadrature. */
static void flux_moments(double a, double *mean, double *var)
{
    double m[4] = {0, 0, 0, 0};
    const int n = 200000;
    double hi = fmax(a, 0.0) + 12.0, h = hi / n;
    for (int i = 0; i < n; i++) {
        double x = (i + 0.5) * h, w = x * exp(-0.5 * (x - a) * (x - a)) * h;
        m[0] += w;
        m[1] += w * x;
        m[2] += w * x * x;
    }
    *mean = m[1] / m[0];
    *var = m[2] / m[0] - *mean * *mean;
}

/* ad_flux_speed: its three branches (a below -1, between -1 and 0, above 0) draw the flux-weighted
 * speed, mean and variance within 4 standard errors of the quadrature's. */
static void speeds(void)
{
    printf("entering speeds against kinetic theory:\n");
    const double as[] = {-4.0, -1.5, -0.99, -0.3, 0.0, 0.8, 3.0, 10.0};
    for (size_t k = 0; k < sizeof as / sizeof as[0]; k++) {
        double a = as[k], mu, var;
        flux_moments(a, &mu, &var);
        const int n = 200000;
        double s = 0, s2 = 0;
        for (int i = 0; i < n; i++) {
            double x = ad_flux_speed(0x1234u + (uint64_t)k, (uint64_t)i, a);
            s += x;
            s2 += x * x;
        }
        double m = s / n, v = s2 / n - m * m, se = sqrt(var / n);
        printf("  a = %+5.2f: mean %.5f (theory %.5f), variance %.5f (theory %.5f)\n", a, m, mu, v, var);
        ENSURE_NEAR(m, mu, 4.0 * se);
        ENSURE_REL(v, var, 0.02);
    }
}

/* An empty free-molecular tunnel open on all sides, no reservoir: the discs that enter per second are
 * the sum of the sides' kinetic fluxes, and the count stays at the stream's. */
static void entry_rate(void)
{
    ad_world_def d = tu_channel(ad_default_world_def(), 20000, 60, 40, 2.0, 1.0);
    d.backend = AD_BACKEND_CPU;
    d.disc_contacts = 0;
    d.boundary_y = AD_BOUNDARY_OPEN;
    d.stream_vy = -0.5;
    d.cell_size = 4.0;
    d.threads = 2;
    ad_world *w;
    REQUIRE_OK(ad_world_create(&d, &w));
    double rate = 0;
    for (int f = 0; f < 4; f++) rate += w->params.side_rate[f];
    REQUIRE_OK(ad_world_step(w, 40000));
    ad_stats s = tu_stats(w);
    double expect = rate * s.time;
    printf("free-molecular entries: %llu entered in %.2f s, kinetic theory %.1f (%.2f %%); %zu discs, the stream "
           "holds %.0f\n",
           (unsigned long long)s.entered, s.time, expect, 100.0 * ((double)s.entered / expect - 1.0), s.count,
           d.stream_density * 60 * 40);
    /* the entries are counted, not drawn: the rate accumulated over the steps, within one disc a side */
    ENSURE_NEAR((double)s.entered, expect, 4.0);
    ENSURE_REL((double)s.count, d.stream_density * 60 * 40, 0.05);
    ad_world_destroy(w);
}

/* Every disc accounted for over 10^4 steps of the GPU tests' tunnel (open inlet and outlet, a reservoir,
 * a body, inelastic discs, gravity): the count is the start's + entered + added - left - removed; the
 * ids are unique; every disc is inside the domain. */
static void accounting(void)
{
    ad_world_def d = gt_def(AD_BACKEND_CPU, AD_INTEGRATOR_SYMPLECTIC_EULER);
    ad_world *w = gt_create(&d);
    gt_fill(w);
    size_t n0 = tu_stats(w).count;
    REQUIRE_OK(ad_world_step(w, 10000));
    ad_stats s = tu_stats(w);
    long long balance = (long long)n0 + (long long)s.entered + (long long)s.reservoir_added - (long long)s.left -
                        (long long)s.reservoir_removed;
    ad_particle *p = malloc(s.count * sizeof *p);
    uint32_t *id = malloc(s.count * sizeof *id);
    size_t got = 0, outside = 0, order = 0;
    REQUIRE_OK(ad_world_read_particles(w, AD_READ_BY_ID, s.count, p, id, NULL, NULL, &got));
    for (size_t i = 0; i < got; i++) {
        if (i && id[i] <= id[i - 1]) order++;
        if (!(p[i].x >= d.x_min && p[i].x < d.x_max && p[i].y >= d.y_min && p[i].y <= d.y_max)) outside++;
    }
    printf("accounting over 10^4 steps: %zu -> %zu discs (%llu entered, %llu left, reservoir +%llu -%llu; %u "
           "waiting), %zu ids out of order, %zu outside\n",
           n0, s.count, (unsigned long long)s.entered, (unsigned long long)s.left,
           (unsigned long long)s.reservoir_added, (unsigned long long)s.reservoir_removed, s.entries_waiting, order,
           outside);
    ENSURE((long long)s.count == balance && got == s.count && order == 0 && outside == 0);
    ENSURE(s.entered > 100 && s.left > 100 && s.reservoir_added > 0 && s.reservoir_removed > 0);
    free(p);
    free(id);
    ad_world_destroy(w);
}

/* The state of a world, by id, as bytes. */
static int same_world(ad_world *a, ad_world *b)
{
    ad_stats sa = tu_stats(a), sb = tu_stats(b);
    if (sa.count != sb.count || sa.entered != sb.entered || sa.reservoir_added != sb.reservoir_added) return 0;
    size_t n = sa.count;
    ad_particle *pa = malloc(n * sizeof *pa + 1), *pb = malloc(n * sizeof *pb + 1);
    uint32_t *ia = malloc(n * 4 + 1), *ib = malloc(n * 4 + 1);
    ad_world_read_particles(a, AD_READ_BY_ID, n, pa, ia, NULL, NULL, NULL);
    ad_world_read_particles(b, AD_READ_BY_ID, n, pb, ib, NULL, NULL, NULL);
    int same = !memcmp(pa, pb, n * sizeof *pa) && !memcmp(ia, ib, n * 4) && sa.body_impulse_x == sb.body_impulse_x &&
               sa.kinetic_energy == sb.kinetic_energy;
    free(pa);
    free(pb);
    free(ia);
    free(ib);
    return same;
}

/* The same world on 1, 2 and 3 threads, bit for bit; and a checkpoint taken mid-run (with entries
 * waiting for room and the reservoir's controllers part way) resumes bit for bit. */
static void threads_and_checkpoints(void)
{
    ad_world *w[3];
    for (int t = 0; t < 3; t++) {
        ad_world_def d = gt_def(AD_BACKEND_CPU, AD_INTEGRATOR_SYMPLECTIC_EULER);
        d.threads = t + 1;
        w[t] = gt_create(&d);
        gt_fill(w[t]);
        REQUIRE_OK(ad_world_step(w[t], 2000));
    }
    int same = same_world(w[0], w[1]) && same_world(w[0], w[2]);
    printf("open tunnel with a reservoir, 2000 steps on 1, 2 and 3 threads: %s\n", same ? "bit-identical" : "DIFFERENT");
    ENSURE(same);
    const char *path = "/tmp/aerodem_test_open.ckpt";
    REQUIRE_OK(ad_world_save(w[1], path, NULL, 0));
    ad_world *r;
    REQUIRE_OK(ad_world_load(path, AD_BACKEND_CPU, 1, &r, NULL, NULL));
    ENSURE(same_world(w[1], r));
    REQUIRE_OK(ad_world_step(w[1], 1500));
    REQUIRE_OK(ad_world_step(r, 1500));
    same = same_world(w[1], r);
    printf("a checkpoint of it at step 2000, resumed on 1 thread for 1500 steps: %s (%u entries waiting at the "
           "checkpoint)\n",
           same ? "bit-identical" : "DIFFERENT", tu_stats(w[1]).entries_waiting);
    ENSURE(same);
    remove(path);
    for (int t = 0; t < 3; t++) ad_world_destroy(w[t]);
    ad_world_destroy(r);
}

/* A stream denser than the capacity allows: the step fails with AD_ERR_CAPACITY and says so. */
static void capacity(void)
{
    /* 2400 discs at the stream's density */
    ad_world_def d = tu_channel(ad_default_world_def(), 500, 60, 40, 3.0, 1.0);
    d.backend = AD_BACKEND_CPU;
    d.disc_contacts = 0;
    ad_world *w;
    REQUIRE_OK(ad_world_create(&d, &w));
    ad_status st = ad_world_step(w, 20000);
    printf("capacity 500 in a stream of 2400 discs: %s\n", st.message);
    ENSURE(st.code == AD_ERR_CAPACITY && strstr(st.message, "capacity of 500"));
    ENSURE(tu_stats(w).count <= 500);
    ad_world_destroy(w);
}

/* A stream so dense that one step would bring 10^9 discs a side: the step fails at once with the
 * capacity error, on a world with disc contacts (where a step places only what has room) as without,
 * instead of drawing them all (it took minutes and gigabytes before ad_entries_overflow). */
static void stream_flood(void)
{
    for (int contacts = 0; contacts < 2; contacts++) {
        /* the CPU, or AERODEM_TEST_BACKEND's (test_open flood on a GPU) */
        ad_world_def d = tu_channel(tu_def(), 400, 20, 20, 3.0, 1e12);
        d.disc_contacts = contacts;
        ad_world *w;
        REQUIRE_OK(ad_world_create(&d, &w));
        ad_status st = ad_world_step(w, 1);
        printf("a stream of 1e12 discs/m^2, contacts %d: %s\n", contacts, st.message);
        ENSURE(st.code == AD_ERR_CAPACITY && strstr(st.message, "capacity of 400"));
        ad_stats after;
        st = ad_world_get_stats(w, &after); /* the GPU repeats the step's error here; the CPU reads on */
        ENSURE(st.code == AD_ERR_CAPACITY || (st.code == AD_OK && after.count <= 400));
        ad_world_destroy(w);
    }
}

/* Definitions the open sides refuse, by name. */
static void refusals(void)
{
    ad_world_def d = ad_default_world_def();
    d.reservoir = 4.0;
    ad_status st = ad_world_def_validate(&d);
    ENSURE(st.code == AD_ERR_INVALID && !strcmp(st.field, "reservoir"));
    d = ad_default_world_def();
    d.boundary_x = AD_BOUNDARY_OPEN;
    d.stream_density = -1.0;
    st = ad_world_def_validate(&d);
    ENSURE(st.code == AD_ERR_INVALID && !strcmp(st.field, "stream_density"));
    d.stream_density = 1.0;
    d.reservoir = 60.0; /* two bands of 60 m in a domain of 100 */
    st = ad_world_def_validate(&d);
    ENSURE(st.code == AD_ERR_INVALID && !strcmp(st.field, "reservoir"));
    /* a closed world without discs: nothing moves and its clock would stand still (a run loop waiting
     * for its step spun forever) */
    d = tu_def();
    ad_world *w;
    REQUIRE_OK(ad_world_create(&d, &w));
    st = ad_world_step(w, 10);
    ENSURE(st.code == AD_ERR_INVALID && !strcmp(st.field, "count"));
    ENSURE(tu_stats(w).step == 0);
    ad_world_destroy(w);
    printf("refused: a reservoir without open sides, a negative stream density, bands wider than the domain, "
           "stepping an empty closed world\n");
}

/* The step's spots in buckets (room.h) give the plain test's answer, spot by spot: no earlier spot within
 * a diameter. Spots crowded along sides and across a periodic seam, pairs at a diameter to rounding, a
 * periodic axis shorter than three diameters, and a spot far outside the cells' usual range. */
static void spot_buckets(void)
{
    enum { N = 3000 };
    static ad_state spots[N];
    static uint32_t head[AD_SPOT_BUCKETS], next[N];
    const struct {
        float len_x, len_y;
        int px, py;
    } worlds[] = {{400, 300, 0, 0}, {400, 300, 1, 0}, {400, 300, 0, 1}, {2.5f, 300, 1, 0}, {60, 7.3f, 1, 1}};
    uint64_t r = 12345;
    size_t blocked = 0, total = 0;
    for (int wdx = 0; wdx < 5; wdx++) {
        ad_params p;
        memset(&p, 0, sizeof p);
        p.radius = 0.5f;
        p.diameter = 1.0f;
        p.diameter_sq = 1.0f;
        p.x_min = -10.0f;
        p.y_min = 5.0f;
        p.len_x = worlds[wdx].len_x;
        p.len_y = worlds[wdx].len_y;
        p.x_max = p.x_min + p.len_x;
        p.y_max = p.y_min + p.len_y;
        p.half_x = 0.5f * p.len_x;
        p.half_y = 0.5f * p.len_y;
        p.periodic_x = worlds[wdx].px;
        p.periodic_y = worlds[wdx].py;
        for (int k = 0; k < N; k++) {
            r ^= r << 13, r ^= r >> 7, r ^= r << 17;
            double u = (double)(r >> 11) / 9007199254740992.0;
            r ^= r << 13, r ^= r >> 7, r ^= r << 17;
            double v = (double)(r >> 11) / 9007199254740992.0;
            ad_state q = {0, 0, 1, 0};
            switch (k % 4) {
            case 0: /* along the x_min side, a few diameters deep */
                q.x = p.x_min + (float)(3.0 * u);
                q.y = p.y_min + (float)(v * p.len_y);
                break;
            case 1: /* along y_max, near the corner with x_max (the seam where periodic) */
                q.x = p.x_max - (float)(fmin(p.len_x, 20.0) * u);
                q.y = p.y_max - (float)(2.0 * v);
                break;
            case 2: /* a diameter from an earlier spot, to rounding */
                if (k > 4) {
                    ad_state o = spots[k / 2];
                    double a = 6.283185307 * u, d = 1.0 + (v - 0.5) * 4e-7;
                    q.x = o.x + (float)(d * cos(a));
                    q.y = o.y + (float)(d * sin(a));
                    if (q.x >= p.x_max) q.x -= p.len_x;
                    if (q.y >= p.y_max) q.y -= p.len_y;
                    if (q.x < p.x_min) q.x = p.periodic_x ? q.x + p.len_x : p.x_min;
                    if (q.y < p.y_min) q.y = p.periodic_y ? q.y + p.len_y : p.y_min;
                    break;
                }
                /* fall through */
            default:
                q.x = p.x_min + (float)(u * p.len_x);
                q.y = p.y_min + (float)(v * p.len_y);
            }
            if (k == N - 1) q.x = 3e9f; /* far outside: the cells' range is clamped */
            spots[k] = q;
        }
        for (uint32_t b = 0; b < AD_SPOT_BUCKETS; b++) head[b] = AD_SPOT_NONE;
        for (uint32_t k = 0; k < N; k++) {
            uint32_t b = ad_spot_bucket_of(&p, spots[k]);
            next[k] = head[b];
            head[b] = k;
        }
        size_t differ = 0;
        for (uint32_t k = 0; k < N; k++) {
            int plain = 1;
            for (uint32_t j = 0; j < k && plain; j++) plain = !ad_room_near(&p, spots[j], spots[k].x, spots[k].y);
            int fast = ad_room_among_spots(&p, head, next, spots, k);
            differ += plain != fast;
            blocked += !plain;
            total++;
        }
        ENSURE_MSG(differ == 0, "world %d (%g x %g, periodic %d %d): %zu of %d spots judged differently through the "
                   "buckets", wdx, p.len_x, p.len_y, p.periodic_x, p.periodic_y, differ, N);
    }
    printf("spot buckets: %zu spots, %zu blocked by an earlier one, the same answers as the plain test\n", total,
           blocked);
    ENSURE(blocked > total / 20);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "flood") == 0) { /* one check, on AERODEM_TEST_BACKEND's backend */
        stream_flood();
        return tu_finish("test_open flood");
    }
    speeds();
    spot_buckets();
    refusals();
    entry_rate();
    accounting();
    threads_and_checkpoints();
    capacity();
    stream_flood();
    return tu_finish("test_open");
}
