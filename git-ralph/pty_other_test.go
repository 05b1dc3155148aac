//go:build !linux

package main

import "github.com/rogpeppe/go-internal/testscript"

// cmdOpenpty and cmdPtyread are Linux's (pty_linux_test.go): the scripts that use them
// need the sandbox, which is Linux's too.
func cmdOpenpty(ts *testscript.TestScript, neg bool, args []string) {
	ts.Fatalf("openpty: pseudo-terminals are opened on Linux only")
}

func cmdPtyread(ts *testscript.TestScript, neg bool, args []string) {
	ts.Fatalf("ptyread: pseudo-terminals are opened on Linux only")
}
