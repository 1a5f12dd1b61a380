/* Free-molecular sweep (not part of the suite): a flat plate of chord 12 m (disc radius 0.5 m)
 * at angles of attack 0..90 deg and speed ratios 1, 2, 5, with elastic walls (e = 1), against
 * 2D free-molecular theory (see tests/test_free_molecular.c for the theory and the clean
 * measurement window). Writes docs/validation/free_molecular.csv, then shows the tunnel's
 * recirculation of discs thrown upstream: the drag of a circle over a long run.
 *
 *   validation_fm_sweep [OUT.csv] [runs]      (default AD_SOURCE_DIR/docs/validation/free_molecular.csv, 60) */
#define FM_NO_MAIN
#include "test_free_molecular.c"

int main(int argc, char **argv)
{
    char path[1200];
    if (argc > 1) snprintf(path, sizeof path, "%s", argv[1]);
    else snprintf(path, sizeof path, "%s/docs/validation/free_molecular.csv", AD_SOURCE_DIR);
    int runs = argc > 2 ? atoi(argv[2]) : 60;
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return 1;
    }
    fprintf(f, "shape,S,aoa_deg,e,cl,cl_se,cd,cd_se,cl_theory,cd_theory,intervals,wall_s\n");
    const double S_list[] = {1.0, 2.0, 5.0};
    double t_all = 0;
    for (int is = 0; is < 3; is++)
        for (int aoa = 0; aoa <= 90; aoa += 10) {
            /* independent seeds for every point, so that the points' errors are independent */
            fm_case c = {"plate", AD_SHAPE_PLATE, 12, aoa, 0, S_list[is], 1.0, 44, 48, 0.3, 1e4, runs, 3,
                         (uint64_t)(1000003 * (is * 10 + aoa / 10 + 1))};
            fm_result r = fm_measure(&c);
            t_all += r.seconds;
            fprintf(f, "plate,%g,%d,%g,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%d,%.2f\n", c.S, aoa, c.e, r.cl, r.cl_se, r.cd,
                    r.cd_se, r.cl_th, r.cd_th, r.n, r.seconds);
            fflush(f);
            printf("S %g aoa %2d: CL %+.4f +- %.4f (theory %+.4f)  CD %.4f +- %.4f (theory %.4f)  %.1f s\n", c.S, aoa,
                   r.cl, r.cl_se, r.cl_th, r.cd, r.cd_se, r.cd_th, r.seconds);
            free(r.icl);
            free(r.icd);
        }
    fclose(f);
    printf("sweep: %.1f s, wrote %s\n", t_all, path);

    /* Recirculation: one long run of the circle case; drag per 3 s interval against the window theory. */
    fm_case c = {"circle", AD_SHAPE_CIRCLE, 12, 0, 0, 2.0, 1.0, 44, 48, 0.3, 1e4, 1, 1, 99};
    ad_scene s;
    fm_scene(&c, 99, &s);
    float *xs, *ys;
    size_t np;
    int closed;
    REQUIRE_OK(ad_scene_outline(&s, &xs, &ys, &np, &closed));
    double fx, fy;
    fm_theory_outline(xs, ys, np, c.S, c.e, s.radius, &fx, &fy);
    free(xs);
    free(ys);
    ad_world *w;
    REQUIRE_OK(ad_scene_build(&s, &w));
    double q = ad_scene_flow_numbers(&s).dynamic_pressure * s.chord;
    printf("recirculation (circle D 12, S 2, tunnel 44 x 48, theory CD %.4f; clean window ends at %.1f s):\n",
           fx / s.chord, (s.width - 13.0) / (s.velocity + 4.5));
    ad_stats a = tu_stats(w);
    const double ends[] = {3, 6, 9, 12, 15, 30, 60, 120, 240};
    for (int k = 0; k < 9; k++) {
        fm_step_until(w, ends[k]);
        ad_stats b = tu_stats(w);
        printf("  t %6.1f .. %6.1f s: CD %.4f\n", a.time, b.time, (b.body_impulse_x - a.body_impulse_x) / (b.time - a.time) / q);
        a = b;
    }
    ad_world_destroy(w);
    return 0;
}
