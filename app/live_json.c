/* A live frame as the JSON that the page (app/live/live.js) reads. Byte arrays (the discs' positions
 * and values, the field maps, the colour map) go as base64 strings: a quarter more than their bytes,
 * where numbers in text would take three to four times as many. Numbers that are not finite are
 * written as null. */
#include "live.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/image.h"

typedef struct text {
    char *p;
    size_t n, cap;
    int oom;
} text;

static void grow(text *t, size_t more)
{
    if (t->oom || t->n + more + 1 <= t->cap) return;
    size_t cap = t->cap ? t->cap : 4096;
    while (cap < t->n + more + 1) cap *= 2;
    char *p = realloc(t->p, cap);
    if (!p) {
        t->oom = 1;
        return;
    }
    t->p = p;
    t->cap = cap;
}

static void put(text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (k < 0) return;
    grow(t, (size_t)k);
    if (t->oom) return;
    va_start(ap, fmt);
    vsnprintf(t->p + t->n, t->cap - t->n, fmt, ap);
    va_end(ap);
    t->n += (size_t)k;
}

static void put_number(text *t, double x)
{
    if (isfinite(x)) put(t, "%.9g", x);
    else put(t, "null");
}

/* A JSON string: quotes, backslashes and control characters escaped. */
static void put_string(text *t, const char *s)
{
    put(t, "\"");
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\') put(t, "\\%c", *c);
        else if (*c == '\n') put(t, "\\n");
        else if (*c < 0x20) put(t, "\\u%04x", *c);
        else put(t, "%c", *c);
    }
    put(t, "\"");
}

static void put_base64(text *t, const uint8_t *b, size_t n)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    grow(t, 4 * ((n + 2) / 3) + 2);
    if (t->oom) return;
    char *o = t->p + t->n;
    *o++ = '"';
    for (size_t i = 0; i < n; i += 3) {
        uint32_t w = (uint32_t)b[i] << 16 | (i + 1 < n ? (uint32_t)b[i + 1] << 8 : 0) | (i + 2 < n ? b[i + 2] : 0);
        *o++ = abc[w >> 18 & 63];
        *o++ = abc[w >> 12 & 63];
        *o++ = i + 1 < n ? abc[w >> 6 & 63] : '=';
        *o++ = i + 2 < n ? abc[w & 63] : '=';
    }
    *o++ = '"';
    *o = 0;
    t->n = (size_t)(o - t->p);
}

/* `"key": value` after the text `before` (", " or an opening brace) */
static void key_number(text *t, const char *before, const char *key, double x)
{
    put(t, "%s\"%s\": ", before, key);
    put_number(t, x);
}

static void key_string(text *t, const char *before, const char *key, const char *v)
{
    put(t, "%s\"%s\": ", before, key);
    put_string(t, v);
}

/* n numbers, every stride-th of v (floats or doubles as doubles), as a JSON array */
static void put_array(text *t, const double *v, size_t n, size_t stride)
{
    put(t, "[");
    for (size_t i = 0; i < n; i++) {
        put(t, i ? "," : "");
        put_number(t, v[i * stride]);
    }
    put(t, "]");
}

static void put_values(text *t, const live_values *v, size_t n)
{
    key_string(t, "{", "name", v->name);
    key_string(t, ", ", "title", v->title);
    key_string(t, ", ", "units", v->units);
    key_number(t, ", ", "lo", v->lo);
    key_number(t, ", ", "hi", v->hi);
    put(t, ", \"bytes\": ");
    if (v->q) put_base64(t, v->q, n);
    else put(t, "null");
    put(t, "}");
}

static void put_run(text *t, const live_frame *f)
{
    put(t, "\"run\": ");
    key_string(t, "{", "label", f->label);
    key_string(t, ", ", "dir", f->dir);
    key_string(t, ", ", "backend", f->backend);
    put(t, ", \"threads\": %d", f->threads);
    key_string(t, ", ", "scene", f->scene ? f->scene : "");
    put(t, "},\n\"progress\": {\"step\": %llu, \"total\": %llu, \"settle_steps\": %llu, \"settled\": %s, "
           "\"discs\": %zu",
        f->step, f->total, f->settle_steps, f->settled ? "true" : "false", f->count);
    key_number(t, ", ", "time", f->time);
    key_number(t, ", ", "dt", f->dt);
    key_number(t, ", ", "rate", f->rate);
    key_number(t, ", ", "eta", f->eta);
    key_number(t, ", ", "frame_ms", f->build_ms);
    put(t, "},\n");
}

static void put_body(text *t, const live_frame *f)
{
    put(t, "\"domain\": ");
    key_number(t, "{", "width", f->width);
    key_number(t, ", ", "height", f->height);
    key_number(t, ", ", "radius", f->radius);
    double *xy = malloc((2 * f->on + 1) * sizeof *xy); /* the outline's floats as doubles */
    for (size_t i = 0; xy && i < f->on; i++) xy[2 * i] = f->ox[i], xy[2 * i + 1] = f->oy[i];
    put(t, "},\n\"body\": {\"closed\": %s, \"x\": ", f->oclosed ? "true" : "false");
    if (xy) put_array(t, xy, f->on, 2);
    else t->oom = 1;
    put(t, ", \"y\": ");
    if (xy) put_array(t, xy + 1, f->on, 2);
    put(t, "},\n");
    free(xy);
}

static void put_history(text *t, const live_frame *f)
{
    static const char *col[LIVE_HISTORY_COLUMNS] = {"time", "cl", "cd", "cl_mean", "cl_se", "cd_mean", "cd_se"};
    put(t, "\"history\": {");
    for (int c = 0; c < LIVE_HISTORY_COLUMNS; c++) {
        put(t, "%s\"%s\": ", c ? ", " : "", col[c]);
        put_array(t, f->history + c, f->nh, LIVE_HISTORY_COLUMNS);
    }
    put(t, "},\n");
}

/* The colour maps of the pictures (src/io/colormap.c), 256 entries of RGB each, so that the page
 * and the PNG files colour alike. */
static void put_colormaps(text *t)
{
    uint8_t lut[2][256 * 3];
    for (int d = 0; d < 2; d++)
        for (int i = 0; i < 256; i++) ad_colormap(d, i / 255.0, &lut[d][3 * i]);
    put(t, "\"colormap\": ");
    put_base64(t, lut[0], sizeof lut[0]);
    put(t, ", \"colormap_diverging\": ");
    put_base64(t, lut[1], sizeof lut[1]);
    put(t, "\n");
}

char *live_frame_json(const live_frame *f, size_t *len)
{
    text t = {0};
    put(&t, "{\"version\": %llu,\n", (unsigned long long)f->version);
    put_run(&t, f);
    put_body(&t, f);
    put(&t, "\"discs\": {\"n\": %zu, \"xy\": ", f->nd);
    put_base64(&t, f->xy, 4 * f->nd);
    put(&t, ", \"values\": [");
    for (int k = 0; k < LIVE_DISC_VALUES; k++) {
        put(&t, k ? ",\n  " : "\n  ");
        put_values(&t, &f->disc[k], f->nd);
    }
    put(&t, "]},\n\"fields\": {\"nx\": %d, \"ny\": %d, \"samples\": %llu, \"maps\": [", f->nx, f->ny,
        (unsigned long long)f->samples);
    for (int k = 0; k < LIVE_MAPS; k++) {
        put(&t, k ? ",\n  " : "\n  ");
        put_values(&t, &f->map[k], (size_t)f->nx * (size_t)f->ny);
    }
    put(&t, "]},\n");
    put_history(&t, f);
    put_colormaps(&t);
    put(&t, "}\n");
    if (t.oom) {
        free(t.p);
        return NULL;
    }
    *len = t.n;
    return t.p;
}
