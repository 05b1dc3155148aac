//go:build !linux

package repofile

import (
	"io/fs"
	"os"
	"syscall"
)

// openFile opens path for reading without following a final symlink and without
// blocking on a FIFO, as on Linux; this system cannot say where the open file is ("").
func openFile(path string) (*os.File, string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	return f, "", err
}

// links is the number of names of the file info describes: unknown here, 1.
func links(fs.FileInfo) uint64 { return 1 }
