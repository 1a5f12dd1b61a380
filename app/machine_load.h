/* The threads of a CPU run on a machine shared with other work (machine_load.c says why). */
#ifndef AD_APP_MACHINE_LOAD_H
#define AD_APP_MACHINE_LOAD_H

#include "core/scene.h"

typedef struct machine_load {
    int cores;   /* the cores this process may run on */
    int others;  /* processes of other work running now (the median of five looks) */
    int threads; /* the cores they leave free, at least 1 */
} machine_load;

machine_load machine_load_now(void);
/* A scene that leaves the threads to aerodem ([run] threads = 0, no OMP_NUM_THREADS) on a CPU backend
 * takes the free cores, with a note on stderr where that is fewer than all. */
void machine_load_fit(ad_scene *sc);

#endif
