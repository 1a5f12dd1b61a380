/* A triangle mesh's memory (mesh.h). */
#include "mesh.h"

#include <stdlib.h>

void ad_mesh_free(ad_mesh *m)
{
    if (!m) return;
    free(m->t);
    m->t = NULL;
    m->n = 0;
}
