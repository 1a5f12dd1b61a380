/* The team of a CPU world whose threads were left to the library (src/cpu/thread_team_cpu.c): it
 * keeps its threads while they are faster, goes to fewer where steps on them are slower (cores
 * shared with other work), and comes back when the load goes; a world given its threads keeps
 * them. Driven by the step times it is told, then a real world stepped with threads = 0 against
 * one thread, bit for bit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/world_internal.h"
#include "cpu/cpu_world.h"
#include "test_util.h"

/* Steps of `discs` discs for `seconds` of simulated wall time, each taking the time the current team
 * takes per the rates (disc-steps a second on 1 thread and on more); returns the steps run on one
 * thread. */
static unsigned feed(cpu_world *c, double seconds, double rate1, double rate_more, size_t discs)
{
    unsigned on_one = 0;
    for (double t = 0.0; t < seconds;) {
        double dt = (double)discs / (c->threads == 1 ? rate1 : rate_more);
        on_one += c->threads == 1;
        ad_cpu_team_after_step(c, dt, discs);
        t += dt;
    }
    return on_one;
}

static void controller(void)
{
    cpu_world c;
    memset(&c, 0, sizeof c);
    ad_world_def d = ad_default_world_def();
    d.threads = 0;
    c.threads = 2;
    unsetenv("OMP_NUM_THREADS");
    ad_cpu_team_init(&c, &d);
    ENSURE(c.team.adapt);
    /* an idle machine: two threads twice as fast; the probes on one thread cost little */
    unsigned one = feed(&c, 20.0, 1e7, 2e7, 4000);
    ENSURE_MSG(c.threads == 2, "idle: the team is %d threads", c.threads);
    size_t steps = (size_t)(20.0 * 2e7 / 4000);
    printf("idle machine: %u of about %zu steps on one thread (the probes)\n", one, steps);
    ENSURE_MSG(one < steps / 50, "idle: %u of %zu steps on one thread", one, steps);
    /* the cores shared: two threads six times slower than one */
    feed(&c, 5.0, 1e7, 1.6e6, 4000);
    ENSURE_MSG(c.threads == 1 && c.team.home == 1, "loaded: the team is %d threads (home %d)", c.threads, c.team.home);
    /* the load gone: back to two */
    feed(&c, 10.0, 1e7, 2e7, 4000);
    ENSURE_MSG(c.team.home == 2, "idle again: the team's home is %d threads", c.team.home);
    /* a world given its threads keeps them */
    memset(&c, 0, sizeof c);
    d.threads = 2;
    c.threads = 2;
    ad_cpu_team_init(&c, &d);
    ENSURE(!c.team.adapt);
    feed(&c, 5.0, 1e7, 1.6e6, 4000);
    ENSURE(c.threads == 2);
}

/* A world left to choose its team gives the bits of one on one thread. */
static void same_bits(void)
{
    ad_particle *p[2];
    size_t n = 0;
    for (int k = 0; k < 2; k++) {
        ad_world_def d = tu_square(ad_default_world_def(), 60, AD_BOUNDARY_PERIODIC);
        d.backend = AD_BACKEND_CPU;
        d.capacity = 20000;
        d.restitution = 0.8;
        d.integrator = AD_INTEGRATOR_VERLET;
        d.threads = k ? 1 : 0;
        ad_world *w = NULL;
        REQUIRE_OK(ad_world_create(&d, &w));
        ad_fill_def f = {0, 0, 60, 60, 0.35, 0.5, -0.2, 1.0, 3, 0, 0, 0};
        REQUIRE_OK(ad_world_fill(w, &f, NULL));
        for (int i = 0; i < 40; i++) REQUIRE_OK(ad_world_step(w, 25));
        n = tu_stats(w).count;
        p[k] = malloc(n * sizeof(ad_particle));
        size_t got = 0;
        REQUIRE_OK(ad_world_read_particles(w, AD_READ_BY_ID, n, p[k], NULL, NULL, NULL, &got));
        ENSURE(got == n);
        ad_world_destroy(w);
    }
    ENSURE_MSG(memcmp(p[0], p[1], n * sizeof(ad_particle)) == 0, "threads left to the library: other bits");
    free(p[0]);
    free(p[1]);
}

int main(void)
{
    controller();
    same_bits();
    return tu_finish("test_thread_team");
}
