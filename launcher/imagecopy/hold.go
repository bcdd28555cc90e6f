package imagecopy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"kubevirt.dev/virt/launcher/layout"
)

// HoldInterval is how often Hold looks for the launcher while it has not
// found one it can watch (exitOf).
const HoldInterval = time.Second

// Offer is a file Hold offers: Src (a file, or a directory holding exactly
// one regular file) and the Record it writes for it.
type Offer struct {
	Src, Record string
}

// Hold offers files from the container it runs in (the disk of a
// containerDisk volume, the kernel and initrd of a kernel-boot image): for
// each offer it finds the file and writes the record (layout.ContainerDisk:
// its own PID and the file's path), then waits, keeping the container and
// so its root filesystem alive for the launcher and QEMU, which open the
// files through /proc/<pid>/root.
//
// It returns when ctx ends (the kubelet's SIGTERM) or, once a process
// running the launcher binary was seen, when none is left: a container that
// outlived the launcher would keep the pod Running, and the node's
// resources reserved, after the guest has ended.
//
// A file it cannot offer is written to its record as an error, for the
// launcher to fail with, and returned only when Hold returns: exiting at
// once would leave the pod not ready and the VMI waiting without a word.
func Hold(ctx context.Context, offers []Offer, launcher string, interval time.Duration) error {
	var problem error
	recs := make([]layout.ContainerDisk, len(offers))
	for i, o := range offers {
		var err error
		if recs[i], err = offer(o.Src); err != nil {
			fmt.Fprintf(os.Stderr, "virt-imagecopy: %v\n", err)
			problem = errors.Join(problem, err)
		}
	}
	// Looked for before the records exist: a launcher that reads them and
	// ends at once has still been seen.
	_, seen := findLauncher(launcher)
	for i, o := range offers {
		if err := writeRecord(o.Record, recs[i]); err != nil {
			return fmt.Errorf("write %s: %w", o.Record, err)
		}
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		pid, running := findLauncher(launcher)
		if seen && !running {
			return problem
		}
		seen = seen || running
		// A launcher found is waited for through its pidfd: no wake-up at
		// all until it exits. Looking every second cost each VMI about
		// 0.05% of a CPU for its whole life (measured: 0.90 CPU-seconds
		// in 33 minutes, more than its launcher's 0.76), some 100
		// CPU-seconds an hour on a node of 61 guests. Without a pidfd,
		// it is looked for every interval.
		if exited := exitOf(pid, launcher); exited != nil {
			select {
			case <-ctx.Done():
				return problem
			case <-exited:
			}
			continue
		}
		select {
		case <-ctx.Done():
			return problem
		case <-t.C:
		}
	}
}

// exitOf is closed when the process pid, running launcher, has exited; nil
// when it cannot be watched (no pid, no pidfd: a kernel before 5.3 or a
// seccomp profile without pidfd_open, or the process gone or replaced).
func exitOf(pid int, launcher string) <-chan struct{} {
	if pid <= 0 {
		return nil
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return nil
	}
	// The pid may have been reused between the scan and the open: the
	// pidfd holds whichever process has it now, which must be the
	// launcher still.
	if !runs(pid, launcher) {
		unix.Close(fd)
		return nil
	}
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		defer unix.Close(fd)
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			// A pidfd is readable once its process has exited.
			if _, err := unix.Poll(fds, -1); err != unix.EINTR {
				return
			}
		}
	}()
	return exited
}

// offer is the record of the disk src, and the problem that leaves none.
func offer(src string) (layout.ContainerDisk, error) {
	file, err := source(src)
	if err == nil {
		file, err = filepath.Abs(file)
	}
	if err == nil {
		// The launcher opens it as this user: fail here, with the file's
		// own error, rather than there.
		var f *os.File
		if f, err = os.Open(file); err == nil {
			f.Close()
		}
	}
	if err != nil {
		return layout.ContainerDisk{Error: err.Error()}, err
	}
	return layout.ContainerDisk{PID: os.Getpid(), Path: file}, nil
}

// writeRecord writes rec to path through a temporary file, so that the
// launcher never reads half a record.
func writeRecord(path string, rec layout.ContainerDisk) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// findLauncher looks for a process of the PID namespace other than this
// one that was started as the binary launcher (argv[0]) and returns its
// PID. A zombie has no command line and does not count. Without /proc
// nothing can be told: it reports a launcher running, PID 0, so the holder
// keeps holding.
func findLauncher(launcher string) (pid int, running bool) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, true
	}
	self := os.Getpid()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		if runs(pid, launcher) {
			return pid, true
		}
	}
	return 0, false
}

// runs reports whether process pid was started as the binary launcher; a
// process gone since, or a zombie, does not.
func runs(pid int, launcher string) bool {
	cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return false
	}
	argv0, _, _ := bytes.Cut(cmdline, []byte{0})
	return string(argv0) == launcher
}
