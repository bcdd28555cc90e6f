package imagecopy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"kubevirt.dev/virt/launcher/layout"
)

// HoldInterval is how often Hold looks for the launcher.
const HoldInterval = time.Second

// Hold offers the disk of a containerDisk volume from the container it runs
// in: it finds the disk (src, or the only regular file in the directory
// src), writes record (layout.ContainerDisk: its own PID and the disk's
// path) and waits, keeping the container and so its root filesystem alive
// for the launcher and QEMU, which open the disk through /proc/<pid>/root.
//
// It returns when ctx ends (the kubelet's SIGTERM) or, once a process
// running the launcher binary was seen, when none is left: a container that
// outlived the launcher would keep the pod Running, and the node's
// resources reserved, after the guest has ended.
//
// A disk it cannot offer is written to the record as an error, for the
// launcher to fail the volume with, and returned only when Hold returns:
// exiting at once would leave the pod not ready and the VMI waiting without
// a word.
func Hold(ctx context.Context, src, record, launcher string, interval time.Duration) error {
	rec, problem := offer(src)
	if problem != nil {
		fmt.Fprintf(os.Stderr, "virt-imagecopy: %v\n", problem)
	}
	// Looked for before the record exists: a launcher that reads it and
	// ends at once has still been seen.
	seen := launcherRunning(launcher)
	if err := writeRecord(record, rec); err != nil {
		return fmt.Errorf("write %s: %w", record, err)
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return problem
		case <-t.C:
		}
		running := launcherRunning(launcher)
		if seen && !running {
			return problem
		}
		seen = seen || running
	}
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

// launcherRunning reports whether a process of the PID namespace other than
// this one was started as the binary launcher (argv[0]). A zombie has no
// command line and does not count.
func launcherRunning(launcher string) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		// Without /proc nothing can be told: keep holding.
		return true
	}
	self := os.Getpid()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			// Gone since the listing.
			continue
		}
		argv0, _, _ := bytes.Cut(cmdline, []byte{0})
		if string(argv0) == launcher {
			return true
		}
	}
	return false
}
