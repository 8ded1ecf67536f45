/* keys.h: the server's signing keys (keys.c; layer 3). */
#ifndef WL_KEYS_H
#define WL_KEYS_H

extern char *wl_keys_mac_current(const char *text, char **key_id);
extern char **wl_keys_mac_current_many(char **texts, int n, char **key_id);
extern bool wl_keys_mac_check(const char *key_id, const char *text, const char *mac,
							  const char **why);
extern bool wl_keys_mac_digest_check(const char *key_id, const char *text, const char *digest,
									 const char **why);
extern char *wl_keys_rotate(void);
/* the payload a rotated channel hears last: ask workload_channel for the new name */
#define WL_CHANNEL_ROTATED "workload.channel_rotated"

extern char *wl_keys_channel(const char *tenant_id, const char *application_id);
extern void wl_keys_rotate_channel(const char *tenant_id, const char *application_id);
extern void wl_keys_make_channel_secret(void);
extern void wl_keys_retire(const char *key_id);

#endif
