package surface

import "golang.org/x/sys/unix"

// ctime is st's change time in nanoseconds: what no chmod, utime or write can set back.
func ctime(st *unix.Stat_t) int64 { return st.Ctim.Nano() }
