/*
 * module.c: PG_MODULE_MAGIC and _PG_init, which calls each area's init and
 * does nothing else.
 */
#include "postgres.h"

#include "fmgr.h"

#include "bgworker.h"
#include "guc.h"
#include "catalog.h"
#include "claim_resume.h"
#include "quota.h"
#include "store_ops.h"
#include "transition.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

void
_PG_init(void)
{
	wl_guc_init();
	wl_catalog_init();
	wl_bgworker_init();
	wl_claim_resume_init();
	wl_store_ready_init();
	wl_quota_init();
	wl_store_init();
	wl_transition_init();
}
