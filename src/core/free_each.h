/* AD_FREE_EACH(a, b, ...): free() of every pointer of a list, in order (a struct's arrays). */
#ifndef AD_CORE_FREE_EACH_H
#define AD_CORE_FREE_EACH_H

#include <stdlib.h>

static inline void ad_free_each(void *const *p, size_t n)
{
    for (size_t i = 0; i < n; i++) free(p[i]);
}

#define AD_FREE_EACH(...)                                                                                         \
    ad_free_each((void *const[]){__VA_ARGS__}, sizeof((void *const[]){__VA_ARGS__}) / sizeof(void *))

#endif
