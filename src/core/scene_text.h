/* A scene file's text before libinih reads it (scene_text.c). */
#ifndef AD_SCENE_TEXT_H
#define AD_SCENE_TEXT_H

#include <stddef.h>

#include "world_internal.h"

/* The longest line libinih reads whole: its buffer of INI_MAX_LINE (200) bytes holds the line, its
 * newline and the NUL. A longer line is cut into pieces that each count as a line (the tail of a long
 * comment would set a key), so lines are checked here first. */
#define INI_LINE 198
#define SCENE_MAX_BYTES ((size_t)1 << 20) /* a scene is a few kB; a checkpoint holds its copy */

/* The text as libinih is to see it (*out, malloc'ed), or a refusal naming the file and line: not text,
 * too long a file, a line too long for libinih after comments are blanked. */
ad_status ad_scene_text_prepare(const char *text, const char *name, char **out);
/* Lines that are not INI at all, found before any key is applied (libinih would report their line
 * with the next key's complaint). */
ad_status ad_scene_text_syntax(const char *text, const char *name);

#endif
