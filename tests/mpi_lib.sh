# What the tests of the program under mpirun share (test_mpi_cli.sh, test_mpi_long.sh); sourced:
#   . "$(dirname "$0")/mpi_lib.sh"
# gives work, a scratch folder removed at the end, with TMPDIR under it (the silent ranks' scratch folders
# go there, so a test can see none is left), and mpi, the mpirun command line: one thread a rank, TMPDIR
# passed on, --allow-run-as-root as root, and under AddressSanitizer leak detection off for the ranks
# (OpenMPI's own allocations at exit are not ours to report).
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
export TMPDIR="$work/tmp"; mkdir -p "$TMPDIR"
mpi=(mpirun --oversubscribe -x OMP_NUM_THREADS=1 -x TMPDIR)
[ "$(id -u)" -eq 0 ] && mpi+=(--allow-run-as-root)
mpi+=(-x ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 -x UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1)
