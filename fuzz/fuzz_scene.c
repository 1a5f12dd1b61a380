/* libFuzzer harness for the scene parser (src/core/scene.c): any bytes as a scene file, and the same
 * bytes as one `--set` assignment. The parser must refuse or accept without a crash, a leak, a hang or
 * undefined behaviour; an accepted scene must pass its cross-key checks or be refused by them, and
 * what it writes back (ad_scene_to_ini) must parse again to the same scene. */
#include "core/scene.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A finished scene's copy reads back to the same scene (or the harness aborts: a finding). */
static void round_trip(const ad_scene *s)
{
    ad_scene_layout layout;
    (void)ad_scene_layout_of(s, &layout);
    (void)ad_scene_flow_numbers(s);
    char *ini = ad_scene_to_ini(s);
    if (!ini) return;
    ad_scene back;
    ad_scene_defaults(&back);
    ad_status st = ad_scene_load_string(&back, ini, "fuzz.ini (written back)");
    if (!st.code) st = ad_scene_finish(&back);
    if (st.code) {
        fprintf(stderr, "a scene written back does not parse: %s\n%s\n", st.message, ini);
        abort();
    }
    char *again = ad_scene_to_ini(&back);
    if (again && strcmp(ini, again) != 0) {
        fprintf(stderr, "a scene written back parses to another scene:\n%s\n---\n%s\n", ini, again);
        abort();
    }
    free(again);
    free(ini);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    ad_scene s;
    ad_scene_defaults(&s);
    if (!ad_scene_load_string(&s, text, "fuzz.ini").code && !ad_scene_finish(&s).code) round_trip(&s);
    /* the command line's way in: trimming, values no file line could hold */
    ad_scene_defaults(&s);
    if (!ad_scene_set(&s, text).code && !ad_scene_finish(&s).code) round_trip(&s);
    free(text);
    return 0;
}
