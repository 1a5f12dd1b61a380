/* Where a body's panels lie, as the surface outputs describe them: centre, size, outward normal, the direction
 * skin friction is signed along, the position along the body in its chord frame, and the side (panel_frame.c). */
#ifndef AD_CORE_PANEL_FRAME_H
#define AD_CORE_PANEL_FRAME_H

#include <stddef.h>

#include "aerodem/aerodem.h"
#include "mesh.h"

typedef enum { AD_SIDE_UPPER = 0, AD_SIDE_LOWER = 1, AD_SIDE_BOTH = 2 } ad_panel_side;

/* The body's chord frame: the chord line at angle of attack aoa (nose up) through the pivot at its quarter chord.
 * chord <= 0 (a sphere, an STL, a cylinder): no chord; x/c is NaN and the sides are told by the normal's y. */
typedef struct ad_chord_frame {
    double chord;     /* m */
    double aoa;       /* deg, positive nose up (for a body without a chord: the pitch of its placement) */
    double pivot[3];  /* m: the quarter chord (2D, a wing's mid-span), the centre of the others */
    double sweep;     /* deg, a wing's: its section lies further back by (z - pivot z) tan(sweep) */
} ad_chord_frame;

typedef struct ad_panel_geom {
    double c[3];     /* centre: a segment's midpoint, a triangle's centroid [m] */
    double n[3];     /* unit normal out of the body (an open outline: the chord frame's upper side) */
    double t[3];     /* unit tangent Cf is signed along: the chord's direction (the stream's without a chord)
                        projected on the panel, towards the trailing edge */
    double size;     /* length [m] (2D), area [m^2] (3D) */
    double s;        /* 2D: arc length from the outline's first point to the midpoint [m]; NaN in 3D */
    double xc;       /* x/c of the centre in the chord frame; NaN without a chord */
    double theta;    /* angle between the outward normal and the upstream direction (-x) [deg]: 0 faces the stream */
    int side;        /* ad_panel_side */
} ad_panel_geom;

/* The panels of a 2D outline of n points (segment i from point i to point i + 1, the last to the first when
 * closed), the world's segments in order; *out malloc'ed, *np = n - 1 or n. */
ad_status ad_panels_2d(const float *x, const float *y, size_t n, int closed, const ad_chord_frame *f,
                       ad_panel_geom **out, size_t *np);
/* The panels of a 3D body, one per triangle in order (normals by the corners' order, outward). */
ad_status ad_panels_3d(const ad_mesh *m, const ad_chord_frame *f, ad_panel_geom **out);

/* The free stream's scales of the coefficients: q = rho U^2 / 2 [N/m in 2D, N/m^2 in 3D], its pressure p_inf (the
 * same unit) and rho U^3 / 2, the scale of an energy flux [W/m in 2D, W/m^2 in 3D]. */
typedef struct ad_stream_scales {
    double q, p_inf, e_flux;
} ad_stream_scales;

/* What a panel felt over an interval, from its sums a at the start and b at the end, dt apart [s]:
 * Cp = (p - p_inf) / q with p = -F.n / size (the gas presses against the outward normal; a line's panel, side
 * both: the upper face's pressure minus the lower's, -F.n / (q size), p_inf cancelling), Cf = F.t / (q size),
 * Ch = (energy / dt) / (e_flux size), the contacts begun per second and size, and the mean force F. */
enum { AD_PQ_CP, AD_PQ_CF, AD_PQ_CH, AD_PQ_RATE, AD_PQ_FX, AD_PQ_FY, AD_PQ_FZ, AD_PQ_COUNT };
void ad_panel_interval(const ad_panel_geom *g, const ad_stream_scales *k, const ad_panel_sums *a,
                       const ad_panel_sums *b, double dt, double v[AD_PQ_COUNT]);

/* The side of a panel of outward normal n in the frame (the normal's y in the chord frame, >= 0: upper). */
int ad_panel_side_of(const double n[3], const ad_chord_frame *f);
/* Its name in surface.csv: "upper", "lower", "both". */
const char *ad_panel_side_name(int side);

#endif
