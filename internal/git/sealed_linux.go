package git

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// sealedCopy returns a file holding content that nobody can change any more, this
// process included: a memfd sealed against writing, growing and shrinking. The hook
// runs from it (/proc/self/fd/N in the child), so no process can swap what runs
// between git-ralph's last look at the hook and its start.
func sealedCopy(name string, content []byte) (*os.File, error) {
	fd, err := unix.MemfdCreate("ralph-"+name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING|unix.MFD_EXEC)
	if errors.Is(err, unix.EINVAL) { // a kernel before 6.3 knows no MFD_EXEC
		fd, err = unix.MemfdCreate("ralph-"+name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	}
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), "ralph-"+name)
	if _, err := f.Write(content); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS,
		unix.F_SEAL_SEAL|unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
