/* The program as one process of an MPI job (ranks.h): MPI started and ended, the ranks after the first
 * silenced, their scratch folders, the backend of a run in the job and the job's end on an error. */
#define _XOPEN_SOURCE 700
#include "ranks.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/status.h"
#include "tunnel.h"

static int g_rank = 0, g_ranks = 1;
static char g_scratch[AD_PATH_MAX];  /* a silent rank's folder ("": none) */
static unsigned g_folders;           /* run folders made in it */
static int g_err = -1;               /* a silent rank's own stderr, kept for its last word */

/* The job's size as the launcher gives it, before MPI starts (1 when it does not say). */
static int launcher_size(void)
{
    static const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MPI_LOCALNRANKS"};
    for (size_t k = 0; k < sizeof vars / sizeof vars[0]; k++) {
        const char *v = getenv(vars[k]);
        if (v && atoi(v) > 1) return atoi(v);
    }
    return 1;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

/* The scratch folders of silent ranks that are gone (a job ended by MPI_Abort or a kill ends its ranks
 * before they remove theirs): aerodem-rankR-PID-XXXXXX whose process no longer exists. */
static void remove_stale(const char *tmp)
{
    DIR *d = opendir(tmp);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        int rank;
        long pid;
        char rest[16];
        if (sscanf(e->d_name, "aerodem-rank%d-%ld-%15s", &rank, &pid, rest) != 3 || pid <= 0) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
        char path[AD_PATH_MAX + 300];
        snprintf(path, sizeof path, "%s/%s", tmp, e->d_name);
        nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    }
    closedir(d);
}

/* A silent rank: its stdout goes nowhere, its stderr into a file of no name (opened in the scratch folder
 * and unlinked: it goes with the process, and is shown should the rank fail alone), its outputs into the
 * scratch folder. */
static int silence(void)
{
    const char *t = getenv("TMPDIR");
    t = t && *t ? t : "/tmp";
    remove_stale(t);
    snprintf(g_scratch, sizeof g_scratch, "%s/aerodem-rank%d-%ld-XXXXXX", t, g_rank, (long)getpid());
    if (!mkdtemp(g_scratch)) {
        fprintf(stderr, "aerodem: rank %d of %d: cannot make its scratch folder %s: %s (set TMPDIR to a writable "
                        "folder)\n", g_rank, g_ranks, g_scratch, strerror(errno));
        g_scratch[0] = 0;
        return -1;
    }
    char log[AD_PATH_MAX + 16];
    snprintf(log, sizeof log, "%s/stderr.txt", g_scratch);
    fflush(stdout);
    fflush(stderr);
    int out = open("/dev/null", O_WRONLY), err = open(log, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (err >= 0) unlink(log);
    if (out < 0 || err < 0) {
        fprintf(stderr, "aerodem: rank %d of %d: cannot silence its output (%s)\n", g_rank, g_ranks, strerror(errno));
        if (out >= 0) close(out);
        if (err >= 0) close(err);
        return -1;
    }
    g_err = dup(STDERR_FILENO);
    dup2(out, STDOUT_FILENO);
    dup2(err, STDERR_FILENO);
    close(out);
    close(err);
    return 0;
}

int ranks_start(int *argc, char ***argv)
{
    if (!ad_parallel_launched()) return 0;
    if (!ad_parallel_available()) {
        int n = launcher_size();
        if (n == 1) return 0;
        fprintf(stderr, "aerodem: error: started as one of %d processes (mpirun), and this build of aerodem has no MPI: "
                        "each would run the whole job; install libopenmpi-dev and openmpi-bin and build again, or run "
                        "without mpirun\n", n);
        return AD_EXIT_USAGE;
    }
    ad_status st = ad_parallel_init(argc, argv);
    if (st.code) {
        fprintf(stderr, "aerodem: error: %s\n", st.message);
        return AD_EXIT_ERROR;
    }
    g_rank = ad_parallel_rank();
    g_ranks = ad_parallel_ranks();
    if (g_rank > 0 && silence() != 0) ad_parallel_abort(AD_EXIT_ERROR);
    return 0;
}

int ranks_count(void) { return g_ranks; }
int ranks_lead(void) { return g_rank == 0; }

ad_status ranks_folder(const char *dir, char *buf, size_t n)
{
    if (!g_scratch[0]) {
        if ((size_t)snprintf(buf, n, "%s", dir) >= n)
            return ad_fail(AD_ERR_INVALID, "output.dir", "the output folder %.200s... is %zu characters long, above %zu",
                           dir, strlen(dir), n - 1);
        return ad_ok();
    }
    /* a silent rank: a folder of its own per run (a resume, a run after a run) */
    if ((size_t)snprintf(buf, n, "%s/run%u", g_scratch, ++g_folders) >= n)
        return ad_fail(AD_ERR_INVALID, "TMPDIR", "rank %d: its scratch folder's path %s is too long", g_rank, g_scratch);
    return ad_ok();
}

ad_status ranks_backend(ad_backend *b, const char *what)
{
    if (g_ranks > 1) {
        if (*b == AD_BACKEND_AUTO) *b = AD_BACKEND_MPI;
        if (*b != AD_BACKEND_MPI)
            return ad_fail(AD_ERR_INVALID, what,
                           "%s: backend %s runs in one process, and this job has %d (mpirun -np %d): give backend mpi "
                           "(or auto), or run it without mpirun", what, ad_backend_name(*b), g_ranks, g_ranks);
        return ad_ok();
    }
    /* one process asked for the decomposed world: a job of one rank (MPI started as a singleton) */
    if (*b == AD_BACKEND_MPI && ad_parallel_available()) return ad_parallel_init(NULL, NULL);
    return ad_ok();
}

/* A silent rank that failed alone: what it wrote on stderr, shown on its own stderr, prefixed. */
static void last_word(void)
{
    char text[8192];
    fflush(stderr);
    FILE *out = g_err >= 0 ? fdopen(g_err, "w") : NULL;
    if (!out) return;
    ssize_t n = pread(STDERR_FILENO, text, sizeof text - 1, 0);
    text[n > 0 ? n : 0] = 0;
    fprintf(out, "aerodem: rank %d of %d failed:\n", g_rank, g_ranks);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) fprintf(out, "  rank %d: %s\n", g_rank, line);
    fflush(out);
}

int ranks_end(int rc)
{
    int shared = rc == AD_EXIT_OK || rc == AD_EXIT_INTERRUPTED; /* agreed by every rank: all end alike */
    if (g_ranks > 1 && !shared) {
        /* one rank's failure ends the job: the others may be waiting for it in a step. Rank 0 tells its own
         * error; another rank waits a moment first, since an error of every rank is told by rank 0 (whose
         * end of the job ends this rank too), and tells its own only if it is still running. */
        if (!ranks_lead()) {
            if (g_scratch[0]) nftw(g_scratch, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
            g_scratch[0] = 0;
            sleep(2);
            last_word();
        } else {
            struct timespec half = {0, 500000000L};
            nanosleep(&half, NULL); /* the others' moment to remove their scratch folders (the next job removes what is left) */
        }
        ad_parallel_abort(rc);
    }
    if (g_scratch[0]) nftw(g_scratch, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    ad_parallel_finalize();
    return rc;
}
