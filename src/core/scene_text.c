/* A scene file's text before libinih reads it: checked to be text, cleaned line for line (the line
 * numbers stay) so that libinih sees every line whole, and checked for lines that are not INI. */
#include "scene_text.h"

#include <stdlib.h>
#include <string.h>

static ad_status not_text(const char *name, int line, unsigned char c)
{
    return ad_fail(AD_ERR_FORMAT, "scene", "%s:%d: byte 0x%02x is not text (a scene file is text: no control characters)",
                   name, line, c);
}

/* The text as libinih is to see it, line for line (the line numbers stay): the BOM gone, CRLF read as
 * LF, each line without its leading blanks (libinih would take an indented line for the continuation
 * of the previous key's value), comment lines and inline comments (';' after a blank, as libinih
 * strips them) blanked out, and each line left checked against libinih's length. */
ad_status ad_scene_text_prepare(const char *text, const char *name, char **out)
{
    *out = NULL;
    size_t len = strlen(text);
    if (len > SCENE_MAX_BYTES)
        return ad_fail(AD_ERR_FORMAT, "scene", "%s is %zu bytes long; a scene file holds at most %zu", name, len,
                       SCENE_MAX_BYTES);
    if (!strncmp(text, "\xEF\xBB\xBF", 3)) text += 3, len -= 3; /* a UTF-8 byte-order mark */
    char *o = malloc(len + 2), *w = o;
    if (!o) return ad_fail(AD_ERR_NO_MEMORY, "scene", "out of memory reading %s", name);
    int line = 1;
    for (const char *p = text;; line++) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n && p[n - 1] == '\r') n--; /* CRLF */
        for (size_t i = 0; i < n; i++) {
            unsigned char c = (unsigned char)p[i];
            if ((c < 0x20 && c != '\t') || c == 0x7f) {
                free(o);
                return not_text(name, line, c);
            }
        }
        while (n && (*p == ' ' || *p == '\t')) p++, n--;
        if (n && (*p == ';' || *p == '#')) n = 0;
        for (size_t i = 1; i < n; i++)
            if (p[i] == ';' && (p[i - 1] == ' ' || p[i - 1] == '\t')) n = i;
        while (n && (p[n - 1] == ' ' || p[n - 1] == '\t')) n--;
        if (n > INI_LINE) {
            free(o);
            return ad_fail(AD_ERR_FORMAT, "scene", "%s:%d: line is %zu characters long; at most %d", name, line, n,
                           INI_LINE);
        }
        memcpy(w, p, n);
        w += n;
        *w++ = '\n';
        if (!e) break;
        p = e + 1;
    }
    *w = 0;
    *out = o;
    return ad_ok();
}

/* Lines that are not INI at all, found before any key is applied (inih would
 * report their line but with the next key's complaint). */
ad_status ad_scene_text_syntax(const char *text, const char *name)
{
    int line = 1;
    for (const char *p = text; *p; line++) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        while (len && (*p == ' ' || *p == '\t')) p++, len--;
        while (len && (p[len - 1] == ' ' || p[len - 1] == '\t' || p[len - 1] == '\r')) len--;
        if (len && *p != ';' && *p != '#') {
            if (*p == '[') {
                const char *close = memchr(p, ']', len);
                if (!close)
                    return ad_fail(AD_ERR_FORMAT, "scene", "%s:%d: section header '%.*s' lacks its closing ']'", name,
                                   line, (int)len, p);
                /* libinih would drop what follows the ']' without a word */
                const char *rest = close + 1 + strspn(close + 1, " \t");
                if (rest < p + len)
                    return ad_fail(AD_ERR_FORMAT, "scene", "%s:%d: '%.*s' follows the section header '%.*s'", name,
                                   line, (int)(p + len - rest), rest, (int)(close - p + 1), p);
            } else if (!memchr(p, '=', len) && !memchr(p, ':', len)) {
                return ad_fail(AD_ERR_FORMAT, "scene", "%s:%d: '%.*s' is not 'key = value' or '[section]'", name,
                               line, (int)len, p);
            }
        }
        if (!e) break;
        p = e + 1;
    }
    return ad_ok();
}
