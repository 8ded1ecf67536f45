/*
 * keys.c: the server-held HMAC keys.  Makes them (32 random bytes), signs
 * with the newest one that is not retired, and checks a MAC against the key
 * it names.  A key's secret never leaves this file or the table; no role
 * but the extension owner can read workload.signing_keys.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "authz.h"
#include "clock.h"
#include "crypto.h"
#include "errors.h"
#include "keys.h"
#include "payload.h"
#include "store.h"

#define WL_KEY_BYTES 32

/*
 * wl_keys_mac_current returns the hex HMAC of text under the newest
 * non-retired key and that key's id.  Caller is connected to SPI.
 */
char *
wl_keys_mac_current(const char *text, char **key_id)
{
	SPITupleTable *t;
	bool		isnull;
	bytea	   *secret;

	t = wl_store_run(P_KEY_CURRENT, NULL, NULL, 1, SPI_OK_SELECT);
	if (SPI_processed == 0)
		elog(ERROR, "workload has no signing key that is not retired");
	*key_id = wl_store_text(t, 0, 1);
	secret = DatumGetByteaPP(wl_store_datum(t, 0, 2, &isnull));
	return wl_hmac_hex((const uint8 *) VARDATA_ANY(secret), VARSIZE_ANY_EXHDR(secret),
					   text, strlen(text));
}

/*
 * wl_keys_mac_check: whether mac is the HMAC of text under key key_id, and
 * that key is known and not retired; why says what failed.
 */
bool
wl_keys_mac_check(const char *key_id, const char *text, const char *mac, const char **why)
{
	Datum		args[1];
	SPITupleTable *t;
	bool		isnull;
	bytea	   *secret;

	args[0] = CStringGetTextDatum(key_id);
	t = wl_store_run(P_KEY_GET, args, NULL, 1, SPI_OK_SELECT);
	if (SPI_processed == 0)
		return (*why = "it is signed by an unknown key", false);
	if (wl_store_bool(t, 0, 2))
		return (*why = "it is signed by a retired key", false);
	secret = DatumGetByteaPP(wl_store_datum(t, 0, 1, &isnull));
	if (!wl_hex_equal(mac, wl_hmac_hex((const uint8 *) VARDATA_ANY(secret),
									   VARSIZE_ANY_EXHDR(secret), text, strlen(text))))
		return (*why = "its signature does not verify", false);
	return true;
}

/* workload_rotate_signing_key() -> the new key's id, which signs from now on. */
PG_FUNCTION_INFO_V1(workload_rotate_signing_key);
Datum
workload_rotate_signing_key(PG_FUNCTION_ARGS)
{
	uint8		raw[WL_KEY_BYTES];
	uint8		idbytes[8];
	char		idhex[17];
	bytea	   *secret = palloc(VARHDRSZ + WL_KEY_BYTES);
	Datum		args[3];
	char	   *key_id;

	wl_random_bytes(raw, sizeof(raw));
	wl_random_bytes(idbytes, sizeof(idbytes));
	hex_encode((const char *) idbytes, sizeof(idbytes), idhex);
	idhex[16] = '\0';
	key_id = psprintf("key_%s", idhex);
	SET_VARSIZE(secret, VARHDRSZ + WL_KEY_BYTES);
	memcpy(VARDATA(secret), raw, WL_KEY_BYTES);
	explicit_bzero(raw, sizeof(raw));

	args[0] = CStringGetTextDatum(key_id);
	args[1] = PointerGetDatum(secret);
	/* a new key must sort after every older one even under a frozen test clock */
	args[2] = TimestampTzGetDatum(Max(wl_now(), GetCurrentTimestamp()));
	SPI_connect();
	wl_store_run(P_KEY_PUT, args, NULL, 0, SPI_OK_INSERT);
	SPI_finish();
	PG_RETURN_TEXT_P(cstring_to_text(key_id));
}

/*
 * workload_retire_signing_key(key_id): grants and checkpoints signed with it
 * stop verifying.  The last key that is not retired cannot be retired
 * (rotate first); an unknown or already retired key is WORKLOAD_INVALID.
 */
PG_FUNCTION_INFO_V1(workload_retire_signing_key);
Datum
workload_retire_signing_key(PG_FUNCTION_ARGS)
{
	char	   *key_id;
	Datum		args[2];
	SPITupleTable *t;

	if (PG_ARGISNULL(0))
		wl_refuse(WL_E_INVALID, errdetail("key_id must not be NULL."));
	key_id = wl_payload_id_arg(PG_GETARG_TEXT_PP(0), "key_id");
	args[0] = CStringGetTextDatum(key_id);
	args[1] = TimestampTzGetDatum(wl_now());
	SPI_connect();
	t = wl_store_run(P_KEY_OTHERS, args, NULL, 1, SPI_OK_SELECT);
	if (wl_store_int(t, 0, 1) == 0)
		wl_refuse(WL_E_INVALID,
				  errdetail("Key \"%s\" is the only key that is not retired.", key_id),
				  errhint("Call workload_rotate_signing_key() first."));
	wl_store_run(P_KEY_RETIRE, args, NULL, 0, SPI_OK_UPDATE);
	if (SPI_processed != 1)
		wl_refuse(WL_E_INVALID, errdetail("No signing key \"%s\" that is not retired.", key_id));
	SPI_finish();
	PG_RETURN_VOID();
}
