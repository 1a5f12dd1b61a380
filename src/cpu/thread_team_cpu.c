/* Threads that share: the number of threads a CPU step runs on, chosen from what the steps take when the cores are shared.
 *
 * OpenMP's threads meet at barriers several times a step. Where other processes keep the cores
 * busy, a thread that is not running holds up the others, and spinning while waiting (libgomp's
 * default) takes the time slices the late one needs: on 2 cores beside 4 busy processes, two
 * threads ran 6 to 16 times slower than on an idle machine, one thread 2.5 times
 * (docs/PERFORMANCE.md, "On a shared machine"). The waiting policy cannot be changed once the
 * OpenMP runtime has started (it reads OMP_WAIT_POLICY and GOMP_SPINCOUNT at start), and either
 * policy loses somewhere. So a world whose threads were left to the library (ad_world_def.threads
 * = 0, OMP_NUM_THREADS unset) measures instead: it runs windows of steps (at least WINDOW_S
 * seconds each) on its team and, now and then, one window on half or twice the team, and keeps
 * the team that stepped more discs a second (by more than SWITCH where it changes). A probe that
 * loses makes the next come later (every 4 windows, doubling to every 64), so an idle machine
 * loses under 1 % to the probes; a probe that wins makes the next come soon, so the team follows
 * the load as it comes and goes.
 *
 * Results do not depend on it: the CPU backend gives the same bits for any number of threads
 * (tests/test_threads.c), so a team may change between any two steps. */
#include "cpu_world.h"

#ifdef _OPENMP
#include <omp.h>
#endif
#include <stdlib.h>

#define WINDOW_S 0.02   /* a window's least duration [s] */
#define SWITCH 1.10     /* a probe must step this many times the discs a second to change the team */
#define EVERY_MIN 4u    /* home windows between probes, after a change */
#define EVERY_MAX 64u   /* and at most, after probes that lost */

void ad_cpu_team_init(cpu_world *c, const ad_world_def *d)
{
    ad_cpu_team *t = &c->team;
    t->max = c->threads;
    t->adapt = d->threads <= 0 && c->threads > 1 && !getenv("OMP_NUM_THREADS");
    t->home = c->threads;
    t->every = EVERY_MIN;
    t->dir = -1;
}

/* The team of the next probe: half the home team, or twice it (at most all), alternately. */
static int probe_size(ad_cpu_team *t)
{
    for (int k = 0; k < 2; k++) {
        int s = t->dir < 0 ? t->home / 2 : (t->home * 2 < t->max ? t->home * 2 : t->max);
        if (s >= 1 && s != t->home) return s;
        t->dir = -t->dir;
    }
    return t->home;
}

void ad_cpu_team_after_step(cpu_world *c, double seconds, size_t discs)
{
    ad_cpu_team *t = &c->team;
    if (!t->adapt) return;
    t->seconds += seconds;
    t->work += (double)discs;
    if (t->seconds < WINDOW_S) return;
    double rate = t->work / t->seconds;
    t->seconds = t->work = 0.0;
    if (t->probing) { /* the probe against the last home window */
        t->probing = 0;
        if (rate > SWITCH * t->rate_home) {
            t->home = c->threads;
            t->every = EVERY_MIN;
        } else if (t->every < EVERY_MAX) {
            t->every *= 2;
        }
        t->dir = -t->dir;
        t->windows = 0;
        c->threads = t->home;
        return;
    }
    t->rate_home = rate;
    if (++t->windows < t->every) return;
    int s = probe_size(t);
    if (s == t->home) return;
    t->probing = 1;
    c->threads = s;
}
