/* payload.h: limits and secret scanning of what callers store (payload.c; layer 1). */
#ifndef WL_PAYLOAD_H
#define WL_PAYLOAD_H

#include "utils/jsonb.h"

#include "errors.h"

#define WL_MAX_PAYLOAD_BYTES	(1024 * 1024)	/* input, state, output */
#define WL_MAX_SPEC_BYTES		(2 * 1024 * 1024)
#define WL_MAX_PROGRESS_BYTES	(8 * 1024)
#define WL_MAX_DEPTH			64
#define WL_MAX_ID_LEN			256
#define WL_MAX_ERROR_LEN		(64 * 1024)
#define WL_MAX_ARRAY_ITEMS		256
#define WL_MAX_BATCH			1000	/* claim max_items, *_many items */
#define WL_MAX_LEASE_S			86400
#define WL_MAX_CHECKPOINTS		1000	/* checkpoints one workload keeps */
/* the scheme of a secret reference; a macro so no C file spells "//" in a string */
#define WL_SECRET_SCHEME		"secret:" "/" "/"
#define WL_SECRET_SCHEME_LEN	9
#define WL_MAX_BATCH_BYTES		(16 * 1024 * 1024)	/* the items of one *_many call */

extern WlErr wl_payload_verdict(Jsonb *j, const char *what, Size max_bytes, char **detail);
extern void wl_payload_check(Jsonb *j, const char *what, Size max_bytes);
extern void wl_payload_check_secrets(Jsonb *j, const char *what);
extern void wl_payload_check_text(const char *s, const char *what, Size max_len);
extern bool wl_payload_secret_text(const char *s);

#endif
