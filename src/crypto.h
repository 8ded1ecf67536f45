/* crypto.h: hashing and id derivation (crypto.c). */
#ifndef WL_CRYPTO_H
#define WL_CRYPTO_H

#include "utils/jsonb.h"

extern char *wl_sha256_hex(const char *data, size_t len);
extern char *wl_hmac_hex(const uint8 *key, size_t keylen, const char *data, size_t len);
extern bool wl_hex_equal(const char *a, const char *b);
extern void wl_random_bytes(uint8 *buf, size_t len);
extern char *wl_jsonb_text(Jsonb *j);
extern char *wl_jsonb_hash(Jsonb *j);
extern char *wl_workload_id(const char *tenant_id, const char *application_id,
							const char *idempotency_key, const char *revision,
							const char *input_hash);
extern int64 wl_queue_key(const char *tenant_id, uint32 tenant_len,
						  const char *application_id, uint32 application_len);
extern char *wl_claim_id(const char *workload_id, int64 fencing_token,
						 const char *worker_id);
extern char *wl_attempt_id(const char *workload_id, int attempt);
extern char *wl_checkpoint_id(const char *workload_id, int sequence);

#endif
