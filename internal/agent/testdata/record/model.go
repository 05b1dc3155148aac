// Command model is a scripted stand-in for an OpenAI-compatible chat
// completions endpoint, on loopback only, for recording the genuine agent
// CLIs' transcripts (see README.md). It is not part of git-ralph's build
// (testdata is ignored by the go tool); run it with `go run model.go`.
//
// The reply to a request is chosen by the conversation, not by a counter:
// step k of the script answers a request whose messages already hold k
// assistant messages, so a CLI's background calls (titles, memory) do not
// shift the script. A request that offers no tools (a CLI's helper call) gets
// the short reply "ok".
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
}

func handle(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	mu.Lock()
	counter++
	n := counter
	if reqLog != nil {
		rec, _ := json.Marshal(map[string]any{"n": n, "method": r.Method, "path": r.URL.Path, "body": json.RawMessage(orNull(body))})
		reqLog.Write(append(rec, '\n'))
	}
	mu.Unlock()
	if r.Method == http.MethodGet {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"object":"list","data":[{"id":%q,"object":"model","created":1700000000,"owned_by":"scripted"}]}`, model)
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
	st := step{Text: "ok"}
	helper := false
	for _, h := range sc.Helper {
		helper = helper || strings.Contains(string(body), h)
	}
	if len(req.Tools) > 0 && !helper {
		steps := sc.Steps
		for _, c := range sc.Cases {
			if strings.Contains(string(body), c.If) {
				steps = c.Steps
				break
			}
		}
		k := 0
		for _, m := range req.Messages {
			if m.Role == "assistant" {
				k++
			}
		}
		if k < len(steps) {
			st = steps[k]
		} else if len(steps) > 0 {
			st = steps[len(steps)-1]
		}
	}
	reply(w, req, st, n)
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
	usage := map[string]any{"prompt_tokens": 1000 + 10*n, "completion_tokens": 20 + n, "total_tokens": 1020 + 11*n}
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
