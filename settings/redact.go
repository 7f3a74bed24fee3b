package settings

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// secretKey matches settings that hold a secret (the *_file variants name a
// file, which is not secret).
var secretKey = regexp.MustCompile(`(?i)(password|token|secrets?|credentials|client_secret|api_key)$`)

// Redacted prints a setting's value with secrets replaced by <secret>:
// by key (passwords, tokens, credentials, secrets, and everything under a
// proxy_connect_header, whose values are all secrets in prometheus/common),
// at any depth, in lists too; and user:password@ in URLs anywhere.
func Redacted(key string, v any) string {
	last := key[strings.LastIndex(key, ".")+1:]
	return fmt.Sprint(redactValue(v, isSecretKey(last)))
}

func isSecretKey(k string) bool {
	return secretKey.MatchString(k) || strings.EqualFold(k, "proxy_connect_header")
}

// RedactedValue is a setting's value with secrets replaced by <secret>,
// for a document (see Redacted).
func RedactedValue(key string, v any) any {
	last := key[strings.LastIndex(key, ".")+1:]
	return redactValue(v, isSecretKey(last))
}

func redactValue(v any, secret bool) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = redactValue(e, secret || isSecretKey(k))
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = redactValue(e, secret)
		}
		return out
	case []string:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = redactValue(e, secret)
		}
		return out
	case string:
		if secret && x != "" {
			return "<secret>"
		}
		return redactURL(x)
	case nil:
		return v
	}
	if secret {
		return "<secret>"
	}
	return v
}

// redactURL hides the password of a URL anywhere in a setting ("u:p@host"
// without a scheme too).
func redactURL(s string) string {
	raw := s
	if !strings.Contains(s, "://") && strings.Contains(s, "@") {
		raw = "http://" + s
	}
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return s
	}
	if _, has := u.User.Password(); !has {
		u.User = url.User("<secret>") // a token may stand as the user name
	}
	out := u.Redacted()
	if raw != s {
		out = strings.TrimPrefix(out, "http://")
	}
	return out
}
