package launcher_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
)

// TestTPMBoots boots the test guest with an emulated TPM 2.0 (tpm: {}) from
// the launcher's unprivileged embedded libvirt: libvirt sets up and starts
// swtpm itself, QEMU gets a tpm-tis device backed by it, and the guest's
// kernel (tpm_tis built in) finds a TPM 2.0 on the serial console.
func TestTPMBoots(t *testing.T) { testTPM(t) }

// TestTPMBootsAsRoot covers libvirt's privileged mode, which runs
// swtpm_setup and swtpm as the user qemu.conf's swtpm_user names.
func TestTPMBootsAsRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatalf("this test needs root; the suite runs as root in CI (make test)")
	}
	testTPM(t)
}

func testTPM(t *testing.T) {
	vmi := guestVMI("tpm", 30)
	vmi.Spec.Domain.Devices.TPM = &virtv1.TPMDevice{Enabled: ptr.To(true)}
	l := startLauncher(t, vmi)
	boot(t, l)

	pid := l.qemuPid()
	args, err := cmdline(pid)
	if err != nil {
		t.Fatalf("QEMU's command line (pid %d): %v", pid, err)
	}
	for _, want := range []string{"-tpmdev emulator", "tpm-tis"} {
		if !strings.Contains(args, want) {
			t.Errorf("QEMU's command line lacks %q: %s", want, args)
		}
	}
	swtpm := swtpmOf(l)
	if swtpm == 0 {
		t.Fatalf("no swtpm process runs with its state in the launcher's directory")
	}
	swtpmArgs, _ := cmdline(swtpm)
	t.Logf("swtpm (pid %d, RSS %s): %s", swtpm, rss(swtpm), swtpmArgs)
	// The kernel's tpm_tis driver announces the chip: "tpm_tis MSFT0101:00:
	// 2.0 TPM (device-id 0x1, rev-id 1)".
	l.waitSerial("2.0 TPM", bootTimeout)
	for _, line := range strings.Split(l.serial(), "\n") {
		if strings.Contains(line, "TPM") {
			t.Logf("guest: %s", strings.TrimSpace(line))
		}
	}

	if _, err := l.client.Kill(t.Context(), &apiv1.KillRequest{}); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	l.waitExit(exitTimeout)
	// libvirt stops swtpm with the domain: nothing outlives the launcher.
	if err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, exitTimeout, true, func(context.Context) (bool, error) {
		return swtpmOf(l) == 0, nil
	}); err != nil {
		t.Fatalf("swtpm (pid %d) still runs %v after the launcher exited", swtpmOf(l), exitTimeout)
	}
}

// swtpmOf returns the pid of the swtpm process libvirt started for l's
// domain, found by its state directory in the launcher's private directory
// (other tests' swtpm processes may run at the same time), or 0.
func swtpmOf(l *launcher) int {
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		if comm, _ := os.ReadFile(filepath.Join("/proc", d.Name(), "comm")); strings.TrimSpace(string(comm)) != "swtpm" {
			continue
		}
		if args, _ := cmdline(pid); strings.Contains(args, l.private) {
			return pid
		}
	}
	return 0
}

// cmdline is the command line of process pid, its arguments joined by spaces.
func cmdline(pid int) (string, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	return strings.ReplaceAll(string(b), "\x00", " "), err
}
