/* pass.h: a maintenance pass in this backend (pass.c; layer 0). */
#ifndef WL_PASS_H
#define WL_PASS_H

/* How long a pass waits for any lock before it gives way: the row is left for a later pass. */
#define WL_PASS_LOCK_TIMEOUT_MS 10

extern void wl_pass_begin(int budget_ms);
extern void wl_pass_end(void);
extern bool wl_pass_active(void);
extern void wl_pass_step(void);
extern void wl_pass_budget(int budget_ms);
extern bool wl_pass_spent(void);
extern bool wl_pass_gave_way(int sqlerrcode);

#endif
