/* The live view's HTTP server (libmicrohttpd, one internal thread): the page's files, built into the
 * program from app/live/, and the latest frame at /api/frame. Nothing else is ever served: a path is
 * looked up in that list, never in the file system. Requests are bounded in size (a connection's
 * memory, so a long URL or huge headers are answered 431 or dropped), in number (connections in all
 * and per address, a time-out for idle ones) and in rate (a token bucket over all viewers: 429 past
 * it). On a loopback address only requests naming this machine as their Host are answered, so a web
 * page elsewhere cannot read the run through DNS rebinding. The run's thread and the server's meet
 * only in live_publish and when a viewer takes a reference to the latest frame (a viewer waiting for
 * the next frame sleeps on a condition the run signals, never the other way round). */
#include "live.h"
#include "live_files.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

void live_frame_free(live_frame *f)
{
    if (!f) return;
    for (int k = 0; k < LIVE_DISC_VALUES; k++) free(f->disc[k].q);
    for (int k = 0; k < LIVE_MAPS; k++) free(f->map[k].q);
    free(f->scene);
    free(f->ox);
    free(f->oy);
    free(f->xy);
    free(f->history);
    free(f);
}

#ifdef AD_HAVE_LIVE
#include <microhttpd.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

enum {
    CONNECTIONS = 64,          /* open at once, in all */
    CONNECTIONS_PER_ADDRESS = 32,
    IDLE_SECONDS = 10,         /* a connection that sends nothing for this long is closed */
    THREAD_STACK = 256 << 10,  /* a connection's thread */
    CONNECTION_MEMORY = 32768, /* a request's line and headers must fit */
};
#define RATE_PER_SECOND 40.0 /* requests, over all viewers (the page asks about 4 times a second) */
#define RATE_BURST 80.0

/* A published frame, shared by the viewers reading it: freed by whoever drops the last reference. */
typedef struct held {
    live_frame *f;
    int refs;
    pthread_mutex_t json_lock; /* the JSON is written once, by the first viewer that asks */
    char *json;
    size_t json_len;
} held;

struct live_view {
    struct MHD_Daemon *daemon;
    pthread_mutex_t lock; /* latest, version, the times, the bucket, the counts, stopping */
    pthread_cond_t fresh; /* a new frame, or the server stopping: wakes the viewers waiting */
    int stopping;
    held *latest;
    uint64_t version;
    double last_request, last_publish;
    double tokens, token_time;
    live_counts counts;
    int loopback, port;
    char log[256]; /* libmicrohttpd's last message (for an error at start) */
};

static void held_free(held *h)
{
    if (!h) return;
    live_frame_free(h->f);
    free(h->json);
    pthread_mutex_destroy(&h->json_lock);
    free(h);
}

/* Drops a reference; the last one frees the frame (outside the lock). */
static void release(live_view *v, held *h)
{
    if (!h) return;
    pthread_mutex_lock(&v->lock);
    int last = --h->refs == 0;
    pthread_mutex_unlock(&v->lock);
    if (last) held_free(h);
}

void live_publish(live_view *v, live_frame *f, double now)
{
    held *h = calloc(1, sizeof *h);
    if (!h) {
        live_frame_free(f);
        return;
    }
    h->f = f;
    h->refs = 1;
    pthread_mutex_init(&h->json_lock, NULL);
    pthread_mutex_lock(&v->lock);
    held *old = v->latest;
    f->version = ++v->version;
    v->latest = h;
    v->last_publish = now;
    pthread_cond_broadcast(&v->fresh);
    pthread_mutex_unlock(&v->lock);
    release(v, old);
}

int live_wanted(live_view *v, double now)
{
    if (!v) return 0;
    pthread_mutex_lock(&v->lock);
    int want = v->last_request > 0 && now - v->last_request < LIVE_INTEREST &&
               (v->latest == NULL || now - v->last_publish >= LIVE_PERIOD);
    pthread_mutex_unlock(&v->lock);
    return want;
}

live_counts live_get_counts(live_view *v)
{
    pthread_mutex_lock(&v->lock);
    live_counts c = v->counts;
    pthread_mutex_unlock(&v->lock);
    return c;
}

/* ------------------------------------------------------------ requests -- */

static enum MHD_Result answer(struct MHD_Connection *c, unsigned status, const void *data, size_t n,
                              enum MHD_ResponseMemoryMode mode, const char *type)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(n, (void *)data, mode);
    if (!r) return MHD_NO;
    MHD_add_response_header(r, "Content-Type", type);
    MHD_add_response_header(r, "Cache-Control", "no-store");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "X-Frame-Options", "DENY");
    MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(r, "Content-Security-Policy", "default-src 'self'; img-src 'self' data:");
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result answer_text(struct MHD_Connection *c, unsigned status, const char *text)
{
    return answer(c, status, text, strlen(text), MHD_RESPMEM_PERSISTENT, "text/plain; charset=utf-8");
}

/* HOST is this machine: localhost, 127.x.y.z or [::1], with or without a port. */
static int host_is_local(const char *host)
{
    if (!host) return 0;
    char name[256];
    size_t n = strlen(host);
    if (n == 0 || n >= sizeof name) return 0;
    memcpy(name, host, n + 1);
    if (name[0] == '[') {
        char *end = strchr(name, ']');
        if (!end) return 0;
        *end = 0;
        return !strcmp(name + 1, "::1");
    }
    char *colon = strchr(name, ':');
    if (colon) *colon = 0;
    if (!strcmp(name, "localhost")) return 1;
    struct in_addr a;
    return inet_pton(AF_INET, name, &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

/* The bucket: RATE_PER_SECOND requests a second, RATE_BURST at once. Under v->lock. */
static int take_token(live_view *v, double now)
{
    v->tokens = fmin(RATE_BURST, v->tokens + (now - v->token_time) * RATE_PER_SECOND);
    v->token_time = now;
    if (v->tokens < 1.0) return 0;
    v->tokens -= 1.0;
    return 1;
}

/* A whole number in digits, at most 18 of them. */
static int parse_whole(const char *s, unsigned long long *out)
{
    size_t n = strlen(s);
    if (n == 0 || n > 18 || strspn(s, "0123456789") != n) return 0;
    *out = strtoull(s, NULL, 10);
    return 1;
}

/* Under v->lock: waits up to `seconds` for a frame newer than `after` (or the server stopping). */
static void wait_for_frame(live_view *v, unsigned long long after, double seconds)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += (time_t)seconds;
    until.tv_nsec += (long)((seconds - floor(seconds)) * 1e9);
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    while (!v->stopping && (!v->latest || v->latest->f->version <= after))
        if (pthread_cond_timedwait(&v->fresh, &v->lock, &until) == ETIMEDOUT) break;
}

/* /api/frame[?after=VERSION[&wait=1]]: the latest frame as JSON; with wait=1 the answer waits up to
 * LIVE_WAIT seconds for one newer than VERSION (the page asks so: one request a frame); 204 when none
 * is newer; {"waiting": true} before the first. */
static enum MHD_Result answer_frame(live_view *v, struct MHD_Connection *c)
{
    const char *after_s = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "after");
    const char *wait_s = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "wait");
    unsigned long long after = 0, wait = 0;
    if ((after_s && !parse_whole(after_s, &after)) || (wait_s && (!parse_whole(wait_s, &wait) || wait > 1)))
        return answer_text(c, MHD_HTTP_BAD_REQUEST, "after: a frame number; wait: 0 or 1\n");
    pthread_mutex_lock(&v->lock);
    if (wait) wait_for_frame(v, after, LIVE_WAIT);
    held *h = v->latest;
    if (h) h->refs++;
    pthread_mutex_unlock(&v->lock);
    if (!h) {
        static const char waiting[] = "{\"waiting\": true}\n";
        return answer(c, MHD_HTTP_OK, waiting, sizeof waiting - 1, MHD_RESPMEM_PERSISTENT, "application/json");
    }
    enum MHD_Result ret;
    if (h->f->version <= after) {
        ret = answer(c, MHD_HTTP_NO_CONTENT, "", 0, MHD_RESPMEM_PERSISTENT, "application/json");
    } else {
        pthread_mutex_lock(&h->json_lock);
        if (!h->json) h->json = live_frame_json(h->f, &h->json_len);
        ret = h->json ? answer(c, MHD_HTTP_OK, h->json, h->json_len, MHD_RESPMEM_MUST_COPY, "application/json")
                      : answer_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
        pthread_mutex_unlock(&h->json_lock);
    }
    release(v, h);
    return ret;
}

static void count(live_view *v, unsigned long long *what)
{
    pthread_mutex_lock(&v->lock);
    (*what)++;
    pthread_mutex_unlock(&v->lock);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **state)
{
    (void)version, (void)upload;
    live_view *v = cls;
    double now = now_s();
    pthread_mutex_lock(&v->lock);
    int allowed = *state || take_token(v, now);
    if (!allowed) v->counts.too_many++;
    pthread_mutex_unlock(&v->lock);
    if (!allowed) return answer_text(c, MHD_HTTP_TOO_MANY_REQUESTS, "too many requests\n");
    if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD)) {
        count(v, &v->counts.bad_method); /* answered at once: a body it sends is never read */
        return answer_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n");
    }
    /* the first call brings the headers; answering on the second (the request read whole) keeps the
     * connection open for the next request */
    static int seen;
    if (!*state) {
        *state = &seen;
        return MHD_YES;
    }
    if (*upload_size) {
        count(v, &v->counts.bad_method);
        return answer_text(c, MHD_HTTP_CONTENT_TOO_LARGE, "a GET has no body\n");
    }
    if (v->loopback && !host_is_local(MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST))) {
        count(v, &v->counts.bad_host);
        return answer_text(c, MHD_HTTP_FORBIDDEN, "this page answers only to localhost\n");
    }
    if (!strcmp(url, "/api/frame")) {
        pthread_mutex_lock(&v->lock);
        v->last_request = now;
        v->counts.served++;
        pthread_mutex_unlock(&v->lock);
        return answer_frame(v, c);
    }
    const char *path = !strcmp(url, "/") ? "/index.html" : url;
    for (size_t k = 0; k < live_file_count; k++)
        if (!strcmp(path, live_files[k].path)) {
            count(v, &v->counts.served);
            return answer(c, MHD_HTTP_OK, live_files[k].data, live_files[k].size, MHD_RESPMEM_PERSISTENT,
                          live_files[k].type);
        }
    count(v, &v->counts.not_found);
    return answer_text(c, MHD_HTTP_NOT_FOUND, "not found\n");
}

/* The URL as sent, not percent-decoded: the page's paths need no escapes, and a decoded %00 would
 * cut "/live.js%00.html" to a name of the page. */
static size_t keep_escapes(void *cls, struct MHD_Connection *c, char *s)
{
    (void)cls, (void)c;
    return strlen(s);
}

/* libmicrohttpd's messages (a malformed request, a refused connection) are kept, not printed: the
 * last one explains a failed start. */
static void on_log(void *cls, const char *fmt, va_list ap)
{
    live_view *v = cls;
    char msg[sizeof v->log];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strcspn(msg, "\n");
    msg[n] = 0;
    pthread_mutex_lock(&v->lock);
    v->counts.errors++;
    memcpy(v->log, msg, n + 1);
    pthread_mutex_unlock(&v->lock);
}

/* ---------------------------------------------------------- start, stop -- */

typedef union live_addr {
    struct sockaddr any;
    struct sockaddr_in v4;
    struct sockaddr_in6 v6;
} live_addr;

/* ADDRESS as a socket address with PORT; 0 when it is not an IPv4 or IPv6 address. */
static int parse_address(const char *address, int port, live_addr *a, int *loopback)
{
    memset(a, 0, sizeof *a);
    if (inet_pton(AF_INET, address, &a->v4.sin_addr) == 1) {
        a->v4.sin_family = AF_INET;
        a->v4.sin_port = htons((uint16_t)port);
        *loopback = (ntohl(a->v4.sin_addr.s_addr) >> 24) == 127;
        return 1;
    }
    if (inet_pton(AF_INET6, address, &a->v6.sin6_addr) == 1) {
        a->v6.sin6_family = AF_INET6;
        a->v6.sin6_port = htons((uint16_t)port);
        *loopback = IN6_IS_ADDR_LOOPBACK(&a->v6.sin6_addr);
        return 1;
    }
    return 0;
}

/* One try at address:port. The server's thread starts with the run's signals blocked: Ctrl-C and
 * the checkpoint timer go to the run. */
static struct MHD_Daemon *start_on(live_view *v, live_addr *a)
{
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGALRM);
    sigaddset(&block, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    /* a thread per connection: a viewer waiting for the next frame holds only its own */
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ERROR_LOG;
    if (a->any.sa_family == AF_INET6) flags |= MHD_USE_IPv6;
    struct MHD_Daemon *d = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, v, MHD_OPTION_SOCK_ADDR, &a->any, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)CONNECTIONS, MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)CONNECTIONS_PER_ADDRESS,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)IDLE_SECONDS, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)CONNECTION_MEMORY, MHD_OPTION_STRICT_FOR_CLIENT, 1, MHD_OPTION_EXTERNAL_LOGGER, on_log, v,
        MHD_OPTION_UNESCAPE_CALLBACK, keep_escapes, NULL, MHD_OPTION_THREAD_STACK_SIZE, (size_t)THREAD_STACK,
        MHD_OPTION_END);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return d;
}

ad_status live_start(const char *address, int port, live_view **out, int *bound, char *url, size_t url_size)
{
    *out = NULL;
    live_view *v = calloc(1, sizeof *v);
    if (!v) return ad_fail(AD_ERR_NO_MEMORY, "live", "out of memory for the live view");
    pthread_mutex_init(&v->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&v->fresh, &ca);
    pthread_condattr_destroy(&ca);
    v->tokens = RATE_BURST;
    v->token_time = now_s();
    live_addr a;
    if (!parse_address(address, 0, &a, &v->loopback)) {
        live_stop(v);
        return ad_fail(AD_ERR_INVALID, "live", "--live-address %s: not an IPv4 or IPv6 address of this machine (127.0.0.1, "
                                   "0.0.0.0, ::1, ...)", address);
    }
    int first = port < 0 ? LIVE_DEFAULT_PORT : port, last = port < 0 ? LIVE_DEFAULT_PORT + 9 : port;
    for (int p = first; p <= last && !v->daemon; p++) {
        parse_address(address, p, &a, &v->loopback);
        v->daemon = start_on(v, &a);
    }
    if (!v->daemon) {
        ad_status st = ad_fail(AD_ERR_IO, "live", "cannot serve the live view on %s port %d%s: %s (--live PORT picks another "
                                      "port, --live 0 lets the system choose one)", address, first,
                           last > first ? " or the nine above it" : "", v->log[0] ? v->log : strerror(errno));
        live_stop(v);
        return st;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(v->daemon, MHD_DAEMON_INFO_BIND_PORT);
    v->port = info ? info->port : first;
    int v6 = a.any.sa_family == AF_INET6;
    snprintf(url, url_size, "http://%s%s%s:%d/", v6 ? "[" : "", address, v6 ? "]" : "", v->port);
    *bound = v->port;
    *out = v;
    return ad_ok();
}

void live_stop(live_view *v)
{
    if (!v) return;
    pthread_mutex_lock(&v->lock);
    v->stopping = 1; /* the viewers waiting for a frame are answered now */
    pthread_cond_broadcast(&v->fresh);
    pthread_mutex_unlock(&v->lock);
    if (v->daemon) MHD_stop_daemon(v->daemon);
    held_free(v->latest); /* no viewer is left to hold a reference */
    pthread_cond_destroy(&v->fresh);
    pthread_mutex_destroy(&v->lock);
    free(v);
}

#else /* built without libmicrohttpd */

ad_status live_start(const char *address, int port, live_view **out, int *bound, char *url, size_t url_size)
{
    (void)address, (void)port, (void)bound, (void)url, (void)url_size;
    *out = NULL;
    return ad_fail(AD_ERR_INVALID, "live", "this aerodem was built without the live view: libmicrohttpd was not found when it "
                               "was built (Debian: apt-get install libmicrohttpd-dev, then build again)");
}

void live_stop(live_view *v) { (void)v; }

int live_wanted(live_view *v, double now)
{
    (void)v, (void)now;
    return 0;
}

void live_publish(live_view *v, live_frame *f, double now)
{
    (void)v, (void)now;
    live_frame_free(f);
}

live_counts live_get_counts(live_view *v)
{
    (void)v;
    live_counts c = {0};
    return c;
}

#endif
