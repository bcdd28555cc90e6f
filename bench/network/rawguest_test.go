//go:build rawguest

// The raw side on its own: it boots a VM (about 192 MiB, seconds of CPU
// under TCG), so it is kept out of `go test ./...`:
//
//	cd bench && go test -tags rawguest -run TestRawGuest -v ./network/

package network

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"kubevirt.dev/virt/bench/rawguest"
	"kubevirt.dev/virt/bench/startup"
)

// holdEnv makes the test binary a bench that starts the raw side and then
// waits to be killed; it holds the guest's kernel and initrd.
const holdEnv = "VIRT_BENCH_TEST_HOLD_RAW"

// TestMain is the raw libvirt child too: rawguest.Guest re-executes the
// test binary, as it does virt-bench.
func TestMain(m *testing.M) {
	if rawguest.IsChild() {
		os.Exit(rawguest.ChildMain())
	}
	if files, ok := os.LookupEnv(holdEnv); ok {
		kernel, initrd, _ := strings.Cut(files, ":")
		raw, err := startRaw(context.Background(), startup.Guest{Kernel: kernel, Initrd: initrd}, 3*time.Minute)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("up", raw.guest.Dir)
		select {}
	}
	os.Exit(m.Run())
}

// testGuest builds (or finds) the test guest with hack/build-guest.sh.
func testGuest(t *testing.T) startup.Guest {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("..", "..", "hack", "build-guest.sh"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), script)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	dir := strings.TrimSpace(string(out))
	return startup.Guest{Kernel: filepath.Join(dir, "vmlinuz"), Initrd: filepath.Join(dir, "initrd.gz")}
}

// The test guest boots under raw libvirt on the plain tap, takes its lease,
// serves its 64 MiB file to the host, and everything goes away after.
func TestRawGuest(t *testing.T) {
	requireRoot(t)
	guest := testGuest(t)
	start := time.Now()
	raw, err := startRaw(t.Context(), guest, 3*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	dir, pidFile := raw.guest.Dir, raw.guest.PIDFile()
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = raw.close()
		}
	})
	t.Logf("raw guest (%s) answers HTTP %s after start", raw.guest.DomainType, time.Since(start).Round(100*time.Millisecond))

	res, err := measure(t.Context(), []target{{Raw, net.JoinHostPort(GuestAddr.Addr().String(), "80")}}, 2, 20, FileBytes)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := res.Row(Raw)
	t.Logf("raw: %.0f MB/s median of %v; requests p50 %s p99 %s", r.MedianMBps, r.MBps, r.P50, r.P99)
	if len(r.MBps) != 2 || r.Requests != 20 {
		t.Errorf("measured %+v, want 2 downloads and 20 requests", r)
	}

	pid, err := os.ReadFile(pidFile)
	if err != nil {
		t.Errorf("QEMU's pid file: %v", err)
	}
	closed = true
	if err := raw.close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	requireNothingLeft(t)
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s is still there (%v)", dir, err)
	}
	if p := strings.TrimSpace(string(pid)); p != "" {
		if _, err := os.Stat("/proc/" + p); !os.IsNotExist(err) {
			t.Errorf("QEMU %s still runs", p)
		}
	}
}

// A bench killed with SIGKILL leaves neither the guest nor the network:
// its child destroys the guest once its stdin closes, and the namespace,
// the veth and the host's route go with the last process in it. Only the
// temporary directory stays (removed here).
func TestRawGuestGoesWithAKilledBench(t *testing.T) {
	requireRoot(t)
	guest := testGuest(t)
	bench := exec.Command(os.Args[0])
	bench.Env = append(os.Environ(), holdEnv+"="+guest.Kernel+":"+guest.Initrd)
	bench.Stderr = os.Stderr
	out, err := bench.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := bench.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = bench.Process.Kill()
		_ = bench.Wait()
	})
	up := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(out)
		if s.Scan() {
			up <- s.Text()
		}
		close(up)
	}()
	var line string
	select {
	case line = <-up:
	case <-time.After(3 * time.Minute):
		t.Fatal("the bench did not bring the raw guest up within 3m")
	}
	dir, ok := strings.CutPrefix(line, "up ")
	if !ok {
		t.Fatalf("the bench said %q", line)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if len(qemuOf(rawName)) != 1 {
		t.Fatalf("QEMUs of %s before the kill: %v, want one", rawName, qemuOf(rawName))
	}
	if err := bench.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = bench.Wait()

	err = wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		_, err := os.Stat("/sys/class/net/" + Addresses.HostLink)
		return os.IsNotExist(err) && len(qemuOf(rawName)) == 0, nil
	})
	if err != nil {
		t.Fatalf("after the bench was killed: %s exists: %v, QEMUs of %s: %v: %v", Addresses.HostLink, !os.IsNotExist(statErr(Addresses.HostLink)), rawName, qemuOf(rawName), err)
	}
	requireNothingLeft(t)
}

// requireRoot fails a test that needs network namespaces when it cannot
// have them, rather than pass it without testing anything.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("this test creates a network namespace, a veth pair, a bridge and a host route, binds port 67 and boots a VM: run it as root")
	}
}

// requireNothingLeft checks the host has neither the veth nor a route to
// the guest's network.
func requireNothingLeft(t *testing.T) {
	t.Helper()
	if err := rawguest.Left(Addresses); err != nil {
		t.Error(err)
	}
}

// qemuOf lists the pids of the processes whose command line names the
// domain of VMI name.
func qemuOf(name string) []string {
	var pids []string
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte("guest=bench_"+name)) {
			pids = append(pids, filepath.Base(filepath.Dir(p)))
		}
	}
	return pids
}

func statErr(link string) error {
	_, err := os.Stat("/sys/class/net/" + link)
	return err
}
