/* The aerodem command-line program: run a scene, resume a checkpoint, describe the machine. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "aerodem/aerodem.h"
#include "core/scene.h"
#include "core/status.h"
#include "live.h"
#include "machine_load.h"
#include "ranks.h"
#include "tunnel.h"

#define AD_PI_APP 3.14159265358979323846

static const char *USAGE_MAIN =
    "usage: aerodem COMMAND [options]\n"
    "\n"
    "commands:\n"
    "  run SCENE.ini     simulate a scene: forces, fields, pictures and ParaView files\n"
    "  resume CHECKPOINT continue an interrupted or finished run\n"
    "  sweep SCENE.ini   run a scene over a range of one key (--set body.aoa=-4:16:2): a polar\n"
    "  body-stl SCENE.ini OUT.stl  a 3D scene's body, placed as the run places it, as an STL file\n"
    "  info              backends, threads and GPU of this machine\n"
    "  scene-keys        print the reference of every scene key (Markdown)\n"
    "\n"
    "aerodem COMMAND --help describes each command.\n";

static const char *USAGE_RUN =
    "usage: aerodem run SCENE.ini [--set section.key=value ...] [--backend auto|cpu|cuda|reference|mpi]\n"
    "                   [--out DIR] [--steps N] [--threads N] [--quiet] [--live [PORT]]\n"
    "\n"
    "  --set K=V     override a scene key, checked like the file (repeatable)\n"
    "  --backend B   auto (CUDA when a GPU is present; mpi under mpirun -np N, N > 1), cpu, cuda,\n"
    "                reference (one thread, slow: the plain implementation the others are tested\n"
    "                against) or mpi (the domain cut into slabs over the job's processes)\n"
    "  --out DIR     output folder (default: the scene's [output] dir)\n"
    "  --steps N     total steps to run (default: the scene's [run] steps)\n"
    "  --threads N   CPU threads (default: the cores free of other work at the start)\n"
    "  --quiet       no progress or summary on the terminal\n"
    LIVE_USAGE
    "\n"
    "Ctrl-C finishes the current step, writes DIR/checkpoint.ckpt and exits with code 130.\n"
    "Outputs in DIR: forces.csv, summary.txt, *.png heat maps, frames/, particles.pvd, fields.pvd,\n"
    "body.vtp, surface.csv and cp.png (the body's panels), speed.mp4 (with ffmpeg; pressure.mp4 with\n"
    "[output] frames = pressure), checkpoint.ckpt, scene.ini (the scene as run).\n"
    "Several processes: mpirun -np N aerodem run SCENE.ini (backend mpi, 2D and 3D): rank 0 prints and\n"
    "writes DIR; the results are bit-identical for any N.\n";

static const char *USAGE_RESUME =
    "usage: aerodem resume CHECKPOINT [--steps N] [--out DIR] [--backend auto|cpu|cuda|reference|mpi]\n"
    "                         [--threads N] [--quiet] [--live [PORT]]\n"
    LIVE_USAGE
    "\n"
    "Continues the run saved in CHECKPOINT up to its total steps (or N), writing to the run's\n"
    "output folder (or DIR). In deterministic mode the continued run is bit-identical to one\n"
    "that was never interrupted. A checkpoint of any number of MPI ranks resumes on any number\n"
    "(mpirun -np N aerodem resume CHECKPOINT).\n";

static const char *USAGE_INFO = "usage: aerodem info\n\nPrints the backends built in, CPU threads and GPUs found.\n";
static const char *USAGE_KEYS = "usage: aerodem scene-keys\n\nPrints the reference of every scene key, its default, "
                                "what it accepts and what it means, as Markdown (docs/SCENES.md is its output).\n";

static int usage_error(const char *usage, const char *fmt, const char *arg)
{
    fprintf(stderr, "aerodem: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n\n%s", usage);
    return AD_EXIT_USAGE;
}

static int parse_backend(const char *v, ad_backend *b)
{
    if (!strcmp(v, "auto")) *b = AD_BACKEND_AUTO;
    else if (!strcmp(v, "cpu")) *b = AD_BACKEND_CPU;
    else if (!strcmp(v, "cuda")) *b = AD_BACKEND_CUDA;
    else if (!strcmp(v, "reference")) *b = AD_BACKEND_REFERENCE;
    else if (!strcmp(v, "mpi")) *b = AD_BACKEND_MPI;
    else return 0;
    return 1;
}

/* A whole number written in digits (or as 2e5): nothing before or after it, no sign, nan, inf or hex. */
static int parse_count(const char *v, unsigned long long lo, unsigned long long *out)
{
    if (!(*v >= '0' && *v <= '9') || strspn(v, "0123456789.eE+") != strlen(v)) return 0;
    char *end;
    double d = strtod(v, &end);
    if (end == v || *end || !(d >= (double)lo) || d > 1e15 || d != (double)(unsigned long long)d) return 0;
    *out = (unsigned long long)d;
    return 1;
}

/* An output folder: not empty or blank (the outputs would go to the file-system root) and short enough
 * for the paths of the files in it. */
static int check_out_dir(const char *usage, const char *v, int *rc)
{
    if (!v[strspn(v, " \t")]) {
        *rc = usage_error(usage, "--out '%s': the folder is empty (the outputs would go to the file-system root); "
                                 "give a folder, '.' for the working directory", v);
        return 0;
    }
    if (strlen(v) > AD_PATH_MAX - 1) {
        char what[96];
        snprintf(what, sizeof what, "%zu characters long; at most %d", strlen(v), AD_PATH_MAX - 1);
        *rc = usage_error(usage, "--out: the folder's path is %s", what);
        return 0;
    }
    return 1;
}

/* Options shared by run and resume. Returns -1 when the argument is not one of them. */
static int common_option(int argc, char **argv, int *i, const char *usage, ad_run_options *o, ad_backend *backend,
                         int *backend_given, int *threads, int *rc)
{
    const char *a = argv[*i];
    int has = *i + 1 < argc;
    unsigned long long v;
    if (!strcmp(a, "--quiet")) {
        o->quiet = 1;
        return 1;
    }
    if (!strcmp(a, "--out") || !strcmp(a, "--steps") || !strcmp(a, "--backend") || !strcmp(a, "--threads")) {
        if (!has) {
            *rc = usage_error(usage, "%s needs a value", a);
            return 0;
        }
        const char *val = argv[++*i];
        if (!strcmp(a, "--out")) {
            if (!check_out_dir(usage, val, rc)) return 0;
            o->out_dir = val;
        } else if (!strcmp(a, "--steps")) {
            if (!parse_count(val, 1, &v)) {
                *rc = usage_error(usage, "--steps %s: expected a whole number of steps >= 1", val);
                return 0;
            }
            o->steps = v;
        } else if (!strcmp(a, "--backend")) {
            if (!parse_backend(val, backend)) {
                *rc = usage_error(usage, "--backend %s: expected auto, cpu, cuda, reference or mpi", val);
                return 0;
            }
            *backend_given = 1;
        } else {
            if (!parse_count(val, 0, &v) || v > 4096) {
                *rc = usage_error(usage, "--threads %s: expected 0 (all cores) to 4096", val);
                return 0;
            }
            *threads = (int)v;
        }
        return 1;
    }
    return -1;
}

/* A run of a scene (sc) or a resume of a checkpoint, with the live view asked for around it. */
static int with_live(const live_request *lr, ad_run_options *o, ad_scene *sc, const char *checkpoint, ad_backend backend,
                     int threads)
{
    live_view *lv = NULL;
    if (lr->on && ranks_count() > 1) {
        fprintf(stderr, "aerodem: error: --live watches one process, and this job has %d (mpirun -np %d): run "
                        "without --live, or watch a run of one process\n", ranks_count(), ranks_count());
        return AD_EXIT_USAGE;
    }
    ad_status st = live_open(lr, &lv);
    if (st.code) {
        fprintf(stderr, "aerodem: error: %s\n", st.message);
        return st.code == AD_ERR_INVALID ? AD_EXIT_USAGE : AD_EXIT_ERROR;
    }
    o->live = lv;
    int rc = sc ? ad_tunnel_run(sc, o, NULL) : ad_tunnel_resume(checkpoint, backend, threads, o, NULL);
    live_stop(lv);
    return rc;
}

static int cmd_run(int argc, char **argv)
{
    ad_run_options o = {0};
    ad_backend backend = AD_BACKEND_AUTO;
    int backend_given = 0, threads = -1, rc = 0;
    live_request lr = {0, -1, NULL};
    char msg[256];
    const char *scene_path = NULL;
    /* first pass: options and the scene path; --set values apply after the file */
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("%s", USAGE_RUN);
            return 0;
        }
        if (!strcmp(argv[i], "--set")) {
            if (i + 1 >= argc) return usage_error(USAGE_RUN, "%s needs section.key=value", "--set");
            i++;
            continue;
        }
        int lk = live_parse_option(argc, argv, &i, &lr, msg, sizeof msg);
        if (lk < 0) return usage_error(USAGE_RUN, "%s", msg);
        if (lk) continue;
        int k = common_option(argc, argv, &i, USAGE_RUN, &o, &backend, &backend_given, &threads, &rc);
        if (k == 0) return rc;
        if (k == 1) continue;
        if (argv[i][0] == '-') return usage_error(USAGE_RUN, "unknown option %s", argv[i]);
        if (scene_path) return usage_error(USAGE_RUN, "one scene at a time (also got %s)", argv[i]);
        scene_path = argv[i];
    }
    if (!scene_path) return usage_error(USAGE_RUN, "%s", "run needs a scene file");
    ad_scene sc;
    ad_scene_defaults(&sc);
    ad_status st = ad_scene_load(&sc, scene_path);
    for (int i = 2; i < argc && !st.code; i++)
        if (!strcmp(argv[i], "--set")) st = ad_scene_set(&sc, argv[++i]);
    if (!st.code) {
        if (backend_given) sc.backend = backend;
        if (threads >= 0) sc.threads = threads;
        st = ad_scene_finish(&sc);
    }
    if (!st.code) {
        ad_backend b = (ad_backend)sc.backend;
        st = ranks_backend(&b, backend_given ? "--backend" : "[run] backend");
        sc.backend = b;
    }
    if (st.code) {
        fprintf(stderr, "aerodem: error: %s\n", st.message);
        return st.code == AD_ERR_IO ? AD_EXIT_ERROR : AD_EXIT_USAGE;
    }
    return with_live(&lr, &o, &sc, NULL, backend, threads);
}

static int cmd_resume(int argc, char **argv)
{
    ad_run_options o = {0};
    ad_backend backend = AD_BACKEND_AUTO;
    int backend_given = 0, threads = -1, rc = 0;
    live_request lr = {0, -1, NULL};
    char msg[256];
    const char *path = NULL;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("%s", USAGE_RESUME);
            return 0;
        }
        int lk = live_parse_option(argc, argv, &i, &lr, msg, sizeof msg);
        if (lk < 0) return usage_error(USAGE_RESUME, "%s", msg);
        if (lk) continue;
        int k = common_option(argc, argv, &i, USAGE_RESUME, &o, &backend, &backend_given, &threads, &rc);
        if (k == 0) return rc;
        if (k == 1) continue;
        if (argv[i][0] == '-') return usage_error(USAGE_RESUME, "unknown option %s", argv[i]);
        if (path) return usage_error(USAGE_RESUME, "one checkpoint at a time (also got %s)", argv[i]);
        path = argv[i];
    }
    if (!path) return usage_error(USAGE_RESUME, "%s", "resume needs a checkpoint file");
    if (strlen(path) > AD_PATH_MAX - 1) {
        char what[96];
        snprintf(what, sizeof what, "%zu characters long; at most %d", strlen(path), AD_PATH_MAX - 1);
        return usage_error(USAGE_RESUME, "the checkpoint's path is %s", what);
    }
    if (!o.out_dir) {
        /* by default the run continues in the folder that holds its checkpoint */
        static char dir[AD_PATH_MAX];
        snprintf(dir, sizeof dir, "%s", path);
        char *slash = strrchr(dir, '/');
        if (slash) *slash = 0;
        else snprintf(dir, sizeof dir, ".");
        o.out_dir = dir;
    }
    if (!backend_given) backend = AD_BACKEND_AUTO;
    ad_status st = ranks_backend(&backend, "--backend");
    if (st.code) {
        fprintf(stderr, "aerodem: error: %s\n", st.message);
        return AD_EXIT_USAGE;
    }
    return with_live(&lr, &o, NULL, path, backend, threads);
}

/* Bytes per disc of the default tunnel's world on a backend (0 where it cannot be made). */
static double bytes_per_disc(ad_backend b)
{
    ad_scene sc;
    ad_scene_defaults(&sc);
    ad_world_def d = ad_default_world_def();
    d.backend = b;
    d.capacity = 1000000;
    /* the default tunnel's density: 2.6 cells of one diameter per disc */
    double side = sqrt(1e6 * AD_PI_APP * sc.radius * sc.radius / 0.3);
    d.x_max = 2 * side / sqrt(2.0);
    d.y_max = side / sqrt(2.0);
    size_t bytes = ad_world_bytes_needed(&d);
    return bytes ? (double)bytes / 1e6 : 0.0;
}

/* Bytes per sphere of a 3D gas at volume fraction 0.2 in cells of one diameter (0 where it cannot be made). */
static double bytes_per_sphere(ad_backend b)
{
    ad_world_def d = ad_default_world_def();
    d.dimensions = 3;
    d.backend = b;
    d.capacity = 1000000;
    double side = cbrt(1e6 * 4.0 / 3.0 * AD_PI_APP * d.radius * d.radius * d.radius / 0.2);
    d.x_max = d.y_max = d.z_max = side;
    size_t bytes = ad_world_bytes_needed(&d);
    return bytes ? (double)bytes / 1e6 : 0.0;
}

static int cmd_info(int argc, char **argv)
{
    if (argc > 2 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))) {
        printf("%s", USAGE_INFO);
        return 0;
    }
    printf("aerodem %d.%d.%d\n", AD_VERSION_MAJOR, AD_VERSION_MINOR, AD_VERSION_PATCH);
#ifdef _OPENMP
    printf("cpu backend: yes (OpenMP, %d threads)\n", omp_get_max_threads());
#else
    printf("cpu backend: yes (serial build)\n");
#endif
    printf("  memory: %.0f bytes per disc (symplectic Euler, default tunnel density)\n",
           bytes_per_disc(AD_BACKEND_CPU));
    printf("  3D (dimensions = 3): %.0f bytes per sphere (symplectic Euler, volume fraction 0.2)\n",
           bytes_per_sphere(AD_BACKEND_CPU));
    char gpus[2048];
    int n = ad_backend_describe(AD_BACKEND_CUDA, gpus, sizeof gpus);
    if (n > 0) {
        printf("cuda backend: yes\n%s", gpus);
        printf("  memory: %.0f bytes per disc in deterministic mode (fewer in the fast path; docs/ARCHITECTURE.md)\n",
               bytes_per_disc(AD_BACKEND_CUDA));
        printf("  3D (dimensions = 3): %.0f bytes per sphere (symplectic Euler, volume fraction 0.2)\n",
               bytes_per_sphere(AD_BACKEND_CUDA));
    } else if (n == 0) {
        printf("cuda backend: built in, but no CUDA GPU was found\n");
    } else {
        printf("cuda backend: not built (nvcc was not found at build time)\n");
    }
    printf("reference backend: yes (one thread, the plain grid pipeline: the yardstick of the others, slow)\n");
    if (ad_parallel_available())
        printf("mpi backend: yes (mpirun -np N aerodem run SCENE.ini: 2D and 3D, slabs along the stream; this job: %d %s)\n",
               ranks_count(), ranks_count() == 1 ? "process" : "processes");
    else printf("mpi backend: not built (libopenmpi-dev was not found at build time)\n");
#ifdef AD_HAVE_LIVE
    printf("live view: yes (--live; libmicrohttpd)\n");
#else
    printf("live view: not built (libmicrohttpd-dev was not found at build time)\n");
#endif
    machine_load m = machine_load_now();
    printf("this machine now: %d cores for this process, %d busy with other work: a run with threads = 0 takes %d\n",
           m.cores, m.others < m.cores ? m.others : m.cores, m.threads);
    return 0;
}

static int command(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        printf("%s", USAGE_MAIN);
        return argc < 2 ? AD_EXIT_USAGE : 0;
    }
    if (!strcmp(argv[1], "run")) return cmd_run(argc, argv);
    if (!strcmp(argv[1], "resume")) return cmd_resume(argc, argv);
    if (!strcmp(argv[1], "info")) return cmd_info(argc, argv);
    if (!strcmp(argv[1], "sweep")) {
        if (ranks_count() > 1) {
            fprintf(stderr, "aerodem: error: sweep runs its points in one process, and this job has %d (mpirun -np "
                            "%d): run the sweep without mpirun, or each point with mpirun -np %d aerodem run\n",
                    ranks_count(), ranks_count(), ranks_count());
            return AD_EXIT_USAGE;
        }
        return ad_tunnel_sweep(argc, argv);
    }
    if (!strcmp(argv[1], "body-stl")) return ad_body_stl(argc, argv);
    if (!strcmp(argv[1], "scene-keys")) {
        if (argc > 2 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))) {
            printf("%s", USAGE_KEYS);
            return 0;
        }
        if (argc > 2) return usage_error(USAGE_KEYS, "scene-keys takes no argument, not '%s'", argv[2]);
        ad_scene_write_reference(stdout);
        return 0;
    }
    fprintf(stderr, "aerodem: unknown command '%s'\n\n%s", argv[1], USAGE_MAIN);
    return AD_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    int rc = ranks_start(&argc, &argv);
    if (rc) return rc;
    return ranks_end(command(argc, argv));
}
