/* The library in 3D: spheres falling onto a cube of triangles in a box with a periodic span, the force
 * and torque on the cube, the statistics. */
#include <stdio.h>

#include "aerodem/aerodem.h"

/* The cube [lo, hi]^3 as 12 triangles, two a face (they share its edges: one connected surface). */
static void cube(float lo, float hi, ad_triangle t[12])
{
    static const int face[6][4][3] = {{{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}}, {{0, 0, 1}, {0, 1, 1}, {1, 1, 1}, {1, 0, 1}},
                                      {{0, 0, 0}, {0, 0, 1}, {1, 0, 1}, {1, 0, 0}}, {{0, 1, 0}, {1, 1, 0}, {1, 1, 1}, {0, 1, 1}},
                                      {{0, 0, 0}, {0, 1, 0}, {0, 1, 1}, {0, 0, 1}}, {{1, 0, 0}, {1, 0, 1}, {1, 1, 1}, {1, 1, 0}}};
    for (int f = 0; f < 6; f++)
        for (int h = 0; h < 2; h++) { /* corners 0, 1, 2 and 0, 2, 3 of the face */
            const int corner[3] = {0, 1 + h, 2 + h};
            for (int j = 0; j < 3; j++)
                for (int k = 0; k < 3; k++) t[2 * f + h].v[j][k] = face[f][corner[j]][k] ? hi : lo;
        }
}

int main(void)
{
    ad_world_def def = ad_default_world_def();
    def.dimensions = 3;                   /* spheres of radius 0.5 m in a box */
    def.x_max = def.y_max = def.z_max = 24; /* [m] */
    def.boundary_z = AD_BOUNDARY_PERIODIC; /* the span wraps: no walls along z */
    def.gravity_y = -9.81;                /* [m/s^2] */
    def.restitution = def.wall_restitution = 0.8;
    def.capacity = 20000;
    ad_world *w;
    ad_status st = ad_world_create(&def, &w);
    ad_triangle t[12];
    cube(8, 16, t);
    if (!st.code) st = ad_world_add_triangles(w, t, 12);
    /* region [m] (x0, y0, x1, y1), volume fraction, mean v, kT/m, seed, then z0, z1, vz */
    ad_fill_def fill = {0, 17, 24, 24, 0.25, 0, 0, 0.5, 1, 0, 24, 0};
    size_t n = 0;
    if (!st.code) st = ad_world_fill(w, &fill, &n);
    ad_stats s0, s;
    if (!st.code) st = ad_world_get_stats(w, &s0);
    if (!st.code) st = ad_world_step(w, 8000);
    if (!st.code) st = ad_world_get_stats(w, &s);
    if (st.code) return fprintf(stderr, "aerodem: %s\n", st.message), ad_world_destroy(w), 1;
    double T = s.time - s0.time;
    printf("%zu spheres, t = %.3f s, %s backend\n", n, s.time, ad_backend_name(s.backend));
    printf("mean force on the cube (%.2f, %.2f, %.2f) N, mean torque about the origin (%.2f, %.2f, %.2f) N m\n",
           s.body_impulse_x / T, s.body_impulse_y / T, s.body_impulse_z / T, s.body_angular_impulse_x / T,
           s.body_angular_impulse_y / T, s.body_angular_impulse_z / T);
    ad_world_destroy(w);
    return 0;
}
