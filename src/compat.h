/*
 * compat.h: every PG_VERSION_NUM shim, and nowhere else.
 *
 * Compiled and tested on PostgreSQL 15 only: 15.20, Debian 12's
 * postgresql-server-dev-15.  Debian 12 has no server headers for 16 or 17
 * (no postgresql-server-dev-16/17 package), so nothing here was ever
 * compiled against them, and no shim for them is kept: the build stops
 * with this file's error rather than somewhere in the middle.  A port to 16
 * starts with DecodeDateTime, which takes a DateTimeErrorExtra argument
 * there (wl_decode_datetime below).  Refused below 15.4: 13 and 14 lack
 * InitMaterializedSRF and MarkGUCPrefixReserved (13 also the core HMAC
 * API), and 15.0-15.3 database_is_invalid_form (the launcher's scan of
 * pg_database).
 */
#ifndef WL_COMPAT_H
#define WL_COMPAT_H

#include "funcapi.h"
#include "utils/datetime.h"

#if PG_VERSION_NUM < 150004
#error "workload needs PostgreSQL 15.4 or later"
#endif

#if PG_VERSION_NUM >= 160000
#error "workload is compiled and tested on PostgreSQL 15 only; see src/compat.h"
#endif

#define wl_decode_datetime(f, t, n, d, tm, fs, tz) DecodeDateTime(f, t, n, d, tm, fs, tz)

#endif
