package kernelboot

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kubevirt.dev/virt/launcher/layout"
)

func writeRecord(t *testing.T, dir, file string, rec layout.ContainerDisk) {
	t.Helper()
	// Whole, as the holder writes it (virt-imagecopy renames it in).
	b, _ := json.Marshal(rec)
	tmp := filepath.Join(dir, ".record")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, layout.KernelBootRecord(dir, file)); err != nil {
		t.Fatal(err)
	}
}

// The kernel and initrd are linked once their records come, and read
// through the holder's /proc/<pid>/root (here this process's own).
func TestLinkWaitsForTheRecords(t *testing.T) {
	dir, img := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(img, "vmlinuz"), []byte("kernel"), 0o644)
	os.WriteFile(filepath.Join(img, "initrd.gz"), []byte("initrd"), 0o644)
	done := make(chan error, 1)
	go func() {
		done <- Link(t.Context(), dir, []string{layout.KernelName, layout.InitrdName}, 5*time.Millisecond)
	}()
	writeRecord(t, dir, layout.KernelName, layout.ContainerDisk{PID: os.Getpid(), Path: filepath.Join(img, "vmlinuz")})
	select {
	case err := <-done:
		t.Fatalf("Link returned (%v) before the initrd's record", err)
	case <-time.After(50 * time.Millisecond):
	}
	writeRecord(t, dir, layout.InitrdName, layout.ContainerDisk{PID: os.Getpid(), Path: filepath.Join(img, "initrd.gz")})
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Link did not return")
	}
	for path, want := range map[string]string{layout.Kernel(dir): "kernel", layout.Initrd(dir): "initrd"} {
		if b, err := os.ReadFile(path); err != nil || string(b) != want {
			t.Errorf("%s: %q, %v; want %q", path, b, err, want)
		}
	}
}

// A record of a missing file fails the boot with the holder's words; a
// record that never comes ends with the context.
func TestLinkErrors(t *testing.T) {
	dir := t.TempDir()
	writeRecord(t, dir, layout.KernelName, layout.ContainerDisk{Error: "source /boot/vmlinuz: no such file or directory"})
	err := Link(t.Context(), dir, []string{layout.KernelName}, time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "no kernel: source /boot/vmlinuz") {
		t.Errorf("Link = %v, want the holder's error", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	err = Link(ctx, dir, []string{layout.InitrdName}, time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "has not offered its initrd") {
		t.Errorf("Link without a record = %v, want it to name the initrd", err)
	}
}
