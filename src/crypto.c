/*
 * crypto.c: SHA-256 (OpenSSL's, see sha256) and HMAC-SHA256 (core hmac), the
 * same bytes as pgcrypto's digest and hmac; strong random bytes; and every
 * derived identifier of SPEC section 2.  Nothing else hashes.  Layer 0.
 */
#include "postgres.h"

#include <openssl/evp.h>

#include "common/hmac.h"
#include "common/sha2.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"

#include "crypto.h"

/*
 * sha256: the session's SHA-256 context, initialised for each hash.  OpenSSL
 * itself, not core's pg_cryptohash (the same library, the same bytes: the
 * regress test compares them with pgcrypto's digest): pg_cryptohash_init
 * hands OpenSSL 3 its built-in SHA-256, which OpenSSL looks up again among
 * its providers at every initialisation (paid by every short hash, and a
 * job makes two: its claim id and its output's hash).
 * Here the algorithm is fetched once a session.  OpenSSL's own memory, not
 * a memory context: both live as long as the backend.
 */
static EVP_MD_CTX *
sha256(void)
{
	static EVP_MD *md = NULL;
	static EVP_MD_CTX *ctx = NULL;

	if (md == NULL)
	{
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
		md = EVP_MD_fetch(NULL, "SHA256", NULL);
#else
		md = (EVP_MD *) EVP_sha256();
#endif
		if (md == NULL)
			elog(ERROR, "could not compute SHA-256: the algorithm is not available");
	}
	if (ctx == NULL && (ctx = EVP_MD_CTX_new()) == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	if (EVP_DigestInit_ex(ctx, md, NULL) != 1)
		elog(ERROR, "could not compute SHA-256");
	return ctx;
}

/* sha256_final: the digest of what ctx was given */
static void
sha256_final(EVP_MD_CTX *ctx, uint8 *digest)
{
	unsigned int len = 0;

	if (EVP_DigestFinal_ex(ctx, digest, &len) != 1 || len != PG_SHA256_DIGEST_LENGTH)
		elog(ERROR, "could not compute SHA-256");
}

/* wl_sha256_hex returns the lower-case hex SHA-256 of data (palloc'd). */
char *
wl_sha256_hex(const char *data, size_t len)
{
	EVP_MD_CTX *ctx = sha256();
	uint8		digest[PG_SHA256_DIGEST_LENGTH];
	char	   *hex = palloc(PG_SHA256_DIGEST_LENGTH * 2 + 1);

	if (EVP_DigestUpdate(ctx, data, len) != 1)
		elog(ERROR, "could not compute SHA-256");
	sha256_final(ctx, digest);
	hex_encode((const char *) digest, PG_SHA256_DIGEST_LENGTH, hex);
	hex[PG_SHA256_DIGEST_LENGTH * 2] = '\0';
	return hex;
}

/*
 * wl_hmac_hex returns the lower-case hex HMAC-SHA256 of data under key: the
 * same bytes as pgcrypto's encode(hmac(data, key, 'sha256'), 'hex').
 */
char *
wl_hmac_hex(const uint8 *key, size_t keylen, const char *data, size_t len)
{
	pg_hmac_ctx *ctx = pg_hmac_create(PG_SHA256);
	uint8		mac[PG_SHA256_DIGEST_LENGTH];
	char	   *hex = palloc(PG_SHA256_DIGEST_LENGTH * 2 + 1);

	if (ctx == NULL)
		elog(ERROR, "could not create HMAC context");
	if (pg_hmac_init(ctx, key, keylen) < 0 ||
		pg_hmac_update(ctx, (const uint8 *) data, len) < 0 ||
		pg_hmac_final(ctx, mac, sizeof(mac)) < 0)
		elog(ERROR, "could not compute HMAC: %s", pg_hmac_error(ctx));
	pg_hmac_free(ctx);
	hex_encode((const char *) mac, PG_SHA256_DIGEST_LENGTH, hex);
	hex[PG_SHA256_DIGEST_LENGTH * 2] = '\0';
	return hex;
}

/*
 * wl_hex_equal compares two hex strings (MACs, hashes) in time independent
 * of where they differ.
 */
bool
wl_hex_equal(const char *a, const char *b)
{
	size_t		la = strlen(a);

	return la == strlen(b) && timingsafe_bcmp(a, b, la) == 0;
}

/* wl_random_bytes fills buf from the strong random source behind gen_random_bytes. */
void
wl_random_bytes(uint8 *buf, size_t len)
{
	if (!pg_strong_random(buf, len))
		elog(ERROR, "could not generate random bytes");
}

/* wl_jsonb_text is the jsonb value's text form, exactly as jsonb::text prints it. */
char *
wl_jsonb_text(Jsonb *j)
{
	return JsonbToCString(NULL, &j->root, VARSIZE(j));
}

/* wl_jsonb_hash is encode(digest(j::text, 'sha256'), 'hex'). */
char *
wl_jsonb_hash(Jsonb *j)
{
	char	   *text = wl_jsonb_text(j);

	return wl_sha256_hex(text, strlen(text));
}

static char *
prefixed_hash(const char *prefix, const char *material, int hexdigits)
{
	char	   *hex = wl_sha256_hex(material, strlen(material));

	return psprintf("%s%.*s", prefix, hexdigits, hex);
}

/* wl_workload_id: 'workload_' || 24 hex of sha256(tenant:app:key:revision:input_hash). */
char *
wl_workload_id(const char *tenant_id, const char *application_id,
			   const char *idempotency_key, const char *revision,
			   const char *input_hash)
{
	return prefixed_hash("workload_",
						 psprintf("%s:%s:%s:%s:%s", tenant_id, application_id,
								  idempotency_key, revision, input_hash),
						 24);
}

/*
 * wl_queue_key: a queue's tenant and application as one 64-bit number, the
 * first 8 bytes of the SHA-256 of both (each after its length, 4 bytes in
 * the server's byte order, as the index it keys is kept): the leading
 * column of the claim's index (workload.queue_key, queue_ready_idx), where
 * fixed-width keys make each entry a claim reads cheap to test.  Two queues
 * that share a key share a range of the index and are kept apart by the
 * claim's tenant and application conditions; no one can aim at another
 * queue's key (SHA-256), and by chance it is one pair in 2^64.
 */
int64
wl_queue_key(const char *tenant_id, uint32 tenant_len, const char *application_id,
			 uint32 application_len)
{
	EVP_MD_CTX *ctx = sha256();
	uint8		digest[PG_SHA256_DIGEST_LENGTH];
	uint64		key = 0;

	if (EVP_DigestUpdate(ctx, &tenant_len, sizeof(tenant_len)) != 1 ||
		EVP_DigestUpdate(ctx, tenant_id, tenant_len) != 1 ||
		EVP_DigestUpdate(ctx, &application_len, sizeof(application_len)) != 1 ||
		EVP_DigestUpdate(ctx, application_id, application_len) != 1)
		elog(ERROR, "could not compute SHA-256");
	sha256_final(ctx, digest);
	for (int i = 0; i < 8; i++)
		key = (key << 8) | digest[i];
	return (int64) key;
}

/* wl_claim_id: 'claim_' || 20 hex of sha256(workload_id:fencing_token:worker_id). */
char *
wl_claim_id(const char *workload_id, int64 fencing_token, const char *worker_id)
{
	return prefixed_hash("claim_",
						 psprintf("%s:" INT64_FORMAT ":%s", workload_id,
								  fencing_token, worker_id),
						 20);
}

char *
wl_attempt_id(const char *workload_id, int attempt)
{
	return psprintf("attempt_%s_%d", workload_id, attempt);
}

char *
wl_checkpoint_id(const char *workload_id, int sequence)
{
	return psprintf("checkpoint_%s_%d", workload_id, sequence);
}
