/*
 * args.c: checks of the arguments every SQL entry point takes (NULLs,
 * blank or oversized ids, text arrays, batch arrays, leases, fences) and of
 * the fence fields of a batch item.  Each refusal is WORKLOAD_INVALID with a
 * detail that names the argument.  Layer 1: no SPI.
 */
#include "postgres.h"

#include <ctype.h>

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "args.h"
#include "clock.h"
#include "errors.h"
#include "jsonb_util.h"
#include "payload.h"

/* wl_text_blank: the one blank check: empty or only white space. */
bool
wl_text_blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
	{
		if (!isspace((unsigned char) s[i]))
			return false;
	}
	return true;
}

/*
 * wl_args_required raises WORKLOAD_INVALID for the first argument i whose
 * names[i] is set and whose value is NULL (no API function is STRICT).
 */
void
wl_args_required(FunctionCallInfo fcinfo, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
	{
		if (names[i] != NULL && PG_ARGISNULL(i))
			wl_refuse(WL_E_INVALID, errdetail("Argument \"%s\" must not be NULL.", names[i]));
	}
}

static char *
id_text(text *t, const char *name)
{
	char	   *s = text_to_cstring(t);
	size_t		len = strlen(s);

	if (wl_text_blank(s, len))
		wl_refuse(WL_E_INVALID, errdetail("Argument \"%s\" must not be blank.", name));
	if (len > WL_MAX_ID_LEN)
		wl_refuse(WL_E_INVALID,
				  errdetail("Argument \"%s\" is %zu bytes; the limit is %d.", name, len, WL_MAX_ID_LEN));
	if (wl_payload_secret_text(s))
		wl_refuse(WL_E_SECRET_REJECTED,
				  errdetail("Argument \"%s\" looks like a credential; pass secrets as %s references.",
							name, WL_SECRET_SCHEME));
	return s;
}

/* wl_arg_id: argument i as a non-blank C string of at most WL_MAX_ID_LEN bytes. */
char *
wl_arg_id(FunctionCallInfo fcinfo, int i, const char *name)
{
	if (PG_ARGISNULL(i))
		wl_refuse(WL_E_INVALID, errdetail("Argument \"%s\" must not be NULL.", name));
	return id_text(PG_GETARG_TEXT_PP(i), name);
}

/*
 * wl_arg_tenant: a tenant or application id argument: as wl_arg_id, and
 * without ":" (SPEC section 2), so no two pairs spell the same prefix.
 */
char *
wl_arg_tenant(FunctionCallInfo fcinfo, int i, const char *name)
{
	char	   *s = wl_arg_id(fcinfo, i, name);

	if (strchr(s, ':') != NULL)
		wl_refuse(WL_E_INVALID, errdetail("Argument \"%s\" must not contain \":\".", name));
	return s;
}

/* wl_arg_id_or_null: as wl_arg_id, but NULL stays NULL. */
char *
wl_arg_id_or_null(FunctionCallInfo fcinfo, int i, const char *name)
{
	return PG_ARGISNULL(i) ? NULL : id_text(PG_GETARG_TEXT_PP(i), name);
}

/*
 * wl_text_array_check checks a text[]: one dimension (or empty), no NULL
 * element, no blank element, at most WL_MAX_ARRAY_ITEMS.
 */
ArrayType *
wl_text_array_check(ArrayType *a, const char *what)
{
	int			n;
	char	  **items;

	if (ARR_NDIM(a) > 1)
		wl_refuse(WL_E_INVALID, errdetail("Argument \"%s\" must be a one-dimensional array.", what));
	if (array_contains_nulls(a))
		wl_refuse(WL_E_INVALID, errdetail("Argument \"%s\" must not contain NULL.", what));
	items = wl_array_items(a, &n);
	if (n > WL_MAX_ARRAY_ITEMS)
		wl_refuse(WL_E_INVALID,
				  errdetail("Argument \"%s\" has %d items; the limit is %d.", what, n, WL_MAX_ARRAY_ITEMS));
	for (int i = 0; i < n; i++)
	{
		size_t		len = strlen(items[i]);

		if (wl_text_blank(items[i], len) || len > WL_MAX_ID_LEN)
			wl_refuse(WL_E_INVALID,
					  errdetail("Items of argument \"%s\" must be non-blank text of at most %d bytes.",
								what, WL_MAX_ID_LEN));
	}
	return a;
}

/* wl_arg_text_array: argument i, a text[] checked by wl_text_array_check. */
ArrayType *
wl_arg_text_array(FunctionCallInfo fcinfo, int i, const char *name)
{
	if (PG_ARGISNULL(i))
		wl_refuse(WL_E_INVALID, errdetail("Argument \"%s\" must not be NULL.", name));
	return wl_text_array_check(PG_GETARG_ARRAYTYPE_P(i), name);
}

/*
 * wl_arg_batch checks the items argument of a batch function (a JSON array
 * of at most WL_MAX_BATCH items and WL_MAX_BATCH_BYTES) and returns how many
 * there are.
 */
int
wl_arg_batch(Jsonb *items)
{
	int			n;

	if (!JB_ROOT_IS_ARRAY(items) || JB_ROOT_IS_SCALAR(items))
		wl_refuse(WL_E_INVALID, errdetail("Argument \"items\" must be a JSON array."));
	if (VARSIZE(items) > WL_MAX_BATCH_BYTES)
		wl_refuse(WL_E_INVALID,
				  errdetail("Argument \"items\" is %zu bytes; the limit is %d.",
							(size_t) VARSIZE(items), WL_MAX_BATCH_BYTES));
	n = JB_ROOT_COUNT(items);
	if (n > WL_MAX_BATCH)
		wl_refuse(WL_E_INVALID,
				  errdetail("Argument \"items\" has %d entries; the limit is %d.", n, WL_MAX_BATCH));
	return n;
}

/*
 * wl_arg_fence reads (workload_id, claim_id, worker_id, fencing_token) from
 * arguments first..first+3; a NULL or blank one is WORKLOAD_INVALID.
 */
void
wl_arg_fence(FunctionCallInfo fcinfo, int first, WlFence *f)
{
	f->workload_id = wl_arg_id(fcinfo, first, "workload_id");
	f->claim_id = wl_arg_id(fcinfo, first + 1, "claim_id");
	f->worker_id = wl_arg_id(fcinfo, first + 2, "worker_id");
	if (PG_ARGISNULL(first + 3))
		wl_refuse(WL_E_INVALID, errdetail("Argument \"fencing_token\" must not be NULL."));
	f->fencing_token = PG_GETARG_INT64(first + 3);
}

/*
 * wl_arg_lease_until returns now + argument i (an interval); a lease that
 * is not a plain duration above zero and at most WL_MAX_LEASE_S seconds is
 * WORKLOAD_INVALID.
 */
TimestampTz
wl_arg_lease_until(FunctionCallInfo fcinfo, int i, const char *name)
{
	Interval   *lease;
	int64		usecs = 0;

	if (PG_ARGISNULL(i))
		wl_refuse(WL_E_INVALID, errdetail("Argument \"%s\" must not be NULL.", name));
	lease = PG_GETARG_INTERVAL_P(i);
	if (lease->month == 0 && lease->day >= 0 && lease->day <= 1 &&
		lease->time >= -USECS_PER_DAY && lease->time <= 2 * USECS_PER_DAY)
		usecs = lease->day * USECS_PER_DAY + lease->time;
	if (usecs <= 0 || usecs > (int64) WL_MAX_LEASE_S * USECS_PER_SEC)
		wl_refuse(WL_E_INVALID,
				  errdetail("Argument \"%s\" must be above zero and at most %d seconds.",
							name, WL_MAX_LEASE_S));
	return wl_now() + usecs;
}

/*
 * wl_item_fence reads the fence of one batch item (workload_id, claim_id,
 * fencing_token; the worker is the batch's) without raising: false with
 * *detail when a field is missing or malformed.  f->workload_id is read
 * first, so even a refused item says which workload it named.
 */
bool
wl_item_fence(JsonbContainer *o, const char *worker_id, WlFence *f, char **detail)
{
	f->worker_id = (char *) worker_id;
	f->workload_id = wl_json_get_text(o, "workload_id");
	f->claim_id = wl_json_get_text(o, "claim_id");
	if (f->workload_id == NULL || f->claim_id == NULL ||
		wl_text_blank(f->workload_id, strlen(f->workload_id)) ||
		wl_text_blank(f->claim_id, strlen(f->claim_id)) ||
		strlen(f->workload_id) > WL_MAX_ID_LEN || strlen(f->claim_id) > WL_MAX_ID_LEN)
		return (*detail = "Fields workload_id and claim_id must be non-blank strings.", false);
	if (!wl_json_get_int(o, "fencing_token", &f->fencing_token))
		return (*detail = "Field fencing_token must be an integer.", false);
	return true;
}
