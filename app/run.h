/* What the run loop (tunnel.c), the outputs (outputs.c) and resume (resume.c) share: the run's
 * state, its checkpoint caller block and its folder. Internal to the program. */
#ifndef AD_APP_RUN_H
#define AD_APP_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "core/scene.h"
#include "live.h"
#include "tunnel.h"

/* What a run measures, kept across checkpoints (in the caller block of the file: the layout
 * is part of the checkpoint format, so fields are only ever renamed, never moved). */
typedef struct measure {
    double impulse_x, impulse_y, time; /* at the last force row */
    unsigned long long rows;           /* force rows written */
    unsigned long long n;              /* interval means averaged (after settling) */
    double sum_cd, sum_cd2, sum_cl, sum_cl2;
    unsigned long long frames;         /* particle frames taken (their frames.csv rows written) */
    int settled;                       /* averages were reset at settle_steps */
    int finished;                      /* the run reached its total: this is its final checkpoint */
    unsigned long long unused;         /* always 0 (was last_checkpoint; kept for the layout) */
    ad_probe_sums probe_row;           /* the free-stream probe at the last force row */
    ad_probe_sums probe_settled;       /* and when averages started */
} measure;

/* What a 3D run measures besides the measure, kept across checkpoints: the caller block of a 3D run's
 * checkpoint ends with it, after the run tag (its layout is part of the format). */
#define AD_MEASURE3_TAG "ADMEAS3"
typedef struct measure3 {
    char magic[8];                     /* AD_MEASURE3_TAG */
    double impulse_z;                  /* the body's impulse along z at the last force row */
    double angular[3];                 /* its angular impulse about the origin at the last force row */
    double sum_cy, sum_cy2, sum_cm, sum_cm2; /* side force and pitching moment coefficients, as sum_cd */
} measure3;

/* The trailer of the caller block (after the scene text, the measure and the total): who the run
 * is. Checkpoints written before it existed end after the total and resume as run id 0. */
#define AD_RUN_TAG "ADRUNID1"
typedef struct run_tag {
    char magic[8];
    uint64_t id;               /* random, drawn when the run starts; 0 = unknown (an older checkpoint) */
    char source[AD_PATH_MAX];  /* the scene file the run started from (summary.txt's scene line) */
} run_tag;

typedef struct surface_state surface_state; /* surface_out.c */

typedef struct run {
    ad_scene sc;
    ad_world *w;
    measure m;
    uint64_t id;               /* the run's identity (run_tag) */
    char origin[AD_PATH_MAX];  /* the scene file the run started from */
    char dir[AD_PATH_MAX];
    char *scene_ini;
    int quiet;
    unsigned long long total;  /* the step this run goes to */
    long long ckpt_step;       /* step of the last checkpoint written in this folder; -1: none */
    const char *from;          /* the checkpoint resumed from; NULL for a fresh run */
    const char *resume_cmd;    /* ad_run_options.resume_command */
    ad_flow_numbers flow;
    float *ox, *oy;            /* body outline [m] */
    size_t on;
    int oclosed;
    ad_field_def fd;
    ad_scene_layout layout;    /* the domain, the reservoir, the probe */
    measure3 m3;               /* 3D: the side force and pitching moment (outputs3.c) */
    ad_mesh mesh;              /* 3D: the body's surface as placed in the tunnel */
    ad_body_reference ref;     /* 3D: its reference area, length and pivot */
    float *section;            /* 3D: the body's section in the slice along the stream (z = slice_z), as */
    size_t nsection;           /*     segments x0 y0 x1 y1 (ad_mesh_slice_segments) */
    double row_cy, row_cm;     /* 3D: the last force row's side force and pitching moment coefficients */
    int probe;                 /* the free stream is measured (a flow tunnel with room for the probe) */
    double max_overlap_seen;   /* the largest overlap / radius of the force rows of this process (a warning) */
    double frame_lo, frame_hi; /* the frames' colour scale, fixed at the first frame (NaN until then) */
    double row_cl, row_cd;     /* the coefficients of the last force row (not averaged) */
    surface_state *surf;       /* the body's panels and their batch means (surface_out.c) */
    live_view *live;           /* the live view (--live), or NULL */
    struct live_feed *feed;    /* what the run keeps for it (live_feed.c) */
    /* the frames this folder holds (frames.csv): index and time, for the .pvd files */
    unsigned long long *fidx;
    double *ftime;
    size_t nf, fcap;
} run;

#if defined(__GNUC__)
#define AD_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define AD_PRINTF(a, b)
#endif

ad_status fail(ad_code code, const char *fmt, ...) AD_PRINTF(2, 3);
ad_status ok(void);
void say(const run *r, const char *fmt, ...) AD_PRINTF(2, 3);
int report(ad_status st);
/* DIR/NAME into buf; a name that does not fit is an error naming the path, never a shorter path. */
ad_status path_in(const run *r, char *buf, size_t n, const char *fmt, ...) AD_PRINTF(4, 5);
/* What colours the frames' discs, as their files and the video are named: "speed" or "pressure". */
const char *out_frame_name(const run *r);

double mean_of(double s, double n);
double se_of(double s, double s2, double n);

/* ---- outputs.c ---- */
ad_status out_force_row(run *r);
/* frames.csv's first line; folders of an aerodem older than it have none, and both are read. */
#define AD_FRAMES_HEADER "index,step,time\n"
/* frames.csv's row of frame r->m.frames (taken now) and the frame count; the files come after. */
ad_status out_frame_row(run *r);
/* Frame k's files: the PNG and .vtp of the discs, the .vti of the fields, at the end the heat
 * maps (pictures), then both .pvd files listing the frames this folder holds. */
ad_status out_frame_files(run *r, unsigned long long k, int pictures);
ad_status out_summary(run *r, int interrupted);
ad_status out_scene_ini(run *r);
void out_video(run *r);
int out_have_ffmpeg(void);
/* Removes the temporary files (NAME.tmp) a killed writer left in the run's folders. */
void out_remove_temps(const run *r);
/* Everything about the outputs that can be checked before the world is built: picture sizes, path
 * lengths, ffmpeg. */
ad_status out_check(run *r);
/* The output folders made, and found to take a file; once the world exists (a run that fails
 * earlier writes nothing). */
ad_status out_make_dirs(const run *r);
/* Reads frames.csv (rows of frames before r->m.frames at or before step) into r->fidx/ftime. */
ad_status out_load_frames(run *r, unsigned long long step);

/* ---- outputs3.c: a 3D run's files (the run loop, checkpoints and resume are shared) ---- */
/* The body, its reference and section, and the 3D field grid (prepare calls it for a 3D scene). */
ad_status out3_prepare(run *r);
ad_status out3_force_row(run *r);
ad_status out3_frame_files(run *r, unsigned long long k, int pictures);
/* summary.txt's coefficients (to f) and the terminal's lines about them. */
void out3_summary_coefficients(run *r, FILE *f);
void out3_say_coefficients(run *r);
ad_status out3_body(run *r);
void out3_print_start(run *r);
/* The .pvd files listing the frames (outputs.c), shared by both dimensions. */
ad_status out_write_pvds(run *r);
/* DIR/NAME (into path, n bytes, which must outlive io) opened to be written whole: NAME.tmp renamed by
 * ad_io_commit (outputs.c). */
typedef struct ad_io_file ad_io_file;
ad_status out_open(const run *r, ad_io_file *io, char *path, size_t n, const char *name);
/* Appends one formatted row to NAME, the header first where the file is new or empty (outputs.c). */
ad_status out_append_row(const run *r, const char *name, const char *header, const char *row);
/* A frame's read-back: the particles (2D state or 3D state3), their ids and pressures, and room for the
 * picture's x, y and colour; out_frame_read fills it (outputs.c), out_frame_free frees it. */
typedef struct frame_data {
    ad_particle *state;
    ad_particle3 *state3;
    uint32_t *id;
    float *pressure, *x, *y, *colour;
    size_t got;
} frame_data;
ad_status out_frame_read(run *r, frame_data *f);
void out_frame_free(frame_data *f);
/* The free stream the probe saw since m's last force row, and m's probe sums moved to now (outputs.c). */
ad_probe_stream out_probe_row(run *r, measure *m);
/* The frames' colour scale, fixed at the first frame (outputs.c). */
void out_frame_scale(run *r, const float *v, size_t n);

/* ---- surface_out.c: the body's panels (Cp, Cf, Ch, contacts) ---- */
/* The panels' geometry in the body's chord frame and room for their means (prepare calls it). */
ad_status surf_prepare(run *r);
void surf_free(run *r);
/* At the start of the averaging window: the world's panel sums and the means cleared. */
ad_status surf_reset(run *r);
/* After each force row: the interval since the last one into the batch means. */
ad_status surf_row(run *r);
/* surface.csv, body.vtp with the panels' cell data, cp.png. */
ad_status out_surface(run *r);
/* The checkpoint's surface trailer (after the run's state): its size, written into out, read back. */
size_t surf_block_size(const run *r);
void surf_block_pack(const run *r, char *out);
ad_status surf_block_unpack(run *r, const char *in, size_t n, const char *checkpoint);

/* ---- resume.c ---- */
/* The caller block of r's checkpoint (malloc'ed, *n bytes). */
void *ckpt_block(const run *r, size_t *n);
uint64_t new_run_id(void);
/* The run id written in DIR/scene.ini; 0 when there is none (no file, or an older run). */
uint64_t folder_run_id(const run *r, int *has_scene);

/* ---- live_feed.c: the run's side of the live view (each a no-op without one) ---- */
typedef struct live_feed live_feed;
/* At the start of a run (label: what the page calls it). */
void live_begin(run *r, const char *label);
/* After each force row: its coefficients and their means into the history. */
void live_row(run *r);
/* At the end of each stretch of steps: a frame, where a viewer wants one. */
void live_offer(run *r);
void live_end(run *r);

/* ---- tunnel.c ---- */
ad_status save_checkpoint(run *r);
/* body.vtp, the outline (where there is one and vtk is on). */
ad_status out_body(run *r);
int run_loop(run *r);
/* The coefficients the run measured so far, its steps and its id. */
void run_result(const run *r, ad_run_result *res);
ad_status prepare(run *r, const ad_run_options *opt);
void cleanup(run *r);

#endif
