package repofile

import (
	"io/fs"
	"os"
	"strconv"
	"syscall"
)

// openFile opens path for reading without following a final symlink and without blocking
// on a FIFO swapped in, and returns where the system says the open file is (the target
// of /proc/self/fd/N); "" when it cannot say.
func openFile(path string) (*os.File, string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, "", err
	}
	where, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil {
		return f, "", nil // no /proc: the checks before and after the open stand alone
	}
	return f, where, nil
}

// links is the number of names (hard links) of the file info describes; 1 when unknown.
func links(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
