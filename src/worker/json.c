/*
 * json.c: a strict RFC 8259 syntax check (no tree is built) for the
 * command's stdout and its file-descriptor-3 lines, the "progress" line
 * test, UTF-8 repair of error text, and WlwStr, the growable buffer the
 * worker collects output and builds JSON in.  The server still parses and
 * limits every value; this only lets the worker decide invalid_output
 * itself and tell progress from checkpoints.  Nothing here recurses.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

#define MAX_DEPTH 512

typedef struct Scan
{
	const char *p;
	const char *end;
} Scan;

static void
skip_ws(Scan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

static bool
is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static bool
scan_string(Scan *s)
{
	if (s->p >= s->end || *s->p != '"')
		return false;
	s->p++;
	while (s->p < s->end)
	{
		unsigned char c = (unsigned char) *s->p++;

		if (c == '"')
			return true;
		if (c < 0x20)
			return false;
		if (c != '\\')
			continue;
		if (s->p >= s->end)
			return false;
		c = (unsigned char) *s->p++;
		if (c == 'u')
		{
			if (s->end - s->p < 4 || !is_hex(s->p[0]) || !is_hex(s->p[1]) ||
				!is_hex(s->p[2]) || !is_hex(s->p[3]))
				return false;
			s->p += 4;
		}
		else if (!strchr("\"\\/bfnrt", c) || c == '\0')
			return false;
	}
	return false;
}

static bool
scan_digits(Scan *s)
{
	const char *start = s->p;

	while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
		s->p++;
	return s->p > start;
}

static bool
scan_number(Scan *s)
{
	if (s->p < s->end && *s->p == '-')
		s->p++;
	if (s->p < s->end && *s->p == '0')
		s->p++;
	else if (!scan_digits(s))
		return false;
	if (s->p < s->end && *s->p == '.')
	{
		s->p++;
		if (!scan_digits(s))
			return false;
	}
	if (s->p < s->end && (*s->p == 'e' || *s->p == 'E'))
	{
		s->p++;
		if (s->p < s->end && (*s->p == '+' || *s->p == '-'))
			s->p++;
		if (!scan_digits(s))
			return false;
	}
	return true;
}

static bool
scan_literal(Scan *s, const char *word)
{
	size_t		n = strlen(word);

	if ((size_t) (s->end - s->p) < n || memcmp(s->p, word, n) != 0)
		return false;
	s->p += n;
	return true;
}

/* scan_scalar reads a string, number or literal at s->p. */
static bool
scan_scalar(Scan *s)
{
	switch (*s->p)
	{
		case '"':
			return scan_string(s);
		case 't':
			return scan_literal(s, "true");
		case 'f':
			return scan_literal(s, "false");
		case 'n':
			return scan_literal(s, "null");
		default:
			return scan_number(s);
	}
}

/* scan_key reads an object member's name and its colon. */
static bool
scan_key(Scan *s)
{
	skip_ws(s);
	if (!scan_string(s))
		return false;
	skip_ws(s);
	return s->p < s->end && *s->p++ == ':';
}

/*
 * scan_value reads one value.  Containers are tracked on an explicit stack
 * of their closing characters, so no input can deepen the C stack.
 */
static bool
scan_value(Scan *s)
{
	char		stack[MAX_DEPTH];
	int			depth = 0;

	for (;;)
	{
		skip_ws(s);
		if (s->p >= s->end)
			return false;
		if (*s->p == '{' || *s->p == '[')
		{
			char		close = (*s->p++ == '{') ? '}' : ']';

			if (depth == MAX_DEPTH)
				return false;
			stack[depth++] = close;
			skip_ws(s);
			if (s->p >= s->end || *s->p != close)
			{
				if (close == '}' && !scan_key(s))
					return false;
				continue;		/* the container's first value */
			}
			s->p++;
			depth--;
		}
		else if (!scan_scalar(s))
			return false;
		/* after a value: close what ends here, then on to the next member */
		for (;;)
		{
			if (depth == 0)
				return true;
			skip_ws(s);
			if (s->p >= s->end)
				return false;
			if (*s->p == stack[depth - 1])
			{
				s->p++;
				depth--;
				continue;
			}
			if (*s->p++ != ',')
				return false;
			if (stack[depth - 1] == '}' && !scan_key(s))
				return false;
			break;
		}
	}
}

/* wlw_json_valid says whether s[0..len) is exactly one JSON value. */
bool
wlw_json_valid(const char *s, size_t len)
{
	Scan		sc = {s, s + len};

	if (memchr(s, '\0', len) != NULL || !scan_value(&sc))
		return false;
	skip_ws(&sc);
	return sc.p == sc.end;
}

/*
 * wlw_json_progress says whether a valid JSON line is an object with
 * exactly one member, "progress"; if so *value and *vlen span that member's
 * value.  Any other valid line is a checkpoint.
 */
bool
wlw_json_progress(const char *s, size_t len, const char **value, size_t *vlen)
{
	Scan		sc = {s, s + len};

	skip_ws(&sc);
	if (sc.p >= sc.end || *sc.p != '{')
		return false;
	sc.p++;
	skip_ws(&sc);
	if (!scan_literal(&sc, "\"progress\""))
		return false;
	skip_ws(&sc);
	if (sc.p >= sc.end || *sc.p++ != ':')
		return false;
	skip_ws(&sc);
	*value = sc.p;
	if (!scan_value(&sc))
		return false;
	*vlen = sc.p - *value;
	skip_ws(&sc);
	return sc.p < sc.end && *sc.p == '}';
}

/* utf8_len gives the length of a valid UTF-8 sequence at s, or 0. */
static size_t
utf8_len(const unsigned char *s, size_t left)
{
	size_t		n;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xC2 && s[0] <= 0xDF)
		n = 2;
	else if (s[0] >= 0xE0 && s[0] <= 0xEF)
		n = 3;
	else if (s[0] >= 0xF0 && s[0] <= 0xF4)
		n = 4;
	else
		return 0;
	if (n > left)
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xC0) != 0x80)
			return 0;
	/* overlong 3/4-byte forms, surrogates, above U+10FFFF */
	if ((s[0] == 0xE0 && s[1] < 0xA0) || (s[0] == 0xED && s[1] >= 0xA0) ||
		(s[0] == 0xF0 && s[1] < 0x90) || (s[0] == 0xF4 && s[1] >= 0x90))
		return 0;
	return n;
}

/*
 * wlw_utf8_sanitize replaces, in place, every NUL byte and every byte that
 * does not start a valid UTF-8 sequence with '?', so stderr can be sent as
 * text whatever the command wrote.
 */
void
wlw_utf8_sanitize(char *s, size_t len)
{
	size_t		i = 0;

	while (i < len)
	{
		size_t		n = (s[i] == '\0') ? 0 : utf8_len((unsigned char *) s + i, len - i);

		if (n == 0)
		{
			s[i++] = '?';
			continue;
		}
		i += n;
	}
}

/*
 * wlw_str_add appends len bytes to s, keeping it NUL-terminated.  Past max
 * bytes nothing more is added and s->overflow is set; false then, or when
 * out of memory (also overflow).
 */
bool
wlw_str_add(WlwStr *s, const char *data, size_t len, size_t max)
{
	if (s->overflow || s->len + len > max)
	{
		s->overflow = true;
		return false;
	}
	if (s->len + len + 1 > s->cap)
	{
		size_t		cap = s->cap ? s->cap : 256;
		char	   *p;

		while (cap < s->len + len + 1)
			cap *= 2;
		if ((p = realloc(s->data, cap)) == NULL)
		{
			s->overflow = true;
			return false;
		}
		s->data = p;
		s->cap = cap;
	}
	memcpy(s->data + s->len, data, len);
	s->len += len;
	s->data[s->len] = '\0';
	return true;
}

/* wlw_str_cat appends a C string (no limit but memory). */
bool
wlw_str_cat(WlwStr *s, const char *text)
{
	return wlw_str_add(s, text, strlen(text), SIZE_MAX / 2);
}

/* wlw_str_quote appends text as a JSON string (quoted, escaped). */
bool
wlw_str_quote(WlwStr *s, const char *text)
{
	bool		ok = wlw_str_cat(s, "\"");

	for (const unsigned char *p = (const unsigned char *) text; *p && ok; p++)
	{
		char		esc[8];

		if (*p == '"' || *p == '\\')
		{
			esc[0] = '\\';
			esc[1] = (char) *p;
			ok = wlw_str_add(s, esc, 2, SIZE_MAX / 2);
		}
		else if (*p < 0x20)
		{
			snprintf(esc, sizeof(esc), "\\u%04x", *p);
			ok = wlw_str_cat(s, esc);
		}
		else
			ok = wlw_str_add(s, (const char *) p, 1, SIZE_MAX / 2);
	}
	return ok && wlw_str_cat(s, "\"");
}

/* wlw_str_free frees the buffer and empties s. */
void
wlw_str_free(WlwStr *s)
{
	free(s->data);
	memset(s, 0, sizeof(*s));
}
