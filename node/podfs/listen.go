package podfs

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"
)

// Listener is a unix socket virt-handler serves inside a pod's directory
// (the source side of a live migration: the launcher's libvirt and QEMU
// connect to it). It accepts only connections from a launcher (the peer
// check of Dial), and on Close removes its socket through the directory
// descriptor it held from the start, never through a path.
type Listener struct {
	ln    *net.UnixListener
	pods  Pods
	where string

	mu    sync.Mutex
	dirfd int // the checked directory, -1 once closed
	name  string
}

// Listen creates the unix socket name in the directory dirName of d (made
// when missing) and listens on it. Both are resolved like every podfs
// access (no symlink, nothing outside the pod's directory); the socket is
// bound through the checked directory's descriptor (/proc/self/fd/N/name),
// so a name the tenant swaps meanwhile never redirects it. A file already
// at name is removed first (a stale socket of an earlier migration, or
// whatever the tenant put there: unlinkat never follows it). The socket
// and a directory Listen made belong to the launchers' uid
// (Pods.LauncherUID), so the launcher, and nobody else but root, may
// connect; with AnyLauncherUID the socket is world-writable inside a
// directory only the pod reaches.
func (d Dir) Listen(dirName, name string) (*Listener, error) {
	if err := checkName(dirName); err != nil {
		return nil, fmt.Errorf("listen: %s: %w", dirName, err)
	}
	if err := checkName(name); err != nil {
		return nil, fmt.Errorf("listen: %s: %w", name, err)
	}
	where := filepath.Join(d.String(), dirName, name)
	dirfd, err := d.mkdir(dirName)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", where, err)
	}
	l, err := d.listenIn(dirfd, name, where)
	if err != nil {
		unix.Close(dirfd)
		return nil, fmt.Errorf("listen %s: %w", where, err)
	}
	return l, nil
}

// mkdir returns an O_PATH descriptor of the directory dirName of d, made
// (and handed to the launchers' uid) when missing.
func (d Dir) mkdir(dirName string) (int, error) {
	parent, err := d.openSelfDir()
	if err != nil {
		return -1, err
	}
	defer unix.Close(parent)
	made := false
	switch err := unix.Mkdirat(parent, dirName, 0o700); {
	case err == nil:
		made = true
	case errors.Is(err, unix.EEXIST):
	default:
		return -1, fmt.Errorf("mkdir %s: %w", dirName, err)
	}
	fd, err := openat2(parent, dirName, &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: resolve})
	if err != nil {
		return -1, fmt.Errorf("open %s: %w", dirName, err)
	}
	if made {
		if err := d.pods.handOver(fd, 0o700); err != nil {
			unix.Close(fd)
			return -1, fmt.Errorf("%s: %w", dirName, err)
		}
	}
	return fd, nil
}

// openSelf returns an O_PATH descriptor of d itself and its fstat.
func (d Dir) openSelf() (int, *unix.Stat_t, error) {
	if d.IsZero() {
		return -1, nil, errors.New("no pod directory")
	}
	if err := checkName(d.podUID); err != nil {
		return -1, nil, fmt.Errorf("pod uid %q: %w", d.podUID, err)
	}
	root, err := unix.Open(d.pods.KubeletRoot, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, nil, fmt.Errorf("open the kubelet root %s: %w", d.pods.KubeletRoot, err)
	}
	defer unix.Close(root)
	fd, err := openat2(root, d.rel, &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: resolve})
	if err != nil {
		return -1, nil, fmt.Errorf("open %s: %w", d, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, nil, fmt.Errorf("stat %s: %w", d, err)
	}
	return fd, &st, nil
}

// openSelfDir returns an O_PATH descriptor of d itself, which must be a
// directory.
func (d Dir) openSelfDir() (int, error) {
	fd, st, err := d.openSelf()
	if err != nil {
		return -1, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		unix.Close(fd)
		return -1, fmt.Errorf("%w: the pod's directory is %s", ErrWrongType, typeName(st.Mode))
	}
	return fd, nil
}

// handOver gives the file of the O_PATH descriptor fd to the launchers'
// uid with mode, or, when that uid is not known, opens it to everyone
// (mode with the owner's bits for all).
func (p Pods) handOver(fd int, mode uint32) error {
	if p.LauncherUID >= 0 {
		if p.LauncherUID == int64(os.Geteuid()) {
			return nil
		}
		// AT_EMPTY_PATH: the descriptor's own file, never a name.
		err := unix.Fchownat(fd, "", int(p.LauncherUID), -1, unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW)
		if err == nil {
			return nil
		}
		// virt-handler runs without CAP_CHOWN (docs/security.md): the file
		// is opened to everyone instead. Only the launcher's uid gets in:
		// the pod's 0700 migration directory belongs to it, and a
		// Listener accepts no other peer (SO_PEERCRED).
		if !errors.Is(err, unix.EPERM) {
			return fmt.Errorf("chown to uid %d: %w", p.LauncherUID, err)
		}
	}
	owner := mode & 0o700 >> 6
	// Through the descriptor's magic link: the very inode checked.
	if err := unix.Chmod(fdPath(fd), owner<<6|owner<<3|owner); err != nil {
		return fmt.Errorf("chmod: %w", err)
	}
	return nil
}

func (d Dir) listenIn(dirfd int, name, where string) (*Listener, error) {
	if err := unix.Unlinkat(dirfd, name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return nil, fmt.Errorf("remove the old %s: %w", name, err)
	}
	// The kernel resolves /proc/self/fd/N to the held directory; only the
	// last component is looked up in it, and bind never follows it.
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Net: "unix", Name: fdPath(dirfd) + "/" + name})
	if err != nil {
		return nil, err
	}
	// Go would unlink the path string on Close, by then naming whatever
	// descriptor N is: Close unlinks through the held descriptor instead.
	ln.SetUnlinkOnClose(false)
	l := &Listener{ln: ln, pods: d.pods, where: where, dirfd: dirfd, name: name}
	fd, err := openat2(dirfd, name, &unix.OpenHow{Flags: unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC, Resolve: resolve})
	if err != nil {
		l.Close()
		return nil, fmt.Errorf("open the new socket: %w", err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		l.Close()
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFSOCK || st.Uid != uint32(os.Geteuid()) {
		l.Close()
		return nil, fmt.Errorf("%w: the new socket was replaced by %s of uid %d", ErrWrongType, typeName(st.Mode), st.Uid)
	}
	if err := d.pods.handOver(fd, 0o600); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// Accept waits for the next connection from a launcher; a connection from
// anyone else is closed unanswered and not returned.
func (l *Listener) Accept() (*Conn, error) {
	for {
		c, err := l.ln.AcceptUnix()
		if err != nil {
			return nil, err
		}
		peer, err := peerOf(c)
		if err == nil {
			err = l.pods.checkAcceptedPeer(peer)
		}
		if err != nil {
			c.Close()
			continue
		}
		return &Conn{UnixConn: c, Peer: peer}, nil
	}
}

// checkAcceptedPeer accepts a launcher as the client of a socket of
// virt-handler's.
func (p Pods) checkAcceptedPeer(peer Peer) error {
	switch {
	case p.LauncherUID >= 0 && int64(peer.UID) != p.LauncherUID:
		return fmt.Errorf("%w: pid %d runs as uid %d, launchers as uid %d", ErrWrongPeer, peer.PID, peer.UID, p.LauncherUID)
	case p.LauncherUID < 0 && peer.UID == 0:
		return fmt.Errorf("%w: pid %d runs as root, a launcher never does", ErrWrongPeer, peer.PID)
	}
	return nil
}

// String is the socket's path on the host, for messages.
func (l *Listener) String() string { return l.where }

// Close stops listening and removes the socket (through the directory's
// descriptor). It may be called more than once.
func (l *Listener) Close() error {
	err := l.ln.Close()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.dirfd >= 0 {
		if uerr := unix.Unlinkat(l.dirfd, l.name, 0); uerr != nil && !errors.Is(uerr, unix.ENOENT) && err == nil {
			err = fmt.Errorf("remove %s: %w", l.where, uerr)
		}
		unix.Close(l.dirfd)
		l.dirfd = -1
	}
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// Addr is the listener's address (/proc/self/fd/N/name, meaningful only in
// this process while it listens).
func (l *Listener) Addr() net.Addr { return l.ln.Addr() }
