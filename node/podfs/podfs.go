package podfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"kubevirt.dev/virt/launcher/layout"
)

// AnyLauncherUID is Pods.LauncherUID when the launchers' uid is not known
// (virt-handler's --launcher-run-as-user=-1: the launcher image's user).
const AnyLauncherUID = -1

// Pods is where the pods' directories are on this node and whom their
// sockets may be served by.
type Pods struct {
	// KubeletRoot is the kubelet's root directory as this process sees it.
	// It and the path to it are the node's own and trusted; everything
	// below its pods/ directory is not.
	KubeletRoot string
	// LauncherUID is the uid the launchers run as (virt-handler's
	// --launcher-run-as-user), the only peer a dialled socket may have.
	// AnyLauncherUID: any uid but root, and it must own the socket file
	// too, so a socket bound by one uid and served by another is refused.
	// virt-handler refuses 0 at its flags; tests that serve sockets
	// in-process may set their own uid, root included.
	LauncherUID int64
}

// PrivateDir is the launcher pod's private volume (layout.PrivateVolume):
// its sockets and its final state.
func (p Pods) PrivateDir(podUID string) Dir {
	return Dir{pods: p, podUID: podUID, rel: filepath.Join("pods", podUID, "volumes", "kubernetes.io~empty-dir", layout.PrivateVolume)}
}

// Dir is a directory of a pod on this node. It holds no descriptor: every
// access resolves it afresh from the kubelet's root, so a Dir kept across a
// pod's life never refers to a directory the pod swapped in.
type Dir struct {
	pods   Pods
	podUID string
	// rel is the directory below pods.KubeletRoot.
	rel string
}

// String is the directory's path on the host, for messages.
func (d Dir) String() string { return filepath.Join(d.pods.KubeletRoot, d.rel) }

// IsZero reports whether d names no directory.
func (d Dir) IsZero() bool { return d.rel == "" }

// Errors a caller may tell apart (errors.Is). A missing file is
// fs.ErrNotExist.
var (
	// ErrUnsafePath: a component of the path is a symlink or leads out of
	// the pod's directory.
	ErrUnsafePath = errors.New("unsafe path")
	// ErrWrongType: the file is not of the type expected (a FIFO, a device,
	// a directory or a symlink where a regular file or a socket belongs).
	ErrWrongType = errors.New("wrong file type")
	// ErrTooLarge: the file is bigger than the read's cap.
	ErrTooLarge = errors.New("file too large")
	// ErrWrongPeer: a socket is served by a process that is not a launcher.
	ErrWrongPeer = errors.New("socket served by the wrong peer")
)

// resolve is how every path below the kubelet's root is resolved: no
// symlink at any component, no magic link (/proc/self/fd-style), nothing
// outside the directory resolved from. Mount points are crossed: a
// memory-backed emptyDir is one.
const resolve = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// open returns an O_PATH descriptor of name below d and its fstat.
func (d Dir) open(name string) (int, *unix.Stat_t, error) {
	if d.IsZero() {
		return -1, nil, errors.New("no pod directory")
	}
	if err := checkName(d.podUID); err != nil {
		return -1, nil, fmt.Errorf("pod uid %q: %w", d.podUID, err)
	}
	if err := checkRel(name); err != nil {
		return -1, nil, fmt.Errorf("%s: %w", name, err)
	}
	root, err := unix.Open(d.pods.KubeletRoot, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, nil, fmt.Errorf("open the kubelet root %s: %w", d.pods.KubeletRoot, err)
	}
	defer unix.Close(root)
	path := filepath.Join(d.rel, name)
	fd, err := openat2(root, path, &unix.OpenHow{Flags: unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC, Resolve: resolve})
	if err != nil {
		return -1, nil, fmt.Errorf("open %s: %w", filepath.Join(d.pods.KubeletRoot, path), err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, nil, fmt.Errorf("stat %s: %w", filepath.Join(d.pods.KubeletRoot, path), err)
	}
	return fd, &st, nil
}

// openat2 retries EINTR and EAGAIN (the kernel's answer when a rename
// raced the lookup) a few times and names the errors of an unsafe path.
func openat2(dirfd int, path string, how *unix.OpenHow) (int, error) {
	var err error
	for range 8 {
		var fd int
		fd, err = unix.Openat2(dirfd, path, how)
		if err == nil {
			return fd, nil
		}
		if err != unix.EINTR && err != unix.EAGAIN {
			break
		}
	}
	switch {
	case errors.Is(err, unix.ELOOP):
		return -1, fmt.Errorf("%w: a component is a symlink: %w", ErrUnsafePath, err)
	case errors.Is(err, unix.EXDEV):
		return -1, fmt.Errorf("%w: it leads out of the pod's directory: %w", ErrUnsafePath, err)
	case errors.Is(err, unix.ENOSYS):
		return -1, fmt.Errorf("openat2 is not available (Linux 5.6 or later is needed): %w", err)
	}
	return -1, err
}

// checkRel refuses what is not a plain relative path: the kernel would
// refuse it too (RESOLVE_BENEATH), the error is clearer here.
func checkRel(name string) error {
	if name == "" || filepath.IsAbs(name) || filepath.Clean(name) != name {
		return fmt.Errorf("%w: not a clean relative path", ErrUnsafePath)
	}
	for _, c := range strings.Split(name, "/") {
		if err := checkName(c); err != nil {
			return err
		}
	}
	return nil
}

func checkName(c string) error {
	if c == "" || c == "." || c == ".." || strings.ContainsRune(c, '/') {
		return fmt.Errorf("%w: %q is not a file name", ErrUnsafePath, c)
	}
	return nil
}

// fdPath names the file behind an open descriptor. The kernel follows this
// magic link to the very inode the descriptor holds, whatever its path is
// now.
func fdPath(fd int) string { return "/proc/self/fd/" + strconv.Itoa(fd) }

// typeName names a file type for messages.
func typeName(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return "a regular file"
	case unix.S_IFDIR:
		return "a directory"
	case unix.S_IFLNK:
		return "a symlink"
	case unix.S_IFIFO:
		return "a FIFO"
	case unix.S_IFSOCK:
		return "a socket"
	case unix.S_IFCHR:
		return "a character device"
	case unix.S_IFBLK:
		return "a block device"
	}
	return fmt.Sprintf("a file of type %#o", mode&unix.S_IFMT)
}

// ReadFile reads the regular file name (a path relative to d) whole, if it
// holds at most limit bytes. A missing file is fs.ErrNotExist; anything but
// a regular file is ErrWrongType and is not opened for reading; a bigger
// file is ErrTooLarge and no more than limit+1 bytes of it are read.
func (d Dir) ReadFile(name string, limit int64) ([]byte, error) {
	fd, st, err := d.open(name)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	where := filepath.Join(d.String(), name)
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, fmt.Errorf("read %s: %w: it is %s, not a regular file", where, ErrWrongType, typeName(st.Mode))
	}
	if st.Size > limit {
		return nil, fmt.Errorf("read %s: %w: %d bytes, more than the %d allowed", where, ErrTooLarge, st.Size, limit)
	}
	// O_NONBLOCK: should the type check ever be bypassed, a FIFO still
	// cannot block the reader.
	f, err := os.OpenFile(fdPath(fd), os.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("read %s: reopen: %w", where, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", where, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("read %s: %w: it grew past the %d bytes allowed while read", where, ErrTooLarge, limit)
	}
	return data, nil
}

// Peer is who serves a dialled socket, as the kernel reports it
// (SO_PEERCRED): the process that listened, its PID in this process's PID
// namespace.
type Peer struct {
	PID      int
	UID, GID uint32
}

// Conn is a connection to a pod's socket and who serves it.
type Conn struct {
	*net.UnixConn
	Peer Peer
}

// Dial connects to the unix socket name (a path relative to d). Only a
// socket is connected to, and only when its peer is a launcher (see
// Pods.LauncherUID): anything else is ErrWrongType or ErrWrongPeer, and the
// connection is closed before a byte is exchanged.
func (d Dir) Dial(ctx context.Context, name string) (*Conn, error) {
	fd, st, err := d.open(name)
	if err != nil {
		return nil, fmt.Errorf("dial: %w", err)
	}
	defer unix.Close(fd)
	where := filepath.Join(d.String(), name)
	if st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return nil, fmt.Errorf("dial %s: %w: it is %s, not a socket", where, ErrWrongType, typeName(st.Mode))
	}
	// Through the checked descriptor, not the name: the tenant may have
	// swapped the name since. The path is also short, whatever the
	// directory's (a socket address holds 108 bytes).
	var dialer net.Dialer
	c, err := dialer.DialContext(ctx, "unix", fdPath(fd))
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", where, err)
	}
	conn := c.(*net.UnixConn)
	peer, err := peerOf(conn)
	if err == nil {
		err = d.pods.checkPeer(peer, st.Uid)
	}
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("dial %s: %w", where, err)
	}
	return &Conn{UnixConn: conn, Peer: peer}, nil
}

func peerOf(conn *net.UnixConn) (Peer, error) {
	raw, err := conn.SyscallConn()
	if err != nil {
		return Peer{}, err
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return Peer{}, err
	}
	if credErr != nil {
		return Peer{}, fmt.Errorf("peer credentials: %w", credErr)
	}
	return Peer{PID: int(cred.Pid), UID: cred.Uid, GID: cred.Gid}, nil
}

// checkPeer accepts the peer of a socket whose file fileUID owns.
func (p Pods) checkPeer(peer Peer, fileUID uint32) error {
	switch {
	case p.LauncherUID >= 0 && int64(peer.UID) != p.LauncherUID:
		return fmt.Errorf("%w: pid %d runs as uid %d, launchers as uid %d", ErrWrongPeer, peer.PID, peer.UID, p.LauncherUID)
	case p.LauncherUID < 0 && peer.UID == 0:
		return fmt.Errorf("%w: pid %d runs as root, a launcher never does", ErrWrongPeer, peer.PID)
	case p.LauncherUID < 0 && peer.UID != fileUID:
		return fmt.Errorf("%w: pid %d runs as uid %d, the socket file is uid %d's", ErrWrongPeer, peer.PID, peer.UID, fileUID)
	}
	return nil
}

// MaxPodDirs caps how many pod directories PodUIDs returns: a node runs
// at most a few hundred pods (the kubelet's maxPods is 110 by default).
const MaxPodDirs = 4096

// PodUIDs are the names of the pod directories below the kubelet's
// pods/ directory: the UIDs of the pods the kubelet has, or had, on this
// node, including pods no longer in the API (force-deleted while the node
// was away: the kubelet kills their containers once it notices). The
// directory is the kubelet's (trusted); the names are checked anyway and
// at most MaxPodDirs are returned. A missing pods/ is no pod.
func (p Pods) PodUIDs() ([]string, error) {
	root, err := unix.Open(p.KubeletRoot, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open the kubelet root %s: %w", p.KubeletRoot, err)
	}
	defer unix.Close(root)
	fd, err := openat2(root, "pods", &unix.OpenHow{Flags: unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: resolve})
	if errors.Is(err, unix.ENOENT) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", filepath.Join(p.KubeletRoot, "pods"), err)
	}
	dir := os.NewFile(uintptr(fd), filepath.Join(p.KubeletRoot, "pods"))
	defer dir.Close()
	var uids []string
	for len(uids) < MaxPodDirs {
		entries, err := dir.ReadDir(256)
		for _, e := range entries {
			if e.IsDir() && checkName(e.Name()) == nil && len(uids) < MaxPodDirs {
				uids = append(uids, e.Name())
			}
		}
		if errors.Is(err, io.EOF) || (err == nil && len(entries) == 0) {
			break
		}
		if err != nil {
			return uids, fmt.Errorf("read %s: %w", dir.Name(), err)
		}
	}
	return uids, nil
}
