/* The live view on the command line: --live [PORT], --live-address ADDR, and the line that says where
 * the page is. */
#include "live.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A port number: digits only, 0 to 65535. */
static int parse_port(const char *s, int *port)
{
    if (!*s || strlen(s) > 5 || strspn(s, "0123456789") != strlen(s)) return 0;
    long p = strtol(s, NULL, 10);
    if (p > 65535) return 0;
    *port = (int)p;
    return 1;
}

int live_parse_option(int argc, char **argv, int *i, live_request *lr, char *msg, size_t n)
{
    const char *a = argv[*i];
    if (!strcmp(a, "--live")) {
        lr->on = 1;
        /* the port is optional: a next argument of digits is one, anything else is not */
        if (*i + 1 < argc && argv[*i + 1][0] >= '0' && argv[*i + 1][0] <= '9') {
            if (!parse_port(argv[*i + 1], &lr->port)) {
                snprintf(msg, n, "--live %s: expected a port from 1 to 65535 (or 0: any free port)", argv[*i + 1]);
                return -1;
            }
            ++*i;
        }
        return 1;
    }
    if (!strcmp(a, "--live-address")) {
        if (*i + 1 >= argc || !argv[*i + 1][0]) {
            snprintf(msg, n, "--live-address needs an address (127.0.0.1, 0.0.0.0, ::1, ...)");
            return -1;
        }
        lr->on = 1;
        lr->address = argv[++*i];
        return 1;
    }
    return 0;
}

ad_status live_open(const live_request *lr, live_view **out)
{
    *out = NULL;
    if (!lr->on) return ad_ok();
    char url[128];
    int p = 0;
    ad_status st = live_start(lr->address ? lr->address : "127.0.0.1", lr->port, out, &p, url, sizeof url);
    if (st.code) return st;
    printf("aerodem: live view at %s\n", url);
    if (!lr->address)
        printf("  from another machine: ssh -L %d:localhost:%d THIS_MACHINE, then open http://localhost:%d/\n", p, p,
               p);
    fflush(stdout);
    return st;
}
