package term

import (
	"errors"
	"os/exec"
	"runtime"
)

// ErrNoOpener is returned by Open where no desktop opener is installed.
var ErrNoOpener = errors.New("no desktop opener found")

// Open hands path to the desktop's opener (xdg-open, open, or Windows' file handler)
// and returns without waiting for the viewer. The path is one argv entry, never
// passed through a shell.
func Open(path string) error {
	var argv []string
	switch runtime.GOOS {
	case "darwin":
		argv = []string{"open", path}
	case "windows":
		argv = []string{"rundll32", "url.dll,FileProtocolHandler", path}
	default:
		argv = []string{"xdg-open", path}
	}
	bin, err := exec.LookPath(argv[0])
	if err != nil {
		return ErrNoOpener
	}
	cmd := exec.Command(bin, argv[1:]...)
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }() // reap it; the viewer outlives us
	return nil
}
