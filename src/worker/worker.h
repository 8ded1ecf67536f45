/*
 * worker.h: what the files of workload-worker share.  main.c owns options,
 * signals, logging and the claim loop; db.c owns the connection and every
 * SQL call; run.c supervises the command (pipes, heartbeats, outcome);
 * spawn.c starts it; json.c owns JSON and UTF-8 checks.  Nothing here is linked into the extension.
 */
#ifndef WORKLOAD_WORKER_H
#define WORKLOAD_WORKER_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Exit statuses of the command that pick a failure kind (see --help). */
#define WLW_EXIT_TRANSIENT	75		/* EX_TEMPFAIL -> transient_connection */
#define WLW_EXIT_TIMEOUT	124		/* timeout(1) -> timeout */

#define WLW_STDERR_TAIL		4096	/* bytes of stderr kept as the error text */
#define WLW_MAX_STDOUT		(4 * 1024 * 1024)
#define WLW_MAX_FD3_LINE	(2 * 1024 * 1024)
#define WLW_KILL_AFTER_MS	2000	/* SIGTERM, then SIGKILL this much later */

typedef struct WlwOptions
{
	const char *dsn;
	char	   *worker_id;
	const char *tenant;
	const char *application;
	char	   *caps_literal;	/* text[] literal of --capability values */
	double		lease_s;
	int			batch;
	const char *exec_cmd;
	double		grace_s;
	double		poll_max_s;
	bool		verbose;
} WlwOptions;

/* One claimed workload, from the claim row to the end of its attempt. */
typedef struct WlwItem
{
	char	   *workload_id;
	char	   *claim_id;
	char		token[24];		/* fencing token, as text */
	int			attempt;
	char	   *definition_id;
	char	   *definition_revision;
	char	   *input;
	int			checkpoint_sequence;
	char	   *progress;		/* latest progress not yet sent, or NULL */
	bool		cancel_requested;
	bool		done;			/* attempt over: finished, lost or cancelled */
} WlwItem;

/* The running command: its process (group) id and our ends of its pipes. */
typedef struct WlwChild
{
	pid_t		pid;
	int			fd_in;
	int			fd_out;
	int			fd_err;
	int			fd_ck;
	char		ckpt_file[64];	/* WORKLOAD_CHECKPOINT_FILE, to remove after */
} WlwChild;

/* How a SQL call ended. */
typedef enum WlwCall
{
	WLW_OK,						/* the call succeeded */
	WLW_LOST,					/* fence refused (WL006/7/8): not ours any more */
	WLW_REFUSED,				/* refused for another reason; see sqlstate */
	WLW_NO_CONNECTION			/* the connection is gone and could not be restored */
} WlwCall;

typedef struct WlwError
{
	char		sqlstate[6];
	char		message[512];
} WlwError;

/* main.c */
extern WlwOptions wlw_opt;
extern volatile sig_atomic_t wlw_stop_requested;
extern int	wlw_signal_fd;
extern volatile int64_t wlw_drain_deadline;
extern bool wlw_busy;
extern void wlw_log(const char *fmt,...) __attribute__((format(printf, 1, 2)));
extern void wlw_debug(const char *fmt,...) __attribute__((format(printf, 1, 2)));
extern int64_t wlw_now_ms(void);
extern void wlw_drain_signal_fd(void);
extern bool wlw_should_give_up(void);

/* db.c */
extern bool wlw_db_connect(void);
extern void wlw_db_close(void);
extern int	wlw_db_socket(void);
extern bool wlw_db_consume(bool *notified);
extern int	wlw_db_claim(WlwItem **items, WlwError *err, bool *conn_lost);
extern WlwCall wlw_db_heartbeat(WlwItem *it, bool *cancel, WlwError *err);
extern WlwCall wlw_db_checkpoint(WlwItem *it, const char *state, WlwError *err);
extern WlwCall wlw_db_complete(WlwItem *it, const char *output, WlwError *err);
extern WlwCall wlw_db_fail(WlwItem *it, const char *kind, const char *error, char **state,
						   WlwError *err);
extern WlwCall wlw_db_confirm_cancel(WlwItem *it, WlwError *err);
extern char *wlw_db_last_checkpoint(WlwItem *it);
extern void wlw_items_free(WlwItem *items, int n);

/* run.c */
extern void wlw_run_batch(WlwItem *items, int n);

/* spawn.c */
extern bool wlw_spawn(const WlwItem *it, const char *ckpt, WlwChild *c);

/* json.c */
extern bool wlw_json_valid(const char *s, size_t len);
extern bool wlw_json_progress(const char *s, size_t len, const char **value, size_t *vlen);
extern void wlw_utf8_sanitize(char *s, size_t len);

#endif							/* WORKLOAD_WORKER_H */
