package demo

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// AgentMain is the hidden `git ralph demo-agent` command: a scripted agent that edits
// the demo repository story by story and prints Claude Code's stream-json. Story 2
// fails on its first attempt and succeeds on the next, reading the reason from its
// prompt. args are the command's arguments; env reads the environment.
func AgentMain(args []string, stdin io.Reader, stdout, stderr io.Writer, env func(string) string) int {
	delay := time.Duration(0)
	for i := 0; i < len(args); i++ {
		if args[i] == "--delay" && i+1 < len(args) {
			d, err := time.ParseDuration(args[i+1])
			if err != nil {
				fmt.Fprintf(stderr, "demo-agent: bad --delay: %v\n", err)
				return 2
			}
			delay = d
			i++
		}
	}
	prompt, err := io.ReadAll(stdin)
	if err != nil {
		fmt.Fprintf(stderr, "demo-agent: read prompt: %v\n", err)
		return 1
	}
	dir, _ := os.Getwd()
	a := &demoAgent{w: bufio.NewWriter(stdout), delay: delay, dir: dir, session: "00000000-0000-4000-8000-00000000de70"}
	story, attempt := env("RALPH_STORY"), env("RALPH_ATTEMPT")
	if story == "" {
		fmt.Fprintln(stderr, "demo-agent: RALPH_STORY is not set; the demo agent runs only under git ralph")
		return 2
	}
	a.emit(map[string]any{"type": "system", "subtype": "init", "cwd": dir, "session_id": a.session,
		"tools": []string{"Bash", "Edit", "Read", "Write"}, "model": "demo", "permissionMode": "bypassPermissions",
		"claude_code_version": "demo"})
	final := a.script(story, attempt, string(prompt))
	a.emit(map[string]any{"type": "result", "subtype": "success", "is_error": false, "num_turns": a.turns + 1,
		"result": final, "session_id": a.session,
		"usage": map[string]int{"input_tokens": len(prompt) / 4, "output_tokens": len(final)},
	})
	if err := a.w.Flush(); err != nil {
		return 1
	}
	if a.err != nil {
		fmt.Fprintf(stderr, "demo-agent: %v\n", a.err)
		return 1
	}
	return 0
}

type demoAgent struct {
	w       *bufio.Writer
	delay   time.Duration
	dir     string
	session string
	turns   int
	n       int
	err     error
}

func (a *demoAgent) emit(v map[string]any) {
	if a.n > 0 && a.delay > 0 {
		_ = a.w.Flush()
		time.Sleep(a.delay)
	}
	a.n++
	b, _ := json.Marshal(v)
	a.w.Write(append(b, '\n'))
	_ = a.w.Flush()
}

func (a *demoAgent) say(text string) {
	a.emit(map[string]any{"type": "assistant", "session_id": a.session, "message": map[string]any{
		"id": fmt.Sprintf("msg_demo%d", a.n), "role": "assistant", "model": "demo",
		"content": []any{map[string]any{"type": "text", "text": text}}}})
}

func (a *demoAgent) tool(name string, input map[string]any, result string) {
	a.turns++
	id := fmt.Sprintf("toolu_demo%d", a.n)
	a.emit(map[string]any{"type": "assistant", "session_id": a.session, "message": map[string]any{
		"id": fmt.Sprintf("msg_demo%d", a.n), "role": "assistant", "model": "demo",
		"content": []any{map[string]any{"type": "tool_use", "id": id, "name": name, "input": input}}}})
	a.emit(map[string]any{"type": "user", "session_id": a.session, "message": map[string]any{
		"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": result}}}})
}

func (a *demoAgent) write(path, content string) {
	if a.err == nil {
		p := filepath.Join(a.dir, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			a.err = err
		} else {
			a.err = os.WriteFile(p, []byte(content), 0o644)
		}
	}
	a.tool("Write", map[string]any{"file_path": path, "content": content}, "File written: "+path)
}

// check ticks the open tasks of story in tasks.md.
func (a *demoAgent) check(story string) {
	path := filepath.Join("openspec", "changes", Change, "tasks.md")
	b, err := os.ReadFile(filepath.Join(a.dir, path))
	if err != nil {
		a.err = err
		return
	}
	lines := strings.Split(string(b), "\n")
	in := false
	for i, l := range lines {
		if strings.HasPrefix(l, "## ") {
			in = strings.HasPrefix(l, "## "+story+". ")
			continue
		}
		if in {
			lines[i] = strings.Replace(l, "- [ ]", "- [x]", 1)
		}
	}
	if err := os.WriteFile(filepath.Join(a.dir, path), []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		a.err = err
	}
	a.tool("Edit", map[string]any{"file_path": path, "old_string": "- [ ]", "new_string": "- [x]"}, "Checked off story "+story)
}

var reasonRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?s)# Why the previous attempt failed\s*\n\s*\n(.*?)\n\n`)
})

// script is what the agent does for one story; it returns the final answer.
func (a *demoAgent) script(story, attempt, prompt string) string {
	switch story {
	case "1":
		a.say("Story 1: Greet()" + " goes in greet.go, and main prints it for the first argument.")
		a.write("greet.go", greetGo)
		a.write("main.go", mainGo1)
		a.tool("Bash", map[string]any{"command": "go vet ./...", "description": "check"}, "")
		a.check("1")
		return "Greet() is in place and main uses it.\n\n<promise>COMPLETE</promise>"
	case "2":
		if attempt == "1" {
			a.say("Adding --shout. I'll write the test first.")
			a.write("greet_test.go", greetTestBroken)
			a.tool("Bash", map[string]any{"command": "go test ./...", "description": "run the tests"},
				"--- FAIL: TestGreet (0.00s)\n    greet_test.go:9: Greet(\"Ada\", true) = \"HELLO, ADA!\", want \"Hello, ADA!\"\nFAIL")
			return "The shouting test expects mixed case, which contradicts the spec scenario.\n\n" +
				"<promise>FAILED: greet_test.go expected \"Hello, ADA!\" but the spec says --shout prints \"HELLO, ADA!\"; write the test from the spec scenario</promise>"
		}
		if m := reasonRE().FindStringSubmatch(prompt); m != nil {
			a.say("The previous attempt failed: " + strings.TrimSpace(m[1]) + "\nThis time the test follows the spec scenario.")
		}
		a.write("main.go", mainGo2)
		a.write("greet_test.go", greetTest)
		a.tool("Bash", map[string]any{"command": "go test ./...", "description": "run the tests"}, "ok  \tgreet\t0.002s")
		a.check("2")
		return "--shout works and is tested.\n\n<promise>COMPLETE</promise>"
	case "3":
		a.say("Adding Farewell() and --bye, then the README.")
		a.write("greet.go", greetGo+farewellGo)
		a.write("main.go", mainGo3)
		a.write("README.md", readme)
		a.check("3")
		return "Done: --bye and the README.\n\n<promise>COMPLETE</promise>"
	}
	return "I have no script for story " + story + "."
}

const greetGo = `package main

import "strings"

// Greet greets name, in capitals when shout is set.
func Greet(name string, shout bool) string {
	s := "Hello, " + name + "!"
	if shout {
		s = strings.ToUpper(s)
	}
	return s
}
`

const farewellGo = `
// Farewell sees name off.
func Farewell(name string) string { return "Goodbye, " + name + "." }
`

const mainGo1 = `package main

import (
	"fmt"
	"os"
)

func main() {
	name := "world"
	if len(os.Args) > 1 {
		name = os.Args[1]
	}
	fmt.Println(Greet(name, false))
}
`

const mainGo2 = `package main

import (
	"flag"
	"fmt"
)

func main() {
	shout := flag.Bool("shout", false, "greet in capitals")
	flag.Parse()
	name := "world"
	if flag.NArg() > 0 {
		name = flag.Arg(0)
	}
	fmt.Println(Greet(name, *shout))
}
`

const mainGo3 = `package main

import (
	"flag"
	"fmt"
)

func main() {
	shout := flag.Bool("shout", false, "greet in capitals")
	bye := flag.Bool("bye", false, "say goodbye instead")
	flag.Parse()
	name := "world"
	if flag.NArg() > 0 {
		name = flag.Arg(0)
	}
	if *bye {
		fmt.Println(Farewell(name))
		return
	}
	fmt.Println(Greet(name, *shout))
}
`

const greetTestBroken = `package main

import "testing"

func TestGreet(t *testing.T) {
	if got := Greet("Ada", false); got != "Hello, Ada!" {
		t.Errorf("Greet(\"Ada\", false) = %q", got)
	}
	if got := Greet("Ada", true); got != "Hello, ADA!" {
		t.Errorf("Greet(\"Ada\", true) = %q, want \"Hello, ADA!\"", got)
	}
}
`

const greetTest = `package main

import "testing"

func TestGreet(t *testing.T) {
	if got := Greet("Ada", false); got != "Hello, Ada!" {
		t.Errorf("Greet(\"Ada\", false) = %q", got)
	}
	if got := Greet("Ada", true); got != "HELLO, ADA!" {
		t.Errorf("Greet(\"Ada\", true) = %q", got)
	}
}
`

const readme = `# greet

A tiny command-line greeter.

    greet Ada           # Hello, Ada!
    greet --shout Ada   # HELLO, ADA!
    greet --bye Ada     # Goodbye, Ada.
`
