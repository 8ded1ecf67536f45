/* clock.h: the one clock (clock.c). */
#ifndef WL_CLOCK_H
#define WL_CLOCK_H

#include "datatype/timestamp.h"

extern TimestampTz wl_now(void);
extern bool wl_clock_parse(const char *text, TimestampTz *result);
extern bool wl_clock_parse_rfc3339(const char *text, TimestampTz *result);
extern void wl_clock_set_override(const char *text);
extern void wl_clock_steps(bool on);
extern void wl_clock_step(void);

#endif
