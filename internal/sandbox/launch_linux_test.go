package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"golang.org/x/sys/unix"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// TestMain makes the test binary the launcher when it is run as one, as git-ralph is.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == Command {
		os.Exit(Main(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == probeCommand {
		os.Exit(probeMain(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == victimCommand {
		os.Exit(victimMain())
	}
	os.Exit(m.Run())
}

// needLandlock skips a test on a kernel without a usable Landlock, saying so.
func needLandlock(t *testing.T) Support {
	t.Helper()
	s := Probe()
	if !s.Usable() {
		t.Skipf("no sandbox on this system: %s", s.Why)
	}
	return s
}

// runLauncher runs argv through the launcher under p and returns its combined output, the
// launcher's own failure, and the exit error.
func runLauncher(t *testing.T, p *Policy, argv ...string) (out, status string, err error) {
	t.Helper()
	path, lerr := exec.LookPath(argv[0])
	if lerr != nil {
		t.Fatal(lerr)
	}
	// the caller's GOMAXPROCS is not the test's: the agent sees none unless it has one
	env := LauncherEnv(p, slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "GOMAXPROCS=") }))
	args, lerr := LauncherArgs(p, 3, path, argv)
	if lerr != nil {
		t.Fatal(lerr)
	}
	r, w, lerr := os.Pipe()
	if lerr != nil {
		t.Fatal(lerr)
	}
	var buf bytes.Buffer
	cmd := &exec.Cmd{Path: Self, Args: args, Env: env, ExtraFiles: []*os.File{w}, Stdout: &buf, Stderr: &buf}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	msg, _ := io.ReadAll(r)
	r.Close()
	err = cmd.Wait()
	return buf.String(), string(msg), err
}

// holdDirs makes what a test of a held agent works in: root, with its working tree
// work, a directory outside it and secret, hidden, holding a key.
func holdDirs(t *testing.T) (root, work, outside, secret string) {
	t.Helper()
	root = t.TempDir()
	work, outside, secret = filepath.Join(root, "work"), filepath.Join(root, "outside"), filepath.Join(root, "secret")
	for _, d := range []string{work, outside, secret} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(secret, "key"), []byte("KEY\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return root, work, outside, secret
}

func TestLauncherHoldsTheAgent(t *testing.T) {
	s := needLandlock(t)
	root, work, outside, secret := holdDirs(t)
	if err := os.WriteFile(filepath.Join(outside, "plain"), []byte("PLAIN\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &Policy{ABI: min(s.ABI, maxABI), Write: []string{work, "/dev/null"}, Hide: []string{secret}}
	script := `cd "$1"
echo in > work/ok && echo write-work-ok
echo out > outside/new 2>/dev/null || echo write-outside-denied
cat outside/plain
cat secret/key 2>/dev/null || echo read-secret-denied
mkdir work/d && mv work/ok work/d/ok && echo rename-ok
kill -STOP $PPID 2>/dev/null && kill -CONT $PPID && echo signal-allowed || echo signal-denied
grep -c . /proc/$PPID/environ 2>/dev/null || echo environ-denied
if command -v prlimit >/dev/null; then
	prlimit --pid $PPID --cpu=unlimited:unlimited 2>/dev/null && echo prlimit-allowed || echo prlimit-denied
	prlimit --cpu=unlimited:unlimited true && echo prlimit-own-ok
fi
echo done`
	out, status, err := runLauncher(t, p, "sh", "-c", script, "sh", root)
	if err != nil || status != "" {
		t.Fatalf("launch: %v %q\n%s", err, status, out)
	}
	want := []string{"write-work-ok", "write-outside-denied", "PLAIN", "read-secret-denied", "rename-ok", "environ-denied", "done"}
	if s.ABI >= 6 {
		want = append(want, "signal-denied")
	}
	if _, err := exec.LookPath("prlimit"); err == nil && seccompKnown() {
		// Not a signal, but as deadly: lowering git-ralph's limits (the seccomp filter).
		want = append(want, "prlimit-denied", "prlimit-own-ok")
	}
	for _, w := range want {
		if !strings.Contains(out, w+"\n") {
			t.Errorf("no %q in the output:\n%s", w, out)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "new")); err == nil {
		t.Error("the agent wrote outside its working tree")
	}
}

func TestLauncherReportsFailure(t *testing.T) {
	s := needLandlock(t)
	p := &Policy{ABI: min(s.ABI, maxABI), Write: []string{filepath.Join(t.TempDir(), "missing")}}
	out, status, err := runLauncher(t, p, "true")
	if err == nil || !strings.Contains(status, "sandbox: writable path") {
		t.Fatalf("launch of a policy with a missing path: err %v, status %q, output %q", err, status, out)
	}
}

// Reading is granted entry by entry on the way to a hidden path: not the path, not a
// symbolic link to it, not a link to a directory that holds one; everything else is.
func TestReadGrants(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	for _, d := range []string{"home/.ssh", "home/.config/gh", "home/.config/git", "home/src"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"home/.bashrc", "home/.config/git/config"} {
		if err := os.WriteFile(filepath.Join(root, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(home, ".ssh"), filepath.Join(home, "keys")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(home, ".config"), filepath.Join(home, "cfg")); err != nil {
		t.Fatal(err)
	}
	// a link to a key in a hidden directory, not to the directory itself
	if err := os.WriteFile(filepath.Join(home, ".ssh", "id"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(home, ".ssh", "id"), filepath.Join(home, "key")); err != nil {
		t.Fatal(err)
	}
	dirs, files, listOnly := readGrants(HiddenIn(home, nil)[1:], nil)
	for _, want := range []string{filepath.Join(home, "src"), filepath.Join(home, ".config/git")} {
		if !slices.Contains(dirs, want) {
			t.Errorf("%s is not readable: %q", want, dirs)
		}
	}
	if !slices.Contains(files, filepath.Join(home, ".bashrc")) {
		t.Errorf("~/.bashrc is not readable: %q", files)
	}
	for _, p := range []string{"/", root, home, filepath.Join(home, ".config")} {
		if !slices.Contains(listOnly, p) {
			t.Errorf("%s cannot be listed: %q", p, listOnly)
		}
	}
	for _, no := range []string{".ssh", "keys", ".config/gh", "cfg", ".config", "key", ".ssh/id"} {
		p := filepath.Join(home, no)
		if slices.Contains(dirs, p) || slices.Contains(files, p) {
			t.Errorf("%s is readable", p)
		}
	}
	if d, f, l := readGrants([]string{filepath.Join(root, "missing")}, nil); !slices.Equal(d, []string{"/"}) || f != nil || l != nil {
		t.Errorf("no hidden path exists, yet %q %q %q", d, f, l)
	}
}

// seccompKnown reports whether the launcher has a seccomp filter for this architecture.
func seccompKnown() bool {
	_, ok := seccompFilter(runtime.GOARCH, filterOptions{})
	return ok
}

// The filter's jumps land where they should for every architecture and ABI it knows:
// an emulation of the BPF program over each call it looks at, with the arguments that
// are allowed and those that are not.
func TestSeccompFilter(t *testing.T) {
	eperm, eacces := retErrno(unix.EPERM), retErrno(unix.EACCES)
	type probe struct {
		call int
		args [6]uint32
		want uint32 // with the unix sockets refused
		open uint32 // without (filterOptions{}); 0: the same
	}
	probes := []probe{
		{call: scPrlimit, want: retAllow},
		{call: scPrlimit, args: [6]uint32{4242}, want: eperm},
		{call: scSchedSetscheduler, want: retAllow},
		{call: scSchedSetscheduler, args: [6]uint32{4242, unix.SCHED_IDLE}, want: eperm},
		{call: scSchedSetparam, args: [6]uint32{4242}, want: eperm},
		{call: scSchedSetattr, args: [6]uint32{4242}, want: eperm},
		{call: scSchedSetattr, want: retAllow},
		{call: scSchedSetaffinity, args: [6]uint32{4242}, want: eperm},
		{call: scSchedSetaffinity, want: retAllow},
		{call: scSetpriority, args: [6]uint32{unix.PRIO_PROCESS, 0, 10}, want: retAllow},
		{call: scSetpriority, args: [6]uint32{unix.PRIO_PROCESS, 4242, 19}, want: eperm},
		{call: scSetpriority, args: [6]uint32{unix.PRIO_PGRP, 0, 19}, want: eperm},
		{call: scSetpriority, args: [6]uint32{unix.PRIO_USER, 0, 19}, want: eperm},
		{call: scIoprioSet, args: [6]uint32{1, 0, 7}, want: retAllow},
		{call: scIoprioSet, args: [6]uint32{1, 4242, 7}, want: eperm},
		{call: scIoprioSet, args: [6]uint32{3, 0, 7}, want: eperm},
		{call: scSocket, args: [6]uint32{unix.AF_UNIX, unix.SOCK_STREAM}, want: eacces, open: retAllow},
		{call: scSocket, args: [6]uint32{unix.AF_INET, unix.SOCK_STREAM}, want: retAllow},
		{call: scSocketcall, args: [6]uint32{1}, want: eacces, open: retAllow},
		{call: scSocketcall, args: [6]uint32{3}, want: retAllow},
		{call: scIoUringSetup, want: retErrno(unix.ENOSYS)},
		{call: scChown, args: [6]uint32{0, 4242, 4242}, want: eperm}, {call: scFchown, args: [6]uint32{3, 4242, 0xffffffff}, want: eperm},
		{call: scLchown, args: [6]uint32{0, 0xffffffff, 4242}, want: eperm}, {call: scFchownat, args: [6]uint32{0, 0, 4242, 4242}, want: eperm},
		{call: scChown, args: [6]uint32{0, 1000, 100}, want: retAllow}, {call: scFchown, args: [6]uint32{3, 0xffffffff, 100}, want: retAllow},
		{call: scLchown, args: [6]uint32{0, 1000, 0xffffffff}, want: retAllow}, {call: scFchownat, args: [6]uint32{0, 0, 1000, 100}, want: retAllow},
		{call: scChown16, want: eperm}, {call: scFchown16, want: eperm}, {call: scLchown16, want: eperm},
		{call: scSetxattr, want: eperm}, {call: scLsetxattr, want: eperm}, {call: scFsetxattr, want: eperm},
		{call: scRemovexattr, want: eperm}, {call: scLremovexattr, want: eperm}, {call: scFremovexattr, want: eperm},
		{call: scSetxattrat, want: eperm}, {call: scRemovexattrat, want: eperm},
		{call: scChmod, args: [6]uint32{0, 0o755}, want: retAllow},
		{call: scChmod, args: [6]uint32{0, 0o4755}, want: eperm},
		{call: scFchmod, args: [6]uint32{3, 0o2755}, want: eperm},
		{call: scFchmod, args: [6]uint32{3, 0o1777}, want: retAllow},
		{call: scFchmodat, args: [6]uint32{0, 0, 0o700}, want: retAllow},
		{call: scFchmodat, args: [6]uint32{0, 0, 0o6755}, want: eperm},
		{call: scFchmodat2, args: [6]uint32{0, 0, 0o4700}, want: eperm},
		{call: scFchmodat2, args: [6]uint32{0, 0, 0o644}, want: retAllow},
	}
	for _, goarch := range goarchs {
		tables := abis(goarch)
		for _, o := range []filterOptions{{Unix: true, UID: 1000, GID: 100}, {UID: 1000, GID: 100}} {
			prog, ok := seccompFilter(goarch, o)
			if !ok {
				t.Fatalf("%s: no filter", goarch)
			}
			if len(prog) > unix.BPF_MAXINSNS {
				t.Fatalf("%s: %d instructions", goarch, len(prog))
			}
			for _, tb := range tables {
				for _, pr := range probes {
					nr := tb.calls[pr.call]
					if nr < 0 {
						continue
					}
					want := pr.want
					if !o.Unix && pr.open != 0 {
						want = pr.open
					}
					if got := runBPF(t, prog, tb.arch, uint32(nr)|tb.or, pr.args); got != want {
						t.Errorf("%s %+v: call %d (nr %d) args %v = %#x, want %#x", goarch, o, pr.call, nr, pr.args, got, want)
					}
				}
				// Calls it does not look at: socketpair, getpriority, and another
				// arch's number.
				for _, nr := range []uint32{53, 199, 288, 360, 140 + 1000} {
					if got := runBPF(t, prog, tb.arch, nr|tb.or, [6]uint32{unix.AF_UNIX, 4242}); got != retAllow && !slices.Contains(tb.calls[:], int(nr)) {
						t.Errorf("%s: nr %d = %#x, want allowed", goarch, nr, got)
					}
				}
				if got := runBPF(t, prog, 0x12345678, uint32(tb.calls[scPrlimit]), [6]uint32{4242}); got != retAllow {
					t.Errorf("%s: another arch's prlimit = %#x, want allowed", goarch, got)
				}
			}
		}
	}
}

// runBPF runs a classic BPF program of loads, jumps and returns over a seccomp_data of
// (arch, nr, args).
func runBPF(t *testing.T, prog []unix.SockFilter, arch, nr uint32, args [6]uint32) uint32 {
	t.Helper()
	data := map[uint32]uint32{0: nr, 4: arch}
	for i, a := range args {
		data[offArg(i)] = a
	}
	var a uint32
	for pc := 0; pc < len(prog); {
		in := prog[pc]
		switch in.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			a = data[in.K]
			pc++
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K:
			if a == in.K {
				pc += 1 + int(in.Jt)
			} else {
				pc += 1 + int(in.Jf)
			}
		case unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K:
			if a&in.K != 0 {
				pc += 1 + int(in.Jt)
			} else {
				pc += 1 + int(in.Jf)
			}
		case unix.BPF_JMP | unix.BPF_JA:
			pc += 1 + int(in.K)
		case unix.BPF_ALU | unix.BPF_AND | unix.BPF_K:
			a &= in.K
			pc++
		case unix.BPF_RET | unix.BPF_K:
			return in.K
		default:
			t.Fatalf("instruction %#x", in.Code)
		}
	}
	t.Fatal("ran off the program")
	return 0
}

// The grants git-ralph works out once for a run hold for every attempt: what they
// grant stays readable, and a hidden path that appears later (the user logs in to gh
// mid-run) is not readable through the directory above it, as the launcher walks
// again. A path they name that is gone is left out, not a failure. GOMAXPROCS=1, the
// launcher's alone, does not reach the agent; the user's own does.
func TestLauncherRunGrants(t *testing.T) {
	s := needLandlock(t)
	root := t.TempDir()
	home, work := filepath.Join(root, "home"), filepath.Join(root, "work")
	for _, d := range []string{home + "/.ssh", home + "/src", home + "/gone", home + "/.config/git", work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for f, text := range map[string]string{home + "/.ssh/id": "SSH\n", home + "/src/a": "SRC\n"} {
		if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The user's link from home to a file of the working tree: granted by its real path.
	if err := os.WriteFile(work+"/NOTES.md", []byte("NOTES\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(work+"/NOTES.md", home+"/notes"); err != nil {
		t.Fatal(err)
	}
	p := &Policy{ABI: min(s.ABI, maxABI), Write: []string{work, "/dev/null"}, Hide: HiddenIn(home, nil)[1:]}
	p.Read = ReadGrants(p.Hide, p.Reveal)
	if !slices.Contains(p.Read.Files, work+"/NOTES.md") {
		t.Fatalf("the link's target is not granted: %+v", p.Read)
	}
	if !slices.Contains(p.Read.Dirs, home+"/src") || !p.Read.Current(p.Hide, p.Reveal) {
		t.Fatalf("grants %+v", p.Read)
	}
	if err := os.Remove(home + "/gone"); err != nil {
		t.Fatal(err)
	}
	script := `cat "$1/src/a"; cat "$1/.ssh/id" 2>/dev/null || echo ssh-denied
cat "$1/.config/gh/hosts.yml" 2>/dev/null || echo gh-denied
echo "procs=${GOMAXPROCS-unset}"`
	out, status, err := runLauncher(t, p, "sh", "-c", script, "sh", home)
	if err != nil || status != "" {
		t.Fatalf("launch: %v %q\n%s", err, status, out)
	}
	for _, w := range []string{"SRC", "ssh-denied", "gh-denied", "procs=unset"} {
		if !strings.Contains(out, w+"\n") {
			t.Errorf("no %q in the output:\n%s", w, out)
		}
	}
	// ~/.config/gh appears after the grants were worked out, in ~/.config, which
	// they grant whole.
	if !slices.Contains(p.Read.Dirs, home+"/.config") {
		t.Fatalf("~/.config is not granted whole: %+v", p.Read)
	}
	if err := os.MkdirAll(home+"/.config/gh", 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(home+"/.config/gh/hosts.yml", []byte("TOKEN\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if p.Read.Current(p.Hide, p.Reveal) {
		t.Fatal("the grants are current though ~/.config/gh appeared")
	}
	out, status, err = runLauncher(t, p, "sh", "-c", script, "sh", home)
	if err != nil || status != "" {
		t.Fatalf("launch: %v %q\n%s", err, status, out)
	}
	for _, w := range []string{"SRC", "ssh-denied", "gh-denied"} {
		if !strings.Contains(out, w+"\n") {
			t.Errorf("after ~/.config/gh appeared: no %q in the output:\n%s", w, out)
		}
	}
	// An agent replaces the granted NOTES.md of its working tree with a link to the key:
	// a rule on that path would follow it.
	p.Read = ReadGrants(p.Hide, p.Reveal)
	if err := os.Remove(work + "/NOTES.md"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(home+"/.ssh/id", work+"/NOTES.md"); err != nil {
		t.Fatal(err)
	}
	out, status, err = runLauncher(t, p, "sh", "-c", script, "sh", home)
	if err != nil || status != "" {
		t.Fatalf("launch: %v %q\n%s", err, status, out)
	}
	if !strings.Contains(out, "ssh-denied\n") {
		t.Errorf("a granted file turned into a link to the key: no ssh-denied in the output:\n%s", out)
	}
}

func TestLauncherEnv(t *testing.T) {
	p := &Policy{}
	env := LauncherEnv(p, []string{"A=1"})
	if !p.MaxProcs || !slices.Equal(env, []string{"A=1", "GOMAXPROCS=1"}) {
		t.Fatalf("LauncherEnv = %q, MaxProcs %v", env, p.MaxProcs)
	}
	if got := agentEnv(*p, env); !slices.Equal(got, []string{"A=1"}) {
		t.Errorf("agentEnv = %q", got)
	}
	env = LauncherEnv(p, []string{"GOMAXPROCS=1", "A=1"})
	if p.MaxProcs || !slices.Equal(env, []string{"GOMAXPROCS=1", "A=1"}) {
		t.Fatalf("the user's GOMAXPROCS: LauncherEnv = %q, MaxProcs %v", env, p.MaxProcs)
	}
	if got := agentEnv(*p, env); !slices.Equal(got, env) {
		t.Errorf("the user's GOMAXPROCS is taken out: %q", got)
	}
}

// readKey is what the agent reads of home's ~/.ssh/id under p: the key, or "denied".
func readKey(t *testing.T, p *Policy, home string) string {
	t.Helper()
	out, status, err := runLauncher(t, p, "sh", "-c", `cat "$1/.ssh/id" 2>/dev/null || echo denied`, "sh", home)
	if err != nil || status != "" {
		t.Fatalf("launch: %v %q\n%s", err, status, out)
	}
	return strings.TrimSpace(out)
}

// A hidden path that is a link, pointed elsewhere after the run's grants were worked
// out (or dangling then, its target there now), hides its new target: the grants are
// not current, and the walk again leaves it out.
func TestLauncherHiddenLinkMoves(t *testing.T) {
	s := needLandlock(t)
	for _, dangling := range []bool{false, true} {
		root := t.TempDir()
		home, work := root+"/home", root+"/work"
		for _, d := range []string{home, work, root + "/a/keys", root + "/b"} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		target := root + "/a/keys"
		if dangling {
			target = root + "/b/keys"
		}
		if err := os.Symlink(target, home+"/.ssh"); err != nil {
			t.Fatal(err)
		}
		p := &Policy{ABI: min(s.ABI, maxABI), Write: []string{work, "/dev/null"}, Hide: HiddenIn(home, nil)[1:]}
		p.Read = ReadGrants(p.Hide, p.Reveal)
		if err := os.MkdirAll(root+"/b/keys", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(root+"/b/keys/id", []byte("KEY\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if !dangling {
			if err := os.Remove(home + "/.ssh"); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(root+"/b/keys", home+"/.ssh"); err != nil {
				t.Fatal(err)
			}
		}
		if p.Read.Current(p.Hide, p.Reveal) {
			t.Errorf("dangling %v: the grants are current though ~/.ssh leads elsewhere", dangling)
		}
		if got := readKey(t, p, home); got != "denied" {
			t.Errorf("dangling %v: the agent read %q", dangling, got)
		}
	}
}

// A path that is not UTF-8 is granted as any other: the grants, which JSON would
// mangle, stay with git-ralph and the launcher walks.
func TestLauncherGrantsNotUTF8(t *testing.T) {
	s := needLandlock(t)
	root := t.TempDir()
	home, work := root+"/home", root+"/work"
	name := home + "/caf\xe9"
	for _, d := range []string{home + "/.ssh", work, name} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(name+"/f", []byte("LATIN1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &Policy{ABI: min(s.ABI, maxABI), Write: []string{work, "/dev/null"}, Hide: HiddenIn(home, nil)[1:]}
	p.Read = ReadGrants(p.Hide, p.Reveal)
	out, status, err := runLauncher(t, p, "sh", "-c", `cat "$1/f" 2>&1 || echo denied`, "sh", name)
	if err != nil || status != "" || strings.TrimSpace(out) != "LATIN1" {
		t.Errorf("a file in ~/caf\\xe9: %q %v %q", out, err, status)
	}
}

// A process beside the agent's launch (another loop's agent with write on the same
// directory) that flips a granted file of it with a link to the key, again and again,
// never gets a rule on the key: each granted path is opened with no link in it
// (RESOLVE_NO_SYMLINKS), not checked first and opened after. Before, 99 of 300
// launches read the key. SANDBOX_RACE_TRIALS raises the count (30).
func TestLauncherGrantsRace(t *testing.T) {
	s := needLandlock(t)
	trials := 30
	if v, err := strconv.Atoi(os.Getenv("SANDBOX_RACE_TRIALS")); err == nil && v > 0 {
		trials = v
	}
	root := t.TempDir()
	home, work := root+"/home", root+"/work"
	for _, d := range []string{home + "/.ssh", work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for f, text := range map[string]string{home + "/.ssh/id": "KEY\n", work + "/NOTES.md": "n\n"} {
		if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(work+"/NOTES.md", home+"/notes"); err != nil {
		t.Fatal(err)
	}
	p := &Policy{ABI: min(s.ABI, maxABI), Write: []string{work, "/dev/null"}, Hide: HiddenIn(home, nil)[1:]}
	p.Read = ReadGrants(p.Hide, p.Reveal)
	if err := os.Symlink(home+"/.ssh/id", work+"/alt"); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			_ = unix.Renameat2(unix.AT_FDCWD, work+"/NOTES.md", unix.AT_FDCWD, work+"/alt", unix.RENAME_EXCHANGE)
		}
	}()
	read := 0
	for range trials {
		if readKey(t, p, home) == "KEY" {
			read++
		}
	}
	stop.Store(true)
	<-done
	if read > 0 {
		t.Errorf("the key was read in %d of %d launches", read, trials)
	}
}

// A writable path is resolved one link at a time: the user's links are followed
// (home reached through one, a cache kept on another disk), a link in a directory the
// agent may write is refused, naming it, and so is one the agent put on the way to it.
func TestRealWrite(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"data/home/.cache/tool", "big/tool-cache", "elsewhere"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, path string) {
		t.Helper()
		if err := os.Symlink(target, filepath.Join(root, path)); err != nil {
			t.Fatal(err)
		}
	}
	link(filepath.Join(root, "data/home"), "home")                   // the user's: home on another disk
	link("../../big/tool-cache", "data/home/.cache/relative")        // relative, in a writable directory
	link(filepath.Join(root, "elsewhere"), "data/home/.cache/moved") // absolute, likewise
	link("loop", "data/home/loop")
	link("loop", "loop")
	cache := filepath.Join(root, "home/.cache")
	writable := []string{cache, filepath.Join(root, "data/home/.cache")}
	for _, c := range []struct {
		path, want, link string
	}{
		{path: filepath.Join(root, "home/.cache/tool"), want: filepath.Join(root, "data/home/.cache/tool")},
		{path: cache, want: filepath.Join(root, "data/home/.cache")},
		{path: filepath.Join(root, "home/.cache/relative"), link: filepath.Join(root, "data/home/.cache/relative")},
		{path: filepath.Join(root, "home/.cache/moved/x"), link: filepath.Join(root, "data/home/.cache/moved")},
		{path: filepath.Join(root, "home/.cache/missing")},
		{path: filepath.Join(root, "loop")},
	} {
		got, err := realWrite(c.path, agentWritable(writable))
		var pl *plantedLinkError
		switch {
		case c.want != "":
			if err != nil || got != c.want {
				t.Errorf("realWrite(%s) = %q, %v; want %s", c.path, got, err, c.want)
			}
		case c.link != "":
			if !errors.As(err, &pl) || pl.Link != c.link {
				t.Errorf("realWrite(%s) = %q, %v; want the link %s refused", c.path, got, err, c.link)
			}
		default:
			if err == nil || errors.As(err, &pl) {
				t.Errorf("realWrite(%s) = %q, %v; want an error", c.path, got, err)
			}
		}
	}
	if _, err := realWrite("relative/path", agentWritable(writable)); err == nil {
		t.Error("a relative path was resolved")
	}
}

// The ruleset refuses a writable path that an earlier attempt turned into a link to
// the home (the agent's own state in a writable cache), and grants the real path of
// one reached through the user's own link.
func TestWriteRulesRefusePlantedLinks(t *testing.T) {
	s := needLandlock(t)
	root := t.TempDir()
	home := filepath.Join(root, "home")
	for _, d := range []string{home + "/.cache", root + "/disk/work"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(home, home+"/.cache/tool"); err != nil { // the agent's
		t.Fatal(err)
	}
	if err := os.Symlink(root+"/disk/work", root+"/work"); err != nil { // the user's
		t.Fatal(err)
	}
	p := Policy{ABI: min(s.ABI, maxABI), Write: []string{home + "/.cache", home + "/.cache/tool"}}
	if _, _, err := ruleset(p); err == nil || !strings.Contains(err.Error(), "reached through the symbolic link "+home+"/.cache/tool") {
		t.Errorf("a planted link: %v", err)
	}
	p.Write = []string{home + "/.cache", root + "/work"}
	rs, _, err := ruleset(p)
	if err != nil {
		t.Fatalf("the user's link: %v", err)
	}
	unix.Close(rs)

	// A link another run's agent could make: a --worktree run's learnings file in the
	// git directory, which a run in place lets its agent write (Shared).
	gitDir := root + "/repo/.git"
	if err := os.MkdirAll(gitDir+"/ralph", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(home+"/learnings.md", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(home, gitDir+"/ralph/x"); err != nil {
		t.Fatal(err)
	}
	p.Write = []string{gitDir + "/ralph/x/learnings.md"}
	if rs, _, err := ruleset(p); err == nil {
		unix.Close(rs)
	} else {
		t.Fatalf("with nothing shared, the link is not known to be an agent's: %v", err)
	}
	p.Shared = []string{gitDir}
	if _, _, err := ruleset(p); err == nil || !strings.Contains(err.Error(), "reached through the symbolic link "+gitDir+"/ralph/x") {
		t.Errorf("a link in what another run's agent may write: %v", err)
	}
}

// A directory an agent may write is known by its identity too, not only by its name:
// under another name (a bind mount; here /proc/self/root) it is the same directory.
func TestAgentWritableByIdentity(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(dir+"/sub", 0o755); err != nil {
		t.Fatal(err)
	}
	may := agentWritable([]string{dir})
	if !may(dir+"/sub") || !may(dir) {
		t.Error("a directory agents may write, by its name, is not known")
	}
	if !may("/proc/self/root" + dir + "/sub") {
		t.Error("the same directory under another name is not known")
	}
	if may(filepath.Dir(dir)) {
		t.Error("the directory above is taken for writable")
	}
}

// The home directory is an allow list: what the policy reveals in it is readable, and
// nothing else (the secrets a hide list misses included). A directory that appears
// after the rules were made is not readable, nor is a hidden path beneath a revealed
// one, even one that did not exist when the grants were worked out.
func TestLauncherHomeAllowList(t *testing.T) {
	s := needLandlock(t)
	root := t.TempDir()
	home, work := filepath.Join(root, "home"), filepath.Join(root, "work")
	files := map[string]string{
		".gitconfig": "GITCONFIG\n", "go/bin/tool": "TOOL\n", ".cargo/bin/cargo": "CARGO\n",
		".cargo/credentials.toml": "CARGOTOKEN\n", "dotfiles/vimrc": "VIMRC\n",
		".bash_history": "HISTORY\n", ".codex/auth.json": "CODEX\n", ".config/github-copilot/apps.json": "COPILOT\n",
		".terraformrc": "TERRAFORM\n", ".m2/settings.xml": "MAVEN\n", ".config/containers/auth.json": "PODMAN\n",
		".config/rclone/rclone.conf": "RCLONE\n", ".config/git/config": "GITXDG\n",
	}
	for f, text := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(home, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, f), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(home+"/dotfiles/vimrc", home+"/.vimrc"); err != nil {
		t.Fatal(err)
	}
	p := &Policy{ABI: min(s.ABI, maxABI), Write: []string{work, "/dev/null"}, Hide: HiddenIn(home, nil),
		Reveal: ReadableIn([]string{"HOME=" + home, "PATH=/usr/bin:/bin"}, []string{home + "/.vimrc"})}
	p.Read = ReadGrants(p.Hide, p.Reveal)
	// ~/.config/git, where git's credentials are hidden though there are none yet, is
	// granted entry by entry: credentials made during the attempt are not readable
	if slices.Contains(p.Read.Dirs, home+"/.config/git") || !slices.Contains(p.Read.Files, home+"/.config/git/config") {
		t.Errorf("~/.config/git is not granted entry by entry: %+v", p.Read)
	}
	// the next tool logs in after the rules are made: a directory no hide list names,
	// in a directory granted only in part, and the grants stay current
	if err := os.MkdirAll(home+"/.config/next-tool", 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(home+"/.config/next-tool/token", []byte("NEXT\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if !p.Read.Current(p.Hide, p.Reveal) {
		t.Fatal("the grants are not current")
	}
	if err := os.MkdirAll(home+"/.config/gh", 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(home+"/.config/gh/hosts.yml", []byte("GH\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// and git's credentials in a readable directory (a hidden path that did not exist)
	if err := os.MkdirAll(home+"/.config/git", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(home+"/.config/git/credentials", []byte("GITCRED\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	script := `for f in .gitconfig go/bin/tool .cargo/bin/cargo .vimrc .cargo/credentials.toml .bash_history .codex/auth.json \
	.config/github-copilot/apps.json .terraformrc .m2/settings.xml .config/containers/auth.json .config/rclone/rclone.conf \
	.config/next-tool/token .config/gh/hosts.yml .config/git/config .config/git/credentials; do cat "$1/$f" 2>/dev/null || echo "denied $f"; done`
	out, status, err := runLauncher(t, p, "sh", "-c", script, "sh", home)
	if err != nil || status != "" {
		t.Fatalf("launch: %v %q\n%s", err, status, out)
	}
	for _, w := range []string{"GITCONFIG", "TOOL", "CARGO", "VIMRC", "denied .cargo/credentials.toml", "denied .bash_history",
		"denied .codex/auth.json", "denied .config/github-copilot/apps.json", "denied .terraformrc", "denied .m2/settings.xml",
		"denied .config/containers/auth.json", "denied .config/rclone/rclone.conf", "denied .config/next-tool/token",
		"denied .config/gh/hosts.yml", "GITXDG", "denied .config/git/credentials"} {
		if !strings.Contains(out, w+"\n") {
			t.Errorf("no %q in the output:\n%s", w, out)
		}
	}
}

// The filter, laid out short (x32's numbers looked up in x86_64's list, jumps straight
// to the bodies), and in the layout for jumps too far for that, decides every call as
// the plain layout does: one jeq and one ja per number of every table. Every number
// below 1,100 of every table, with and without the x32 bit and other high bits, under
// each set of options, and arguments allowed and refused.
func TestSeccompFilterShortLayout(t *testing.T) {
	plain := func(tables []abiTable, bodies map[int][]unix.SockFilter) []unix.SockFilter {
		var prog []unix.SockFilter
		labels := map[string]int{}
		type fix struct {
			at    int
			label string
		}
		var fixes []fix
		jeq := func(k uint32, label string) {
			prog = append(prog, jump(opJeq, k, 0, 1))
			fixes = append(fixes, fix{len(prog), label})
			prog = append(prog, stmt(opJa, 0))
		}
		prog = append(prog, stmt(opLd, offArch))
		seen := map[uint32]bool{}
		for _, tb := range tables {
			if !seen[tb.arch] {
				seen[tb.arch] = true
				jeq(tb.arch, fmt.Sprintf("arch %#x", tb.arch))
			}
		}
		prog = append(prog, stmt(opRet, retAllow))
		for a := range seen {
			labels[fmt.Sprintf("arch %#x", a)] = len(prog)
			prog = append(prog, stmt(opLd, offNr))
			for _, u := range tables {
				for c := 0; u.arch == a && c < numCalls; c++ {
					if u.calls[c] >= 0 && bodies[c] != nil {
						jeq(uint32(u.calls[c])|u.or, fmt.Sprintf("call %d", c))
					}
				}
			}
			prog = append(prog, stmt(opRet, retAllow))
		}
		for c := 0; c < numCalls; c++ {
			if bodies[c] != nil {
				labels[fmt.Sprintf("call %d", c)] = len(prog)
				prog = append(prog, bodies[c]...)
			}
		}
		for _, f := range fixes {
			prog[f.at].K = uint32(labels[f.label] - f.at - 1)
		}
		return prog
	}
	argSets := [][6]uint32{{}, {4242, 4242, 4242, 4242}, {unix.AF_UNIX, 0, 0o4755, 0o6755}, {1, 0xffffffff, 1000, 100}, {0, 0, 0o644, 0}}
	for _, goarch := range goarchs {
		tables := abis(goarch)
		for _, o := range []filterOptions{{Unix: true, UID: 1000, GID: 100}, {UID: 1000, GID: 100, Notify: true},
			{Unix: true, Notify: true, UID: 1000, GID: 100}} {
			bodies := map[int][]unix.SockFilter{}
			for c := 0; c < numCalls; c++ {
				if b := body(c, o); len(b) > 0 {
					bodies[c] = b
				}
			}
			short, _ := seccompFilter(goarch, o)
			far, _ := filterLayout(tables, bodies, false) // the layout where a jump would not fit
			long := plain(tables, bodies)
			if goarch == "amd64" && len(short) >= len(long)*3/4 {
				t.Errorf("%s: %d instructions, the plain layout %d", goarch, len(short), len(long))
			}
			for _, arch := range []uint32{tables[0].arch, tables[len(tables)-1].arch, 0x12345678} {
				for nr := uint32(0); nr < 1100; nr++ {
					for _, high := range []uint32{0, x32Bit, 0x80000000, 0xc0000000, 0x20000000} {
						n := nr | high
						for _, args := range argSets {
							want := runBPF(t, long, arch, n, args)
							if got := runBPF(t, short, arch, n, args); got != want {
								t.Fatalf("%s %+v: arch %#x nr %#x args %v = %#x, the plain layout %#x", goarch, o, arch, n, args, got, want)
							}
							if high <= x32Bit {
								if got := runBPF(t, far, arch, n, args); got != want {
									t.Fatalf("%s %+v, far layout: arch %#x nr %#x args %v = %#x, the plain layout %#x", goarch, o, arch, n, args, got, want)
								}
							}
						}
					}
				}
			}
		}
	}
}
