/* The live view (`aerodem run --live`): a small web page that shows a run while it goes on.
 *
 * Three parts, one file each:
 *   live_feed.c    the run's side: at the end of each stretch of steps the run loop offers the view
 *                  a frame; the feed builds one (from the run's own read-back: discs, averaged
 *                  fields, the CL and CD history) only when a viewer asked lately and the last frame
 *                  is older than LIVE_PERIOD;
 *   live_json.c    a frame as the JSON the page reads;
 *   live_server.c  the HTTP server (libmicrohttpd): the page's static files (app/live/, built into
 *                  the program) and the latest frame at /api/frame, nothing else.
 * The run never waits for a viewer: handing over a frame swaps a pointer under a lock that a viewer
 * holds only to take a reference; the JSON is written by the server's thread. Internal to the
 * program. */
#ifndef AD_APP_LIVE_H
#define AD_APP_LIVE_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

#define LIVE_DEFAULT_PORT 8787 /* `--live` alone: this port, or the next free one of the nine above it */
#define LIVE_PERIOD 0.25       /* seconds: the fastest a frame is built */
#define LIVE_SHARE 0.05        /* at most this share of the run's wall time goes to building frames */
#define LIVE_INTEREST 10.0     /* seconds: frames are built while a viewer asked within this */
#define LIVE_WAIT 1.0          /* seconds: the longest a viewer's request waits for the next frame */
#define LIVE_MAX_DISCS 40000   /* discs drawn (an even sample of the run's discs where it has more) */

/* One quantity over discs or field cells, quantised to a byte: 0..254 spread over [lo, hi], 255 where
 * there is no value (a field cell no disc visited). */
typedef struct live_values {
    const char *name, *title, *units;
    double lo, hi;
    uint8_t *q;
} live_values;

enum { LIVE_DISC_VALUES = 3, LIVE_MAPS = 4, LIVE_HISTORY_COLUMNS = 7 };

/* What a viewer sees of the run at one moment. Made by the feed, then read only. */
typedef struct live_frame {
    uint64_t version;              /* set by live_publish: 1, 2, ... over the server's life */
    char label[320];               /* which run: a sweep's point, or the scene */
    char dir[4096];                /* the run's output folder */
    char backend[16];
    int threads;
    char *scene;                   /* the run's scene.ini text */
    /* progress */
    unsigned long long step, total, settle_steps;
    double time, dt, rate, eta;    /* simulated s, s, steps per wall s, wall s left (NaN: not known yet) */
    double build_ms;               /* what the last frame cost the run (its read-back and its making) */
    int settled;
    size_t count;                  /* discs in the run */
    /* the domain and the body */
    double width, height, radius;
    float *ox, *oy;
    size_t on;
    int oclosed;
    /* the discs drawn: positions as 16-bit fractions of the domain, and their values */
    size_t nd;
    uint8_t *xy;                   /* 4 nd: x, y as 16-bit fractions of the width and height, low byte first */
    live_values disc[LIVE_DISC_VALUES]; /* speed, pressure, density of the neighbourhood */
    /* the averaged fields */
    int nx, ny;
    uint64_t samples;
    live_values map[LIVE_MAPS];    /* density, speed, pressure, temperature */
    /* the force rows: time, cl, cd, cl_mean, cl_se, cd_mean, cd_se (NaN before the averages start) */
    size_t nh;
    double *history;               /* LIVE_HISTORY_COLUMNS nh, row-major */
} live_frame;

void live_frame_free(live_frame *f);

/* ---- live_json.c ---- */
/* The frame as JSON (malloc'ed, *len bytes, NUL-terminated); NULL when out of memory. */
char *live_frame_json(const live_frame *f, size_t *len);

/* ---- live_server.c ---- */
typedef struct live_view live_view;

/* Serves the page on address:port (port -1: LIVE_DEFAULT_PORT or the next free of the nine above;
 * 0: a free port the system picks). *bound receives the port served, url the page's address. Errors
 * name the address and the cause (the port in use, an address that is not this machine's). */
ad_status live_start(const char *address, int port, live_view **out, int *bound, char *url, size_t url_size);
/* Stops serving (viewers still connected are dropped) and frees everything. NULL is fine. */
void live_stop(live_view *v);
/* Whether the run should build a frame now (monotonic seconds): a viewer asked within LIVE_INTEREST
 * and the last frame is at least LIVE_PERIOD old. */
int live_wanted(live_view *v, double now);
/* Hands a frame to the viewers (the view owns it from here on). */
void live_publish(live_view *v, live_frame *f, double now);
/* What the server turned away so far (the log of a run with --live): requests refused for their
 * path, method, host, size or rate. */
typedef struct live_counts {
    unsigned long long served, not_found, bad_method, bad_host, too_many, errors;
} live_counts;
live_counts live_get_counts(live_view *v);

/* ---- live_options.c: the command line's side ---- */
typedef struct live_request {
    int on;              /* --live given */
    int port;            /* -1: the default */
    const char *address; /* NULL: 127.0.0.1 */
} live_request;

#define LIVE_USAGE                                                                                             \
    "  --live [PORT] show the run in a browser while it goes on, at http://127.0.0.1:PORT/ (default\n"          \
    "                8787 or the next free port; 0: any free port); over SSH: ssh -L PORT:localhost:PORT\n"     \
    "  --live-address ADDR  serve the live view on ADDR instead of 127.0.0.1 (0.0.0.0: every network;\n"      \
    "                anyone who reaches the port sees the run)\n"

/* Reads --live [PORT] or --live-address ADDR at argv[*i]: 1 when it was one (*i moved past its value), 0
 * when it was not, -1 for a bad value (the message in msg). */
int live_parse_option(int argc, char **argv, int *i, live_request *lr, char *msg, size_t n);
/* Starts the view asked for (*out = NULL when none was) and prints where it is, with the ssh command
 * that brings it to another machine. */
ad_status live_open(const live_request *lr, live_view **out);

#endif
