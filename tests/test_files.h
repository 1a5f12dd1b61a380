/* What the io tests share: their output folder and its file names, a path's existence, a decoded PNG.
 * Include after test_util.h (read_png counts a failed check). */
#ifndef AERODEM_TEST_FILES_H
#define AERODEM_TEST_FILES_H

#include <png.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *out_dir;

/* out_dir/name, in one of 8 rotating buffers. */
static inline const char *out(const char *name)
{
    static char buf[8][1024];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", out_dir, name);
    return buf[k];
}

static inline int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* A decoded PNG, RGB, top row first. */
typedef struct picture {
    int w, h;
    uint8_t *px;
} picture;

/* 1 with the picture in pic (free pic->px), 0 (a failed check) where the file does not decode. */
static inline int read_png(const char *path, picture *pic)
{
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    pic->px = NULL;
    if (!png_image_begin_read_from_file(&img, path)) {
        ENSURE_MSG(0, "cannot read %s: %s", path, img.message);
        return 0;
    }
    img.format = PNG_FORMAT_RGB;
    pic->px = malloc(PNG_IMAGE_SIZE(img));
    if (!pic->px || !png_image_finish_read(&img, NULL, pic->px, 0, NULL)) {
        ENSURE_MSG(0, "cannot decode %s: %s", path, img.message);
        png_image_free(&img);
        free(pic->px);
        pic->px = NULL;
        return 0;
    }
    pic->w = (int)img.width;
    pic->h = (int)img.height;
    return 1;
}

static inline int dark(const uint8_t *p) { return p[0] < 60 && p[1] < 60 && p[2] < 60; }

#endif
