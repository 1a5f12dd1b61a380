#!/usr/bin/env bash
# The infinite wing's sweep for docs/VALIDATION.md (not part of the suite): tests/test_validation_wing3.sh
# (the wing across a periodic span against its 2D section, free-molecular, through `aerodem run`) at angles
# of attack 0, 5, 10 and 15 degrees, its rows in a CSV, then the plot (validation_wing3_plot): CL and CD of
# both against the angle, with their standard errors. About 3 minutes on 2 threads.
#
# Usage: validation_wing3_sweep.sh AERODEM PLOT_PROGRAM SOURCE_DIR [OUT.csv [OUT.png]]
#   (defaults SOURCE_DIR/docs/validation/wing3.csv and SOURCE_DIR/docs/images/validation_wing3.png)
set -eu
AD=${1:?usage: validation_wing3_sweep.sh AERODEM PLOT_PROGRAM SOURCE_DIR [OUT.csv [OUT.png]]}
PLOT=${2:?usage: validation_wing3_sweep.sh AERODEM PLOT_PROGRAM SOURCE_DIR [OUT.csv [OUT.png]]}
SRC=${3:?usage: validation_wing3_sweep.sh AERODEM PLOT_PROGRAM SOURCE_DIR [OUT.csv [OUT.png]]}
CSV=${4:-$SRC/docs/validation/wing3.csv}
PNG=${5:-$SRC/docs/images/validation_wing3.png}
echo "aoa,cl_2d,cl_2d_se,cl_3d,cl_3d_se,cd_2d,cd_2d_se,cd_3d,cd_3d_se" >"$CSV"
for a in 0 5 10 15; do
    WING3_AOA=$a WING3_CSV=$CSV bash "$SRC/tests/test_validation_wing3.sh" "$AD" "$SRC" || echo "aoa $a: outside the test's bounds (the row is kept)"
done
"$PLOT" "$CSV" "$PNG"
