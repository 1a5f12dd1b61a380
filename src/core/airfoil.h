/* Body outlines in chord units (NACA, coordinate files, plate, wedge, circle) and their placement as segments. */
#ifndef AD_CORE_AIRFOIL_H
#define AD_CORE_AIRFOIL_H

#include <stddef.h>

#include "aerodem/aerodem.h"

/* A body outline in chord units: leading edge at (0,0), trailing edge near (1,0). Points run in Selig order: from
 * the trailing edge over the upper surface to the leading edge and back along the lower surface, so a closed
 * outline has a positive (counter-clockwise) shoelace area. A closed outline's last point connects back to the
 * first; the first point is not repeated at the end. An open outline (closed = 0) is a polyline. */
typedef struct ad_outline {
    double *x, *y;
    size_t n;
    int closed;
} ad_outline;

/* Frees the points and zeroes the outline; safe on a zeroed or already freed outline. */
void ad_outline_free(ad_outline *o);

/* Least points of a closed outline; fewer is rejected as a broken body rather than drawn as a crude polygon. */
#define AD_OUTLINE_MIN_CLOSED 8

/* Most `panels` ad_airfoil_naca (per surface) and ad_shape_circle accept. Cosine spacing's finest step,
 * pi^2 / (4 (panels - 1)^2) chord, is then 2.5e-8, still well above the zero-length edge limit (1e-9). */
#define AD_OUTLINE_MAX_PANELS 10000

/* Most points of any outline (checked, loaded or placed): the largest NACA section (2 * AD_OUTLINE_MAX_PANELS - 1
 * points) fits, and a coordinate file of the UIUC database has 100 to 400. The cap bounds the memory and time a
 * file can ask for. */
#define AD_OUTLINE_MAX_POINTS (2 * AD_OUTLINE_MAX_PANELS)

/* Most bytes a coordinate file may have (4 MiB): the most points at 200 characters a line. A larger file, or one
 * that is not a regular file (a directory, a device such as /dev/zero, a FIFO), is refused before it is read. */
#define AD_AIRFOIL_MAX_BYTES (4L << 20)

/* Longest line of a coordinate file, in characters without the line end. */
#define AD_AIRFOIL_MAX_LINE 1022

/* Largest coordinate magnitude a file may hold: beyond any unit for a body that fits a tunnel, and small enough
 * that differences and their products in the checks cannot overflow. */
#define AD_AIRFOIL_MAX_COORD 1e9

/* NACA 4-digit ("0012", "2412") or 5-digit ("23012"; reflexed "23112") section with cosine spacing and `panels`
 * points per surface (8 to AD_OUTLINE_MAX_PANELS), leading and trailing edge points included.
 * closed_te = 0: the standard thickness (-0.1015 x^4 term) and a short trailing-edge segment closes the outline,
 * 2*panels - 1 points. closed_te = 1: the -0.1036 term, both surfaces meet at (1,0), 2*panels - 2 points.
 * Invalid digits give AD_ERR_INVALID (field "digits") with the digits in the message. */
ad_status ad_airfoil_naca(const char *digits, int panels, int closed_te, ad_outline *out);

/* Reads a coordinate file in Selig layout (name line, then "x y" lines from the trailing edge over the upper
 * surface to the leading edge and back along the lower surface) or Lednicer layout (name line, a line with the
 * point counts of the upper and lower surfaces such as "17. 17.", then the upper surface leading edge to trailing
 * edge and the lower surface leading edge to trailing edge, in blocks separated by blank lines), as in the UIUC
 * airfoil database; the layout is detected from the first data line (two integers >= 2 mean Lednicer counts).
 * The first line is the name unless it holds exactly two numbers. Blank lines elsewhere are ignored in Selig files.
 * Normalises quietly: a file not already in chord units (leading edge x within 0.02 of 0, largest x within 0.02
 * of 1) is translated so its leftmost point lands on (0,0) and scaled so the chord is 1; points repeated one
 * after the other and a repeated closing point are dropped; an outline that runs clockwise is reversed, and the
 * points are rotated to start at the trailing edge (the rearmost point, the upper one of two). The result passes
 * ad_outline_check.
 * A file must be an outline: a Selig file starts and ends at the trailing edge (within 2% of the chord of the
 * rearmost x) and so has both surfaces; each Lednicer block runs from the leading to the trailing edge. It must
 * be text (no NUL or other control bytes), a regular file of at most AD_AIRFOIL_MAX_BYTES with lines of at most
 * AD_AIRFOIL_MAX_LINE characters and at most AD_OUTLINE_MAX_POINTS points, with finite coordinates within
 * +-AD_AIRFOIL_MAX_COORD, a chord (not all x equal) and a height of at most 1000 chords.
 * Errors: AD_ERR_IO (cannot open or read) or AD_ERR_FORMAT (anything above, not numbers, wrong counts, too few
 * points, self-intersection), field "path", with "file:line:" and what was wrong in the message. */
ad_status ad_airfoil_load(const char *path, ad_outline *out);

/* A flat plate along the chord. thickness = 0: one open segment (n = 2) from (0,0) to (1,0). 0 < thickness <= 1
 * [chord]: a closed rectangle [0,1] x [-thickness/2, thickness/2], its long sides split in quarters so it has the
 * points of a closed outline. */
ad_status ad_shape_plate(double thickness, ad_outline *out);

/* A closed wedge: apex at (0,0) pointing upstream, base at x = 1, sides at +-half_angle_deg (0 < angle < 90)
 * from the x axis; the sides are split in quarters. */
ad_status ad_shape_wedge(double half_angle_deg, ad_outline *out);

/* A closed regular polygon of `panels` points (8 to AD_OUTLINE_MAX_PANELS) on the circle of diameter 1 centred at
 * (0.5, 0), starting at (1,0) and running over the top. */
ad_status ad_shape_circle(int panels, ad_outline *out);

/* Checks an outline: closed outlines have at least AD_OUTLINE_MIN_CLOSED points, open ones at least 2, none more
 * than AD_OUTLINE_MAX_POINTS; every
 * coordinate is finite; no edge is shorter than 1e-9 of the outline's size; no two edges cross or touch other
 * than neighbours at their shared point (a neighbour folding back onto its edge counts as touching); O(n log n).
 * `what` (a file name, "naca 2412") starts the message. AD_ERR_INVALID, field "body" (AD_ERR_NO_MEMORY if the
 * check's own memory cannot be had). */
ad_status ad_outline_check(const ad_outline *o, const char *what);

/* Places an outline in the tunnel: scales it by chord [m], rotates it by the angle of attack aoa_deg about the
 * quarter-chord point (0.25, 0) so that a positive angle raises the leading edge for flow along +x (clockwise),
 * and moves the quarter-chord point to (pivot_x, pivot_y) [m]. Writes n - 1 segments (open) or n (closed, the
 * closing segment last) to a malloc'ed *segs that the caller frees; segment k ends on the same float values that
 * segment k+1 starts on. Checks the outline first; fails with AD_ERR_INVALID if float precision at the pivot
 * collapses an edge. */
ad_status ad_outline_place(const ad_outline *o, double chord, double aoa_deg, double pivot_x, double pivot_y,
                           ad_segment **segs, size_t *nseg);

/* Signed shoelace area [chord^2]: positive for counter-clockwise (Selig order) outlines. An open outline is
 * closed by a straight line for this. */
ad_status ad_outline_area(const ad_outline *o, double *area);

#endif
