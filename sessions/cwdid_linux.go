package sessions

import (
	"golang.org/x/sys/unix"
)

// statCwd is stat(2) of abs for checkCwd, as statx(2), which also says
// when the directory was made: one call, as the os.Stat it replaces.
func statCwd(abs string) (id cwdID, isDir bool, err error) {
	var st unix.Statx_t
	for {
		err = unix.Statx(unix.AT_FDCWD, abs, 0, unix.STATX_TYPE|unix.STATX_INO|unix.STATX_BTIME, &st)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return cwdID{}, false, err
	}
	id = cwdID{dev: unix.Mkdev(st.Dev_major, st.Dev_minor), ino: st.Ino}
	if st.Mask&unix.STATX_BTIME != 0 {
		id.birth = st.Btime.Sec*1e9 + int64(st.Btime.Nsec)
	}
	return id, st.Mode&unix.S_IFMT == unix.S_IFDIR, nil
}
