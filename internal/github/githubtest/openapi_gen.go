//go:build ignore

// openapi_gen writes openapi.json, the part of GitHub's OpenAPI description of
// api.github.com that the fake checks requests and answers against: the operations
// listed below and every component they reference, verbatim except that descriptions,
// summaries, examples and x-* extensions are left out.
//
// Its input is descriptions/api.github.com/api.github.com.json of
// github.com/github/rest-api-description (MIT), here as npm's @octokit/openapi
// publishes it (generated/api.github.com.json, the same description with Octokit's
// x-octokit extension added, which this leaves out):
//
//	npm pack @octokit/openapi@23.0.2 && tar xzf octokit-openapi-23.0.2.tgz
//	go run openapi_gen.go package/generated/api.github.com.json > openapi.json
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

// operations are the requests git-ralph sends, as "METHOD path" of the description.
var operations = []string{
	"GET /repos/{owner}/{repo}",
	"GET /repos/{owner}/{repo}/branches/{branch}",
	"GET /repos/{owner}/{repo}/pulls",
	"POST /repos/{owner}/{repo}/pulls",
	"GET /repos/{owner}/{repo}/pulls/{pull_number}",
	"PATCH /repos/{owner}/{repo}/pulls/{pull_number}",
	"GET /repos/{owner}/{repo}/issues",
	"GET /repos/{owner}/{repo}/issues/{issue_number}",
	"PATCH /repos/{owner}/{repo}/issues/{issue_number}",
	"GET /repos/{owner}/{repo}/issues/{issue_number}/sub_issues",
	"GET /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by",
	"POST /repos/{owner}/{repo}/issues/{issue_number}/labels",
	"DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}",
	"GET /repos/{owner}/{repo}/issues/{issue_number}/comments",
	"POST /repos/{owner}/{repo}/issues/{issue_number}/comments",
	"GET /repos/{owner}/{repo}/issues/comments/{comment_id}",
	"PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}",
}

func main() {
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		fail(err)
	}
	var full map[string]any
	if err := json.Unmarshal(data, &full); err != nil {
		fail(err)
	}
	paths := map[string]map[string]any{}
	var todo []string
	for _, o := range operations {
		method, p, _ := strings.Cut(o, " ")
		item, ok := full["paths"].(map[string]any)[p].(map[string]any)
		if !ok {
			fail(fmt.Errorf("no path %s", p))
		}
		op, ok := item[strings.ToLower(method)]
		if !ok {
			fail(fmt.Errorf("no operation %s", o))
		}
		if paths[p] == nil {
			paths[p] = map[string]any{}
			if prm, ok := item["parameters"]; ok {
				paths[p]["parameters"] = strip(prm, "")
			}
		}
		paths[p][strings.ToLower(method)] = strip(op, "")
	}
	refs(paths, &todo)
	comps := map[string]map[string]any{}
	src := full["components"].(map[string]any)
	for len(todo) > 0 {
		ref := todo[0]
		todo = todo[1:]
		parts := strings.Split(strings.TrimPrefix(ref, "#/components/"), "/")
		if comps[parts[0]] == nil {
			comps[parts[0]] = map[string]any{}
		}
		if _, done := comps[parts[0]][parts[1]]; done {
			continue
		}
		v := strip(src[parts[0]].(map[string]any)[parts[1]], "")
		comps[parts[0]][parts[1]] = v
		refs(v, &todo)
	}
	info := full["info"].(map[string]any)
	out := map[string]any{
		"openapi": full["openapi"],
		"info": map[string]any{
			"title":   "GitHub v3 REST API: the operations git-ralph uses",
			"version": info["version"],
			"x-source": "github.com/github/rest-api-description descriptions/api.github.com/api.github.com.json " +
				"(MIT), as npm @octokit/openapi " + fmt.Sprint(info["version"]) + " publishes it; " +
				"descriptions, summaries, examples and x-* extensions left out (openapi_gen.go)",
		},
		"paths":      paths,
		"components": comps,
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(out); err != nil {
		fail(err)
	}
}

// strip copies v without descriptions, summaries, examples and x-* extensions; parent
// is the key v sits under ("properties": its keys are names, all kept).
func strip(v any, parent string) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			if parent != "properties" {
				if strings.HasPrefix(k, "x-") || k == "examples" || k == "example" {
					continue
				}
				if _, isText := e.(string); isText && (k == "description" || k == "summary") {
					continue
				}
			}
			out[k] = strip(e, k)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = strip(e, "")
		}
		return out
	}
	return v
}

// refs appends the $refs under v to todo, sorted for a stable walk.
func refs(v any, todo *[]string) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if s, ok := v[k].(string); ok && k == "$ref" {
				*todo = append(*todo, s)
				continue
			}
			refs(v[k], todo)
		}
	case []any:
		for _, e := range v {
			refs(e, todo)
		}
	case map[string]map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			refs(map[string]any(v[k]), todo)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "openapi_gen:", err)
	os.Exit(1)
}
