/* The infinite wing's plot for docs/VALIDATION.md: reads the rows of tests/validation_wing3_sweep.sh
 * (aoa, then CL and CD of the 2D section and of the 3D wing with their standard errors) and draws CL and
 * CD of both against the angle of attack, with error bars (src/io/line_plot.c).
 *
 *   validation_wing3_plot IN.csv OUT.png */
#include <stdio.h>
#include <stdlib.h>

#include "io/image.h"

enum { MAX_ROWS = 32 };

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: validation_wing3_plot IN.csv OUT.png\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    double aoa[MAX_ROWS], v[8][MAX_ROWS];
    int n = 0;
    char line[512];
    if (!fgets(line, sizeof line, f)) n = -1; /* the header */
    while (n >= 0 && n < MAX_ROWS && fgets(line, sizeof line, f)) {
        double r[9];
        if (sscanf(line, "%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf", &r[0], &r[1], &r[2], &r[3], &r[4], &r[5], &r[6],
                   &r[7], &r[8]) != 9) {
            fprintf(stderr, "%s: row %d is not aoa and 8 numbers: %s", argv[1], n + 2, line);
            fclose(f);
            return 1;
        }
        aoa[n] = r[0];
        for (int k = 0; k < 8; k++) v[k][n] = r[k + 1];
        n++;
    }
    fclose(f);
    if (n <= 0) {
        fprintf(stderr, "%s: no rows\n", argv[1]);
        return 1;
    }
    /* columns: cl_2d, cl_2d_se, cl_3d, cl_3d_se, cd_2d, cd_2d_se, cd_3d, cd_3d_se */
    ad_plot_series s[4] = {{"CL 2D", (size_t)n, aoa, v[0], v[1], {120, 160, 230}, 0},
                           {"CL 3D", (size_t)n, aoa, v[2], v[3], {30, 60, 170}, 0},
                           {"CD 2D", (size_t)n, aoa, v[4], v[5], {240, 150, 120}, 0},
                           {"CD 3D", (size_t)n, aoa, v[6], v[7], {190, 40, 30}, 0}};
    ad_line_plot p = {"NACA 0012, free-molecular, S = 2.1: 3D periodic span vs 2D section (mean +- SE)",
                      "angle of attack [deg]", "CL, CD", s, 4, 0, 0, 0, NULL};
    ad_status st = ad_write_line_plot_png(argv[2], &p);
    if (st.code) {
        fprintf(stderr, "validation_wing3_plot: %s\n", st.message);
        return 1;
    }
    printf("wrote %s (%d angles)\n", argv[2], n);
    return 0;
}
