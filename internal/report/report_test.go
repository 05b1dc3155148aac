package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLogTail: a log an agent's driver can read shows as its words and tool calls, then
// git-ralph's closing line; another shows its raw last lines; both are bounded.
func TestLogTail(t *testing.T) {
	dir := t.TempDir()
	claude := filepath.Join(dir, "claude.log")
	var b strings.Builder
	b.WriteString(strings.Repeat(`{"type":"assistant","message":{"content":[{"type":"text","text":"padding"}]}}`+"\n", 2000))
	b.WriteString(`{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash","input":{"command":"go test ./..."}}]}}` + "\n")
	b.WriteString(`{"type":"assistant","message":{"content":[{"type":"text","text":"All green.\n<promise>COMPLETE</promise>"}]}}` + "\n")
	b.WriteString("--- git-ralph: agent exited with status 0 ---\n")
	if err := os.WriteFile(claude, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	got := logTail(claude, "claude")
	lines := strings.Split(got, "\n")
	if len(lines) != logTailLines {
		t.Errorf("%d lines, want %d", len(lines), logTailLines)
	}
	want := "↳ Bash go test ./...\nAll green.\n<promise>COMPLETE</promise>\n--- git-ralph: agent exited with status 0 ---"
	if !strings.HasSuffix(got, want) {
		t.Errorf("decoded tail ends\n%s\nwant\n%s", got[max(0, len(got)-200):], want)
	}
	if strings.Contains(got, `"type"`) {
		t.Errorf("raw JSON in a decoded tail")
	}

	raw := filepath.Join(dir, "custom.log")
	long := strings.Repeat("x", 1000)
	if err := os.WriteFile(raw, []byte("one\n"+long+"\nlast line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got = logTail(raw, "custom")
	if !strings.HasPrefix(got, "one\n"+strings.Repeat("x", logLineMax)+" …\n") || !strings.HasSuffix(got, "\nlast line") {
		t.Errorf("raw tail = %q", got)
	}
	if logTail(filepath.Join(dir, "missing.log"), "claude") != "" {
		t.Errorf("a missing log has a tail")
	}
}
