// The hurry thread of a handle (hurry.c): sendBatch() messages without linger.ms.
#ifndef KDP_HURRY_H
#define KDP_HURRY_H

#include "handle.h"

/* Stops the hurry thread, if started (before the handle is destroyed). */
void kdp_hurry_stop(kdp_handle *h);

#endif
