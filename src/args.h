/* args.h: checks of SQL arguments and batch items (args.c; layer 1). */
#ifndef WL_ARGS_H
#define WL_ARGS_H

#include "fmgr.h"
#include "utils/array.h"
#include "utils/jsonb.h"

#include "row.h"

extern bool wl_text_blank(const char *s, size_t len);
extern void wl_args_required(FunctionCallInfo fcinfo, const char *const *names, int n);
extern char *wl_arg_id(FunctionCallInfo fcinfo, int i, const char *name);
extern char *wl_arg_id_or_null(FunctionCallInfo fcinfo, int i, const char *name);
extern ArrayType *wl_arg_text_array(FunctionCallInfo fcinfo, int i, const char *name);
extern ArrayType *wl_text_array_check(ArrayType *a, const char *what);
extern int	wl_arg_batch(Jsonb *items);
extern void wl_arg_fence(FunctionCallInfo fcinfo, int first, WlFence *f);
extern TimestampTz wl_arg_lease_until(FunctionCallInfo fcinfo, int i, const char *name);
extern bool wl_item_fence(JsonbContainer *o, const char *worker_id, WlFence *f, char **detail);

/* wl_args_require(fcinfo, "a", NULL, "c"): the named arguments must not be NULL (NULL: optional). */
#define wl_args_require(fcinfo, ...) \
	do { \
		static const char *const wl_names_[] = {__VA_ARGS__}; \
		wl_args_required(fcinfo, wl_names_, lengthof(wl_names_)); \
	} while (0)

#endif
