package logrotation

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"

	"k8s.io/klog/v2"
)

// File is a log file kept under Max bytes.
type File struct {
	Path string
	Max  int64
}

// Keep checks files every interval until ctx ends.
func Keep(ctx context.Context, interval time.Duration, files ...File) {
	logger := klog.FromContext(ctx)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		for _, f := range files {
			if rotated, err := f.Check(); err != nil {
				logger.Error(err, "Keeping a log file small failed", "file", f.Path)
			} else if rotated {
				logger.V(2).Info("Rotated a log file", "file", f.Path, "max", f.Max)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Check rotates the file if it has passed its bound: its last Max bytes
// replace Path.1, and the file is truncated. A missing file is not an
// error (the guest has not started yet); a symlink or anything but a
// regular file is, and is left alone.
func (f File) Check() (bool, error) {
	fd, err := os.OpenFile(f.Path, os.O_RDWR|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return false, err
	}
	if !st.Mode().IsRegular() {
		return false, fmt.Errorf("%s is not a regular file (%s)", f.Path, st.Mode().Type())
	}
	size := st.Size()
	if size <= f.Max {
		return false, nil
	}
	if err := f.keepTail(fd, size); err != nil {
		return false, err
	}
	if err := fd.Truncate(0); err != nil {
		return false, fmt.Errorf("truncate %s: %w", f.Path, err)
	}
	return true, nil
}

// keepTail writes the last Max bytes of the first size bytes of fd to
// Path.1, through a temporary file renamed over it.
func (f File) keepTail(fd *os.File, size int64) error {
	older := f.Path + ".1"
	tmp, err := os.OpenFile(older+".tmp", os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(tmp, io.NewSectionReader(fd, size-f.Max, f.Max))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(older+".tmp", older)
	}
	if err != nil {
		os.Remove(older + ".tmp")
		return fmt.Errorf("keep the tail of %s: %w", f.Path, err)
	}
	return nil
}
