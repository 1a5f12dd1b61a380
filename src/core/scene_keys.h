/* The table of a scene's keys: every key's section, name, type, range, units and meaning, in the order
 * the resolved INI copy and docs/SCENES.md list them (scene_keys.c). Parsing, checking, the copy and
 * the reference page are driven by it (scene.c). */
#ifndef AD_CORE_SCENE_KEYS_H
#define AD_CORE_SCENE_KEYS_H

#include <stddef.h>

#include "scene.h"

typedef enum { K_DOUBLE, K_U64, K_INT, K_ENUM, K_BOOL, K_STRING } ktype;

typedef struct key {
    const char *section, *name;
    ktype type;
    size_t offset, size;
    double min, max;   /* numbers: allowed range */
    int min_open;      /* 1: min itself is not allowed */
    int allow_auto;    /* K_DOUBLE: "auto" means NaN (chosen by the program) */
    const char *units;
    const char *choices; /* K_ENUM: names separated by '|', in value order */
    const char *doc;
} key;

#define BIG 1e300

extern const key KEYS[];
extern const size_t NKEYS;

#endif
