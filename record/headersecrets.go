package record

import (
	"net/http"
	"strings"
)

// AddHeaderSecrets registers as secrets the credentials a caller puts in
// its own request headers (a --header flag): for every credential header
// of h (IsCredentialHeader), the value whole, the credential after an auth
// scheme ("Bearer sk-…"), and each cookie's value. They are then masked
// wherever they appear (a server quoting the key in an error message, a
// report), not only in their header. A part shorter than MinSecretLen is
// left to the header's own masking.
func (r *Redactor) AddHeaderSecrets(h http.Header) {
	for name, vs := range h {
		rule := classifyHeader(name)
		if rule != headerMask && rule != headerMeasure && rule != headerAuth && rule != headerCookie {
			continue
		}
		for _, v := range vs {
			v = strings.TrimSpace(v)
			if rule == headerMeasure && isNumber(v) {
				continue // a time or a count (X-Client-Secret-Expires-At: 0)
			}
			parts := []string{v}
			switch rule {
			case headerAuth:
				if _, cred, ok := strings.Cut(v, " "); ok {
					parts = append(parts, strings.TrimSpace(cred))
				}
			case headerCookie:
				for _, c := range strings.Split(v, ";") {
					if _, val, ok := strings.Cut(c, "="); ok {
						parts = append(parts, strings.TrimSpace(val))
					}
				}
			}
			for _, p := range parts {
				_ = r.AddSecret(p) // ErrShortSecret: the header masks it
			}
		}
	}
}
