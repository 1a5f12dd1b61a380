/* The live view's page: its files, built into the program (live_page.c, made at build time from
 * app/live/ by cmake/embed_files.cmake) and served by live_server.c, the only files it serves. */
#ifndef AD_APP_LIVE_FILES_H
#define AD_APP_LIVE_FILES_H

#include <stddef.h>

typedef struct live_file {
    const char *path, *type; /* "/index.html", "text/html; charset=utf-8" */
    const unsigned char *data;
    size_t size;
} live_file;

extern const live_file live_files[];
extern const size_t live_file_count;

#endif
