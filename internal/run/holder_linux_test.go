package run

import (
	"bufio"
	"os"
	"strings"
	"testing"
	"time"
)

// TestHolder: the kernel names the process that holds a change's lock; nobody once it
// is released, and nobody for a change never locked.
func TestHolder(t *testing.T) {
	s := NewStore(t.TempDir())
	if pid := s.Holder("c"); pid != 0 {
		t.Errorf("Holder of a change never locked = %d, want 0", pid)
	}
	l, err := s.Lock("c")
	if err != nil {
		t.Fatal(err)
	}
	if pid := s.Holder("c"); pid != os.Getpid() {
		t.Errorf("Holder = %d, want this process, %d", pid, os.Getpid())
	}
	if pid := s.Holder("d"); pid != 0 {
		t.Errorf("Holder of another change = %d, want 0", pid)
	}
	l.Unlock()
	if pid := s.Holder("c"); pid != 0 {
		t.Errorf("Holder after Unlock = %d, want 0", pid)
	}
}

// TestLockHolderParses /proc/locks lines: the holder of the FLOCK on the file, not a
// waiter for it, not a POSIX lock, not another file's.
func TestLockHolderParses(t *testing.T) {
	locks := `1: POSIX  ADVISORY  WRITE 11 08:01:4242 0 EOF
2: FLOCK  ADVISORY  WRITE 22 08:02:4242 0 EOF
3: FLOCK  ADVISORY  WRITE 33 08:01:4243 0 EOF
4: FLOCK  ADVISORY  WRITE 44 08:01:4242 0 EOF
4: -> FLOCK  ADVISORY  WRITE 55 08:01:4242 0 EOF
`
	dev := uint64(8<<8 | 1)
	if pid := lockHolder(bufio.NewScanner(strings.NewReader(locks)), dev, 4242); pid != 44 {
		t.Errorf("lockHolder = %d, want 44", pid)
	}
	other := "2: FLOCK  ADVISORY  WRITE 22 08:02:4242 0 EOF\n"
	if pid := lockHolder(bufio.NewScanner(strings.NewReader(other)), dev, 4242); pid != 22 {
		t.Errorf("lockHolder with the one FLOCK on that inode on another device = %d, want 22", pid)
	}
	other += "3: FLOCK  ADVISORY  WRITE 33 08:03:4242 0 EOF\n"
	if pid := lockHolder(bufio.NewScanner(strings.NewReader(other)), dev, 4242); pid != 0 {
		t.Errorf("lockHolder with two FLOCKs on that inode elsewhere = %d, want 0", pid)
	}
}

// TestStamps: each change but the one left out gets a stamp: busy while its lock is
// held, else its records' sizes and times, none without them; a change never locked
// has no lock to ask about.
func TestStamps(t *testing.T) {
	s := NewStore(t.TempDir())
	var locks []*Lock
	for _, x := range []string{"own", "held", "idle", "bare"} {
		l, err := s.Lock(x)
		if err != nil {
			t.Fatal(err)
		}
		locks = append(locks, l)
	}
	locks[2].Unlock()
	locks[3].Unlock()
	if err := s.Save(&Record{Change: "idle"}, time.Unix(1, 0)); err != nil {
		t.Fatal(err)
	}
	got := s.Stamps("busy", "own")
	if len(got) != 3 || got["held"] != "busy" || !strings.HasPrefix(got["idle"], "run.json:") || got["bare"] != "none" {
		t.Errorf("Stamps = %v", got)
	}
	if _, ok := got["own"]; ok {
		t.Error("the change left out has a stamp")
	}
	locks[1].Unlock()
	if got := s.Stamps("busy", ""); got["held"] != "none" || got["own"] != "busy" {
		t.Errorf("after the unlock: %v", got)
	}
	locks[0].Unlock()
}
