package hostpath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// Owner is the user and group a directory is handed to.
type Owner struct {
	UID, GID int
}

// Result says what Prepare found and did.
type Result struct {
	// Created: the directory did not exist.
	Created bool
	// Chowned and Chmoded: the owner or mode had to change.
	Chowned, Chmoded bool
}

// Prepare makes dir (and its missing parents, mode 0755) a directory
// owned by owner with mode perm. A dir that exists as anything but a
// directory, a symlink included, is refused: the handler would otherwise
// hand another file to the launchers' user.
//
// Changing the owner of a directory takes CAP_CHOWN; changing the mode of a
// directory the process does not own (a second start, after the first
// handed it over) takes CAP_FOWNER. Nothing is changed when nothing
// differs, so an unprivileged process can prepare its own directories.
func Prepare(dir string, owner Owner, perm fs.FileMode) (Result, error) {
	var res Result
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		res.Created = true
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, fmt.Errorf("create %s: %w", dir, err)
	}
	// Every change goes through one descriptor of the directory itself,
	// opened without following a symlink: what was checked is what is
	// changed.
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.ENOTDIR):
		return res, fmt.Errorf("prepare %s: not a directory (a symlink or another file)", dir)
	case err != nil:
		return res, fmt.Errorf("open %s: %w", dir, err)
	}
	defer unix.Close(fd)

	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return res, fmt.Errorf("stat %s: %w", dir, err)
	}
	// The mode first: while root still owns a fresh directory, root needs
	// no CAP_FOWNER to change it.
	if fs.FileMode(st.Mode)&fs.ModePerm != perm.Perm() || st.Mode&(unix.S_ISUID|unix.S_ISGID|unix.S_ISVTX) != 0 {
		if err := unix.Fchmod(fd, uint32(perm.Perm())); err != nil {
			return res, fmt.Errorf("chmod %s to %#o: %w", dir, perm.Perm(), err)
		}
		res.Chmoded = true
	}
	if int(st.Uid) != owner.UID || int(st.Gid) != owner.GID {
		if err := unix.Fchown(fd, owner.UID, owner.GID); err != nil {
			return res, fmt.Errorf("chown %s to %d:%d: %w", dir, owner.UID, owner.GID, err)
		}
		res.Chowned = true
	}
	return res, nil
}
