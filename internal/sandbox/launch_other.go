//go:build !linux

package sandbox

import (
	"fmt"
	"os"
	"runtime"
)

// Probe says why there is no sandbox here: Landlock is Linux's.
func Probe() Support { return Support{Why: "Landlock is Linux's; this is " + runtime.GOOS} }

// Main is the launcher; on this system it cannot restrict anything, so it refuses.
func Main(args []string) int {
	fmt.Fprintln(os.Stderr, "git-ralph: sandbox: Landlock is Linux's; this is "+runtime.GOOS)
	return 127
}
