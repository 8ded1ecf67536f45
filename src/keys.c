/*
 * keys.c: the server-held HMAC keys.  Makes them (32 random bytes), signs
 * with the newest one that is not retired, checks a MAC against the key it
 * names, retires keys.  A key's secret never leaves this file or the table;
 * no role but the extension owner can read workload.signing_keys.  Layer 3.
 */
#include "postgres.h"

#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "clock.h"
#include "crypto.h"
#include "errors.h"
#include "keys.h"
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
 * wl_keys_mac_check: whether mac is the HMAC of text under key key_id, and
 * that key is known and not retired; why says what failed.
 */
bool
wl_keys_mac_check(const char *key_id, const char *text, const char *mac, const char **why)
{
	WlKey		k;

	if (!wl_store_key_get(key_id, &k))
		return (*why = "it is signed by an unknown key", false);
	if (k.retired)
		return (*why = "it is signed by a retired key", false);
	if (!wl_hex_equal(mac, mac_under(&k, text)))
		return (*why = "its signature does not verify", false);
	return true;
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
