//go:build rawguest

package migration

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kubevirt.dev/virt/bench/startup"
)

// TestMain runs the raw move's child when the test binary is started as
// one (rawMove re-executes this binary).
func TestMain(m *testing.M) {
	if IsChild() {
		os.Exit(ChildMain())
	}
	os.Exit(m.Run())
}

// TestRawMoveDirtying moves the 128 MiB guest that rewrites 32 MiB from an
// embedded libvirt to a private libvirtd and checks that the guest goes on
// at the target and libvirt reported a downtime; nothing of it is left.
func TestRawMoveDirtying(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("needs root (a mount namespace and setpriv for uid 107)")
	}
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(strings.TrimSpace(string(root)), "hack", "build-guest.sh")).Output()
	if err != nil {
		t.Fatal(err)
	}
	dir := strings.TrimSpace(string(out))
	guest := startup.Guest{Kernel: filepath.Join(dir, "vmlinuz"), Initrd: filepath.Join(dir, "initrd.gz")}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	m, err := rawMove(ctx, guest, Case{MemoryMiB: 128, DirtyMiB: 32}, 1, 4*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", m)
	if !m.TicksAfter || m.Downtime <= 0 || m.Total < m.Downtime || m.DataMiB < 32 {
		t.Errorf("move %+v: want the heartbeat at the target, a downtime within the total and at least the 32 dirtied MiB moved", m)
	}
	if pids := qemuPIDs(filepath.Join(os.TempDir(), "vbm-")); len(pids) > 0 {
		t.Errorf("QEMU processes of a raw move still run: %v", pids)
	}
}
