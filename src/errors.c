/*
 * errors.c: the data behind errors.h.  The SQL function that lists it is
 * api_meta.c's.
 */
#include "postgres.h"

#include "errors.h"

#define WL_ERR_ROW(name, a, b, c, token, message) \
	[name] = {MAKE_SQLSTATE('W', 'L', a, b, c), (const char[]){'W', 'L', a, b, c, '\0'}, token, message},
const WlErrInfo wl_errors[WL_E_END] = {
	WL_ERROR_TABLE(WL_ERR_ROW)
};
#undef WL_ERR_ROW
