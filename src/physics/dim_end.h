/* Undoes dim.h at the end of a header written for both dimensions (see dim.h). */
#undef AD_D
#undef AD_EACH
#undef AD_SUM
#undef AD_ARGS
#undef AD_PASS
#undef AD_IARGS
#undef AD_STATE
#undef AD_ACCUM
#undef AD_WALLS
#undef AD_AXIS_x
#undef AD_AXIS_y
#undef AD_AXIS_z
#undef AD_AXIS
#undef AD_PARGS
#undef AD_UNIT_AT
#undef AD_UNIT
#undef AD_ALL
