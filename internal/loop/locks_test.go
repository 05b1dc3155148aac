package loop

import (
	"errors"
	"strings"
	"testing"

	"github.com/git-ralph/git-ralph/internal/git"
)

func TestLockError(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string // "error: …" and "hint: …" lines
	}{
		{
			name: "open",
			err:  &git.LockHeldError{Name: ".git/index.lock", PID: 42, Command: "git commit -a", Open: true},
			want: "error: .git/index.lock is held by a running process: pid 42 (git commit -a)\n" +
				"hint: let that process end (or end it: kill 42), then run 'git ralph start x' again; nothing was changed",
		},
		{
			name: "git running",
			err:  &git.LockHeldError{Name: ".git/index.lock", PID: 42, Command: "git commit -a"},
			want: "error: .git/index.lock may be in use: git is running in this repository as pid 42 (git commit -a)\n" +
				"hint: let that git command end, then run 'git ralph start x' again; nothing was changed",
		},
		{
			name: "no proc",
			err:  &git.LockUnknownError{Names: []string{".git/index.lock"}, Paths: []string{"/r/.git/index.lock"}},
			want: "error: .git/index.lock exists and git-ralph cannot tell whether a git command still uses it\n" +
				"hint: if no git command is running in this repository, remove it: rm /r/.git/index.lock\n" +
				"hint: then run 'git ralph start x' again; nothing was changed",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := lockError(tt.err, "git ralph start x")
			var le *Error
			if !errors.As(err, &le) {
				t.Fatalf("got %T %v, want *Error", err, err)
			}
			got := "error: " + le.Error()
			for _, h := range le.Hints() {
				got += "\nhint: " + h
			}
			if got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
			if !errors.Is(err, tt.err) {
				t.Errorf("the git error is not wrapped")
			}
		})
	}
	if err := lockError(nil, "x"); err != nil {
		t.Errorf("lockError(nil) = %v", err)
	}
	other := errors.New("disk on fire")
	if err := lockError(other, "x"); err != other || strings.Contains(err.Error(), "hint") {
		t.Errorf("lockError(other) = %v", err)
	}
}
