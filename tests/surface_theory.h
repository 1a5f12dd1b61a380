/* Closed-form free-molecular surface loads, one place for the tests and validations (docs/VALIDATION.md,
 * "Surface coefficients"): the local pressure, shear and energy flux on a flat surface element in a
 * drifting Maxwellian, for specular and diffuse re-emission, in 2D and 3D.
 *
 * Stream: number density n, mass m, drift U, kT/m = T per component, c = sqrt(2 T), S = U / c. An element
 * whose inward stream component is U_n = U sin(theta) (theta: the stream's inclination to the surface,
 * negative on a leeward face) and tangential U_t = U cos(theta) has s = S sin(theta). The normal velocity
 * marginal is the same 1D Gaussian in 2D and 3D, so the one-sided moments of v_n over the incident discs
 * are (Schaaf & Chambre 1958; Bird 1994, sec. 7.2), per unit area and time:
 *   N   = n c  [exp(-s^2) + sqrt(pi) s (1 + erf s)] / (2 sqrt(pi))              (number flux)
 *   P_i = n m c^2 [s exp(-s^2) / (2 sqrt(pi)) + (1 + 2 s^2)(1 + erf s) / 4]     (normal momentum)
 *   M3  = n c^3 [(s^2 + 1) exp(-s^2) / (2 sqrt(pi)) + s (s^2 / 2 + 3/4)(1 + erf s)]  (sum of v_n^3)
 * and the tangential momentum flux tau_i = m U_t N. Re-emission:
 *   specular:  p = 2 P_i, tau = 0, energy flux 0;
 *   diffuse at T_w: the flux-weighted half-range Maxwellian, <v_n> = sqrt(pi T_w / 2), so
 *              p = P_i + m N sqrt(pi T_w / 2), tau = tau_i.
 * Energy flux into the element (dimension-dependent through the tangential degrees of freedom d - 1):
 *   incident  E_i = m/2 [M3 + N (U_t^2 + (d - 1) T)],
 *   re-emitted E_r = m N (T_w + (d - 1) T_w / 2)   (<v_n^2> = 2 T_w over the flux, T_w per tangent),
 *   so 2D: E_r = 3/2 m N T_w, 3D: 2 m N T_w (the classical 2 k T_w a molecule), and q = E_i - E_r.
 * At rest (S = 0) and T_w = T: E_i = m/2 [n c^3/(2 sqrt pi) + N (d - 1) T] = E_r, so q = 0. */
#ifndef AERODEM_TESTS_SURFACE_THEORY_H
#define AERODEM_TESTS_SURFACE_THEORY_H

#include <math.h>

#define ST_PI 3.14159265358979323846

/* The fluxes of a stream (n, m, T, U) on an element with inclination sin_t (cos_t its cosine), dims 2 or 3,
 * re-emitted diffusely at T_w (diffuse = 1) or specularly: pressure p (inward), shear tau (along the
 * tangential stream), energy flux q into the element, number flux N. */
typedef struct st_loads {
    double p, tau, q, N;
} st_loads;

static inline st_loads st_element(double n, double m, double T, double U, double sin_t, double cos_t, int dims,
                                  int diffuse, double Tw)
{
    double c = sqrt(2.0 * T), s = U * sin_t / c, e = exp(-s * s), er = 1.0 + erf(s), sp = sqrt(ST_PI);
    double N = n * c * (e + sp * s * er) / (2.0 * sp);
    double Pi = n * m * c * c * (s * e / (2.0 * sp) + (1.0 + 2.0 * s * s) * er / 4.0);
    double M3 = n * c * c * c * ((s * s + 1.0) * e / (2.0 * sp) + s * (s * s / 2.0 + 0.75) * er);
    double Ut = U * cos_t;
    st_loads L;
    L.N = N;
    if (!diffuse) {
        L.p = 2.0 * Pi, L.tau = 0.0, L.q = 0.0;
        return L;
    }
    L.p = Pi + m * N * sqrt(ST_PI * Tw / 2.0);
    L.tau = m * Ut * N;
    double Ei = 0.5 * m * (M3 + N * (Ut * Ut + (dims - 1) * T));
    double Er = m * N * (Tw + (dims - 1) * Tw / 2.0);
    L.q = Ei - Er;
    return L;
}

/* Force per unit depth of a 2D flat plate of chord L at angle of attack alpha [rad] in the stream along +x,
 * both faces (Schaaf & Chambre's flat plate): drag fx, lift fy. The windward face has sin_t = sin(alpha),
 * the leeward -sin(alpha); pressure pushes each face inward, shear drags both along the stream's tangent. */
static inline void st_plate(double n, double m, double T, double U, double alpha, double L, int diffuse, double Tw,
                            double *fx, double *fy)
{
    double sa = sin(alpha), ca = cos(alpha);
    st_loads w = st_element(n, m, T, U, sa, ca, 2, diffuse, Tw), l = st_element(n, m, T, U, -sa, ca, 2, diffuse, Tw);
    /* plate along (cos a, -sin a) (leading edge up-stream, nose up by alpha); windward normal into the
     * plate from below: the net pressure (p_w - p_l) pushes along (sin a, cos a), the shears along the plate
     * tangent (cos a, -sin a) */
    double dp = w.p - l.p, t = w.tau + l.tau;
    *fx = L * (dp * sa + t * ca);
    *fy = L * (dp * ca - t * sa);
}

/* Drag per unit depth of a 2D circle of radius R: the integral of the local loads over its surface (psi
 * from the stagnation point, sin_t = cos psi). */
static inline double st_circle_drag(double n, double m, double T, double U, double R, int diffuse, double Tw)
{
    const int k = 4096; /* periodic, smooth: the midpoint rule converges fast */
    double sum = 0.0;
    for (int i = 0; i < k; i++) {
        double psi = 2.0 * ST_PI * (i + 0.5) / k;
        st_loads L = st_element(n, m, T, U, cos(psi), sin(psi), 2, diffuse, Tw);
        sum += L.p * cos(psi) + L.tau * sin(psi);
    }
    return R * sum * 2.0 * ST_PI / k;
}

#endif
