package classify

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

func priorityInRange(v []byte) bool {
	f, err := strconv.ParseFloat(strings.TrimSpace(string(v)), 64)
	return err == nil && f >= 0 && f <= 1
}

// ParseRetryAfter reads a Retry-After value (RFC 9110 §10.2.3): a number of
// seconds, or an HTTP-date, which is turned into a delay from the response's
// Date header (date) when present and valid, else from now. A date in the
// past is a zero delay.
func ParseRetryAfter(value, date string, now time.Time) RetryAfter {
	ra := RetryAfter{Raw: value}
	v := strings.TrimSpace(value)
	if v == "" {
		return ra
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return ra
		}
		if n > int64(1<<62)/int64(time.Second) {
			n = int64(1<<62) / int64(time.Second)
		}
		ra.Delay, ra.Valid = time.Duration(n)*time.Second, true
		return ra
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return ra
	}
	base := now
	if d, err := http.ParseTime(strings.TrimSpace(date)); err == nil {
		base = d
	}
	ra.Valid = true
	if t.After(base) {
		ra.Delay = t.Sub(base)
	}
	return ra
}

// ParseWWWAuthenticate reads the first challenge of a WWW-Authenticate value
// and its auth-params (RFC 9110 §11.6.1): scheme, resource_metadata (RFC 9728),
// scope, error and error_description (RFC 6750).
func ParseWWWAuthenticate(value string) *WWWAuthenticate {
	w := &WWWAuthenticate{Raw: value}
	s := strings.TrimSpace(value)
	i := strings.IndexAny(s, " \t")
	if i < 0 {
		w.Scheme = s
		return w
	}
	w.Scheme, s = s[:i], s[i+1:]
	for {
		s = strings.TrimLeft(s, " \t,")
		if s == "" {
			return w
		}
		eq := strings.IndexByte(s, '=')
		if eq < 0 {
			return w
		}
		name := strings.ToLower(strings.TrimSpace(s[:eq]))
		if strings.ContainsAny(name, " \t,") {
			// A second challenge starts here ("Bearer x=1, Basic realm=...").
			return w
		}
		s = strings.TrimLeft(s[eq+1:], " \t")
		var val string
		if strings.HasPrefix(s, "\"") {
			var b strings.Builder
			j := 1
			for ; j < len(s); j++ {
				if s[j] == '\\' && j+1 < len(s) {
					j++
					b.WriteByte(s[j])
					continue
				}
				if s[j] == '"' {
					break
				}
				b.WriteByte(s[j])
			}
			val = b.String()
			if j < len(s) {
				j++
			}
			s = s[j:]
		} else {
			j := strings.IndexByte(s, ',')
			if j < 0 {
				j = len(s)
			}
			val, s = strings.TrimSpace(s[:j]), s[j:]
		}
		switch name {
		case "resource_metadata":
			w.ResourceMetadata = val
		case "scope":
			w.Scope = val
		case "error":
			w.Error = val
		case "error_description":
			w.ErrorDescription = val
		}
	}
}
