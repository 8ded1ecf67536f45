/*
 * errors.c: the data behind errors.h, and wl_isolated.  The SQL function
 * that lists the codes is api_meta.c's.
 */
#include "postgres.h"

#include "access/xact.h"
#include "utils/resowner.h"

#include "errors.h"

#define WL_ERR_ROW(name, a, b, c, token, message) \
	[name] = {MAKE_SQLSTATE('W', 'L', a, b, c), (const char[]){'W', 'L', a, b, c, '\0'}, token, message},
const WlErrInfo wl_errors[WL_E_END] = {
	WL_ERROR_TABLE(WL_ERR_ROW)
};
#undef WL_ERR_ROW

ErrorData *
wl_isolated(void (*fn) (void *), void *arg)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	ErrorData  *volatile err = NULL;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		fn(arg);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		ErrorData  *e;

		MemoryContextSwitchTo(cxt);
		e = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
		if (e->sqlerrcode == ERRCODE_QUERY_CANCELED || e->sqlerrcode == ERRCODE_ADMIN_SHUTDOWN)
			ReThrowError(e);
		err = e;
	}
	PG_END_TRY();
	return err;
}
