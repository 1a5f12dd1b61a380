/* Numbers as text that reads back exactly: what scene.ini, docs/SCENES.md and the VTK files print. */
#ifndef AD_CORE_NUMBER_TEXT_H
#define AD_CORE_NUMBER_TEXT_H

#include <stdio.h>
#include <stdlib.h>

/* v as the shortest of %.15g, %.16g and %.17g that reads back as the same double: 0.1 stays "0.1"
 * (not 0.10000000000000001), and every value survives the round trip. */
static inline void ad_format_double(char *buf, size_t n, double v)
{
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, n, "%.*g", digits, v);
        if (strtod(buf, NULL) == v) return;
    }
}

#endif
