/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The split-ring dequeue of one ISA: virtq_dequeue.c itself, compiled here
 * once per ISA (see virtq_isa_enq.c).
 */
#include "virtq_isa.h"

#define vsw_virtq_dequeue_burst VIRTQ_ISA_SYM(virtq_dequeue)

#include "virtq_dequeue.c"
