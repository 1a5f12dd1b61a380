/* The free-molecular sphere's sweep for docs/VALIDATION.md (not part of the suite): the runs of
 * tests/test_validation_fm_sphere3.c (the same tunnel, icosphere and batches) at speed ratios 1, 2, 3, 5,
 * 7 and 10, the measured CD with its standard error against the closed form for specular reflection;
 * writes a CSV and two plots, CD against S with the theory's curve, and the difference from theory in %.
 *
 *   validation_fm_sphere3_sweep [OUT.csv [CD.png [ERROR.png]]]
 *   (defaults AD_SOURCE_DIR/docs/validation/fm_sphere3.csv, docs/images/validation_fm_sphere3.png and
 *   docs/images/validation_fm_sphere3_error.png) */
#define FM3_NO_MAIN
#include "test_validation_fm_sphere3.c"

#include "io/image.h"

enum { NS = 6, NTH = 61 };

static void plot(const char *path, const char *title, const char *ylabel, const ad_plot_series *s, int n)
{
    ad_line_plot p = {title, "speed ratio S = U / sqrt(2 kT/m)", ylabel, s, n, 0, 0};
    ad_status st = ad_write_line_plot_png(path, &p);
    if (st.code) {
        fprintf(stderr, "validation_fm_sphere3_sweep: %s\n", st.message);
        exit(1);
    }
    printf("wrote %s\n", path);
}

int main(int argc, char **argv)
{
    char csv[1200], png[1200], epng[1200];
    snprintf(csv, sizeof csv, "%s", argc > 1 ? argv[1] : AD_SOURCE_DIR "/docs/validation/fm_sphere3.csv");
    snprintf(png, sizeof png, "%s", argc > 2 ? argv[2] : AD_SOURCE_DIR "/docs/images/validation_fm_sphere3.png");
    snprintf(epng, sizeof epng, "%s",
             argc > 3 ? argv[3] : AD_SOURCE_DIR "/docs/images/validation_fm_sphere3_error.png");
    FILE *f = fopen(csv, "w");
    if (!f) {
        perror(csv);
        return 1;
    }
    static const double S[NS] = {1, 2, 3, 5, 7, 10};
    double cd[NS], se[NS], th[NS], dev[NS], dev_se[NS], zero[2] = {0, 0}, ends[2] = {0.8, 10.2};
    fprintf(f, "S,cd,cd_se,cd_theory,difference_pct,difference_se_pct\n");
    for (int k = 0; k < NS; k++) {
        cd[k] = run_case(S[k], &se[k]);
        th[k] = cd_specular(S[k]);
        dev[k] = 100.0 * (cd[k] / th[k] - 1.0);
        dev_se[k] = 100.0 * se[k] / th[k];
        fprintf(f, "%g,%.6f,%.6f,%.6f,%.3f,%.3f\n", S[k], cd[k], se[k], th[k], dev[k], dev_se[k]);
        fflush(f);
    }
    fclose(f);
    printf("wrote %s\n", csv);
    double xs[NTH], ys[NTH];
    for (int k = 0; k < NTH; k++) {
        xs[k] = 0.8 + 9.4 * k / (NTH - 1);
        ys[k] = cd_specular(xs[k]);
    }
    ad_plot_series a[2] = {{"closed form (specular)", NTH, xs, ys, NULL, {60, 60, 60}},
                           {"aerodem +- standard error", NS, S, cd, se, {210, 60, 40}}};
    plot(png, "3D: drag of a sphere in a free-molecular stream", "CD", a, 2);
    ad_plot_series b[2] = {{"closed form", 2, ends, zero, NULL, {60, 60, 60}},
                           {"aerodem +- standard error", NS, S, dev, dev_se, {210, 60, 40}}};
    plot(epng, "3D free-molecular sphere: CD against the closed form", "difference [%]", b, 2);
    return 0;
}
