/* What the outline files (airfoil.c, outline_check.c, naca.c, airfoil_file.c) share and the public header does not
 * promise: allocation, the shoelace sum, the size, and the outline check with its plain reference. */
#ifndef AD_CORE_OUTLINE_INTERNAL_H
#define AD_CORE_OUTLINE_INTERNAL_H

#include <stddef.h>

#include "airfoil.h"

/* Edges shorter than this fraction of the outline's size are zero-length: far below any disc radius, and short
 * enough that float segments could collapse. Loading drops such repeats instead of failing on them. */
#define AD_OUTLINE_MIN_EDGE 1e-9

/* Allocates n points (uninitialised); AD_ERR_NO_MEMORY naming `field` if it cannot. */
ad_status ad_outline_alloc(size_t n, int closed, ad_outline *out, const char *field);

/* The larger side of the points' bounding box; 0 for none. */
double ad_outline_size(const double *x, const double *y, size_t n);

/* Signed shoelace area of the polygon through the n points (positive counter-clockwise). */
double ad_outline_shoelace(const double *x, const double *y, size_t n);

typedef enum ad_check_kind {
    AD_CHECK_OK = 0,
    AD_CHECK_NULL,      /* no points array, or closed flag not 0/1 */
    AD_CHECK_FEW,       /* too few points */
    AD_CHECK_MANY,      /* more than AD_OUTLINE_MAX_POINTS */
    AD_CHECK_NONFINITE, /* point i */
    AD_CHECK_SHORT,     /* edge i */
    AD_CHECK_CROSS,     /* edges i < j meet (other than neighbours at their shared point) */
    AD_CHECK_NO_MEMORY, /* no memory for the sweep */
} ad_check_kind;

typedef struct ad_check_result {
    ad_check_kind kind;
    size_t i, j;
} ad_check_result;

/* The check behind ad_outline_check, O(n log n): a sweep over the edges in x order with the edges the sweep line
 * crosses held in a balanced tree by height (Shamos and Hoey 1976). A crossing it reports is one the reference
 * also sees (the same pair test), though it may be another pair than the reference's first. */
ad_check_result ad_outline_check_core(const ad_outline *o);

/* The plain reference: every pair of edges, O(n^2); reports the first crossing in outline order (smallest i,
 * then smallest j). For tests, which compare it with ad_outline_check_core. */
ad_check_result ad_outline_check_reference(const ad_outline *o);

#endif
