package podfs

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/fsnotify/fsnotify"
	"golang.org/x/sys/unix"
)

// WaitSocket returns once the directory dirName of d holds a unix socket
// named name, or with ctx's error once ctx ends. It watches the directory
// (inotify, through the checked directory's descriptor, never a path the
// tenant could swap) rather than polling it: a live migration's source
// connects a few milliseconds after the target's QEMU made its socket
// (MoveSocket). The directory must exist.
func (d Dir) WaitSocket(ctx context.Context, dirName, name string) error {
	if err := checkName(name); err != nil {
		return fmt.Errorf("wait for %s: %w", name, err)
	}
	where := filepath.Join(d.String(), dirName, name)
	dirfd, err := d.openDir(dirName)
	if err != nil {
		return fmt.Errorf("wait for %s: %w", where, err)
	}
	defer unix.Close(dirfd)
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("wait for %s: %w", where, err)
	}
	defer w.Close()
	// inotify follows the magic link to the held directory itself.
	if err := w.Add(fdPath(dirfd)); err != nil {
		return fmt.Errorf("wait for %s: watch: %w", where, err)
	}
	// Looked at after the watch is in place: a socket made before it is
	// found here, one made after comes as an event.
	for {
		var st unix.Stat_t
		switch err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); {
		case err == nil && st.Mode&unix.S_IFMT == unix.S_IFSOCK:
			return nil
		case err != nil && !errors.Is(err, unix.ENOENT):
			return fmt.Errorf("wait for %s: %w", where, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-w.Events:
			if !ok {
				return fmt.Errorf("wait for %s: the watch ended", where)
			}
			if filepath.Base(ev.Name) != name {
				continue
			}
		case err := <-w.Errors:
			return fmt.Errorf("wait for %s: %w", where, err)
		}
	}
}

// MoveSocket moves the unix socket name in the directory dirName of d to
// the same name in the same directory of to, replacing what to had there:
// a live migration within one node joins the target pod's incoming socket
// to the source pod's path, so that the source's QEMU connects to the
// target's directly, as on one host, where virt-handler would otherwise
// relay every byte (docs/migration.md "Within a node"). Both directories
// are resolved like every podfs access; only a socket is moved, and only
// one a launcher made (Pods.LauncherUID, never root's); the rename goes
// through the checked directories' descriptors and never follows a name
// (a symlink would move as itself). Should the tenant swap the name
// between the check and the rename, what arrived is removed again and an
// ErrWrongType returned: it stays in the tenant's own pods either way.
// Directories on different mounts (a memory-backed emptyDir) cannot take
// a rename: unix.EXDEV.
func (d Dir) MoveSocket(dirName, name string, to Dir) error {
	if err := checkName(name); err != nil {
		return fmt.Errorf("move %s: %w", name, err)
	}
	from := filepath.Join(d.String(), dirName, name)
	dest := filepath.Join(to.String(), dirName, name)
	src, err := d.openDir(dirName)
	if err != nil {
		return fmt.Errorf("move %s: %w", from, err)
	}
	defer unix.Close(src)
	dst, err := to.openDir(dirName)
	if err != nil {
		return fmt.Errorf("move %s to %s: %w", from, dest, err)
	}
	defer unix.Close(dst)
	fd, err := openat2(src, name, &unix.OpenHow{Flags: unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC, Resolve: resolve})
	if err != nil {
		return fmt.Errorf("move %s: %w", from, err)
	}
	var st unix.Stat_t
	err = unix.Fstat(fd, &st)
	unix.Close(fd)
	if err != nil {
		return fmt.Errorf("move %s: %w", from, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return fmt.Errorf("move %s: %w: it is %s, not a socket", from, ErrWrongType, typeName(st.Mode))
	}
	if err := d.pods.checkOwner(st.Uid); err != nil {
		return fmt.Errorf("move %s: %w", from, err)
	}
	if err := unix.Renameat(src, name, dst, name); err != nil {
		return fmt.Errorf("move %s to %s: %w", from, dest, err)
	}
	var moved unix.Stat_t
	if err := unix.Fstatat(dst, name, &moved, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fmt.Errorf("move %s to %s: after the move: %w", from, dest, err)
	}
	if moved.Dev != st.Dev || moved.Ino != st.Ino {
		if err := unix.Unlinkat(dst, name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("move %s to %s: it was replaced before the move, and removing what came: %w", from, dest, err)
		}
		return fmt.Errorf("move %s to %s: %w: it was replaced before the move", from, dest, ErrWrongType)
	}
	return nil
}

// openDir returns an O_PATH descriptor of the directory dirName of d.
func (d Dir) openDir(dirName string) (int, error) {
	if err := checkName(dirName); err != nil {
		return -1, fmt.Errorf("%s: %w", dirName, err)
	}
	parent, err := d.openSelfDir()
	if err != nil {
		return -1, err
	}
	defer unix.Close(parent)
	fd, err := openat2(parent, dirName, &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: resolve})
	if err != nil {
		return -1, fmt.Errorf("open %s: %w", dirName, err)
	}
	return fd, nil
}

// checkOwner accepts a file a launcher made: the launchers' uid, or any
// uid but root's when that is not known.
func (p Pods) checkOwner(uid uint32) error {
	switch {
	case p.LauncherUID >= 0 && int64(uid) != p.LauncherUID:
		return fmt.Errorf("%w: it belongs to uid %d, the launchers run as uid %d", ErrWrongPeer, uid, p.LauncherUID)
	case p.LauncherUID < 0 && uid == 0:
		return fmt.Errorf("%w: it belongs to root, which a launcher never is", ErrWrongPeer)
	}
	return nil
}
