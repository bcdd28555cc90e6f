package socket

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Listen listens on the unix socket at path, binding through its
// directory. Closing the listener removes the socket file.
func Listen(path string) (net.Listener, error) {
	dir, name := filepath.Split(path)
	if name == "" {
		return nil, fmt.Errorf("listen on %s: not a socket path", path)
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: open its directory: %w", path, err)
	}
	defer unix.Close(fd)
	ln, err := net.Listen("unix", fmt.Sprintf("/proc/self/fd/%d/%s", fd, name))
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	// The listener would unlink its /proc/self/fd path, which no longer
	// names the directory once fd is closed.
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	return &listener{Listener: ln, path: path}, nil
}

type listener struct {
	net.Listener
	path string
}

func (l *listener) Close() error {
	err := l.Listener.Close()
	if rerr := unix.Unlink(l.path); rerr != nil && !errors.Is(rerr, unix.ENOENT) && err == nil {
		// Unlink takes the long path fine: only socket addresses are limited.
		err = fmt.Errorf("remove %s: %w", l.path, rerr)
	}
	return err
}
