/*
 * json.h: JSON syntax checks, UTF-8 repair and a string builder, on plain
 * bytes; no tree, no database.
 */
#ifndef WLW_JSON_H
#define WLW_JSON_H

#include <stdbool.h>
#include <stddef.h>

/* A growable byte buffer, NUL-terminated; overflow once a limit was hit. */
typedef struct WlwStr
{
	char	   *data;
	size_t		len;
	size_t		cap;
	bool		overflow;
} WlwStr;

extern bool wlw_json_valid(const char *s, size_t len);
extern bool wlw_json_progress(const char *s, size_t len, const char **value, size_t *vlen);
extern void wlw_utf8_sanitize(char *s, size_t len);
extern bool wlw_str_add(WlwStr *s, const char *data, size_t len, size_t max);
extern bool wlw_str_cat(WlwStr *s, const char *text);
extern bool wlw_str_quote(WlwStr *s, const char *text);
extern void wlw_str_free(WlwStr *s);

#endif							/* WLW_JSON_H */
