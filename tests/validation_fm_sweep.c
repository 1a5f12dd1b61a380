/* Free-molecular sweep (not part of the suite): a flat plate of chord 20 m (disc radius 0.5 m)
 * at angles of attack 0..90 deg and speed ratios 1, 2, 5, with elastic walls (e = 1), against
 * 2D free-molecular theory (tests/test_free_molecular.c holds the theory and the run: a long run of
 * the tunnel with open far-field sides). Writes docs/validation/free_molecular.csv.
 *
 *   validation_fm_sweep [OUT.csv] [flow-throughs]   (default AD_SOURCE_DIR/docs/validation/free_molecular.csv, 20) */
#define FM_NO_MAIN
#include "test_free_molecular.c"

int main(int argc, char **argv)
{
    char path[1200];
    if (argc > 1) snprintf(path, sizeof path, "%s", argv[1]);
    else snprintf(path, sizeof path, "%s/docs/validation/free_molecular.csv", AD_SOURCE_DIR);
    double throughs = argc > 2 ? atof(argv[2]) : 20;
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
            fm_case c = {"plate", AD_SHAPE_PLATE, NULL, 0, 20, aoa, 0, S_list[is], 1.0, 40, 40, throughs,
                         (uint64_t)(1000003 * (is * 10 + aoa / 10 + 1)), 1e5};
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
    return 0;
}
