/*
 * json.h: JSON syntax checks and UTF-8 repair, on plain bytes; no tree,
 * no database.
 */
#ifndef WLW_JSON_H
#define WLW_JSON_H

#include <stdbool.h>
#include <stddef.h>

extern bool wlw_json_valid(const char *s, size_t len);
extern bool wlw_json_progress(const char *s, size_t len, const char **value, size_t *vlen);
extern void wlw_utf8_sanitize(char *s, size_t len);

#endif							/* WLW_JSON_H */
