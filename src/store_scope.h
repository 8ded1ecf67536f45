/* store_scope.h: the shard scope of a call on Citus (store_scope.c, store_shard.c; layer 2). */
#ifndef WL_STORE_SCOPE_H
#define WL_STORE_SCOPE_H

/* A shard group as this node names it: each table's shard (reference tables: their one shard). */
typedef struct WlShardMap
{
	int64		anchor;
	int			n;
	char	  **tables;
	int64	   *shards;
	/*
	 * the table has a column default its shard lacks (Citus evaluates a
	 * sequence's default where the statement is planned, and leaves it off
	 * the shards): an INSERT that leaves the column out cannot run there
	 */
	bool	   *lacks_defaults;
	Oid			anchor_rel;		/* workload_rows_<anchor> when the map was made */
} WlShardMap;

extern void wl_store_scope_open(WlShardMap *map, WlShardScope *saved);
extern void wl_store_scope_close(const WlShardScope *saved);
extern void wl_store_scope_forget(void);

#endif
