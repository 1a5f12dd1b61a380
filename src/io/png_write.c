/* The PNG writer: a canvas to a file through libpng, written as path.tmp and renamed. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <errno.h>
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/status.h"
#include "image_internal.h"
#include "vtk.h" /* ad_io_file: the path.tmp + rename writer shared by src/io */

typedef struct png_err {
    jmp_buf jmp;
    int err;
    char msg[160];
} png_err;

/* libpng must never print: its errors come here and end in a longjmp, warnings are dropped. */
static void on_png_error(png_structp png, png_const_charp msg)
{
    png_err *e = png_get_error_ptr(png);
    e->err = errno;
    snprintf(e->msg, sizeof e->msg, "%s", msg);
    longjmp(e->jmp, 1);
}

static void on_png_warning(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;
}

ad_status ad_write_png(const char *path, const canvas *c)
{
    png_bytep *rows = malloc((size_t)c->h * sizeof *rows);
    if (!rows) return ad_fail(AD_ERR_NO_MEMORY, "path", "No memory for the rows of '%s'.", path);
    for (int y = 0; y < c->h; y++) rows[y] = c->px + (size_t)y * (size_t)c->w * 3;
    ad_io_file io;
    ad_status s = ad_io_open(&io, path);
    if (s.code != AD_OK) {
        free(rows);
        return s;
    }
    png_err e;
    e.err = 0;
    e.msg[0] = 0;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &e, on_png_error, on_png_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        png_destroy_write_struct(&png, &info);
        ad_io_discard(&io);
        free(rows);
        return ad_fail(AD_ERR_NO_MEMORY, "path", "libpng could not start writing '%s'.", path);
    }
    if (setjmp(e.jmp)) {
        png_destroy_write_struct(&png, &info);
        s = e.err ? ad_io_error(&io, e.err)
                  : ad_fail(AD_ERR_IO, "path", "cannot write '%s': libpng: %s", path, e.msg);
        ad_io_discard(&io);
        free(rows);
        return s;
    }
    png_init_io(png, io.f);
    png_set_IHDR(png, info, (png_uint_32)c->w, (png_uint_32)c->h, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    png_write_image(png, rows);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    free(rows);
    return ad_io_commit(&io);
}
