/* The threads of a CPU run on a machine shared with other work. OpenMP's threads meet at a barrier
 * several times a step; where other processes keep cores busy, a thread that is not running holds
 * up the others, and the run collapses: on 2 cores with 4 busy processes, 20000 steps of the
 * default scene took 13-34 s on 2 threads against 2 s on an idle machine, and 5.8 s on one thread
 * (docs/PERFORMANCE.md, "On a shared machine"). Sleeping instead of spinning while waiting
 * (OMP_WAIT_POLICY=passive) helps there (6.4-9.6 s) but halves the speed on an idle machine. So
 * a run whose scene leaves the threads to aerodem ([run] threads = 0) takes the cores that are
 * free when it starts: those this process may run on, less the processes running on them now. */
#define _GNU_SOURCE
#include "machine_load.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The processes running now, by the kernel's count (procs_running of /proc/stat); -1 where unknown. */
static int running_now(void)
{
    FILE *f = fopen("/proc/stat", "r");
    if (!f) return -1;
    char line[256];
    int n = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "procs_running %d", &n) == 1) break;
    fclose(f);
    return n;
}

static int by_value(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

machine_load machine_load_now(void)
{
    machine_load m = {0, 0, 0};
    cpu_set_t set;
    m.cores = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (m.cores < 1) m.cores = 1;
    /* the median of five looks 20 ms apart, less this process (running while it looks) */
    int look[5], k = 0;
    for (int i = 0; i < 5; i++) {
        int n = running_now();
        if (n >= 0) look[k++] = n;
        struct timespec pause = {0, 20000000L};
        if (i < 4) nanosleep(&pause, NULL);
    }
    if (k == 0) {
        m.threads = m.cores;
        return m;
    }
    qsort(look, (size_t)k, sizeof look[0], by_value);
    m.others = look[k / 2] - 1;
    if (m.others < 0) m.others = 0;
    m.threads = m.cores - m.others;
    if (m.threads < 1) m.threads = 1;
    if (m.threads > m.cores) m.threads = m.cores;
    return m;
}

void machine_load_fit(ad_scene *sc)
{
    if (sc->threads != 0 || sc->backend == AD_BACKEND_CUDA || getenv("OMP_NUM_THREADS")) return;
    machine_load m = machine_load_now();
    if (m.threads >= m.cores) return;
    sc->threads = m.threads;
    fprintf(stderr,
            "aerodem: note: %d of this machine's %d cores are busy with other work: the run takes %d thread%s "
            "(threads waiting for each other on shared cores slow a run down many times over); --threads %d "
            "takes them all\n",
            m.others < m.cores ? m.others : m.cores, m.cores, m.threads, m.threads == 1 ? "" : "s", m.cores);
}
