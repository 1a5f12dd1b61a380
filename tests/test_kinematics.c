/* Free flight under uniform gravity against the closed forms of each integrator,
 * and the adaptive step rule.
 *
 * With a fixed dt and constant acceleration g, after n steps (t = n dt):
 *   v = v0 + g t for every integrator;
 *   x = x0 + v0 t + g t^2/2 exactly for velocity Verlet and RK4,
 *       + g t dt/2 for symplectic Euler (v updated first), - g t dt/2 for forward Euler.
 * Adaptive dt: dt <= dt_max, dt * v_max <= max_move * r, dt <= t_c / contact_steps
 * with t_c = pi sqrt(m_eff / k) (m_eff = m/2), and not needlessly smaller. */
#include "test_util.h"

static void ballistic(ad_integrator integ)
{
    ad_world_def d = tu_def();
    d.x_min = d.y_min = -50.0;
    d.x_max = d.y_max = 50.0;
    /* powers of two: every float operation of the first-order schemes is exact */
    d.gravity_x = 2.0;
    d.gravity_y = -8.0;
    d.adaptive_dt = 0;
    d.dt = 1.0 / 512.0;
    d.integrator = integ;
    d.threads = 1;
    ad_world *w = NULL;
    REQUIRE_OK(ad_world_create(&d, &w));
    const ad_particle p0 = {0.0f, 0.0f, 3.0f, 4.0f};
    REQUIRE_OK(ad_world_add_particles(w, &p0, 1));
    const int n = 512; /* t = 1 */
    REQUIRE_OK(ad_world_step(w, (uint64_t)n));
    ad_stats s = tu_stats(w);
    ad_particle p;
    tu_read_by_id(w, 1, &p, NULL);
    double t = n * d.dt;
    double corr = 0.0; /* coefficient of g t dt / 2 */
    if (integ == AD_INTEGRATOR_SYMPLECTIC_EULER) corr = 1.0;
    if (integ == AD_INTEGRATOR_EULER) corr = -1.0;
    double x = p0.x + p0.vx * t + 0.5 * d.gravity_x * t * t + corr * 0.5 * d.gravity_x * t * d.dt;
    double y = p0.y + p0.vy * t + 0.5 * d.gravity_y * t * t + corr * 0.5 * d.gravity_y * t * d.dt;
    double vx = p0.vx + d.gravity_x * t, vy = p0.vy + d.gravity_y * t;
    printf("%-18s t = %.6f: x = (%.7f, %.7f) expected (%.7f, %.7f); v = (%.7f, %.7f) expected (%.7f, %.7f)\n",
           ad_integrator_name(integ), s.time, p.x, p.y, x, y, p.vx, p.vy, vx, vy);
    ENSURE_NEAR(s.time, t, 1e-9);
    ENSURE(s.step == (uint64_t)n);
    /* the integrator offsets g t dt / 2 are 2e-3 (x) and 7.8e-3 (y): well above the
     * tolerance, which leaves room for RK4's and Verlet's float rounding */
    ENSURE_NEAR(p.x, x, 4e-4);
    ENSURE_NEAR(p.y, y, 4e-4);
    ENSURE_NEAR(p.vx, vx, 1e-4);
    ENSURE_NEAR(p.vy, vy, 1e-4);
    ENSURE_NEAR(s.kinetic_energy, 0.5 * d.mass * ((double)p.vx * p.vx + (double)p.vy * p.vy), 1e-5);
    ENSURE_NEAR(s.momentum_x, d.mass * p.vx, 1e-6);
    ENSURE_NEAR(s.momentum_y, d.mass * p.vy, 1e-6);
    ENSURE_NEAR(s.potential_energy, 0.0, 0.0);
    ad_world_destroy(w);
}

/* The step the world reports against the three limits. */
static void adaptive(double speed, double k, double max_move, double contact_steps, double dt_max)
{
    ad_world_def d = tu_def();
    d.x_min = d.y_min = -50.0;
    d.x_max = d.y_max = 50.0;
    d.stiffness = k;
    d.max_move = max_move;
    d.contact_steps = contact_steps;
    d.dt = dt_max;
    d.threads = 1;
    ad_world *w = NULL;
    REQUIRE_OK(ad_world_create(&d, &w));
    const ad_particle p[2] = {{-10.0f, 0.0f, (float)speed, 0.0f}, {10.0f, 0.0f, 0.0f, (float)(0.5 * speed)}};
    REQUIRE_OK(ad_world_add_particles(w, p, 2));
    REQUIRE_OK(ad_world_step(w, 1));
    ad_stats s = tu_stats(w);
    double move = max_move * d.radius / speed;
    double contact = TU_PI * sqrt(0.5 * d.mass / k) / contact_steps;
    double limit = fmin(dt_max, fmin(move, contact));
    printf("adaptive: speed %g, k %g, max_move %g, contact_steps %g, dt max %g: dt = %.6g (limits: move %.6g, "
           "contact %.6g)\n",
           speed, k, max_move, contact_steps, dt_max, s.dt, move, contact);
    ENSURE_LE(s.dt, limit * (1.0 + 1e-6));
    ENSURE_MSG(s.dt >= 0.5 * limit, "dt %.6g is needlessly small: the limit is %.6g", s.dt, limit);
    ENSURE_MSG(s.time > 0.0 && s.time <= dt_max * (1.0 + 1e-6), "time after one step %.6g", s.time);
    ad_world_destroy(w);
}

int main(void)
{
    ballistic(AD_INTEGRATOR_SYMPLECTIC_EULER);
    ballistic(AD_INTEGRATOR_EULER);
    ballistic(AD_INTEGRATOR_VERLET);
    ballistic(AD_INTEGRATOR_RK4);
    adaptive(100.0, 1e4, 0.1, 20, 1e-3);  /* max_move binds: 5e-4 */
    adaptive(1.0, 1e6, 0.1, 20, 1e-3);    /* contact binds: 1.1e-4 */
    adaptive(1.0, 1e4, 0.1, 20, 2e-4);    /* dt max binds */
    adaptive(10.0, 1e4, 0.5, 100, 1e-2);  /* contact binds: 2.2e-4 */
    return tu_finish("test_kinematics");
}
