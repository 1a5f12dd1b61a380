/* Equation-of-state sweep for docs/VALIDATION.md (not part of the test suite):
 * area fractions 0.05 .. 0.50 at k_n = 1e5 (two seeds: the scatter), and at k_n = 1e4 and 1e3
 * (soft-disc deviation), box of side L = 40 (radius 0.5), kT/m = 1; see tests/test_validation_eos.c for the method.
 *
 *   validation_eos_sweep [out.csv]     (default docs/validation/eos.csv, run from the repository root)
 */
#define EOS_NO_MAIN
#include "test_validation_eos.c"

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "docs/validation/eos.csv";
    FILE *csv = fopen(path, "w");
    if (!csv) {
        fprintf(stderr, "cannot write %s\n", path);
        return 1;
    }
    fprintf(csv, "k,seed,L,n,phi_acc,phi_bulk,kT,z_wall,z_vir,z_henderson,max_overlap_over_r,wall_s\n");
    const double L = 40.0, t_eq = 5.0, t_run = 60.0;
    const double ks[] = {1e5, 1e5, 1e4, 1e3};
    const uint64_t seeds[] = {101, 202, 101, 101};
    for (int ik = 0; ik < 4; ik++) {
        for (int i = 1; i <= 10; i++) {
            double phi = 0.05 * i;
            eos_result r = eos_run(phi, ks[ik], L, seeds[ik] + (uint64_t)i, t_eq, t_run, 60, 1);
            eos_print(&r);
            fflush(stdout);
            fprintf(csv, "%.0e,%llu,%.0f,%zu,%.5f,%.5f,%.5f,%.5f,%.5f,%.5f,%.5f,%.2f\n", r.k,
                    (unsigned long long)(seeds[ik] + (uint64_t)i), r.L, r.n, r.phi_acc, r.phi_bulk, r.kT, r.z_wall,
                    r.z_vir, r.z_hend, r.max_overlap, r.wall_s);
            fflush(csv);
        }
    }
    fclose(csv);
    return tu_finish("validation_eos_sweep");
}
