package startup

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/bench/proc"
	"kubevirt.dev/virt/launcher/domain"
	"kubevirt.dev/virt/launcher/hypervisor"
	"kubevirt.dev/virt/launcher/kvm"
)

// Guest is the test guest's files (hack/build-guest.sh).
type Guest struct {
	Kernel, Initrd string
}

// rawDomain is one guest started directly.
type rawDomain struct {
	name, xml, serialLog string
}

// RawHost is one embedded libvirt for a whole part: libvirt allows one
// embedded root per process, and a long-running libvirtd is what the raw
// side stands for anyway.
type RawHost struct {
	dir   string
	conn  *hypervisor.Conn
	typ   string
	guest Guest
	seq   int
}

// OpenRaw opens the embedded libvirt and boots one guest untimed: the first
// define probes QEMU (seconds), which a running libvirtd has long done.
func OpenRaw(ctx context.Context, guest Guest, timeout time.Duration, logf func(string, ...any)) (*RawHost, error) {
	dir, err := os.MkdirTemp("", "vb-raw-")
	if err != nil {
		return nil, err
	}
	h := &RawHost{dir: dir, guest: guest, typ: domain.TypeQEMU}
	if ok, _ := kvm.Usable(); ok {
		h.typ = domain.TypeKVM
	}
	root := filepath.Join(dir, "libvirt")
	if err := hypervisor.PrepareEmbedRoot(root); err != nil {
		h.Close()
		return nil, err
	}
	// hypervisor.Open registers the event loop the embedded driver needs;
	// the calls below are libvirt's own (define, create, destroy).
	if h.conn, err = hypervisor.Open(hypervisor.EmbedURI(root)); err != nil {
		h.Close()
		return nil, err
	}
	go func() {
		for range h.conn.Events() {
		}
	}()
	w, err := h.domain("warm")
	if err != nil {
		h.Close()
		return nil, err
	}
	t0 := time.Now()
	_, err = bootRaw(ctx, h.conn, w, timeout)
	destroyRaw(h.conn, w.name)
	if err != nil {
		h.Close()
		return nil, fmt.Errorf("warm-up guest: %w", err)
	}
	logf("start: raw libvirt warmed up (%s including QEMU's capabilities probe)", time.Since(t0).Round(100*time.Millisecond))
	return h, nil
}

// Close closes the connection and removes the temporary root.
func (h *RawHost) Close() {
	if h.conn != nil {
		_ = h.conn.Close()
	}
	os.RemoveAll(h.dir)
}

// domain makes the next guest's domain: a fresh name and UUID each time.
func (h *RawHost) domain(prefix string) (rawDomain, error) {
	h.seq++
	name := fmt.Sprintf("%s-%d", prefix, h.seq)
	vmi := VMI(name)
	vmi.Namespace, vmi.UID = "bench", types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", h.seq))
	// No NIC: raw libvirt is the floor (a guest's tap would be someone's to
	// make); the platform's guests get theirs in the pod, which counts
	// against the platform.
	vmi.Spec.Domain.Devices.AutoattachPodInterface = ptr.To(false)
	virtv1.SetObjectDefaults_VirtualMachineInstance(vmi)
	gdir := filepath.Join(h.dir, fmt.Sprint(h.seq))
	if err := os.MkdirAll(gdir, 0o755); err != nil {
		return rawDomain{}, err
	}
	host := domain.Host{Type: h.typ, Kernel: h.guest.Kernel, Initrd: h.guest.Initrd,
		SerialSocket: filepath.Join(gdir, "serial0.sock"), SerialLog: filepath.Join(gdir, "serial0.log"),
		VNCSocket: filepath.Join(gdir, "vnc.sock")}
	d, err := domain.Convert(vmi, host)
	if err != nil {
		return rawDomain{}, err
	}
	x, err := d.Marshal()
	if err != nil {
		return rawDomain{}, err
	}
	return rawDomain{name: d.Name, xml: x, serialLog: host.SerialLog}, nil
}

// Batch starts n copies of the test guest's domain at once and destroys
// them after.
func (h *RawHost) Batch(ctx context.Context, n int, timeout time.Duration, logf func(string, ...any)) (Row, error) {
	doms := make([]rawDomain, n)
	for i := range doms {
		var err error
		if doms[i], err = h.domain("g"); err != nil {
			return Row{}, err
		}
	}
	defer func() {
		for _, d := range doms {
			destroyRaw(h.conn, d.name)
		}
	}()
	running := make([]time.Duration, n)
	marker := make([]time.Duration, n)
	before := proc.Snapshot()
	avail := proc.MemAvailable()
	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for i := range doms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t, err := bootRaw(ctx, h.conn, doms[i], timeout)
			if err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
			running[i], marker[i] = t[0], t[1]
		}()
	}
	wg.Wait()
	r := row(Raw, running, marker, time.Since(start))
	// Before the deferred destroy: QEMU's time is lost once it exits.
	r.CPU = proc.ByComm(before, proc.Snapshot())
	r.NodeMemory = proc.MemAvailableFall(avail)
	if firstErr != nil {
		logf("start: raw libvirt, %d guests: %v", n, firstErr)
	}
	return r, nil
}

// bootRaw defines and starts one domain and waits for the marker; it
// returns the times to running and to the marker (zero when not reached).
func bootRaw(ctx context.Context, conn *hypervisor.Conn, d rawDomain, timeout time.Duration) ([2]time.Duration, error) {
	var t [2]time.Duration
	start := time.Now()
	if err := conn.Define(d.xml); err != nil {
		return t, fmt.Errorf("define %s: %w", d.name, err)
	}
	if err := conn.Start(d.name); err != nil {
		return t, fmt.Errorf("start %s: %w", d.name, err)
	}
	t[0] = time.Since(start)
	if err := waitMarker(ctx, d.serialLog, start.Add(timeout)); err != nil {
		return t, fmt.Errorf("%s: %w", d.name, err)
	}
	t[1] = time.Since(start)
	return t, nil
}

// destroyRaw stops a guest; its definition goes with the temporary root.
func destroyRaw(conn *hypervisor.Conn, name string) {
	_ = conn.Destroy(name)
}

// waitMarker polls a serial log for the marker every 20 ms until deadline.
func waitMarker(ctx context.Context, path string, deadline time.Time) error {
	for {
		if b, err := os.ReadFile(path); err == nil && strings.Contains(string(b), Marker) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no %s in %s in time", Marker, path)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
