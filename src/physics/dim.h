/* The names a header written once for both dimensions uses: included by such a header (a "_dim.h"
 * file) with AD_DIM defined as 2 or 3, and undone by dim_end.h at its end, so that the header can be
 * included once per dimension and the physics it holds is written once.
 *
 * Components are named, not indexed, as the 2D code always named them: a position's x, y (z), a
 * velocity's vx, vy (vz), a force's fx, fy (fz). The macros paste the axis letter onto a prefix:
 *   AD_EACH(M)      M(x) M(y) [M(z)]               one statement per axis
 *   AD_SUM(M)       (M(x) + M(y) [+ M(z)])         a sum over the axes, in axis order
 *   AD_ALL(M)       (M(x) && M(y) [&& M(z)])       a test on every axis
 *   AD_ARGS(pre)    float prex, float prey[, ...]   a parameter per axis
 *   AD_PASS(pre)    prex, prey[, prez]              an argument per axis (pre may be s.v, a->f, ...)
 *   AD_LIST(M)      M(x), M(y)[, M(z)]              an argument per axis made by M (s.x, s.y: M(c) s.c)
 *   AD_IARGS(pre)   int prex, int prey[, ...]       integer parameters (cell coordinates)
 *   AD_PARGS(pre)   float *prex, float *prey[, ...] results per axis
 *   AD_UNIT(c, s)   the components of s times the unit vector along axis c (a wall's normal)
 * and the types and names of one dimension:
 *   AD_D(name)      the function's name in this dimension: name in 2D (every 2D caller keeps its
 *                   names), name3 in 3D
 *   AD_STATE        ad_state (2D) or ad_state3, AD_ACCUM ad_accum or ad_accum3
 *   AD_WALLS        solid walls of the box: 4 or 6, in the order x_min, x_max, y_min, y_max, z_min, z_max
 * A 2D function made from such a header compiles to what its hand-written 2D form did: the same
 * operations in the same order (the golden hashes of tests/data/golden.txt hold). */
#if !defined(AD_DIM) || (AD_DIM != 2 && AD_DIM != 3)
#error "define AD_DIM as 2 or 3 before including a header written for both dimensions"
#endif

#if AD_DIM == 2
#define AD_D(name) name
#define AD_EACH(M) M(x) M(y)
#define AD_SUM(M) (M(x) + M(y))
#define AD_ALL(M) (M(x) && M(y))
#define AD_ARGS(pre) float pre##x, float pre##y
#define AD_PASS(pre) pre##x, pre##y
#define AD_LIST(M) M(x), M(y)
#define AD_IARGS(pre) int pre##x, int pre##y
#define AD_PARGS(pre) float *pre##x, float *pre##y
#define AD_STATE ad_state
#define AD_ACCUM ad_accum
#define AD_WALLS 4
#else
#define AD_D(name) name##3
#define AD_EACH(M) M(x) M(y) M(z)
#define AD_SUM(M) (M(x) + M(y) + M(z))
#define AD_ALL(M) (M(x) && M(y) && M(z))
#define AD_ARGS(pre) float pre##x, float pre##y, float pre##z
#define AD_PASS(pre) pre##x, pre##y, pre##z
#define AD_LIST(M) M(x), M(y), M(z)
#define AD_IARGS(pre) int pre##x, int pre##y, int pre##z
#define AD_PARGS(pre) float *pre##x, float *pre##y, float *pre##z
#define AD_STATE ad_state3
#define AD_ACCUM ad_accum3
#define AD_WALLS 6
#endif
/* the axis number of a letter, for the walls: AD_AXIS(y) is 1 */
#define AD_AXIS_x 0
#define AD_AXIS_y 1
#define AD_AXIS_z 2
#define AD_AXIS(c) AD_AXIS_##c
#define AD_UNIT_AT(c, axis, s) (AD_AXIS(c) == AD_AXIS(axis) ? (s) : 0.0f)
#if AD_DIM == 2
#define AD_UNIT(axis, s) AD_UNIT_AT(x, axis, s), AD_UNIT_AT(y, axis, s)
#else
#define AD_UNIT(axis, s) AD_UNIT_AT(x, axis, s), AD_UNIT_AT(y, axis, s), AD_UNIT_AT(z, axis, s)
#endif
