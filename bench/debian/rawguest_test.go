//go:build rawguest

// The raw side on its own: it boots the Debian guest (512 MiB, a minute or
// two of CPU under TCG), so it is kept out of `go test ./...`:
//
//	cd bench && go test -tags rawguest -run TestRawBoot -v ./debian/
//
// VIRT_BENCH_DEBIAN_IMAGE=/path/to/disk.qcow2 boots that image instead of
// hack/build-debian-image.sh's.

package debian

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"kubevirt.dev/virt/bench/rawguest"
)

// TestMain is the raw libvirt child too: the raw guest re-executes the
// test binary, as it does virt-bench.
func TestMain(m *testing.M) {
	if rawguest.IsChild() {
		os.Exit(rawguest.ChildMain())
	}
	os.Exit(m.Run())
}

// imageEnv names a built image to boot instead of hack/build-debian-image.sh's
// (which rebuilds, minutes, whenever the script changed).
const imageEnv = "VIRT_BENCH_DEBIAN_IMAGE"

// debianImage is $VIRT_BENCH_DEBIAN_IMAGE, or the image of
// hack/build-debian-image.sh, built if need be.
func debianImage(t *testing.T) string {
	t.Helper()
	if image := os.Getenv(imageEnv); image != "" {
		return image
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "hack", "build-debian-image.sh"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), script)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "disk.qcow2")
}

// The Debian guest boots under raw libvirt on its plain tap, takes its
// lease and lets the bench's key in; afterwards neither its QEMU nor its
// network nor its directory is left.
func TestRawBoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test creates a network namespace, a veth pair, a bridge and a host route, binds port 67 and boots a VM: run it as root")
	}
	image := debianImage(t)
	guest, err := ReadGuest(exampleFile)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := filepath.Glob(filepath.Join(os.TempDir(), "vb-deb-*"))
	b, err := bootRaw(t.Context(), Env{Image: image, Logf: t.Logf}, guest, "debian-raw-1", 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("raw libvirt: running %s after the define, SSH login as %s after %s (%d logins tried)", b.Running, guest.User, b.SSH, b.Probes)
	if b.Side != Raw || b.Running <= 0 || b.SSH <= b.Running || b.Probes < 1 {
		t.Errorf("boot %+v", b)
	}
	if err := rawguest.Left(Addresses); err != nil {
		t.Error(err)
	}
	if pids := qemuOf("debian-raw-1"); len(pids) != 0 {
		t.Errorf("QEMUs of debian-raw-1 still run: %v", pids)
	}
	after, _ := filepath.Glob(filepath.Join(os.TempDir(), "vb-deb-*"))
	if len(after) > len(before) {
		t.Errorf("temporary directories left: %v (before: %v)", after, before)
	}
}

// Cancelled while the guest boots (Ctrl-C at the bench), the raw side
// removes everything, its directory included.
func TestRawBootCancelled(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test creates a network namespace, a veth pair, a bridge and a host route, binds port 67 and boots a VM: run it as root")
	}
	image := debianImage(t)
	guest, err := ReadGuest(exampleFile)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := filepath.Glob(filepath.Join(os.TempDir(), "vb-deb-*"))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	booting := make(chan struct{})
	go func() {
		// Cancel once the guest's QEMU runs.
		_ = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
			return len(qemuOf("debian-raw-2")) > 0, nil
		})
		close(booting)
		cancel()
	}()
	_, err = bootRaw(ctx, Env{Image: image, Logf: t.Logf}, guest, "debian-raw-2", 5*time.Minute)
	<-booting
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if err := rawguest.Left(Addresses); err != nil {
		t.Error(err)
	}
	if pids := qemuOf("debian-raw-2"); len(pids) != 0 {
		t.Errorf("QEMUs of debian-raw-2 still run: %v", pids)
	}
	after, _ := filepath.Glob(filepath.Join(os.TempDir(), "vb-deb-*"))
	if len(after) > len(before) {
		t.Errorf("temporary directories left: %v (before: %v)", after, before)
	}
}

// qemuOf lists the pids of the processes whose command line names the
// domain of VMI name.
func qemuOf(name string) []string {
	var pids []string
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte("guest="+Namespace+"_"+name+"_")) {
			pids = append(pids, filepath.Base(filepath.Dir(p)))
		}
	}
	return pids
}
