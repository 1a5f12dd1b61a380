/* Building ad_status values: the library reports, it never prints or exits. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "world_internal.h"

ad_status ad_ok(void)
{
    ad_status s;
    memset(&s, 0, sizeof s);
    return s;
}

ad_status ad_fail(ad_code code, const char *field, const char *fmt, ...)
{
    ad_status s;
    memset(&s, 0, sizeof s);
    s.code = code;
    if (field) snprintf(s.field, sizeof s.field, "%s", field);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s.message, sizeof s.message, fmt, ap);
    va_end(ap);
    return s;
}

const char *ad_code_name(ad_code c)
{
    switch (c) {
    case AD_OK: return "ok";
    case AD_ERR_INVALID: return "invalid argument";
    case AD_ERR_NO_MEMORY: return "out of memory";
    case AD_ERR_CAPACITY: return "capacity exceeded";
    case AD_ERR_BACKEND: return "backend error";
    case AD_ERR_UNSTABLE: return "unstable";
    case AD_ERR_IO: return "i/o error";
    case AD_ERR_FORMAT: return "bad file format";
    }
    return "unknown";
}

const char *ad_backend_name(ad_backend b)
{
    switch (b) {
    case AD_BACKEND_AUTO: return "auto";
    case AD_BACKEND_CPU: return "cpu";
    case AD_BACKEND_CUDA: return "cuda";
    case AD_BACKEND_REFERENCE: return "reference";
    case AD_BACKEND_MPI: return "mpi";
    }
    return "unknown";
}

const char *ad_integrator_name(ad_integrator i)
{
    switch (i) {
    case AD_INTEGRATOR_SYMPLECTIC_EULER: return "symplectic-euler";
    case AD_INTEGRATOR_EULER: return "euler";
    case AD_INTEGRATOR_VERLET: return "verlet";
    case AD_INTEGRATOR_RK4: return "rk4";
    }
    return "unknown";
}

void ad_format_bytes(double bytes, char *buf, size_t n)
{
    const char *unit[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    double v = bytes;
    while (v >= 1024.0 && u < 5) {
        v /= 1024.0;
        u++;
    }
    if (u == 0) snprintf(buf, n, "%.0f bytes", bytes);
    else snprintf(buf, n, "%.2f %s (%.0f bytes)", v, unit[u], bytes);
}
