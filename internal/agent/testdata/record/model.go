// Command model is a scripted stand-in for a model provider's HTTP API, on
// loopback only, for recording the genuine agent CLIs' transcripts and loops
// (see README.md). It speaks, chosen by the request's path:
//
//   - OpenAI chat completions (…/chat/completions, and any other POST):
//     Copilot CLI, Qwen Code, OpenCode's openai-compatible provider;
//   - Anthropic Messages (…/messages, …/messages/count_tokens), streaming
//     (SSE) or not: Claude Code through ANTHROPIC_BASE_URL;
//   - OpenAI Responses (…/responses), streaming: Codex through a provider in
//     its config.toml;
//   - Gemini (…:generateContent, …:streamGenerateContent, …:countTokens): the
//     Gemini CLI through GOOGLE_GEMINI_BASE_URL.
//
// It is not part of git-ralph's build (testdata is ignored by the go tool);
// run it with `go run model.go`.
//
// The reply to a request is chosen by the conversation, not by a counter:
// step k of the script answers a request whose conversation already holds k
// turns of the model (assistant messages), so a CLI's background calls
// (titles, memory) do not shift the script. A request that offers no tools (a
// CLI's helper call) gets the short reply "ok".
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// step is one scripted reply: text, one tool call, or text and a tool call.
type step struct {
	Text string          `json:"text,omitempty"`
	Tool string          `json:"tool,omitempty"`
	Args json.RawMessage `json:"args,omitempty"`
}

type script struct {
	Steps []step `json:"steps"`
	// Cases replace Steps for a conversation whose request body contains If
	// (the first case that matches): a story's title, "Why the previous
	// attempt failed" in a retry's prompt.
	Cases []struct {
		If    string `json:"if"`
		Steps []step `json:"steps"`
	} `json:"cases,omitempty"`
	// Fail answers every request with this HTTP status and body (a provider
	// that is down, a rate limit, a rejected key).
	Fail     int    `json:"fail,omitempty"`
	FailBody string `json:"fail_body,omitempty"`
	// RetryAfter is sent as Retry-After with Fail.
	RetryAfter int `json:"retry_after,omitempty"`
	// Cached is reported as prompt_tokens_details.cached_tokens (a part of
	// prompt_tokens, as OpenAI counts them).
	Cached int `json:"cached,omitempty"`
	// Helper lists strings that mark a CLI's background call (Qwen Code's
	// memory helper: "Managed memory"); such a request gets "ok".
	Helper []string `json:"helper,omitempty"`
}

var (
	mu      sync.Mutex
	sc      script
	reqLog  *os.File
	model   = "scripted-model"
	counter int
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address (loopback only)")
	scriptPath := flag.String("script", "", "script JSON")
	logPath := flag.String("log", "", "append every request body here (JSONL)")
	portFile := flag.String("port-file", "", "write the chosen port here")
	flag.Parse()
	data, err := os.ReadFile(*scriptPath)
	if err != nil {
		log.Fatal(err)
	}
	if err := json.Unmarshal(data, &sc); err != nil {
		log.Fatal(err)
	}
	if *logPath != "" {
		reqLog, err = os.OpenFile(*logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			log.Fatal(err)
		}
	}
	host, _, _ := net.SplitHostPort(*addr)
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		log.Fatal("loopback only")
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if *portFile != "" {
		_ = os.WriteFile(*portFile, []byte(strconv.Itoa(port)), 0o644)
	}
	fmt.Println(port)
	log.Fatal(http.Serve(ln, http.HandlerFunc(handle)))
}

type request struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role string `json:"role"`
	} `json:"messages"`
	Tools []json.RawMessage `json:"tools"`

	// Responses API (codex): the conversation is a list of items.
	Input json.RawMessage `json:"input"`
	// Gemini: contents with roles "user" and "model", tools as declarations.
	Contents []struct {
		Role string `json:"role"`
	} `json:"contents"`
}

func handle(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	mu.Lock()
	counter++
	n := counter
	if reqLog != nil {
		rec, _ := json.Marshal(map[string]any{"n": n, "method": r.Method, "path": r.URL.Path, "query": r.URL.RawQuery, "body": json.RawMessage(orNull(body))})
		reqLog.Write(append(rec, '\n'))
	}
	mu.Unlock()
	path := r.URL.Path
	if r.Method == http.MethodGet {
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(path, "/v1beta/") { // Gemini's model list
			fmt.Fprintf(w, `{"models":[{"name":"models/%s","inputTokenLimit":1048576,"outputTokenLimit":65536}]}`, model)
			return
		}
		fmt.Fprintf(w, `{"object":"list","data":[{"id":%q,"object":"model","created":1700000000,"owned_by":"scripted","type":"model","display_name":%q}]}`, model, model)
		return
	}
	if sc.Fail != 0 {
		if sc.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(sc.RetryAfter))
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(sc.Fail)
		io.WriteString(w, sc.FailBody)
		return
	}
	var req request
	_ = json.Unmarshal(body, &req)
	if req.Model != "" {
		model = req.Model
	}
	switch {
	case strings.HasSuffix(path, "/count_tokens"):
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"input_tokens":%d}`, len(body)/4)
	case strings.HasSuffix(path, ":countTokens"):
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"totalTokens":%d}`, len(body)/4)
	case strings.HasSuffix(path, "/messages"):
		turns := 0
		for _, m := range req.Messages {
			if m.Role == "assistant" {
				turns++
			}
		}
		replyAnthropic(w, req, choose(body, len(req.Tools) > 0, turns), n)
	case strings.HasSuffix(path, "/responses"):
		replyResponses(w, req, choose(body, len(req.Tools) > 0, responsesTurns(req.Input)), n)
	case strings.Contains(path, ":generateContent") || strings.Contains(path, ":streamGenerateContent"):
		if i := strings.LastIndex(path, "/models/"); i >= 0 {
			model, _, _ = strings.Cut(path[i+len("/models/"):], ":")
		}
		turns := 0
		for _, c := range req.Contents {
			if c.Role == "model" {
				turns++
			}
		}
		replyGemini(w, strings.Contains(path, ":streamGenerateContent"), choose(body, geminiHasTools(body), turns), n)
	default:
		turns := 0
		for _, m := range req.Messages {
			if m.Role == "assistant" {
				turns++
			}
		}
		reply(w, req, choose(body, len(req.Tools) > 0, turns), n)
	}
}

// choose is the step that answers a request (body) whose conversation holds
// turns turns of the model: "ok" for a helper call (no tools, or a Helper
// marker), else step turns of the first case whose If the body contains (or of
// Steps), the last step once they are used up.
func choose(body []byte, tools bool, turns int) step {
	helper := false
	for _, h := range sc.Helper {
		helper = helper || strings.Contains(string(body), h)
	}
	if !tools || helper {
		return step{Text: "ok"}
	}
	steps := sc.Steps
	for _, c := range sc.Cases {
		if strings.Contains(string(body), c.If) {
			steps = c.Steps
			break
		}
	}
	switch {
	case turns < len(steps):
		return steps[turns]
	case len(steps) > 0:
		return steps[len(steps)-1]
	}
	return step{Text: "ok"}
}

// responsesTurns counts the model's turns in a Responses API input: runs of
// model items (assistant messages, reasoning, tool calls) between the others
// (user and developer messages, tool outputs).
func responsesTurns(input json.RawMessage) int {
	var items []struct {
		Type string `json:"type"`
		Role string `json:"role"`
	}
	if json.Unmarshal(input, &items) != nil {
		return 0
	}
	turns, inTurn := 0, false
	for _, it := range items {
		mine := it.Role == "assistant"
		switch it.Type {
		case "function_call", "custom_tool_call", "local_shell_call", "reasoning":
			mine = true
		}
		if mine && !inTurn {
			turns++
		}
		inTurn = mine
	}
	return turns
}

// geminiHasTools: the request declares functions.
func geminiHasTools(body []byte) bool {
	var r struct {
		Tools []struct {
			FunctionDeclarations []json.RawMessage `json:"functionDeclarations"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(body, &r)
	for _, t := range r.Tools {
		if len(t.FunctionDeclarations) > 0 {
			return true
		}
	}
	return false
}

// tokens are the scripted usage of request n: prompt tokens (Cached of them
// read from a cache) and completion tokens.
func tokens(n int) (prompt, completion int) { return 1000 + 10*n, 20 + n }

// sse writes one server-sent event (event may be "") and flushes.
func sse(w http.ResponseWriter, event string, v any) {
	b, _ := json.Marshal(v)
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
}

// args is a tool step's arguments as a JSON object ({} when none).
func (st step) args() json.RawMessage {
	if len(st.Args) == 0 {
		return json.RawMessage("{}")
	}
	return st.Args
}

// replyAnthropic answers a Messages API request. Cache reads are reported
// apart from input_tokens, as Anthropic counts them.
func replyAnthropic(w http.ResponseWriter, req request, st step, n int) {
	id := fmt.Sprintf("msg_scripted_%d", n)
	prompt, completion := tokens(n)
	usage := map[string]any{"input_tokens": prompt - sc.Cached, "output_tokens": completion,
		"cache_creation_input_tokens": 0, "cache_read_input_tokens": sc.Cached}
	var content []any
	if st.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": st.Text})
	}
	stop := "end_turn"
	if st.Tool != "" {
		stop = "tool_use"
		content = append(content, map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_scripted_%d", n), "name": st.Tool, "input": st.args()})
	}
	msg := map[string]any{"id": id, "type": "message", "role": "assistant", "model": model, "content": content,
		"stop_reason": stop, "stop_sequence": nil, "usage": usage}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(msg)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	start := map[string]any{}
	for k, v := range msg {
		start[k] = v
	}
	start["content"], start["stop_reason"] = []any{}, nil
	start["usage"] = map[string]any{"input_tokens": prompt - sc.Cached, "output_tokens": 1,
		"cache_creation_input_tokens": 0, "cache_read_input_tokens": sc.Cached}
	sse(w, "message_start", map[string]any{"type": "message_start", "message": start})
	for i, c := range content {
		b := c.(map[string]any)
		if b["type"] == "text" {
			sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": b["text"]}})
		} else {
			sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}})
			sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(st.args())}})
		}
		sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	sse(w, "message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": completion}})
	sse(w, "message_stop", map[string]any{"type": "message_stop"})
}

// replyResponses answers a Responses API request, streaming (Codex always
// streams). A tool step whose args are a JSON string is a custom (freeform)
// tool call, such as Codex's apply_patch; else a function call.
func replyResponses(w http.ResponseWriter, req request, st step, n int) {
	id := fmt.Sprintf("resp_scripted_%d", n)
	prompt, completion := tokens(n)
	var output []any
	if st.Text != "" {
		output = append(output, map[string]any{"type": "message", "id": fmt.Sprintf("msg_scripted_%d", n), "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": st.Text, "annotations": []any{}}}})
	}
	if st.Tool != "" {
		callID := fmt.Sprintf("call_scripted_%d", n)
		var input string
		if json.Unmarshal(st.Args, &input) == nil {
			output = append(output, map[string]any{"type": "custom_tool_call", "id": "ctc_" + callID, "status": "completed", "call_id": callID, "name": st.Tool, "input": input})
		} else {
			output = append(output, map[string]any{"type": "function_call", "id": "fc_" + callID, "status": "completed", "call_id": callID, "name": st.Tool, "arguments": string(st.args())})
		}
	}
	usage := map[string]any{"input_tokens": prompt, "input_tokens_details": map[string]any{"cached_tokens": sc.Cached},
		"output_tokens": completion, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": prompt + completion}
	resp := map[string]any{"id": id, "object": "response", "created_at": time.Now().Unix(), "status": "in_progress", "model": model, "output": []any{}}
	if !req.Stream {
		resp["status"], resp["output"], resp["usage"] = "completed", output, usage
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	seq := 0
	ev := func(typ string, fields map[string]any) {
		fields["type"], fields["sequence_number"] = typ, seq
		seq++
		sse(w, typ, fields)
	}
	ev("response.created", map[string]any{"response": resp})
	ev("response.in_progress", map[string]any{"response": resp})
	for i, it := range output {
		item := it.(map[string]any)
		ev("response.output_item.added", map[string]any{"output_index": i, "item": item})
		if item["type"] == "message" {
			ev("response.output_text.delta", map[string]any{"item_id": item["id"], "output_index": i, "content_index": 0, "delta": st.Text})
			ev("response.output_text.done", map[string]any{"item_id": item["id"], "output_index": i, "content_index": 0, "text": st.Text})
		}
		ev("response.output_item.done", map[string]any{"output_index": i, "item": item})
	}
	resp["status"], resp["output"], resp["usage"] = "completed", output, usage
	ev("response.completed", map[string]any{"response": resp})
}

// replyGemini answers a generateContent or streamGenerateContent (SSE)
// request. cachedContentTokenCount is a part of promptTokenCount, as Gemini
// counts it.
func replyGemini(w http.ResponseWriter, stream bool, st step, n int) {
	prompt, completion := tokens(n)
	var parts []any
	if st.Text != "" {
		parts = append(parts, map[string]any{"text": st.Text})
	}
	if st.Tool != "" {
		parts = append(parts, map[string]any{"functionCall": map[string]any{"name": st.Tool, "args": st.args()}})
	}
	usage := map[string]any{"promptTokenCount": prompt, "candidatesTokenCount": completion, "totalTokenCount": prompt + completion}
	if sc.Cached > 0 {
		usage["cachedContentTokenCount"] = sc.Cached
	}
	resp := map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": usage, "modelVersion": model, "responseId": fmt.Sprintf("scripted-%d", n),
	}
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	sse(w, "", resp)
}

func orNull(b []byte) []byte {
	if json.Valid(b) {
		return b
	}
	q, _ := json.Marshal(string(b))
	return q
}

func reply(w http.ResponseWriter, req request, st step, n int) {
	id := fmt.Sprintf("chatcmpl-scripted-%d", n)
	created := time.Now().Unix()
	prompt, completion := tokens(n)
	usage := map[string]any{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
	if sc.Cached > 0 {
		usage["prompt_tokens_details"] = map[string]any{"cached_tokens": sc.Cached}
	}
	var msg map[string]any
	finish := "stop"
	if st.Tool != "" {
		finish = "tool_calls"
		args := string(st.Args)
		if args == "" {
			args = "{}"
		}
		var content any
		if st.Text != "" {
			content = st.Text
		}
		msg = map[string]any{"role": "assistant", "content": content, "tool_calls": []any{map[string]any{
			"index": 0, "id": fmt.Sprintf("call_%d", n), "type": "function",
			"function": map[string]any{"name": st.Tool, "arguments": args}}}}
	} else {
		msg = map[string]any{"role": "assistant", "content": st.Text}
	}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": id, "object": "chat.completion", "created": created, "model": model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fl, _ := w.(http.Flusher)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if fl != nil {
			fl.Flush()
		}
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	send(chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	if st.Tool != "" {
		if st.Text != "" {
			send(chunk(map[string]any{"content": st.Text}, nil))
		}
		send(chunk(map[string]any{"tool_calls": msg["tool_calls"]}, nil))
	} else {
		send(chunk(map[string]any{"content": st.Text}, nil))
	}
	send(chunk(map[string]any{}, finish))
	last := map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
		"choices": []any{}, "usage": usage}
	send(last)
	fmt.Fprint(w, "data: [DONE]\n\n")
	if fl != nil {
		fl.Flush()
	}
}
