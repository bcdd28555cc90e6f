package imagecopy

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"kubevirt.dev/virt/launcher/layout"
)

// fakeLauncher starts a process whose argv[0] is a path of its own, as
// /usr/bin/virt-launcher is the compute container's.
func fakeLauncher(t *testing.T) (string, *exec.Cmd) {
	t.Helper()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "fake-launcher")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	// The parent of an exec resumes before the kernel has set the new
	// program's arguments up: until then its command line reads empty.
	err = wait.PollUntilContextTimeout(t.Context(), time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		_, running := findLauncher(bin)
		return running, nil
	})
	if err != nil {
		t.Fatalf("the fake launcher's command line: %v", err)
	}
	return bin, cmd
}

func readRecord(t *testing.T, path string) layout.ContainerDisk {
	t.Helper()
	var rec layout.ContainerDisk
	err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return false, nil
		}
		return true, json.Unmarshal(b, &rec)
	})
	if err != nil {
		t.Fatalf("record %s: %v", path, err)
	}
	return rec
}

func startHold(t *testing.T, ctx context.Context, src, record, launcher string) <-chan error {
	t.Helper()
	return startHoldEvery(t, ctx, src, record, launcher, 10*time.Millisecond)
}

// startHoldEvery runs Hold looking for the launcher every interval.
func startHoldEvery(t *testing.T, ctx context.Context, src, record, launcher string, interval time.Duration) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- Hold(ctx, []Offer{{Src: src, Record: record}}, launcher, interval) }()
	return done
}

// endsWithTheLauncher checks that Hold (done) runs while the fake
// launcher cmd does, and returns nil once it was killed.
func endsWithTheLauncher(t *testing.T, done <-chan error, cmd *exec.Cmd) {
	t.Helper()
	select {
	case err := <-done:
		t.Fatalf("Hold returned (%v) while the launcher runs", err)
	default:
	}
	cmd.Process.Kill()
	cmd.Wait()
	if err := waitDone(t, done); err != nil {
		t.Errorf("Hold after the launcher ended: %v, want nil", err)
	}
}

func waitDone(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("Hold did not return")
		return nil
	}
}

// Hold records its PID and the only file of the source directory, holds
// while the launcher runs and returns once it has gone.
func TestHoldFollowsTheLauncher(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "disk", "rhel.qcow2"), []byte("QFI\xfbdisk"))
	record := filepath.Join(dir, "disks", "root", layout.ContainerDiskRecordName)
	launcher, cmd := fakeLauncher(t)

	done := startHold(t, t.Context(), filepath.Join(dir, "disk"), record, launcher)
	rec := readRecord(t, record)
	want := layout.ContainerDisk{PID: os.Getpid(), Path: filepath.Join(dir, "disk", "rhel.qcow2")}
	if rec != want {
		t.Errorf("record %+v, want %+v", rec, want)
	}
	b, err := os.ReadFile(rec.Source())
	if err != nil || string(b) != "QFI\xfbdisk" {
		t.Errorf("the disk through %s: %q, %v", rec.Source(), b, err)
	}
	endsWithTheLauncher(t, done, cmd)
}

// A launcher never seen (not started yet) is waited for; the kubelet's
// SIGTERM ends the wait.
func TestHoldUntilTerminated(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "disk.img"), nil)
	record := filepath.Join(dir, "record.json")
	ctx, cancel := context.WithCancel(t.Context())
	done := startHold(t, ctx, filepath.Join(dir, "disk.img"), record, filepath.Join(dir, "no-launcher"))
	readRecord(t, record)
	cancel()
	if err := waitDone(t, done); err != nil {
		t.Errorf("Hold after SIGTERM: %v, want nil", err)
	}
}

// A disk Hold cannot offer is recorded for the launcher to fail the volume
// with, and returned only when Hold ends.
func TestHoldRecordsAMissingDisk(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "disk", "a.img"), nil)
	writeFile(t, filepath.Join(dir, "disk", "b.img"), nil)
	record := filepath.Join(dir, "record.json")
	ctx, cancel := context.WithCancel(t.Context())
	done := startHold(t, ctx, filepath.Join(dir, "disk"), record, filepath.Join(dir, "no-launcher"))
	rec := readRecord(t, record)
	if rec.PID != 0 || rec.Path != "" || !strings.Contains(rec.Error, "holds 2 regular files") {
		t.Errorf("record %+v, want only an error saying the directory holds 2 files", rec)
	}
	cancel()
	if err := waitDone(t, done); err == nil || !strings.Contains(err.Error(), "holds 2 regular files") {
		t.Errorf("Hold = %v, want the missing disk", err)
	}
}

// The binary holds until SIGTERM and then exits 0: the pod's phase is the
// launcher's to decide.
func TestToolHoldsUntilSIGTERM(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "virt-imagecopy")
	build := exec.Command("go", "build", "-o", bin, "kubevirt.dev/virt/cmd/virt-imagecopy")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "disk", "disk.img"), nil)
	record := filepath.Join(dir, "record.json")
	cmd := exec.Command(bin, "hold", filepath.Join(dir, "disk"), record, "/usr/bin/virt-launcher")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	if rec := readRecord(t, record); rec.PID != cmd.Process.Pid {
		t.Errorf("record %+v, want the tool's PID %d", rec, cmd.Process.Pid)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("hold after SIGTERM: %v, want exit 0", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("hold did not exit on SIGTERM")
	}
}

// A kernel-boot image offers two files from one container: a record each,
// one missing file recorded as its error while the other is offered.
func TestHoldOffersEachFile(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "boot", "vmlinuz"), []byte("kernel"))
	kernel, initrd := filepath.Join(dir, "k", "kernel.json"), filepath.Join(dir, "k", "initrd.json")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- Hold(ctx, []Offer{{Src: filepath.Join(dir, "boot", "vmlinuz"), Record: kernel},
			{Src: filepath.Join(dir, "boot", "initrd.gz"), Record: initrd}}, filepath.Join(dir, "no-launcher"), 10*time.Millisecond)
	}()
	if rec := readRecord(t, kernel); rec.PID != os.Getpid() || rec.Path != filepath.Join(dir, "boot", "vmlinuz") {
		t.Errorf("kernel record %+v", rec)
	}
	if rec := readRecord(t, initrd); rec.PID != 0 || !strings.Contains(rec.Error, "initrd.gz") {
		t.Errorf("initrd record %+v, want only an error naming the missing file", rec)
	}
	cancel()
	if err := waitDone(t, done); err == nil || !strings.Contains(err.Error(), "initrd.gz") {
		t.Errorf("Hold = %v, want the missing initrd", err)
	}
}

// A launcher found is waited for through its pidfd, not looked for again
// every interval: with an interval of an hour, Hold still returns as soon
// as the launcher ended.
func TestHoldWaitsForTheLauncherToExit(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "disk.img"), []byte("disk"))
	record := filepath.Join(dir, "record.json")
	launcher, cmd := fakeLauncher(t)
	done := startHoldEvery(t, t.Context(), filepath.Join(dir, "disk.img"), record, launcher, time.Hour)
	readRecord(t, record)
	endsWithTheLauncher(t, done, cmd)
}
