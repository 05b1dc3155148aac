//go:build browser

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestReportInBrowser loads a real run's report in headless Chromium, from file:// with
// the network cut off, and fails on any console message (a script error, a blocked
// request: the page logs nothing of its own) and on any request the page starts. It
// saves a screenshot and says where. Run it with
//
//	go test -tags browser ./git-ralph -run TestReportInBrowser -v
//
// It is skipped, saying so, when no Chromium is installed (Debian: apt-get install chromium).
func TestReportInBrowser(t *testing.T) {
	var browser string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		t.Skip("SKIPPED: no Chromium on PATH (chromium, chromium-browser, google-chrome); on Debian: apt-get install chromium")
	}
	root := t.TempDir()
	dir, env := makeRun(t, root, 5, 2)
	page := filepath.Join(root, "report.html")
	benchRalphT(t, env, dir, "report", "x", "-o", page)

	// As written: console errors, including any request the page's CSP blocks.
	shot := filepath.Join(os.TempDir(), "git-ralph-report.png")
	logs, requests := loadInChromium(t, browser, root, "as-is", page, shot)
	if consoleRE.MatchString(logs) {
		t.Errorf("console output:\n%s", strings.Join(consoleRE.FindAllString(logs, -1), "\n"))
	}
	if len(requests) > 0 {
		t.Errorf("the page made requests: %q", requests)
	}
	if st, err := os.Stat(shot); err != nil || st.Size() == 0 {
		t.Fatalf("no screenshot: %v\n%s", err, logs)
	}
	t.Logf("screenshot: %s", shot)

	// Without its Content-Security-Policy: the page itself asks for nothing.
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	bare := filepath.Join(root, "no-csp.html")
	var kept [][]byte
	for _, line := range bytes.Split(data, []byte("\n")) {
		if !bytes.Contains(line, []byte("Content-Security-Policy")) {
			kept = append(kept, line)
		}
	}
	if err := os.WriteFile(bare, bytes.Join(kept, []byte("\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	logs, requests = loadInChromium(t, browser, root, "no-csp", bare, filepath.Join(root, "no-csp.png"))
	if len(requests) > 0 {
		t.Errorf("without its CSP the page requests: %q", requests)
	}
	if consoleRE.MatchString(logs) {
		t.Errorf("console output without the CSP:\n%s", strings.Join(consoleRE.FindAllString(logs, -1), "\n"))
	}
}

// consoleRE matches Chromium's log line of a console message of any level.
var consoleRE = regexp.MustCompile(`(?m)^.*:CONSOLE[:(].*$`)

// loadInChromium takes a screenshot of page in a fresh profile with every host
// unresolvable, and returns Chromium's log and the URLs the page itself requested
// (the net log's requests with an initiator; the browser's own background requests
// have none, and cannot leave the machine either).
func loadInChromium(t *testing.T, browser, root, name, page, shot string) (string, []string) {
	t.Helper()
	netlog := filepath.Join(root, name+"-netlog.json")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(root, name+"-profile"),
		"--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9",
		"--enable-logging=stderr", "--v=0", "--log-net-log="+netlog,
		"--window-size=1280,2200", "--hide-scrollbars", "--screenshot="+shot,
		"file://"+page)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", browser, err, out.String())
	}
	data, err := os.ReadFile(netlog)
	if err != nil {
		t.Fatalf("no net log: %v", err)
	}
	var log struct {
		Events []struct {
			Params map[string]any `json:"params"`
		} `json:"events"`
	}
	if err := json.Unmarshal(data, &log); err != nil {
		// Chromium may leave the log's closing bracket out when it is killed at exit.
		if err := json.Unmarshal(append(bytes.TrimRight(bytes.TrimSpace(data), ","), []byte("]}")...), &log); err != nil {
			t.Fatalf("net log: %v", err)
		}
	}
	var requests []string
	for _, e := range log.Events {
		url, _ := e.Params["url"].(string)
		init, ok := e.Params["initiator"].(string)
		if url != "" && ok && init != "not an origin" {
			requests = append(requests, url)
		}
	}
	return out.String(), requests
}
