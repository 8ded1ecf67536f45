/*
 * keys.c: the server-held HMAC keys.  Makes them (32 random bytes), signs
 * with the newest one that is not retired, checks a MAC against the key it
 * names, retires keys; and the channel secret that names NOTIFY channels.
 * A secret never leaves this file or its table; no role but the extension
 * owner can read them (row level security hides them from everyone else,
 * pg_read_all_data included).  Layer 3.
 */
#include "postgres.h"

#include "access/xact.h"
#include "commands/async.h"
#include "storage/proc.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "catalog.h"
#include "clock.h"
#include "crypto.h"
#include "errors.h"
#include "keys.h"
#include "payload.h"
#include "store_ops.h"

#define WL_KEY_BYTES 32

static char *
mac_under(const WlKey *k, const char *text)
{
	return wl_hmac_hex((const uint8 *) VARDATA_ANY(k->secret), VARSIZE_ANY_EXHDR(k->secret),
					   text, strlen(text));
}

/*
 * wl_keys_mac_current returns the hex HMAC of text under the newest
 * non-retired key and that key's id.  Caller is connected to SPI.
 */
char *
wl_keys_mac_current(const char *text, char **key_id)
{
	WlKey		k;

	if (!wl_store_key_current(&k))
		elog(ERROR, "workload has no signing key that is not retired");
	*key_id = k.key_id;
	return mac_under(&k, text);
}

/*
 * wl_keys_mac_current_many is wl_keys_mac_current for n texts, under one
 * read of the current key.
 */
char **
wl_keys_mac_current_many(char **texts, int n, char **key_id)
{
	WlKey		k;
	char	  **macs = palloc(sizeof(char *) * (n + 1));

	if (!wl_store_key_current(&k))
		elog(ERROR, "workload has no signing key that is not retired");
	*key_id = k.key_id;
	for (int i = 0; i < n; i++)
		macs[i] = mac_under(&k, texts[i]);
	return macs;
}

/*
 * The key a check looked up last, for the command it was read in (a batch's
 * grants are signed by one key or a few): looked up again in the next
 * command, so this transaction's own rotation or retirement, which the
 * next command sees, is seen here too.
 */
static LocalTransactionId key_memo_lxid = InvalidLocalTransactionId;
static CommandId key_memo_cid;
static WlKey key_memo;

static bool
key_get(const char *key_id, WlKey *k)
{
	MemoryContext old;

	if (key_memo_lxid == MyProc->lxid && key_memo_cid == GetCurrentCommandId(false) &&
		strcmp(key_memo.key_id, key_id) == 0)
	{
		*k = key_memo;
		return true;
	}
	if (!wl_store_key_get(key_id, k))
		return false;
	old = MemoryContextSwitchTo(TopTransactionContext);
	key_memo.key_id = pstrdup(k->key_id);
	key_memo.secret = (bytea *) pg_detoast_datum_copy((struct varlena *) k->secret);
	key_memo.retired = k->retired;
	MemoryContextSwitchTo(old);
	key_memo_lxid = MyProc->lxid;
	key_memo_cid = GetCurrentCommandId(false);
	return true;
}

/*
 * mac_check_one: whether the HMAC of text under key key_id (known, not retired)
 * is mac, or (digest) has the SHA-256 mac; why says what failed.
 */
static bool
mac_check_one(const char *key_id, const char *text, const char *mac, bool digest, const char **why)
{
	WlKey		k;
	char	   *expected;

	if (!key_get(key_id, &k))
		return (*why = "it is signed by an unknown key", false);
	if (k.retired)
		return (*why = "it is signed by a retired key", false);
	expected = mac_under(&k, text);
	if (digest)
		expected = wl_sha256_hex(expected, strlen(expected));
	if (!wl_hex_equal(mac, expected))
		return (*why = "its signature does not verify", false);
	return true;
}

/*
 * wl_keys_mac_check: whether mac is the HMAC of text under key key_id, and
 * that key is known and not retired; why says what failed.
 */
bool
wl_keys_mac_check(const char *key_id, const char *text, const char *mac, const char **why)
{
	return mac_check_one(key_id, text, mac, false, why);
}

/* wl_keys_mac_digest_check: as wl_keys_mac_check, given only the MAC's SHA-256. */
bool
wl_keys_mac_digest_check(const char *key_id, const char *text, const char *digest,
						 const char **why)
{
	return mac_check_one(key_id, text, digest, true, why);
}

/*
 * The channel secrets, kept for the backend's life: the one made at CREATE
 * EXTENSION, and those of the tenants and applications whose secret was
 * rotated since (a member removed: workload.channel_secrets), all read at
 * once (a row per tenant and application that ever lost a member).  A
 * rotation invalidates the table's relcache entry, which every backend
 * hears of before its next transaction, and the secrets are read again.
 */
#define WL_PAIR_LEN (2 * WL_MAX_ID_LEN + 2)

typedef struct WlChannelSecret
{
	char		pair[WL_PAIR_LEN];	/* "tenant:application" (ids are at most WL_MAX_ID_LEN) */
	bytea	   *secret;
} WlChannelSecret;

static bytea *channel_secret = NULL;
static HTAB *channel_secrets = NULL;
static MemoryContext channel_cxt = NULL;
static uint64 channel_secret_generation = 0;
static bool channel_callback = false;
static Oid	channel_secrets_rel = InvalidOid;

static void
channel_secrets_forget(Datum arg, Oid relid)
{
	if (!OidIsValid(relid) || relid == channel_secrets_rel)
		channel_secret = NULL;
}

/* channel_secrets_load reads every channel secret into channel_cxt */
static void
channel_secrets_load(void)
{
	HASHCTL		ctl = {.keysize = WL_PAIR_LEN, .entrysize = sizeof(WlChannelSecret)};
	bytea	   *secret = wl_store_channel_secret();
	MemoryContext old;
	WlChannelPair *pairs;
	int			n;

	if (secret == NULL)
		elog(ERROR, "workload has no channel secret");
	if (!channel_callback)
	{
		CacheRegisterRelcacheCallback(channel_secrets_forget, (Datum) 0);
		channel_callback = true;
	}
	channel_secrets_rel = wl_store_channel_secrets_rel();
	if (channel_cxt == NULL)
		channel_cxt = AllocSetContextCreate(TopMemoryContext, "workload channel secrets",
											ALLOCSET_SMALL_SIZES);
	MemoryContextReset(channel_cxt);
	old = MemoryContextSwitchTo(channel_cxt);
	channel_secret = palloc(VARSIZE_ANY(secret));
	memcpy(channel_secret, secret, VARSIZE_ANY(secret));
	ctl.hcxt = channel_cxt;
	channel_secrets = hash_create("workload channel secrets", 64, &ctl,
								  HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
	MemoryContextSwitchTo(old);
	n = wl_store_channel_pairs(&pairs);
	for (int i = 0; i < n; i++)
	{
		char	   *pair = psprintf("%s:%s", pairs[i].tenant_id, pairs[i].application_id);
		WlChannelSecret *e = hash_search(channel_secrets, pair, HASH_ENTER, NULL);

		old = MemoryContextSwitchTo(channel_cxt);
		e->secret = palloc(VARSIZE_ANY(pairs[i].secret));
		memcpy(e->secret, pairs[i].secret, VARSIZE_ANY(pairs[i].secret));
		MemoryContextSwitchTo(old);
	}
	channel_secret_generation = wl_catalog_generation();
}

/*
 * wl_keys_channel: the NOTIFY channel of a tenant and application:
 * 'workload_' || 32 hex of HMAC-SHA256(tenant:application) under the
 * channel secret (SPEC section 4; the pair's own once it was rotated), so
 * only who may be told can name it.
 */
char *
wl_keys_channel(const char *tenant_id, const char *application_id)
{
	char	   *text = psprintf("%s:%s", tenant_id, application_id);
	bytea	   *secret;
	WlChannelSecret *e;
	char	   *mac;

	if (channel_secret == NULL || channel_secret_generation != wl_catalog_generation())
		channel_secrets_load();
	secret = channel_secret;
	e = hash_search(channel_secrets, text, HASH_FIND, NULL);
	if (e != NULL)
		secret = e->secret;
	mac = wl_hmac_hex((const uint8 *) VARDATA_ANY(secret), VARSIZE_ANY_EXHDR(secret),
					  text, strlen(text));
	return psprintf("workload_%.32s", mac);
}

/*
 * wl_keys_rotate_channel gives a tenant and application a new channel
 * secret (32 random bytes), so that a role removed from it no longer hears
 * its notifications, and tells the old channel ("workload.channel_rotated")
 * so its workers ask for the new name (workload_channel).  Other backends
 * read the new secret from their next transaction on.
 */
void
wl_keys_rotate_channel(const char *tenant_id, const char *application_id)
{
	uint8		raw[WL_KEY_BYTES];
	bytea	   *secret = palloc(VARHDRSZ + WL_KEY_BYTES);
	char	   *old_channel = wl_keys_channel(tenant_id, application_id);

	wl_random_bytes(raw, sizeof(raw));
	SET_VARSIZE(secret, VARHDRSZ + WL_KEY_BYTES);
	memcpy(VARDATA(secret), raw, WL_KEY_BYTES);
	explicit_bzero(raw, sizeof(raw));
	wl_store_channel_pair_put(tenant_id, application_id, secret, wl_now());
	CacheInvalidateRelcacheByRelid(wl_store_channel_secrets_rel());
	channel_secret = NULL;
	Async_Notify(old_channel, WL_CHANNEL_ROTATED);
}

/* wl_keys_make_channel_secret makes the channel secret (32 random bytes), once. */
void
wl_keys_make_channel_secret(void)
{
	uint8		raw[WL_KEY_BYTES];
	bytea	   *secret = palloc(VARHDRSZ + WL_KEY_BYTES);

	if (wl_store_channel_secret() != NULL)
		return;
	wl_random_bytes(raw, sizeof(raw));
	SET_VARSIZE(secret, VARHDRSZ + WL_KEY_BYTES);
	memcpy(VARDATA(secret), raw, WL_KEY_BYTES);
	explicit_bzero(raw, sizeof(raw));
	wl_store_channel_secret_put(secret, wl_now());
}

/* wl_keys_rotate adds a new key (32 random bytes), which signs from now on; returns its id. */
char *
wl_keys_rotate(void)
{
	uint8		raw[WL_KEY_BYTES];
	uint8		idbytes[8];
	char		idhex[17];
	bytea	   *secret = palloc(VARHDRSZ + WL_KEY_BYTES);
	char	   *key_id;

	wl_random_bytes(raw, sizeof(raw));
	wl_random_bytes(idbytes, sizeof(idbytes));
	hex_encode((const char *) idbytes, sizeof(idbytes), idhex);
	idhex[16] = '\0';
	key_id = psprintf("key_%s", idhex);
	SET_VARSIZE(secret, VARHDRSZ + WL_KEY_BYTES);
	memcpy(VARDATA(secret), raw, WL_KEY_BYTES);
	explicit_bzero(raw, sizeof(raw));
	/* a new key must sort after every older one even under a frozen test clock */
	wl_store_key_put(key_id, secret, Max(wl_now(), GetCurrentTimestamp()));
	return key_id;
}

/*
 * wl_keys_retire: grants and checkpoints signed with key_id stop verifying.
 * The last key that is not retired cannot be retired (rotate first); an
 * unknown or already retired key is WORKLOAD_INVALID.
 */
void
wl_keys_retire(const char *key_id)
{
	if (wl_store_keys_other(key_id) == 0)
		wl_refuse(WL_E_INVALID,
				  errdetail("Key \"%s\" is the only key that is not retired.", key_id),
				  errhint("Call workload_rotate_signing_key() first."));
	if (!wl_store_key_retire(key_id, wl_now()))
		wl_refuse(WL_E_INVALID, errdetail("No signing key \"%s\" that is not retired.", key_id));
}
