/* Status helpers (status.c): what every layer of the library returns its errors with. Core, io and
 * app include this, not the world's internals. */
#ifndef AD_CORE_STATUS_H
#define AD_CORE_STATUS_H

#include "aerodem/aerodem.h"

#ifdef __cplusplus
extern "C" {
#endif

ad_status ad_ok(void);
/* code, the field at fault, and a printf message (cut to the status's message buffer). */
ad_status ad_fail(ad_code code, const char *field, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#ifdef __cplusplus
}
#endif

/* Returns the status of expr from the calling function when it is not AD_OK. */
#define AD_TRY(expr)                                                                                              \
    do {                                                                                                          \
        ad_status s_ = (expr);                                                                                    \
        if (s_.code != AD_OK) return s_;                                                                          \
    } while (0)

#endif
