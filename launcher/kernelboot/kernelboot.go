// Package kernelboot puts the kernel and initrd of
// spec.domain.firmware.kernelBoot where the domain expects them
// (layout.Kernel, layout.Initrd) without copying them: the kernel-boot
// image runs as a container of the pod (virt-imagecopy hold), which records
// its PID and each file's path (layout.KernelBootRecord), and the launcher
// links each file to it through /proc/<pid>/root, as container disks are
// opened. The links have the same path in every pod of the VMI, so a
// migration's domain XML fits its target, whose links lead to its own
// container.
package kernelboot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"kubevirt.dev/virt/launcher/layout"
)

// Link waits for the record of each of files (layout.KernelName,
// layout.InitrdName) below dir, checking every interval, and links the
// file to the path the domain opens, or returns ctx's error. A record
// that says its container found no file is an error: the guest cannot boot.
func Link(ctx context.Context, dir string, files []string, interval time.Duration) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for _, file := range files {
		for {
			done, err := link(dir, file)
			if err != nil {
				return fmt.Errorf("kernel boot: %w", err)
			}
			if done {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("kernel boot: the container of the kernel-boot image has not offered its %s: %w", file, context.Cause(ctx))
			case <-t.C:
			}
		}
	}
	return nil
}

// link links file if its record is there, and reports whether it was.
func link(dir, file string) (bool, error) {
	rec, err := layout.ReadContainerDisk(layout.KernelBootRecord(dir, file))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if rec.Error != "" {
		return false, fmt.Errorf("the kernel-boot image has no %s: %s", file, rec.Error)
	}
	// Through a temporary name: the path is replaced whole, never missing
	// or half written (a restarted launcher links again).
	dst := filepath.Join(dir, file)
	tmp := filepath.Join(dir, "."+file+".tmp")
	os.Remove(tmp)
	if err := os.Symlink(rec.Source(), tmp); err != nil {
		return false, err
	}
	if err := os.Rename(tmp, dst); err != nil {
		os.Remove(tmp)
		return false, err
	}
	return true, nil
}

// Missing are those of files whose container has not written the record
// yet (what a launcher that is not ready still waits for).
func Missing(dir string, files []string) []string {
	var missing []string
	for _, file := range files {
		if _, err := os.Stat(layout.KernelBootRecord(dir, file)); errors.Is(err, fs.ErrNotExist) {
			missing = append(missing, file)
		}
	}
	return missing
}
