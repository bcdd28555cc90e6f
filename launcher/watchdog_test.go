package launcher

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/layout"
	"kubevirt.dev/virt/launcher/termination"
)

// notReadyOptions are a launcher's options whose kernel-boot initrd and
// container disk "data" have no record, and whose exit reports the code
// on the returned channel; the termination message goes to the returned
// file.
func notReadyOptions(t *testing.T) (*Options, <-chan int, string) {
	t.Helper()
	msgFile := filepath.Join(t.TempDir(), "termination-log")
	if err := os.WriteFile(msgFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	old := termination.Path
	termination.Path = msgFile
	t.Cleanup(func() { termination.Path = old })

	o := NewOptions()
	o.KernelBootDir, o.DisksDir = t.TempDir(), t.TempDir()
	o.KernelBootFiles = []string{layout.KernelName, layout.InitrdName}
	o.ContainerDisks = []string{"data"}
	if err := os.WriteFile(layout.KernelBootRecord(o.KernelBootDir, layout.KernelName), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	exited := make(chan int, 1)
	o.exit = func(code int) { exited <- code }
	return o, exited, msgFile
}

// TestStartWatchdogGivesUp: a launcher not ready within its startup
// timeout exits failed and says what it still waits for.
func TestStartWatchdogGivesUp(t *testing.T) {
	o, exited, msgFile := notReadyOptions(t)
	o.StartupTimeout = 10 * time.Millisecond
	defer o.startWatchdog(t.Context(), make(chan struct{})).Stop()
	select {
	case code := <-exited:
		if code != apiv1.ExitFailure {
			t.Errorf("exit code %d, want %d", code, apiv1.ExitFailure)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the launcher did not give up")
	}
	msg, err := os.ReadFile(msgFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"not ready 10ms", "[" + layout.InitrdName + "]", "container disks [data]"} {
		if !strings.Contains(string(msg), want) {
			t.Errorf("termination message %q lacks %q", msg, want)
		}
	}
	if strings.Contains(string(msg), "["+layout.KernelName) {
		t.Errorf("termination message %q names the kernel, whose record is there", msg)
	}
}

// TestStartWatchdogReady: once ready, the bound does not end the process.
func TestStartWatchdogReady(t *testing.T) {
	o, exited, _ := notReadyOptions(t)
	isReady := make(chan struct{})
	close(isReady)
	o.giveUpUnlessReady(t.Context(), isReady)
	select {
	case code := <-exited:
		t.Fatalf("a ready launcher exited with %d", code)
	default:
	}
}
