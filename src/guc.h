/* guc.h: every workload.* setting (guc.c). */
#ifndef WL_GUC_H
#define WL_GUC_H

extern int	wl_run_authority_ttl_s;
extern char *wl_tick_databases;
extern int	wl_tick_interval_ms;
extern int	wl_claim_full_scan_every;
extern int	wl_claim_full_scan_interval_ms;
extern int	wl_max_active_per_tenant;
extern int	wl_max_stored_kb_per_tenant;
extern int	wl_max_schedules_per_tenant;
extern int	wl_schedule_grant_warning_s;
extern bool wl_statement_path;
extern void wl_guc_init(void);

#endif
