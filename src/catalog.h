/* catalog.h: where the extension lives and its enum type (catalog.c; layer 2). */
#ifndef WL_CATALOG_H
#define WL_CATALOG_H

#include "states.h"

extern void wl_catalog_init(void);
extern uint64 wl_catalog_generation(void);
extern Oid	wl_catalog_api_schema(void);
extern Oid	wl_catalog_owner(void);
extern Oid	wl_catalog_state_type(void);
extern Oid	wl_catalog_state_oid(WlState s);
extern Datum wl_catalog_state_datum(WlState s);
extern WlState wl_catalog_state_from_oid(Oid oid);
extern Oid	wl_catalog_workload_seq(void);
extern Oid	wl_catalog_event_seq(void);
extern Oid	wl_catalog_store_schema(void);
extern bool wl_catalog_tick_lock(void);

#endif
