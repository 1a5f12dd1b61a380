/* What a path that is not a regular file is, for the readers' refusals (airfoil_file.c, stl.c). */
#ifndef AD_CORE_FILE_KIND_H
#define AD_CORE_FILE_KIND_H

#include <sys/stat.h>

static inline const char *ad_file_kind(mode_t m)
{
    if (S_ISDIR(m)) return "a directory";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISFIFO(m)) return "a FIFO (pipe)";
    if (S_ISSOCK(m)) return "a socket";
    return "not a regular file";
}

#endif
