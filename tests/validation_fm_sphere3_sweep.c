/* The free-molecular sphere's sweep for docs/VALIDATION.md (not part of the suite): the runs of
 * tests/test_validation_fm_sphere3_api.c (the same tunnel, icosphere and batches) at speed ratios 1, 2, 3, 5,
 * 7 and 10, the measured CD with its standard error against the closed form for specular reflection;
 * writes a CSV and two plots, CD against S with the theory's curve, and the difference from theory in %.
 *
 *   validation_fm_sphere3_sweep [--replot] [OUT.csv [CD.png [ERROR.png]]]   (--replot: the plots from the CSV, no runs)
 *   (defaults AD_SOURCE_DIR/docs/validation/fm_sphere3.csv, docs/images/validation_fm_sphere3.png and
 *   docs/images/validation_fm_sphere3_error.png) */
#define FM3_NO_MAIN
#include "test_validation_fm_sphere3_api.c"

#include <string.h>

#include "io/image.h"

enum { NS = 6, NTH = 61 };

static void plot(const char *path, const char *title, const char *ylabel, const ad_plot_series *s, int n)
{
    ad_line_plot p = {title, "speed ratio S = U / sqrt(2 kT/m)", ylabel, s, n, 0, 0, 0, NULL};
    ad_status st = ad_write_line_plot_png(path, &p);
    if (st.code) {
        fprintf(stderr, "validation_fm_sphere3_sweep: %s\n", st.message);
        exit(1);
    }
    printf("wrote %s\n", path);
}

/* The rows of a sweep's CSV back (--replot). */
static int read_rows(const char *csv, double *S, double *cd, double *se, double *th, double *dev, double *dev_se)
{
    FILE *f = fopen(csv, "r");
    if (!f) {
        perror(csv);
        exit(1);
    }
    char line[256];
    int n = 0;
    if (!fgets(line, sizeof line, f)) n = NS;
    while (n < NS && fgets(line, sizeof line, f))
        if (sscanf(line, "%lf,%lf,%lf,%lf,%lf,%lf", &S[n], &cd[n], &se[n], &th[n], &dev[n], &dev_se[n]) == 6) n++;
    fclose(f);
    return n;
}

int main(int argc, char **argv)
{
    int replot = argc > 1 && !strcmp(argv[1], "--replot");
    argv += replot, argc -= replot;
    char csv[1200], png[1200], epng[1200];
    snprintf(csv, sizeof csv, "%s", argc > 1 ? argv[1] : AD_SOURCE_DIR "/docs/validation/fm_sphere3.csv");
    snprintf(png, sizeof png, "%s", argc > 2 ? argv[2] : AD_SOURCE_DIR "/docs/images/validation_fm_sphere3.png");
    snprintf(epng, sizeof epng, "%s",
             argc > 3 ? argv[3] : AD_SOURCE_DIR "/docs/images/validation_fm_sphere3_error.png");
    double S[NS] = {1, 2, 3, 5, 7, 10}, cd[NS], se[NS], th[NS], dev[NS], dev_se[NS], zero[2] = {0, 0};
    double ends[2] = {0.8, 10.2};
    int n = NS;
    if (replot) {
        n = read_rows(csv, S, cd, se, th, dev, dev_se);
    } else {
        FILE *f = fopen(csv, "w");
        if (!f) {
            perror(csv);
            return 1;
        }
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
    }
    double xs[NTH], ys[NTH];
    for (int k = 0; k < NTH; k++) {
        xs[k] = 0.8 + 9.4 * k / (NTH - 1);
        ys[k] = cd_specular(xs[k]);
    }
    ad_plot_series a[2] = {{"theory", NTH, xs, ys, NULL, {60, 60, 60}, 0},
                           {"aerodem", (size_t)n, S, cd, se, {210, 60, 40}, 0}};
    plot(png, "3D: sphere in a free-molecular stream, specular (mean +- SE)", "CD", a, 2);
    ad_plot_series b[2] = {{"theory", 2, ends, zero, NULL, {60, 60, 60}, 0},
                           {"aerodem", (size_t)n, S, dev, dev_se, {210, 60, 40}, 0}};
    plot(epng, "3D free-molecular sphere: CD / closed form - 1 (mean +- SE)", "%", b, 2);
    return 0;
}
