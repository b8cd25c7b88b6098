package client

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
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

// headerRule names the spec text behind the x-mcp-header checks.
const headerRule = "MCP 2026-07-28 Streamable HTTP §Custom headers from tool parameters: an x-mcp-header value is a non-empty RFC 9110 token, unique case-insensitively in the inputSchema, " +
	"on a string, integer or boolean property reached from the root through properties alone; clients MUST exclude a tool that breaks a rule from tools/list and SHOULD warn"

// headerAnnotation is one x-mcp-header found in an inputSchema.
type headerAnnotation struct {
	path    []string // property names from the root; nil when off the properties chain
	where   string   // JSON pointer of the schema that carries it
	value   []byte   // the raw JSON value of x-mcp-header
	typ     []byte   // the raw JSON value of the schema's "type" (nil when absent)
	onChain bool
}

// Keywords of JSON Schema 2020-12 (and draft-07) whose values are schemas,
// arrays of schemas or maps of schemas. Every other keyword holds data
// (const, enum, default, examples…) and is not searched.
var (
	schemaKeywords = map[string]bool{
		"additionalProperties": true, "items": true, "additionalItems": true, "contains": true,
		"not": true, "if": true, "then": true, "else": true, "propertyNames": true,
		"unevaluatedItems": true, "unevaluatedProperties": true, "contentSchema": true,
	}
	schemaArrayKeywords = map[string]bool{"allOf": true, "anyOf": true, "oneOf": true, "prefixItems": true, "items": true}
	schemaMapKeywords   = map[string]bool{"patternProperties": true, "$defs": true, "definitions": true, "dependentSchemas": true, "dependencies": true}
)

// findHeaderAnnotations walks every schema position of an inputSchema and
// returns each x-mcp-header with the path that reaches it. Only a chain of
// "properties" keys from the root keeps an annotation on the chain; items,
// composition and conditional keywords, $defs and the like take it off.
func findHeaderAnnotations(schema []byte) []headerAnnotation {
	var out []headerAnnotation
	// Recursion is bounded by the document's nesting, which the JSON
	// decoder that accepted it limits.
	var walk func(s []byte, ptr string, path []string, onChain bool)
	walk = func(s []byte, ptr string, path []string, onChain bool) {
		if wire.Kind(s) != '{' {
			return
		}
		if v, ok := wire.Field(s, "x-mcp-header"); ok {
			typ, _ := wire.Field(s, "type")
			a := headerAnnotation{where: ptr, value: v, typ: typ, onChain: onChain && len(path) > 0}
			if a.onChain {
				a.path = append([]string(nil), path...)
			}
			out = append(out, a)
		}
		_ = wire.EachField(s, func(k, v []byte) bool {
			key, _ := wire.StringValue(k)
			sub := ptr + "/" + pointerEscape(key)
			switch {
			case key == "properties":
				_ = wire.EachField(v, func(pk, pv []byte) bool {
					name, _ := wire.StringValue(pk)
					walk(pv, sub+"/"+pointerEscape(name), append(path[:len(path):len(path)], name), onChain)
					return true
				})
			case schemaMapKeywords[key] && wire.Kind(v) == '{':
				_ = wire.EachField(v, func(pk, pv []byte) bool {
					name, _ := wire.StringValue(pk)
					walk(pv, sub+"/"+pointerEscape(name), nil, false)
					return true
				})
			case schemaArrayKeywords[key] && wire.Kind(v) == '[':
				_ = wire.EachElement(v, func(i int, ev []byte) bool {
					walk(ev, sub+"/"+strconv.Itoa(i), nil, false)
					return true
				})
			case schemaKeywords[key]:
				walk(v, sub, nil, false)
			}
			return true
		})
	}
	walk(schema, "", nil, true)
	return out
}

func pointerEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// headerAnnotationProblems checks every x-mcp-header of an inputSchema
// against the 2026-07-28 rules and returns one sentence per violation, in
// schema order; nil means the tool may be kept.
func headerAnnotationProblems(schema []byte) []string {
	var problems []string
	seen := map[string]string{} // lower-case header name → property path
	for _, a := range findHeaderAnnotations(schema) {
		where := "property " + strconv.Quote(strings.Join(a.path, "."))
		if !a.onChain {
			where = "the schema at " + strconv.Quote("#"+a.where)
			if a.where == "" {
				where = "the root schema"
			}
		}
		name, isString := wire.StringValue(a.value)
		switch {
		case !a.onChain:
			problems = append(problems, fmt.Sprintf("x-mcp-header %s on %s: an annotation must sit on a property reached from the root through properties alone (not the root, items, a composition or conditional keyword, $defs or $ref)", compact(a.value), where))
			continue
		case !isString:
			problems = append(problems, fmt.Sprintf("x-mcp-header of %s is %s, not a string", where, compact(a.value)))
			continue
		case name == "":
			problems = append(problems, fmt.Sprintf("x-mcp-header of %s is empty", where))
			continue
		}
		if bad := tokenProblem(name); bad != "" {
			problems = append(problems, fmt.Sprintf("x-mcp-header %q of %s %s, so it is not an HTTP field-name token (RFC 9110 tchar)", name, where, bad))
			continue
		}
		typ, typeIsString := wire.StringValue(a.typ)
		switch {
		case a.typ == nil:
			problems = append(problems, fmt.Sprintf("x-mcp-header %q is on %s, which declares no type (string, integer or boolean required)", name, where))
		case !typeIsString:
			problems = append(problems, fmt.Sprintf("x-mcp-header %q is on %s, whose type %s is not one primitive type (string, integer or boolean required)", name, where, compact(a.typ)))
		case typ == "number":
			problems = append(problems, fmt.Sprintf("x-mcp-header %q is on %s of type number, which is not allowed (string, integer or boolean only)", name, where))
		case typ != "string" && typ != "integer" && typ != "boolean":
			problems = append(problems, fmt.Sprintf("x-mcp-header %q is on %s of type %s, which is not a primitive (string, integer or boolean only)", name, where, typ))
		}
		lower := strings.ToLower(name)
		if first, dup := seen[lower]; dup {
			problems = append(problems, fmt.Sprintf("x-mcp-header %q of %s repeats the header name of %s (header names are case-insensitive)", name, where, first))
			continue
		}
		seen[lower] = where
	}
	return problems
}

// tokenProblem describes the first character of s that is not an RFC 9110
// tchar, or returns "".
func tokenProblem(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 0x80:
			return "contains a non-ASCII character"
		case c < 0x20 || c == 0x7f:
			return fmt.Sprintf("contains the control character 0x%02X", c)
		case c == ' ':
			return "contains a space"
		case !isTchar(c):
			return fmt.Sprintf("contains %q", string(c))
		}
	}
	return ""
}

func isTchar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// compact renders a raw JSON value on one short line for a message.
func compact(v []byte) string {
	s := strings.Join(strings.Fields(string(v)), " ")
	if len(s) > 60 {
		s = s[:59] + "…"
	}
	return s
}
