package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"time"
)

// attacker is what the trust_attack_* scripts' hostile agent (and the script standing in
// for a process it left behind) use to act at a known step of git-ralph's instead of
// after a sleep (issue 29: an attack that races in reality is modelled with a hold
// point). It is a command of the test binary (TestMain puts it on PATH), never of
// git-ralph:
//
//	attacker hold MARK RELEASE          a clean filter that, the first time it runs,
//	                                    creates MARK and waits until RELEASE exists; then
//	                                    it passes stdin through
//	attacker forge-surface JSON FILE [CONTENT]
//	                                    sets FILE's entry in a saved surface.json to FILE as
//	                                    it is now (attack 8), or to CONTENT's bytes
//	attacker set-json JSON KEY VALUE    sets a top-level string in a JSON file (run.json)
//	attacker serve SOCK LOG             a service of the user's on the unix socket SOCK,
//	                                    as ssh-agent, D-Bus or docker listen: it appends
//	                                    each line it is sent to LOG, until it is killed
//
// The wait polls within the process (harnessPoll) and gives up after harnessBound (exit
// 1): a safety net, never a synchronisation.
func attacker() {
	args := os.Args[1:]
	fail := func(format string, a ...any) {
		fmt.Fprintf(os.Stderr, "attacker: "+format+"\n", a...)
		os.Exit(1)
	}
	if len(args) == 0 {
		fail("usage: attacker hold|forge-surface|set-json …")
	}
	switch {
	case args[0] == "hold" && len(args) == 3:
		if _, err := os.Stat(args[1]); errors.Is(err, fs.ErrNotExist) {
			if err := os.WriteFile(args[1], nil, 0o644); err != nil {
				fail("%v", err)
			}
			for deadline := time.Now().Add(harnessBound); ; time.Sleep(harnessPoll) {
				if _, err := os.Stat(args[2]); err == nil {
					break
				}
				if time.Now().After(deadline) {
					fail("gave up waiting for %s", args[2])
				}
			}
		}
		if _, err := io.Copy(os.Stdout, os.Stdin); err != nil {
			fail("%v", err)
		}
	case args[0] == "forge-surface" && (len(args) == 3 || len(args) == 4):
		var snap map[string]any
		readJSON(args[1], &snap, fail)
		data, err := os.ReadFile(args[len(args)-1])
		if err != nil {
			fail("%v", err)
		}
		files, _ := snap["files"].([]any)
		found := false
		for _, f := range files {
			if m, ok := f.(map[string]any); ok && m["path"] == args[2] {
				m["exists"], m["data"], found = true, data, true
			}
		}
		if !found {
			fail("%s is not in %s", args[2], args[1])
		}
		writeJSON(args[1], snap, fail)
	case args[0] == "set-json" && len(args) == 4:
		var rec map[string]any
		readJSON(args[1], &rec, fail)
		rec[args[2]] = args[3]
		writeJSON(args[1], rec, fail)
	case args[0] == "serve" && len(args) == 3:
		l, err := net.Listen("unix", args[1])
		if err != nil {
			fail("%v", err)
		}
		for {
			c, err := l.Accept()
			if err != nil {
				fail("%v", err)
			}
			b, _ := io.ReadAll(c)
			c.Close()
			f, err := os.OpenFile(args[2], os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
			if err != nil {
				fail("%v", err)
			}
			_, _ = f.Write(b)
			f.Close()
		}
	default:
		fail("usage: attacker hold|forge-surface|set-json|serve …")
	}
}

func readJSON(path string, v any, fail func(string, ...any)) {
	b, err := os.ReadFile(path)
	if err != nil {
		fail("%v", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		fail("%s: %v", path, err)
	}
}

func writeJSON(path string, v any, fail func(string, ...any)) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		fail("%v", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		fail("%v", err)
	}
}
