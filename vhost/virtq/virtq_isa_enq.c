/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The split-ring enqueue of one ISA: virtq_enqueue.c itself, compiled here
 * once per ISA (meson sets VIRTQ_ISA and the -m flags; VSW_COPY_INLINE
 * inlines that ISA's copy body into every vsw_copy()). Only the exported
 * entry is renamed; everything else in the file is static.
 */
#include "virtq_isa.h"

#define vsw_virtq_enqueue_burst VIRTQ_ISA_SYM(virtq_enqueue)

#include "virtq_enqueue.c"
