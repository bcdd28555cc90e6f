package migrationproxy

import (
	"errors"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// pipeSize is the kernel pipe between two sockets (spliceStream): a unix
// socket's send buffer is about 200 KiB, and a larger pipe moves more of
// it per call. 1 MiB is the default limit for an unprivileged pipe too.
const pipeSize = 1 << 20

// copyStream copies src to dst until src ended. Between two plain sockets
// (a migration within one node: the two pods' unix sockets) the kernel
// moves the data with splice(2); with TLS on either side, the process
// copies it.
func copyStream(dst, src halfCloser) (int64, error) {
	d, dok := dst.(syscall.Conn)
	s, sok := src.(syscall.Conn)
	if dok && sok {
		return spliceStream(d, s)
	}
	return io.CopyBuffer(dst, src, make([]byte, copyBufferSize))
}

// spliceStream moves src's stream to dst through a pipe: splice(2) hands
// the pages of src's receive queue to the pipe and from it to dst's send
// queue, without copying them into this process. On a migration within a
// node the guest's memory passes here while both QEMUs want a CPU each;
// a copy through user space took CPU from them (Go's own splice covers
// only TCP). It returns at src's end of stream, or at the first error.
func spliceStream(dst, src syscall.Conn) (int64, error) {
	rs, err := src.SyscallConn()
	if err != nil {
		return 0, err
	}
	rd, err := dst.SyscallConn()
	if err != nil {
		return 0, err
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		return 0, os.NewSyscallError("pipe2", err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	size := pipeSize
	if _, err := unix.FcntlInt(uintptr(p[1]), unix.F_SETPIPE_SZ, pipeSize); err != nil {
		size = 64 << 10 // the default pipe: only slower
	}
	var written int64
	for {
		// The pipe is empty here: each chunk is drained before the next.
		n, err := spliceOnce(rs.Read, func(fd int) (int, error) {
			n, err := unix.Splice(fd, nil, p[1], nil, size, unix.SPLICE_F_MOVE|unix.SPLICE_F_NONBLOCK)
			return int(n), err
		})
		if err != nil {
			return written, err
		}
		if n == 0 {
			return written, nil // end of stream
		}
		for n > 0 {
			m, err := spliceOnce(rd.Write, func(fd int) (int, error) {
				m, err := unix.Splice(p[0], nil, fd, nil, n, unix.SPLICE_F_MOVE|unix.SPLICE_F_NONBLOCK)
				return int(m), err
			})
			if err != nil {
				return written, err
			}
			n -= m
			written += int64(m)
		}
	}
}

// spliceOnce runs call on the socket's descriptor through wait (a
// RawConn's Read or Write), which parks the goroutine in Go's poller while
// the socket has nothing to read or no room to write (EAGAIN).
func spliceOnce(wait func(func(uintptr) bool) error, call func(fd int) (int, error)) (int, error) {
	var n int
	var err error
	werr := wait(func(fd uintptr) bool {
		for {
			n, err = call(int(fd))
			if !errors.Is(err, unix.EINTR) {
				return !errors.Is(err, unix.EAGAIN)
			}
		}
	})
	if werr != nil {
		return 0, werr
	}
	if err != nil {
		return 0, os.NewSyscallError("splice", err)
	}
	return n, nil
}
