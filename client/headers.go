package client

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/mcpdiag/mcpdiag/wire"
)

// encodeHeaderValue applies the 2026-07-28 header value rule: a value that is
// not safe plain ASCII (non-ASCII, control characters, leading or trailing
// whitespace, or text that already looks like the sentinel) is sent as
// =?base64?<base64(UTF-8)>?=.
func encodeHeaderValue(s string) string {
	safe := s == strings.TrimSpace(s) && !(strings.HasPrefix(s, "=?base64?") && strings.HasSuffix(s, "?="))
	for i := 0; safe && i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			safe = false
		}
	}
	if safe {
		return s
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}

// paramHeaders returns the Mcp-Param-{Name} headers for the arguments whose
// inputSchema property is annotated "x-mcp-header": "{Name}". Only chains of
// "properties" are followed, as the spec allows; null or absent arguments
// send no header.
func paramHeaders(schema, args json.RawMessage) map[string]string {
	out := map[string]string{}
	if len(schema) == 0 || len(args) == 0 {
		return out
	}
	var walk func(schema, args []byte)
	walk = func(schema, args []byte) {
		props, ok := wire.Field(schema, "properties")
		if !ok || wire.Kind(props) != '{' || wire.Kind(args) != '{' {
			return
		}
		_ = wire.EachField(props, func(k, prop []byte) bool {
			key, _ := wire.StringValue(k)
			val, present := wire.Field(args, key)
			if !present || wire.Kind(val) == 'n' {
				return true
			}
			if h, ok := wire.Field(prop, "x-mcp-header"); ok {
				if name, ok := wire.StringValue(h); ok && name != "" {
					if v, ok := headerValue(val); ok {
						out["Mcp-Param-"+name] = v
					}
				}
			}
			walk(prop, val)
			return true
		})
	}
	walk(schema, args)
	return out
}

// headerValue renders a string, integer or boolean argument for a header.
func headerValue(v []byte) (string, bool) {
	switch wire.Kind(v) {
	case '"':
		s, ok := wire.StringValue(v)
		return encodeHeaderValue(s), ok
	case 't':
		return "true", true
	case 'f':
		return "false", true
	case '0':
		n := strings.TrimSpace(string(v))
		if wire.IsIntegerNumber([]byte(n)) {
			if f, err := strconv.ParseFloat(n, 64); err == nil {
				return strconv.FormatInt(int64(f), 10), true
			}
		}
	}
	return "", false
}
