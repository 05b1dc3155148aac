//go:build unix

package git

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// newProcAttr puts the child in its own process group. The terminal sends
// Ctrl-C to the whole foreground group; without this, a git commit would be
// killed half-way while git-ralph is still deciding how to stop.
func newProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// interruptOnDone stops the process group led by pid when ctx is done:
// SIGINT first, as a Ctrl-C would, then SIGKILL after interruptGrace. The
// returned func must be called once the child has been waited for; after it
// returns no signal is sent.
func interruptOnDone(ctx context.Context, pid int) (stop func()) {
	var (
		mu     sync.Mutex
		exited bool
		done   = make(chan struct{})
	)
	signal := func(sig syscall.Signal) {
		mu.Lock()
		defer mu.Unlock()
		if !exited {
			_ = syscall.Kill(-pid, sig) // the group may already be gone
		}
	}
	go func() {
		select {
		case <-done:
			return
		case <-ctx.Done():
		}
		signal(syscall.SIGINT)
		t := time.NewTimer(interruptGrace)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
			signal(syscall.SIGKILL)
		}
	}()
	return func() {
		mu.Lock()
		exited = true
		mu.Unlock()
		close(done)
	}
}

// processGone reports whether no process with this pid exists, or only its
// zombie (a killed process whose parent died too waits for init to reap it,
// which some container inits never do). A reused pid counts as alive, which
// errs on the side of keeping files.
func processGone(pid int) bool {
	if syscall.Kill(pid, 0) == syscall.ESRCH {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false // no /proc to tell: alive
	}
	// "pid (comm) state …"; comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X')
}
