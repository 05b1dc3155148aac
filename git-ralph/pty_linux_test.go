package main

import (
	"errors"
	"strconv"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"
)

// cmdOpenpty opens a pseudo-terminal of the test's, as another terminal of the user's
// would be, kept open until the script ends, and sets the variable NAME to the path of
// its terminal end (/dev/pts/N): openpty NAME. ptyread NAME prints what reached it.
func cmdOpenpty(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: openpty NAME")
	}
	m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	ts.Check(err)
	ts.Defer(func() { unix.Close(m) })
	ts.Check(unix.IoctlSetPointerInt(m, unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(m, unix.TIOCGPTN)
	ts.Check(err)
	// The terminal end stays open too, as a shell's would: what is written to it waits
	// at the master for ptyread.
	s, err := unix.Open("/dev/pts/"+strconv.Itoa(n), unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	ts.Check(err)
	ts.Defer(func() { unix.Close(s) })
	ptysMu.Lock()
	ptys[ts] = m
	ptysMu.Unlock()
	ts.Setenv(args[0], "/dev/pts/"+strconv.Itoa(n))
}

// ptys are the masters of the scripts' terminals (one each).
var (
	ptys   = map[*testscript.TestScript]int{}
	ptysMu sync.Mutex
)

func cmdPtyread(ts *testscript.TestScript, neg bool, args []string) {
	ptysMu.Lock()
	fd, ok := ptys[ts]
	ptysMu.Unlock()
	if neg || len(args) != 0 || !ok {
		ts.Fatalf("usage: ptyread (after openpty)")
	}
	var out []byte
	buf := make([]byte, 4096)
	for {
		n, err := unix.Read(fd, buf)
		if n > 0 {
			out = append(out, buf[:n]...)
		}
		if errors.Is(err, unix.EAGAIN) || n <= 0 {
			break
		}
	}
	_, _ = ts.Stdout().Write(out)
}
