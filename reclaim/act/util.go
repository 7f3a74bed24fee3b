package act

import (
	"errors"
	"net/url"
	"strings"
)

// redactURL drops a URL's credentials and query (a webhook's token), so
// that it can be named in errors.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(a URL)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return strings.TrimSuffix(u.String(), "/")
}

// hostOf is a webhook URL's scheme and host alone: its path is often its
// secret (Slack's).
func hostOf(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(a URL)"
	}
	return u.Scheme + "://" + u.Host
}

// unwrapURL is a client error without the URL that net/http puts in it.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
