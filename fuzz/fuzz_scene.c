/* libFuzzer harness for the scene parser (src/core/scene.c): any bytes as a scene file. The parser
 * must refuse or accept without a crash, a leak, a hang or undefined behaviour; an accepted scene
 * must pass its cross-key checks or be refused by them, and what it writes back (ad_scene_to_ini)
 * must parse again to the same scene. */
#include "core/scene.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    ad_scene s;
    ad_scene_defaults(&s);
    ad_status st = ad_scene_load_string(&s, text, "fuzz.ini");
    free(text);
    if (st.code) return 0;
    if (ad_scene_finish(&s).code) return 0;
    ad_scene_layout layout;
    (void)ad_scene_layout_of(&s, &layout);
    (void)ad_scene_flow_numbers(&s);
    char *ini = ad_scene_to_ini(&s);
    if (!ini) return 0;
    ad_scene back;
    ad_scene_defaults(&back);
    st = ad_scene_load_string(&back, ini, "fuzz.ini (written back)");
    if (st.code || ad_scene_finish(&back).code) {
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
    return 0;
}
