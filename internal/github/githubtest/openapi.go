package githubtest

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// The fake checks each request and its own answer against GitHub's OpenAPI description,
// for the operations openapi.json holds (see openapi_gen.go): method and path, parameters
// and JSON body against the operation's schemas; a 2xx answer must be one it lists, its body
// valid. What does not conform is a violation (Violations), and a request whose body does
// not conform is answered 422 "Invalid request", as GitHub does. Other paths go unchecked.

//go:embed openapi.json
var openapiJSON []byte

var (
	specOnce sync.Once
	spec     *openAPI
)

type openAPI struct {
	root  map[string]any
	paths []specPath
}

type specPath struct {
	template string
	segs     []string
	item     map[string]any
}

func loadSpec() *openAPI {
	specOnce.Do(func() {
		var root map[string]any
		if err := json.Unmarshal(openapiJSON, &root); err != nil {
			panic("githubtest: openapi.json: " + err.Error())
		}
		spec = &openAPI{root: root}
		for p, item := range root["paths"].(map[string]any) {
			spec.paths = append(spec.paths, specPath{template: p, segs: strings.Split(strings.Trim(p, "/"), "/"), item: item.(map[string]any)})
		}
		// More literal segments first: /issues/comments/{id} before /issues/{n}/….
		slices.SortFunc(spec.paths, func(a, b specPath) int { return literals(b.segs) - literals(a.segs) })
	})
	return spec
}

func literals(segs []string) int {
	n := 0
	for _, s := range segs {
		if !strings.HasPrefix(s, "{") {
			n++
		}
	}
	return n
}

// Described reports whether the description has an operation at path (any method).
func Described(path string) bool {
	_, _, ok := loadSpec().match(path)
	return ok
}

// match finds the path template that rawPath (escaped) fits, with its parameters.
func (o *openAPI) match(rawPath string) (specPath, map[string]string, bool) {
	segs := strings.Split(strings.Trim(rawPath, "/"), "/")
	for _, p := range o.paths {
		if len(p.segs) != len(segs) {
			continue
		}
		vals := map[string]string{}
		ok := true
		for i, s := range p.segs {
			if name, isParam := strings.CutPrefix(s, "{"); isParam {
				v, err := url.PathUnescape(segs[i])
				if err != nil || v == "" {
					ok = false
					break
				}
				vals[strings.TrimSuffix(name, "}")] = v
			} else if s != segs[i] {
				ok = false
				break
			}
		}
		if ok {
			return p, vals, true
		}
	}
	return specPath{}, nil, false
}

// resolve follows a $ref inside the description.
func (o *openAPI) resolve(v any) map[string]any {
	m, _ := v.(map[string]any)
	for m != nil {
		ref, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		var cur any = o.root
		for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			cur = cur.(map[string]any)[part]
		}
		m, _ = cur.(map[string]any)
	}
	return m
}

// checkRequest returns what in a request does not conform to the description, and
// whether its body is what does not (GitHub answers that 422); nil when the path is
// not described.
func checkRequest(method, rawPath, rawQuery string, body []byte) (violations []string, badBody bool) {
	o := loadSpec()
	p, pathVals, ok := o.match(rawPath)
	if !ok {
		return nil, false
	}
	where := method + " " + p.template
	opv, ok := p.item[strings.ToLower(method)]
	if !ok {
		return []string{where + ": no such operation in GitHub's description"}, false
	}
	op := opv.(map[string]any)
	var params []map[string]any
	for _, list := range []any{p.item["parameters"], op["parameters"]} {
		l, _ := list.([]any)
		for _, prm := range l {
			params = append(params, o.resolve(prm))
		}
	}
	query, err := url.ParseQuery(rawQuery)
	if err != nil {
		violations = append(violations, fmt.Sprintf("%s: query %q: %v", where, rawQuery, err))
	}
	declared := map[string]bool{}
	for _, prm := range params {
		name, _ := prm["name"].(string)
		in, _ := prm["in"].(string)
		required, _ := prm["required"].(bool)
		schema := o.resolve(prm["schema"])
		var vals []string
		switch in {
		case "path":
			if v, ok := pathVals[name]; ok {
				vals = []string{v}
			}
		case "query":
			declared[name] = true
			vals = query[name]
		default:
			continue
		}
		if len(vals) == 0 && required {
			violations = append(violations, fmt.Sprintf("%s: %s parameter %s is required", where, in, name))
		}
		for _, v := range vals {
			for _, e := range o.validate(paramValue(v, schema), schema, name) {
				violations = append(violations, fmt.Sprintf("%s: %s parameter %s=%q: %s", where, in, name, v, e))
			}
		}
	}
	for name := range query {
		if !declared[name] {
			violations = append(violations, fmt.Sprintf("%s: query parameter %s is not in GitHub's description", where, name))
		}
	}
	rb := o.resolve(op["requestBody"])
	switch {
	case rb == nil && len(strings.TrimSpace(string(body))) > 0:
		violations = append(violations, where+": a body, where GitHub's description has none")
		badBody = true
	case rb != nil && len(strings.TrimSpace(string(body))) == 0:
		if req, _ := rb["required"].(bool); req {
			violations = append(violations, where+": the request body is required")
			badBody = true
		}
	case rb != nil:
		schema := o.resolve(o.resolve(o.resolve(rb["content"])["application/json"])["schema"])
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			violations = append(violations, fmt.Sprintf("%s: body is not JSON: %v", where, err))
			badBody = true
			break
		}
		for _, e := range o.validate(v, schema, "body") {
			violations = append(violations, where+": "+e)
			badBody = true
		}
	}
	return violations, badBody
}

// checkResponse returns what in the fake's 2xx answer does not conform.
func checkResponse(method, rawPath string, status int, body []byte) []string {
	if status < 200 || status > 299 {
		return nil
	}
	o := loadSpec()
	p, _, ok := o.match(rawPath)
	if !ok {
		return nil
	}
	opv, ok := p.item[strings.ToLower(method)]
	if !ok {
		return nil
	}
	where := fmt.Sprintf("%s %s answered %d", method, p.template, status)
	resps, _ := opv.(map[string]any)["responses"].(map[string]any)
	r := o.resolve(resps[strconv.Itoa(status)])
	if r == nil {
		return []string{where + ": GitHub's description lists no such answer"}
	}
	content := o.resolve(r["content"])
	if content == nil {
		if len(strings.TrimSpace(string(body))) > 0 {
			return []string{where + ": a body, where GitHub's description has none"}
		}
		return nil
	}
	schema := o.resolve(o.resolve(content["application/json"])["schema"])
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return []string{fmt.Sprintf("%s: body is not JSON: %v", where, err)}
	}
	var out []string
	for _, e := range o.validate(v, schema, "body") {
		out = append(out, where+": "+e)
	}
	return out
}

// paramValue reads a parameter's text as its schema's type, for validate.
func paramValue(s string, schema map[string]any) any {
	switch schema["type"] {
	case "integer", "number":
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f
		}
	case "boolean":
		if b, err := strconv.ParseBool(s); err == nil {
			return b
		}
	}
	return s
}

// validate checks v (as encoding/json decodes into any) against an OpenAPI 3.0 schema:
// $ref, type, nullable, enum, properties, required, additionalProperties, items,
// oneOf, anyOf, allOf, the bounds of numbers, strings and arrays, and pattern. Formats
// are not checked.
func (o *openAPI) validate(v any, schema map[string]any, at string) []string {
	schema = o.resolve(schema)
	if schema == nil {
		return nil
	}
	if v == nil {
		if n, _ := schema["nullable"].(bool); n {
			return nil
		}
		if _, typed := schema["type"]; typed {
			return []string{at + ": null, where GitHub's description does not allow it"}
		}
	}
	var errs []string
	bad := func(format string, args ...any) { errs = append(errs, at+": "+fmt.Sprintf(format, args...)) }
	if t, ok := schema["type"].(string); ok && v != nil && !isType(v, t) {
		bad("%s, where GitHub's description has %s", jsonType(v), t)
		return errs
	}
	if enum, ok := schema["enum"].([]any); ok && v != nil && !slices.ContainsFunc(enum, func(e any) bool { return e == v }) {
		bad("%v is not one of %v", v, enum)
	}
	for _, sub := range list(schema["allOf"]) {
		errs = append(errs, o.validate(v, o.resolve(sub), at)...)
	}
	if any := list(schema["anyOf"]); len(any) > 0 {
		ok := false
		for _, sub := range any {
			ok = ok || len(o.validate(v, o.resolve(sub), at)) == 0
		}
		if !ok {
			bad("matches none of anyOf")
		}
	}
	if one := list(schema["oneOf"]); len(one) > 0 && v != nil {
		n := 0
		var first []string
		for _, sub := range one {
			e := o.validate(v, o.resolve(sub), at)
			if len(e) == 0 {
				n++
			} else if first == nil {
				first = e
			}
		}
		if n != 1 {
			bad("matches %d of oneOf's %d schemas, not exactly one (%s)", n, len(one), strings.Join(first, "; "))
		}
	}
	switch v := v.(type) {
	case map[string]any:
		props, _ := schema["properties"].(map[string]any)
		for _, r := range list(schema["required"]) {
			if _, ok := v[r.(string)]; !ok {
				bad("property %s is required", r)
			}
		}
		for k, e := range v {
			if ps, ok := props[k]; ok {
				errs = append(errs, o.validate(e, o.resolve(ps), at+"."+k)...)
				continue
			}
			switch ap := schema["additionalProperties"].(type) {
			case bool:
				if !ap {
					bad("property %s is not in GitHub's description", k)
				}
			case map[string]any:
				errs = append(errs, o.validate(e, o.resolve(ap), at+"."+k)...)
			}
		}
	case []any:
		if n, ok := schema["minItems"].(float64); ok && float64(len(v)) < n {
			bad("%d items, fewer than %v", len(v), n)
		}
		if n, ok := schema["maxItems"].(float64); ok && float64(len(v)) > n {
			bad("%d items, more than %v", len(v), n)
		}
		if items := o.resolve(schema["items"]); items != nil {
			for i, e := range v {
				errs = append(errs, o.validate(e, items, fmt.Sprintf("%s[%d]", at, i))...)
			}
		}
	case string:
		if n, ok := schema["minLength"].(float64); ok && float64(len([]rune(v))) < n {
			bad("shorter than %v", n)
		}
		if n, ok := schema["maxLength"].(float64); ok && float64(len([]rune(v))) > n {
			bad("longer than %v", n)
		}
		if p, ok := schema["pattern"].(string); ok {
			if re, err := regexp.Compile(p); err == nil && !re.MatchString(v) {
				bad("%q does not match %s", v, p)
			}
		}
	case float64:
		if n, ok := schema["minimum"].(float64); ok && v < n {
			bad("%v is less than %v", v, n)
		}
		if n, ok := schema["maximum"].(float64); ok && v > n {
			bad("%v is more than %v", v, n)
		}
	}
	return errs
}

func list(v any) []any { l, _ := v.([]any); return l }

func isType(v any, t string) bool {
	switch v := v.(type) {
	case string:
		return t == "string"
	case bool:
		return t == "boolean"
	case float64:
		return t == "number" || t == "integer" && v == math.Trunc(v)
	case []any:
		return t == "array"
	case map[string]any:
		return t == "object"
	}
	return false
}

func jsonType(v any) string {
	switch v := v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64:
		if v == math.Trunc(v) {
			return "an integer"
		}
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "null"
}

// Shaped returns fields completed into an instance of the description's schema name: every
// required property missing gets a placeholder of its type (null where allowed, "" or a URL,
// 0, false, an empty list, an object filled the same way), and object fields are completed
// too. The fake models only what git-ralph reads; the rest is what GitHub always sends.
func Shaped(name string, fields map[string]any) map[string]any {
	o := loadSpec()
	schema := o.resolve(map[string]any{"$ref": "#/components/schemas/" + name})
	if schema == nil {
		panic("githubtest: no schema " + name)
	}
	out, _ := o.complete(fields, schema).(map[string]any)
	return out
}

// complete fills v (nil: nothing given) for schema, as Shaped says.
func (o *openAPI) complete(v any, schema map[string]any) any {
	schema = o.resolve(schema)
	if schema == nil {
		return v
	}
	for _, sub := range list(schema["allOf"]) {
		v = o.complete(v, o.resolve(sub))
	}
	if v == nil {
		if n, _ := schema["nullable"].(bool); n {
			return nil
		}
		if alts := append(list(schema["anyOf"]), list(schema["oneOf"])...); len(alts) > 0 {
			return o.complete(nil, o.resolve(alts[0]))
		}
		switch schema["type"] {
		case "string":
			if enum := list(schema["enum"]); len(enum) > 0 {
				return enum[0]
			}
			switch schema["format"] {
			case "uri":
				return "https://api.github.localhost/placeholder"
			case "date-time":
				return fakeTime
			}
			return ""
		case "integer", "number":
			return 0
		case "boolean":
			return false
		case "array":
			return []any{}
		case "object":
			v = map[string]any{}
		default:
			return nil
		}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	props, _ := schema["properties"].(map[string]any)
	for k, e := range m {
		if ps, ok := props[k]; ok {
			if _, isObj := e.(map[string]any); isObj {
				m[k] = o.complete(e, o.resolve(ps))
			}
		}
	}
	for _, r := range list(schema["required"]) {
		k := r.(string)
		if _, ok := m[k]; !ok {
			m[k] = o.complete(nil, o.resolve(props[k]))
		}
	}
	return m
}
