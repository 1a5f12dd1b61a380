/* The program as one process of an MPI job (`mpirun -np N aerodem run SCENE.ini`): every rank runs the
 * same command, through the same calls on its world (each is collective on backend = mpi), and rank 0,
 * the lead, is the one the user sees: it prints, and it writes the run's folder. The others are silent
 * and write their copies of the outputs into a private scratch folder, removed when they end. What the
 * run decides from a signal (Ctrl-C, the checkpoint timer) is agreed by all ranks; an error on one rank
 * ends the job (MPI_Abort), never leaves the others waiting. One process (no launcher) is a job of one. */
#ifndef AD_APP_RANKS_H
#define AD_APP_RANKS_H

#include <stddef.h>

#include "aerodem/aerodem.h"

/* Starts MPI when a launcher started this process, and silences the ranks after the first. Returns 0, or
 * the exit code of a job that cannot start (its message printed). */
int ranks_start(int *argc, char ***argv);

/* The job's end: rc where every rank ends alike (0, or an agreed interrupt); otherwise the job is ended
 * for all its ranks. Removes this rank's scratch folder. Returns the exit code. */
int ranks_end(int rc);

int ranks_count(void); /* the job's processes (1 without a launcher) */
int ranks_lead(void);  /* 1 on the rank that prints and writes the user's folder (rank 0) */

/* The folder this rank writes a run's outputs into: dir on the lead, a fresh folder of its scratch
 * folder on the others. Writes the path into buf (n bytes). */
ad_status ranks_folder(const char *dir, char *buf, size_t n);

/* The backend of a run in this job: auto is mpi over several ranks, and a one-process backend is refused
 * there; backend = mpi in one process starts MPI for it. `what` names the option or key in a message. */
ad_status ranks_backend(ad_backend *b, const char *what);

#endif
