/*
 * compat.h: every PG_VERSION_NUM shim, and nowhere else.  Built and tested on
 * 15; the shims below are for 16 and 17.  13 and 14 are refused: they lack
 * InitMaterializedSRF and MarkGUCPrefixReserved, and 13 the core HMAC API.
 */
#ifndef WL_COMPAT_H
#define WL_COMPAT_H

#include "funcapi.h"
#include "utils/datetime.h"

#if PG_VERSION_NUM < 150000
#error "workload needs PostgreSQL 15 or later"
#endif

#if PG_VERSION_NUM >= 160000
#define wl_decode_datetime(f, t, n, d, tm, fs, tz) \
	({ DateTimeErrorExtra wl_extra_; DecodeDateTime(f, t, n, d, tm, fs, tz, &wl_extra_); })
#else
#define wl_decode_datetime(f, t, n, d, tm, fs, tz) DecodeDateTime(f, t, n, d, tm, fs, tz)
#endif

#endif
