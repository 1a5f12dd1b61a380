/* `aerodem body-stl`: a 3D scene's body, as the run places it in the tunnel, written as a binary STL (to look at,
 * or to bring back as shape = stl). */
#include <stdio.h>
#include <string.h>

#include "core/mesh_check.h"
#include "core/scene.h"
#include "io/stl_write.h"
#include "tunnel.h"

static const char *USAGE_BODY_STL =
    "usage: aerodem body-stl SCENE.ini OUT.stl [--set section.key=value ...]\n"
    "\n"
    "Writes the 3D body of SCENE.ini ([tunnel] dimensions = 3), placed in the tunnel as a run places it (its\n"
    "size, angle of attack and position), as a binary STL file, and prints its triangles, box and area.\n";

int ad_body_stl(int argc, char **argv)
{
    const char *paths[2] = {NULL, NULL};
    int np = 0;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("%s", USAGE_BODY_STL);
            return AD_EXIT_OK;
        }
        if (!strcmp(argv[i], "--set")) {
            if (++i >= argc) {
                fprintf(stderr, "aerodem: --set needs section.key=value\n\n%s", USAGE_BODY_STL);
                return AD_EXIT_USAGE;
            }
            continue;
        }
        if (argv[i][0] == '-' || np == 2) {
            fprintf(stderr, "aerodem: body-stl: unexpected '%s'\n\n%s", argv[i], USAGE_BODY_STL);
            return AD_EXIT_USAGE;
        }
        paths[np++] = argv[i];
    }
    if (np != 2) {
        fprintf(stderr, "aerodem: body-stl needs a scene and an output file\n\n%s", USAGE_BODY_STL);
        return AD_EXIT_USAGE;
    }
    ad_scene sc;
    ad_scene_defaults(&sc);
    ad_status st = ad_scene_load(&sc, paths[0]);
    for (int i = 2; i < argc && !st.code; i++)
        if (!strcmp(argv[i], "--set")) st = ad_scene_set(&sc, argv[++i]);
    if (!st.code) st = ad_scene_finish(&sc);
    if (!st.code && (sc.dimensions != 3 || sc.shape == AD_SHAPE_NONE))
        st = ad_fail(AD_ERR_INVALID, "body.shape", "%s: body-stl writes a 3D body: the scene has %s", paths[0],
                     sc.dimensions != 3 ? "[tunnel] dimensions = 2" : "[body] shape = none");
    ad_mesh m = {NULL, 0};
    ad_body_reference ref;
    if (!st.code) st = ad_scene_body_mesh(&sc, &m, &ref);
    if (!st.code) st = ad_stl_write(paths[1], &m, "aerodem body-stl");
    if (st.code) {
        ad_mesh_free(&m);
        fprintf(stderr, "aerodem: error: %s\n", st.message);
        return st.code == AD_ERR_IO ? AD_EXIT_ERROR : AD_EXIT_USAGE;
    }
    double lo[3], hi[3];
    ad_mesh_bounds(&m, lo, hi);
    printf("%s: %zu triangles, x %g..%g m, y %g..%g m, z %g..%g m, area %g m^2, reference area %g m^2\n", paths[1], m.n,
           lo[0], hi[0], lo[1], hi[1], lo[2], hi[2], ad_mesh_area(&m), ref.area);
    ad_mesh_free(&m);
    return AD_EXIT_OK;
}
