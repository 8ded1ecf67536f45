/*
 * options.h: the command line, parsed once at start into wlw_opt, which
 * every layer above reads and none writes.
 */
#ifndef WLW_OPTIONS_H
#define WLW_OPTIONS_H

#include <stdbool.h>

typedef struct WlwOptions
{
	const char *dsn;
	char	   *worker_id;
	const char *tenant;
	const char *application;
	char	   *caps_literal;	/* text[] literal of --capability values */
	double		lease_s;
	int			batch;
	int			concurrency;
	const char *exec_cmd;
	double		grace_s;
	double		poll_max_s;
	bool		verbose;
	const char **env_names;		/* --env NAME, passed on to the command */
	int			n_env;
	const char *expected_snapshots;	/* --expected-snapshots JSON, or NULL */
} WlwOptions;

extern WlwOptions wlw_opt;

extern void wlw_options_parse(int argc, char **argv);

#endif							/* WLW_OPTIONS_H */
